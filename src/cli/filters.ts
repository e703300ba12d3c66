/**
 * The query/list filter options (CLI.md `memory query`), parsed into core QueryFilters with
 * clear usage errors naming the option.
 */
import type { Argv } from 'yargs';
import { UsageError } from '../core/errors.js';
import type { QueryFilters } from '../core/query.js';
import { KINDS, SECTIONS, STATUSES, type Kind, type Section, type Status } from '../core/constants.js';
import { parseScope } from '../core/scope.js';
import { normalizeTimestamp } from '../core/time.js';

export interface FilterArgs {
  section?: string;
  kind?: string;
  scope?: string;
  subject?: string;
  tags?: string;
  status?: string;
  'min-confidence'?: number;
  since?: string;
  until?: string;
  'date-field'?: string;
  'include-expired'?: boolean;
  limit?: number;
}

export function filterOptions<T>(y: Argv<T>): Argv<T & FilterArgs> {
  return y
    .option('section', { type: 'string', describe: `comma list of: ${SECTIONS.join(', ')}` })
    .option('kind', { type: 'string', describe: `comma list of: ${KINDS.join(', ')}` })
    .option('scope', { type: 'string', describe: 'repo, org, customer, service:<name>, environment:<env> (adds repo and org)' })
    .option('subject', { type: 'string', describe: 'exact subject key' })
    .option('tags', { type: 'string', describe: 'comma list; entries must carry all of them' })
    .option('status', { type: 'string', describe: 'comma list of statuses, or "any" (default: active)' })
    .option('min-confidence', { type: 'number', describe: 'default 0.6' })
    .option('since', { type: 'string', describe: 'ISO 8601 timestamp, or 7d / 24h / 2w ago' })
    .option('until', { type: 'string', describe: 'ISO 8601 timestamp, or 7d / 24h / 2w ago' })
    .option('date-field', { type: 'string', choices: ['updated_at', 'created_at'], describe: 'field --since/--until test (default updated_at)' })
    .option('include-expired', { type: 'boolean', describe: 'include entries outside their valid_from..valid_to window' })
    .option('limit', { type: 'number', describe: 'at most this many results (max 50)' }) as Argv<T & FilterArgs>;
}

function list<T extends string>(raw: string | undefined, allowed: readonly T[], option: string): T[] | undefined {
  if (raw === undefined) return undefined;
  const parts = String(raw)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const p of parts) {
    if (!(allowed as readonly string[]).includes(p)) throw new UsageError(`--${option} ${JSON.stringify(p)} is not one of: ${allowed.join(', ')}`);
  }
  return parts as T[];
}

function time(raw: string | undefined, option: string, now: Date): string | undefined {
  if (raw === undefined) return undefined;
  const rel = /^(\d+)([hdw])$/.exec(raw.trim());
  if (rel) {
    const ms = Number(rel[1]) * { h: 3_600_000, d: 86_400_000, w: 604_800_000 }[rel[2] as 'h' | 'd' | 'w'];
    return new Date(now.getTime() - ms).toISOString();
  }
  const iso = normalizeTimestamp(raw);
  if (!iso) throw new UsageError(`--${option} must be an ISO 8601 timestamp or a duration such as 7d (got ${JSON.stringify(raw)})`);
  return iso;
}

export function parseFilters(a: FilterArgs, now: Date): QueryFilters {
  const f: QueryFilters = {};
  const sections = list<Section>(a.section, SECTIONS, 'section');
  if (sections) f.sections = sections;
  const kinds = list<Kind>(a.kind, KINDS, 'kind');
  if (kinds) f.kinds = kinds;
  if (a.scope !== undefined) {
    const p = parseScope(a.scope);
    if ('error' in p) throw new UsageError(`--scope ${p.error}`);
    f.scope = a.scope;
  }
  if (a.subject !== undefined) f.subject = a.subject;
  if (a.tags !== undefined) f.tags = String(a.tags).split(',').map((s) => s.trim()).filter(Boolean);
  if (a.status !== undefined) {
    f.status = a.status.trim() === 'any' ? 'any' : list<Status>(a.status, STATUSES, 'status');
  }
  const mc = a['min-confidence'];
  if (mc !== undefined) {
    if (!Number.isFinite(mc) || mc < 0 || mc > 1) throw new UsageError(`--min-confidence must be a number from 0 to 1 (got ${mc})`);
    f.minConfidence = mc;
  }
  const since = time(a.since, 'since', now);
  if (since) f.since = since;
  const until = time(a.until, 'until', now);
  if (until) f.until = until;
  if (a['date-field']) f.dateField = a['date-field'] as 'created_at' | 'updated_at';
  if (a['include-expired']) f.includeExpired = true;
  if (a.limit !== undefined && (!Number.isInteger(a.limit) || a.limit < 0)) throw new UsageError(`--limit must be a whole number (got ${a.limit})`);
  return f;
}

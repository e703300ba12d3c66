/** The one parsing of query filters and agent names, pure: every front end gives the same filters and refuses the same input in the same words. */
import { KINDS, SECTIONS, STATUSES, type Kind, type Section, type Status } from './constants.js';
import { UsageError } from './errors.js';
import { intervalMs } from './lifecycle.js';
import type { QueryFilters } from './query.js';
import { scopeProblem } from './query-filters.js';
import { normalizeTimestamp } from './time.js';
import { shown } from './redact.js';

/** Filters as a front end receives them: a comma list or an array where several values go. */
export interface FilterInput {
  section?: string | string[];
  kind?: string | string[];
  scope?: string;
  subject?: string;
  tags?: string | string[];
  status?: string | string[];
  minConfidence?: number;
  since?: string;
  until?: string;
  dateField?: string;
  includeExpired?: boolean;
  limit?: number;
}

const values = (raw: string | string[]): string[] => (Array.isArray(raw) ? raw : String(raw).split(',')).map((s) => String(s).trim()).filter(Boolean);

function oneOf<T extends string>(raw: string | string[] | undefined, allowed: readonly T[], name: string): T[] | undefined {
  if (raw === undefined) return undefined;
  const parts = values(raw);
  for (const p of parts) if (!(allowed as readonly string[]).includes(p)) throw new UsageError(`${name} ${shown(p)} is not one of: ${allowed.join(', ')}`);
  return parts as T[];
}

/** A point in time: ISO 8601, or an age before `now` such as 30m, 12h, 7d, 2w. */
export function parseWhen(raw: string | undefined, name: string, now: Date): string | undefined {
  if (raw === undefined) return undefined;
  const age = intervalMs(String(raw));
  if (age !== null) return new Date(now.getTime() - age).toISOString();
  const iso = normalizeTimestamp(String(raw));
  if (!iso) throw new UsageError(`${name} must be an ISO 8601 timestamp or an age such as 30m, 12h, 7d or 2w (got ${shown(raw)})`);
  return iso;
}

function checkedScope(scope: string): string {
  const problem = scopeProblem(scope);
  if (problem) throw new UsageError(`scope ${problem}`);
  return scope;
}

/** Parses filters, leaving out those not given; every refusal is a UsageError naming the filter and what it takes. */
export function parseFilters(a: FilterInput, now: Date): QueryFilters {
  const { minConfidence: mc, dateField } = a;
  const status = a.status === undefined ? undefined : values(a.status).join(',') === 'any' ? 'any' : oneOf<Status>(a.status, STATUSES, 'status');
  const f: QueryFilters = {
    sections: oneOf<Section>(a.section, SECTIONS, 'section'),
    kinds: oneOf<Kind>(a.kind, KINDS, 'kind'),
    scope: a.scope === undefined ? undefined : checkedScope(String(a.scope)),
    subject: a.subject === undefined ? undefined : String(a.subject),
    tags: a.tags === undefined ? undefined : values(a.tags),
    status,
  };
  if (mc !== undefined && (typeof mc !== 'number' || !Number.isFinite(mc) || mc < 0 || mc > 1))
    throw new UsageError(`minimum confidence must be a number from 0 to 1 (got ${shown(mc)})`);
  // Asking for drafts (or everything) asks for them whatever their confidence: drafts are
  // usually below the 0.6 default, which would hide most of what was asked for.
  f.minConfidence = mc ?? (status === 'any' || status?.includes('draft') ? 0 : undefined);
  f.since = parseWhen(a.since, 'since', now);
  f.until = parseWhen(a.until, 'until', now);
  if (dateField !== undefined && dateField !== 'created_at' && dateField !== 'updated_at')
    throw new UsageError(`date field must be created_at or updated_at (got ${shown(dateField)})`);
  f.dateField = dateField;
  f.includeExpired = a.includeExpired ? true : undefined;
  if (a.limit !== undefined && (typeof a.limit !== 'number' || !Number.isInteger(a.limit) || a.limit < 1))
    throw new UsageError(`limit must be a whole number of at least 1 (got ${shown(a.limit)})`);
  return Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined));
}

/**
 * The first usable agent name among candidates, in order of precedence (flag, environment, client, git user, OS user), as
 * stored: control characters (a newline would forge a commit trailer) turned into spaces, trimmed, at most 100 characters.
 */
export function pickAgent(...candidates: unknown[]): string | undefined {
  for (const c of candidates) {
    if (typeof c !== 'string') continue;
    const v = c
      .replace(/[\u0000-\u001f\u007f]+/g, ' ')
      .trim()
      .slice(0, 100);
    if (v) return v.trimEnd();
  }
  return undefined;
}

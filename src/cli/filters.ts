/**
 * The query/list filter options (CLI.md `memory query`): their yargs declarations, and their
 * values handed to the one filter parser in core/filters.ts.
 */
import type { Argv } from 'yargs';
import { KINDS, SECTIONS } from '../core/constants.js';
import { parseFilters as parseCoreFilters } from '../core/filters.js';
import type { QueryFilters } from '../core/query.js';

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
    .option('status', { type: 'string', describe: 'comma list of statuses, or "any" (default: active); any or draft also drop the confidence default' })
    .option('min-confidence', { type: 'number', describe: 'default 0.6' })
    .option('since', { type: 'string', describe: 'ISO 8601 timestamp, or an age: 30m, 24h, 7d, 2w' })
    .option('until', { type: 'string', describe: 'ISO 8601 timestamp, or an age: 30m, 24h, 7d, 2w' })
    .option('date-field', { type: 'string', choices: ['updated_at', 'created_at'], describe: 'field --since/--until test (default updated_at)' })
    .option('include-expired', { type: 'boolean', describe: 'include entries outside their valid_from..valid_to window' })
    .option('limit', { type: 'number', describe: 'at most this many results (max 50)' })
    .option('offset', { type: 'number', describe: 'skip this many results first (the next page)' });
}

/** The CLI's filter options as core filters (core/filters.ts: the same parsing as MCP and the daemon). */
export function parseFilters(a: FilterArgs, now: Date): QueryFilters {
  return parseCoreFilters(
    {
      section: a.section,
      kind: a.kind,
      scope: a.scope,
      subject: a.subject,
      tags: a.tags,
      status: a.status,
      minConfidence: a['min-confidence'],
      since: a.since,
      until: a.until,
      dateField: a['date-field'],
      includeExpired: a['include-expired'],
      limit: a.limit,
    },
    now,
  );
}

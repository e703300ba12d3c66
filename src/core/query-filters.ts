/** The filters of list and query, pure: what a caller asks for, the per-query work done once, and the predicate every front end filters with. */
import { shown } from './redact.js';
import type { Kind, Section, Status } from './constants.js';
import type { EntryLike } from './meta.js';

// Scopes, broadest first: org > repo > service:<name> > environment:<env>; plus customer.
const SERVICE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** Why `scope` is not one of the allowed forms, or null. */
export function scopeProblem(scope: string): string | null {
  if (scope === 'repo' || scope === 'org' || scope === 'customer') return null;
  const [, kind, name = ''] = /^(service|environment):(.*)$/.exec(scope) ?? [];
  if (!kind) return `must be repo, org, customer, service:<name> or environment:<prod|staging> (got ${shown(scope)})`;
  if (kind === 'service') return SERVICE_NAME.test(name) ? null : `service name must be letters, digits, ".", "_" or "-" (got ${shown(name)})`;
  return name === 'prod' || name === 'staging' ? null : `environment must be prod or staging (got ${shown(name)})`;
}

/** The scopes a query for `scope` returns: a scope sees itself and the broader ones above it (org only org; repo repo and org; undefined: every scope). */
export function visibleScopes(scope: string | undefined): Set<string> | undefined {
  if (scope === undefined || scope === '' || scope === 'any' || scope === '*') return undefined;
  return scope === 'org' ? new Set(['org']) : new Set([scope, 'repo', 'org']);
}

export const DEFAULT_MIN_CONFIDENCE = 0.6;

export interface QueryFilters {
  projects?: string[];
  sections?: Section[];
  kinds?: Kind[];
  scope?: string;
  subject?: string;
  /** Entries must carry every tag. */
  tags?: string[];
  /** Default `['active']`; `'any'` lifts it. */
  status?: Status[] | 'any';
  /** Default 0.6. */
  minConfidence?: number;
  since?: string;
  until?: string;
  dateField?: 'created_at' | 'updated_at';
  /** Include entries outside their valid_from..valid_to window (default: excluded). */
  includeExpired?: boolean;
}

/** `YYYY-MM-DDTHH:MM:SS.sssZ`, which orders correctly as a string. */
const isCanonical = (t: string): boolean => t.length === 24 && t.charCodeAt(23) === 90 /* Z */ && t.charCodeAt(10) === 84; /* T */

/** The filters with the per-query work done (defaults, scope hierarchy, empty lists as none), for `filtersOf` and the catalog's columns alike. */
export type FilterParts = Omit<QueryFilters, 'scope' | keyof Defaults> &
  Required<Defaults> & {
    /** The scopes an entry may have (undefined: any). */
    scopes?: Set<string>;
    /** Whether an entry with these validity bounds is valid now (asked only without `includeExpired`). */
    inWindow: (validFrom: string | null, validTo: string | null) => boolean;
  };
type Defaults = Pick<QueryFilters, 'status' | 'minConfidence' | 'dateField' | 'includeExpired'>;

export function filterParts(f: QueryFilters, now: number): FilterParts {
  const nowIso = new Date(now).toISOString();
  return {
    projects: f.projects,
    sections: f.sections && f.sections.length ? f.sections : undefined,
    kinds: f.kinds && f.kinds.length ? f.kinds : undefined,
    scopes: visibleScopes(f.scope),
    subject: f.subject || undefined,
    tags: f.tags && f.tags.length ? f.tags : undefined,
    status: f.status ?? ['active'],
    minConfidence: f.minConfidence ?? DEFAULT_MIN_CONFIDENCE,
    since: f.since || undefined,
    until: f.until || undefined,
    dateField: f.dateField ?? 'updated_at',
    includeExpired: Boolean(f.includeExpired),
    // Canonical UTC timestamps compare as strings; anything else is parsed.
    inWindow: (from, to) =>
      !(to && (isCanonical(to) ? to < nowIso : Date.parse(to) < now)) && !(from && (isCanonical(from) ? from > nowIso : Date.parse(from) > now)),
  };
}

/** The filters as one predicate, the per-query work (`filterParts`) done once rather than per entry. */
export function filtersOf(parts: FilterParts): (e: EntryLike, project: string) => boolean {
  const { projects, sections, kinds, scopes, subject, tags, status, minConfidence, since, until, dateField: field, includeExpired, inWindow } = parts;
  return (e, project) => {
    if (projects && !projects.includes(project)) return false;
    if (sections && !sections.includes(e.section)) return false;
    if (kinds && !kinds.includes(e.kind)) return false;
    if (scopes && !scopes.has(e.scope)) return false;
    if (subject && e.subject !== subject) return false;
    if (tags) for (const t of tags) if (!e.tags.includes(t)) return false;
    if (status !== 'any' && !status.includes(e.status)) return false;
    if (e.confidence < minConfidence) return false;
    if (since && e[field] < since) return false;
    if (until && e[field] > until) return false;
    if (!includeExpired && (e.valid_to || e.valid_from) && !inWindow(e.valid_from, e.valid_to)) return false;
    return true;
  };
}

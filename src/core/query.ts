/**
 * The query rules, pure (002 Req 4, 6.7-6.10, 15, 17, 19.2-19.5, 3.10, 18.8): filters first,
 * then relevance, then the priors of Req 15 (confidence, evidence quality, recency, freshness,
 * stale evidence). Every front end ranks through `rankEntries`.
 */
import { visibleScopes } from './scope.js';
import { evidenceQuality, type Kind, type MemoryEntry, type Section, type Status } from './schema.js';

export const MAX_RESULTS = 50;
export const DEFAULT_MIN_CONFIDENCE = 0.6;
export const LOW_CONFIDENCE = 0.5;
export const EXPIRY_WARNING_DAYS = 7;
const DAY_MS = 86_400_000;

export interface QueryFilters {
  projects?: string[];
  sections?: Section[];
  kinds?: Kind[];
  scope?: string;
  subject?: string;
  /** Entries must carry every tag (Req 4.6). */
  tags?: string[];
  /** Default `['active']` (Req 6.10); `'any'` lifts it. */
  status?: Status[] | 'any';
  /** Default 0.6 (Req 6.10). */
  minConfidence?: number;
  since?: string;
  until?: string;
  dateField?: 'created_at' | 'updated_at';
  /** Include entries outside their valid_from..valid_to window (default: excluded, Req 15.2). */
  includeExpired?: boolean;
}

export type Flag = 'low_confidence' | 'expiring_soon' | 'expired' | 'not_yet_valid' | 'stale_evidence';

export function confidenceLabel(c: number): 'stated explicitly' | 'high confidence' | 'inferred' | 'uncertain' {
  if (c >= 0.9) return 'stated explicitly';
  if (c >= 0.7) return 'high confidence';
  if (c >= 0.5) return 'inferred';
  return 'uncertain';
}

/** Flags of an entry as of `now` (ms). `stale` comes from the evidence cache. */
export function entryFlags(e: MemoryEntry, now: number, stale = false): Flag[] {
  const flags: Flag[] = [];
  if (e.confidence < LOW_CONFIDENCE) flags.push('low_confidence');
  if (e.valid_to) {
    const to = Date.parse(e.valid_to);
    if (to < now) flags.push('expired');
    else if (to - now <= EXPIRY_WARNING_DAYS * DAY_MS) flags.push('expiring_soon');
  }
  if (e.valid_from && Date.parse(e.valid_from) > now) flags.push('not_yet_valid');
  if (stale) flags.push('stale_evidence');
  return flags;
}

/** Whether an entry passes the filters (Req 4.2-4.7, 6.7-6.10, 15.1-15.2, 15.6-15.7, 17). */
export function matchesFilters(e: MemoryEntry, project: string, f: QueryFilters, now: number): boolean {
  if (f.projects && !f.projects.includes(project)) return false;
  if (f.sections && f.sections.length && !f.sections.includes(e.section)) return false;
  if (f.kinds && f.kinds.length && !f.kinds.includes(e.kind)) return false;
  const scopes = visibleScopes(f.scope);
  if (scopes && !scopes.has(e.scope)) return false;
  if (f.subject && e.subject !== f.subject) return false;
  if (f.tags && f.tags.length) {
    for (const t of f.tags) if (!e.tags.includes(t)) return false;
  }
  const status = f.status ?? ['active'];
  if (status !== 'any' && !status.includes(e.status)) return false;
  if (e.confidence < (f.minConfidence ?? DEFAULT_MIN_CONFIDENCE)) return false;
  const field = f.dateField ?? 'updated_at';
  if (f.since && e[field] < f.since) return false;
  if (f.until && e[field] > f.until) return false;
  if (!f.includeExpired) {
    if (e.valid_to && Date.parse(e.valid_to) < now) return false;
    if (e.valid_from && Date.parse(e.valid_from) > now) return false;
  }
  return true;
}

export interface Candidate {
  project: string;
  entry: MemoryEntry;
  /** Text relevance from the index (absent for queries without text). */
  relevance?: number;
  stale?: boolean;
}

export interface Ranked extends Candidate {
  score: number;
  flags: Flag[];
  confidence_label: string;
}

/**
 * Down-rank factor for entries that should not be trusted as much: near expiry (Req 15.3, 19.3)
 * or with stale evidence (Req 18.8).
 */
function demotion(flags: Flag[]): number {
  let f = 1;
  if (flags.includes('expiring_soon')) f *= 0.7;
  if (flags.includes('stale_evidence')) f *= 0.6;
  return f;
}

/** The prior of Req 15.8 as one number in (0, 1]: confidence first, then evidence quality. */
export function prior(e: MemoryEntry): number {
  return (0.6 + 0.4 * e.confidence) * (0.85 + 0.05 * evidenceQuality(e));
}

/** Req 15.8 order: confidence desc, evidence quality desc, updated_at desc (id for a stable tie). */
export function compareByPriors(a: MemoryEntry, b: MemoryEntry): number {
  return (
    b.confidence - a.confidence ||
    evidenceQuality(b) - evidenceQuality(a) ||
    (b.updated_at < a.updated_at ? -1 : b.updated_at > a.updated_at ? 1 : 0) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/**
 * Ranks filtered candidates. Without text: demoted entries (near expiry, stale evidence) after
 * the others, each group in exact Req 15.8 order. With text: relevance × priors × demotion,
 * ties broken by Req 15.8.
 */
export function rankEntries(cands: Candidate[], now: number, hasText: boolean): Ranked[] {
  const ranked: Ranked[] = cands.map((c) => {
    const flags = entryFlags(c.entry, now, c.stale);
    const d = demotion(flags);
    const score = hasText ? (c.relevance ?? 0) * prior(c.entry) * d : prior(c.entry) * d;
    return { ...c, flags, score: Math.round(score * 1e4) / 1e4, confidence_label: confidenceLabel(c.entry.confidence) };
  });
  if (hasText) {
    ranked.sort((a, b) => b.score - a.score || compareByPriors(a.entry, b.entry));
  } else {
    ranked.sort((a, b) => demotion(b.flags) - demotion(a.flags) || compareByPriors(a.entry, b.entry));
  }
  return ranked;
}

export const SUMMARY_FIELDS = ['id', 'summary', 'subject', 'scope', 'kind', 'confidence'] as const;

/** The summary-only shape of Req 4.12. */
export function summaryOnly(e: MemoryEntry): Pick<MemoryEntry, (typeof SUMMARY_FIELDS)[number]> {
  return { id: e.id, summary: e.summary, subject: e.subject, scope: e.scope, kind: e.kind, confidence: e.confidence };
}

/**
 * The Statistics document of 002 Req 22, computed from entries, the operation log and the query
 * log. Pure: `now` and the date range come in as arguments.
 */
import { EXPIRY_WARNING_DAYS, LOW_CONFIDENCE } from './query.js';
import { EVIDENCE_TYPES, KINDS, SECTIONS, STATUSES } from './constants.js';
import type { EntryLike } from './meta.js';

export interface OperationRecord {
  time: string;
  op: string;
  id: string;
  project: string;
  agent: string;
}

export interface QueryRecord {
  time: string;
  subject: string | null;
  scope: string | null;
}

export interface DateRange {
  start_date?: string;
  end_date?: string;
}

export const CONFIDENCE_BUCKETS = ['0.0-0.2', '0.2-0.4', '0.4-0.6', '0.6-0.8', '0.8-1.0'] as const;

export interface Statistics {
  project: string | null;
  date_range: { start_date: string | null; end_date: string | null };
  total_entries: number;
  entries_by_section: Record<string, number>;
  entries_by_status: Record<string, number>;
  entries_by_kind: Record<string, number>;
  avg_confidence: number;
  confidence_distribution: Record<(typeof CONFIDENCE_BUCKETS)[number], number>;
  entries_created_over_time: { date: string; count: number }[];
  entries_superseded_over_time: { date: string; count: number }[];
  evidence_type_distribution: Record<string, number>;
  low_confidence_count: number;
  stale_evidence_count: number;
  entries_by_agent: Record<string, number>;
  most_active_agents: { agent: string; count: number }[];
  recent_operations: OperationRecord[];
  most_queried_subjects: { subject: string; count: number }[];
  most_queried_scopes: { scope: string; count: number }[];
  query_frequency_over_time: { date: string; count: number }[];
  superseded_percentage: number;
  entries_approaching_expiry: { id: string; subject: string; valid_to: string; days_left: number }[];
  compaction_candidates: { count: number; ids: string[] };
}

function zeroes(keys: readonly string[]): Record<string, number> {
  return Object.fromEntries(keys.map((k) => [k, 0]));
}

function inRange(t: string, r: DateRange): boolean {
  return (!r.start_date || t >= r.start_date) && (!r.end_date || t <= r.end_date);
}

function series(times: string[]): { date: string; count: number }[] {
  const m = new Map<string, number>();
  for (const t of times) m.set(t.slice(0, 10), (m.get(t.slice(0, 10)) ?? 0) + 1);
  return [...m].sort(([a], [b]) => (a < b ? -1 : 1)).map(([date, count]) => ({ date, count }));
}

function top<K extends string>(values: (string | null)[], key: K, n = 10): ({ count: number } & Record<K, string>)[] {
  const m = new Map<string, number>();
  for (const v of values) if (v) m.set(v, (m.get(v) ?? 0) + 1);
  return [...m]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, n)
    .map(([v, count]) => ({ [key]: v, count }) as { count: number } & Record<K, string>);
}

export function bucketOf(c: number): (typeof CONFIDENCE_BUCKETS)[number] {
  const i = Math.min(4, Math.max(0, Math.floor(c * 5 + 1e-9)));
  return CONFIDENCE_BUCKETS[i]!;
}

export function computeStatistics(input: {
  project: string | null;
  entries: EntryLike[];
  operations: OperationRecord[];
  queries: QueryRecord[];
  staleIds?: Set<string>;
  range: DateRange;
  nowMs: number;
}): Statistics {
  const { range, nowMs } = input;
  const entries = input.entries.filter((e) => inRange(e.created_at, range));
  const ops = input.operations.filter((o) => inRange(o.time, range));
  const queries = input.queries.filter((q) => inRange(q.time, range));
  const bySection = zeroes(SECTIONS);
  const byStatus = zeroes(STATUSES);
  const byKind = zeroes(KINDS);
  const evidence = zeroes(EVIDENCE_TYPES);
  const dist = zeroes(CONFIDENCE_BUCKETS) as Statistics['confidence_distribution'];
  const byAgent: Record<string, number> = {};
  let sum = 0;
  for (const e of entries) {
    bySection[e.section]!++;
    byStatus[e.status]!++;
    byKind[e.kind]!++;
    dist[bucketOf(e.confidence)]++;
    for (const ev of e.evidence) evidence[ev.type]!++;
    byAgent[e.created_by] = (byAgent[e.created_by] ?? 0) + 1;
    sum += e.confidence;
  }
  const superseded = entries.filter((e) => e.status === 'superseded');
  const supersedeOps = ops.filter((o) => o.op === 'supersede').map((o) => o.time);
  const approaching = entries
    .filter((e) => e.status === 'active' && e.valid_to)
    .map((e) => ({ e, left: (Date.parse(e.valid_to!) - nowMs) / 86_400_000 }))
    .filter((x) => x.left >= 0 && x.left <= EXPIRY_WARNING_DAYS)
    .sort((a, b) => a.left - b.left)
    .map(({ e, left }) => ({ id: e.id, subject: e.subject, valid_to: e.valid_to!, days_left: Math.round(left * 10) / 10 }));
  const recent = [...ops]
    .filter((o) => o.op === 'create' || o.op === 'supersede' || o.op === 'deprecate')
    .sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0))
    .slice(0, 20);
  return {
    project: input.project,
    date_range: { start_date: range.start_date ?? null, end_date: range.end_date ?? null },
    total_entries: entries.length,
    entries_by_section: bySection,
    entries_by_status: byStatus,
    entries_by_kind: byKind,
    avg_confidence: entries.length ? Math.round((sum / entries.length) * 1000) / 1000 : 0,
    confidence_distribution: dist,
    entries_created_over_time: series(entries.map((e) => e.created_at)),
    // Supersede operations from the log; entries superseded before the log existed count by updated_at.
    entries_superseded_over_time: series(supersedeOps.length ? supersedeOps : superseded.map((e) => e.updated_at)),
    evidence_type_distribution: evidence,
    low_confidence_count: entries.filter((e) => e.confidence < LOW_CONFIDENCE).length,
    stale_evidence_count: input.staleIds ? entries.filter((e) => input.staleIds!.has(e.id)).length : 0,
    entries_by_agent: byAgent,
    most_active_agents: top(entries.map((e) => e.created_by), 'agent'),
    recent_operations: recent,
    most_queried_subjects: top(queries.map((q) => q.subject), 'subject'),
    most_queried_scopes: top(queries.map((q) => q.scope), 'scope'),
    query_frequency_over_time: series(queries.map((q) => q.time)),
    superseded_percentage: entries.length ? Math.round((superseded.length / entries.length) * 1000) / 10 : 0,
    entries_approaching_expiry: approaching,
    compaction_candidates: { count: superseded.length, ids: superseded.map((e) => e.id).sort() },
  };
}

/** The Statistics document from entries, the operation log and the query log; pure. */
import { EXPIRY_WARNING_DAYS, LOW_CONFIDENCE } from './query.js';
import { EVIDENCE_TYPES, KINDS, SECTIONS, STATUSES } from './constants.js';
import type { EntryLike } from './meta.js';
import type { z } from 'zod';
import type { StatisticsSchema } from './json-schema.js';

export type OperationRecord = { time: string; op: string; id: string; project: string; agent: string };

export type QueryRecord = { time: string; subject: string | null; scope: string | null };
export type DateRange = { start_date?: string; end_date?: string };

export const CONFIDENCE_BUCKETS = ['0.0-0.2', '0.2-0.4', '0.4-0.6', '0.6-0.8', '0.8-1.0'] as const;

/** The Statistics document: its one definition is the schema that `schemas/statistics.schema.json` is generated from. */
export type Statistics = z.infer<typeof StatisticsSchema>;

const zeroes = <K extends string>(keys: readonly K[]): Record<K, number> => Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

const inRange = (t: string, r: DateRange): boolean => (!r.start_date || t >= r.start_date) && (!r.end_date || t <= r.end_date);

/** How often each value occurs (nulls left out). */
function tally(values: Iterable<string | null>): Map<string, number> {
  const m = new Map<string, number>();
  for (const v of values) if (v) m.set(v, (m.get(v) ?? 0) + 1);
  return m;
}

/** Counts by day, oldest first. */
const perDay = (m: Map<string, number>): { date: string; count: number }[] =>
  [...m].sort(([a], [b]) => (a < b ? -1 : 1)).map(([date, count]) => ({ date, count }));

const series = (times: string[]): { date: string; count: number }[] => perDay(tally(times.map((t) => t.slice(0, 10))));

/** The `n` most frequent values, most first (ties by value). */
function top<K extends string>(counts: Map<string, number>, key: K, n = 10): ({ count: number } & Record<K, string>)[] {
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, n)
    .map(([v, count]) => ({ [key]: v, count }) as { count: number } & Record<K, string>);
}

export function bucketOf(c: number): (typeof CONFIDENCE_BUCKETS)[number] {
  const i = Math.min(4, Math.max(0, Math.floor(c * 5 + 1e-9)));
  return CONFIDENCE_BUCKETS[i] ?? '0.0-0.2'; // c is NaN
}

/** Counts kept one entry at a time: `add` and `remove` are exact inverses, so a long-lived process applies only what changed. */
export class EntryAggregate {
  total = 0;
  sum = 0;
  low = 0;
  readonly bySection = zeroes(SECTIONS);
  readonly byStatus = zeroes(STATUSES);
  readonly byKind = zeroes(KINDS);
  readonly evidence = zeroes(EVIDENCE_TYPES);
  readonly dist: Statistics['confidence_distribution'] = zeroes(CONFIDENCE_BUCKETS);
  readonly byAgent = new Map<string, number>();
  readonly createdPerDay = new Map<string, number>();
  /** Superseded entries: id → updated_at. */
  readonly superseded = new Map<string, string>();
  /** Active entries with a valid_to (candidates for "approaching expiry"). */
  readonly expiring = new Map<string, EntryLike>();
  readonly ids = new Set<string>();

  private bump(e: EntryLike, d: 1 | -1): void {
    const inc = (m: Map<string, number>, k: string): void => {
      const v = (m.get(k) ?? 0) + d;
      if (v) m.set(k, v);
      else m.delete(k);
    };
    this.total += d;
    this.sum += d * e.confidence;
    if (e.confidence < LOW_CONFIDENCE) this.low += d;
    this.bySection[e.section] += d;
    this.byStatus[e.status] += d;
    this.byKind[e.kind] += d;
    this.dist[bucketOf(e.confidence)] += d;
    for (const ev of e.evidence) this.evidence[ev.type] += d;
    inc(this.byAgent, e.created_by);
    inc(this.createdPerDay, e.created_at.slice(0, 10));
  }

  add(e: EntryLike): void {
    this.bump(e, 1);
    this.ids.add(e.id);
    if (e.status === 'superseded') this.superseded.set(e.id, e.updated_at);
    if (e.status === 'active' && e.valid_to) this.expiring.set(e.id, e);
  }

  remove(e: EntryLike): void {
    this.bump(e, -1);
    this.ids.delete(e.id);
    this.superseded.delete(e.id);
    this.expiring.delete(e.id);
  }
}

/** What the Statistics document is computed from, besides the entries. */
export interface StatisticsInput {
  project: string | null;
  operations: OperationRecord[];
  queries: QueryRecord[];
  staleIds?: Set<string>;
  range: DateRange;
  nowMs: number;
}

/** The Statistics document from an aggregate of (in-range) entries and the (in-range) logs. */
export function statisticsFrom(agg: EntryAggregate, input: StatisticsInput): Statistics {
  const { range, nowMs } = input;
  const ops = input.operations.filter((o) => inRange(o.time, range));
  const queries = input.queries.filter((q) => inRange(q.time, range));
  const supersedeOps = ops.filter((o) => o.op === 'supersede').map((o) => o.time);
  const approaching = [...agg.expiring.values()]
    .map((e) => ({ e, left: (Date.parse(e.valid_to!) - nowMs) / 86_400_000 }))
    .filter((x) => x.left >= 0 && x.left <= EXPIRY_WARNING_DAYS)
    .sort((a, b) => a.left - b.left || (a.e.id < b.e.id ? -1 : 1))
    .map(({ e, left }) => ({ id: e.id, subject: e.subject, valid_to: e.valid_to!, days_left: Math.round(left * 10) / 10 }));
  const recent = [...ops]
    .filter((o) => o.op === 'create' || o.op === 'supersede' || o.op === 'deprecate')
    .sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0))
    .slice(0, 20);
  let stale = 0;
  if (input.staleIds) for (const id of input.staleIds) if (agg.ids.has(id)) stale++;
  return {
    project: input.project,
    date_range: { start_date: range.start_date ?? null, end_date: range.end_date ?? null },
    total_entries: agg.total,
    entries_by_section: { ...agg.bySection },
    entries_by_status: { ...agg.byStatus },
    entries_by_kind: { ...agg.byKind },
    avg_confidence: agg.total ? Math.round((agg.sum / agg.total) * 1000) / 1000 : 0,
    confidence_distribution: { ...agg.dist },
    entries_created_over_time: perDay(agg.createdPerDay),
    // Supersede operations from the log; entries superseded before the log existed count by updated_at.
    entries_superseded_over_time: series(supersedeOps.length ? supersedeOps : [...agg.superseded.values()]),
    evidence_type_distribution: { ...agg.evidence },
    low_confidence_count: agg.low,
    stale_evidence_count: stale,
    entries_by_agent: Object.fromEntries([...agg.byAgent].sort(([a], [b]) => (a < b ? -1 : 1))),
    most_active_agents: top(agg.byAgent, 'agent'),
    recent_operations: recent,
    most_queried_subjects: top(tally(queries.map((q) => q.subject)), 'subject'),
    most_queried_scopes: top(tally(queries.map((q) => q.scope)), 'scope'),
    query_frequency_over_time: series(queries.map((q) => q.time)),
    superseded_percentage: agg.total ? Math.round((agg.superseded.size / agg.total) * 1000) / 10 : 0,
    entries_approaching_expiry: approaching,
    compaction_candidates: { count: agg.superseded.size, ids: [...agg.superseded.keys()].sort() },
  };
}

/** Statistics by a scan (a date range, or a one-shot process). */
export function computeStatistics(input: StatisticsInput & { entries: EntryLike[] }): Statistics {
  const agg = new EntryAggregate();
  for (const e of input.entries) if (inRange(e.created_at, input.range)) agg.add(e);
  return statisticsFrom(agg, input);
}

// ---------------------------------------------------------------- health (thresholds: docs/dashboard.md)

export type Level = 'green' | 'yellow' | 'red';

const band = (value: number, greenMax: number, yellowMax: number): Level => (value <= greenMax ? 'green' : value <= yellowMax ? 'yellow' : 'red');
const pct = (x: number): string => `${Math.round(x * 100)}%`;

/** Each metric's level, the overall one, and why it is what it is (the metrics at that level, in words with their numbers). */
export function health(s: Statistics) {
  const n = Math.max(1, s.total_entries);
  const active = Math.max(1, s.entries_by_status.active ?? 0);
  const expiring = s.entries_approaching_expiry.length;
  // Each metric's level, and the words that say why.
  const metrics = {
    avg_confidence: [
      s.total_entries === 0 || s.avg_confidence >= 0.7 ? 'green' : s.avg_confidence >= 0.5 ? 'yellow' : 'red',
      `average confidence ${s.avg_confidence.toFixed(2)}`,
    ],
    low_confidence: [
      band(s.low_confidence_count / n, 0.1, 0.25),
      `${s.low_confidence_count} of ${s.total_entries} low-confidence (${pct(s.low_confidence_count / n)})`,
    ],
    stale_evidence: [band(s.stale_evidence_count / n, 0, 0.05), `${s.stale_evidence_count} of ${s.total_entries} with stale evidence`],
    superseded: [band(s.superseded_percentage, 30, 50), `${s.superseded_percentage}% superseded (memory compact)`],
    // Expiry is a state entry's normal life: a warning when a tenth of the live entries expire within the week, never an issue.
    expiring: [expiring / active > 0.1 ? 'yellow' : 'green', `${expiring} of ${s.entries_by_status.active ?? 0} active expiring within 7 days`],
  } satisfies Record<string, [Level, string]>;
  const levels = Object.fromEntries(Object.entries(metrics).map(([k, [level]]) => [k, level])) as Record<keyof typeof metrics, Level>;
  const all = Object.values(levels);
  const overall: Level = all.includes('red') ? 'red' : all.includes('yellow') ? 'yellow' : 'green';
  const reasons = overall === 'green' ? [] : Object.values(metrics).flatMap(([level, words]) => (level === overall ? [words] : []));
  return { ...levels, overall, reasons };
}

/** The date range of a dashboard filter, as of `now`. */
export function rangeFor(filter: '7d' | '30d' | 'all', now: Date): { start_date?: string } {
  return filter === 'all' ? {} : { start_date: new Date(now.getTime() - (filter === '7d' ? 7 : 30) * 86_400_000).toISOString() };
}

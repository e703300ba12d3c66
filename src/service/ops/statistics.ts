/** `memory stats`, kept incrementally per project selection in a long-lived process. */
import { EntryAggregate, computeStatistics, statisticsFrom, type DateRange, type OperationRecord, type QueryRecord } from '../../core/stats.js';
import type { EntryMeta } from '../../core/meta.js';
import type { CatalogSnapshot, StoredEntry } from '../../store/catalog.js';
import { labelOf, TEXT_NOT_KEPT } from '../../store/query-log.js';
import type { Engine } from '../engine.js';
import type { Caller } from '../caller.js';

/** Per project selection, with the snapshot they last followed. */
export type Aggregates = Map<string, { agg: EntryAggregate; seen: Map<string, { stamp: string; meta: EntryMeta }>; snap?: CatalogSnapshot }>;

/** A query log line: subject and scope as typed only when the config kept them. */
type LoggedQuery = {
  time: string;
  subject?: string | null;
  scope?: string | null;
  subject_hash?: string | null;
  scope_hash?: string | null;
  projects: string[] | null;
};

/** These projects' queries (undefined: all); subject and scope as typed when kept, else an entry's with that hash, else "(text not kept)". */
function namedQueries(engine: Engine, snap: CatalogSnapshot, projects: string[] | undefined): QueryRecord[] {
  const logged = engine.logs.read<LoggedQuery>(engine.ws, 'queries').filter((q) => !projects || !q.projects || q.projects.some((p) => projects.includes(p)));
  let subjectOf: ((h: string) => string | undefined) | undefined;
  let scopeOf: ((h: string) => string | undefined) | undefined;
  const name = (kept: string | null | undefined, hash: string | null | undefined, of: () => (h: string) => string | undefined): string | null =>
    kept !== undefined ? kept : hash ? (of()(hash) ?? TEXT_NOT_KEPT) : null;
  // Hashed only as far as a lookup needs (labelOf).
  const values = (field: 'subject' | 'scope', extra: string[]): Set<string> => new Set([...extra, ...snap.entries.map((se) => se.meta[field])]);
  return logged.map((q) => ({
    time: q.time,
    subject: name(q.subject, q.subject_hash, () => (subjectOf ??= labelOf(engine.ws, values('subject', [])))),
    scope: name(q.scope, q.scope_hash, () => (scopeOf ??= labelOf(engine.ws, values('scope', ['repo', 'org'])))),
  }));
}

/**
 * Without a date range the counts come from an aggregate updated only for the entries changed since
 * the last call. `refresh: false` (a caller that tracks changes itself) skips re-reading the files.
 */
export function getStatistics(engine: Engine, caller: Caller, project: string | undefined, range: DateRange = {}, opts: { refresh?: boolean } = {}) {
  const projects = project ? [caller.project(engine, project, true)] : undefined;
  const snap = opts.refresh === false ? (engine.rm.current ?? engine.snapshot(caller.warn)) : engine.snapshot(caller.warn);
  const operations = engine.logs.read<OperationRecord>(engine.ws, 'operations').filter((o) => !projects || projects.includes(o.project));
  const queries = namedQueries(engine, snap, projects);
  const staleIds = new Set([...engine.evidenceCache.staleKeys()].map((k) => k.slice(k.indexOf('/') + 1)));
  const base = { project: projects?.[0] ?? null, operations, queries, range, nowMs: caller.now().getTime(), staleIds };
  const mine = (): StoredEntry[] => snap.entries.filter((se) => !projects || projects.includes(se.project));
  if (range.start_date || range.end_date) return computeStatistics({ ...base, entries: mine().map((se) => se.meta) });
  const key = projects ? projects.join(',') : '*';
  let st = engine.aggregates.get(key);
  if (!st) engine.aggregates.set(key, (st = { agg: new EntryAggregate(), seen: new Map() }));
  // Not the same snapshot as last time: the entries changed since are counted again.
  if (st.snap !== snap) {
    st.snap = snap;
    const present = new Set<string>();
    for (const se of mine()) {
      present.add(se.key);
      const old = st.seen.get(se.key);
      if (old?.stamp === se.stamp) continue;
      if (old) st.agg.remove(old.meta);
      st.agg.add(se.meta);
      st.seen.set(se.key, { stamp: se.stamp, meta: se.meta });
    }
    for (const [k, old] of st.seen) {
      if (present.has(k)) continue;
      st.agg.remove(old.meta);
      st.seen.delete(k);
    }
  }
  return statisticsFrom(st.agg, base);
}

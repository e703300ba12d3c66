/**
 * `memory stats` (002 Req 22): the Statistics document, kept incrementally per project selection
 * in a long-lived process.
 */
import {
  EntryAggregate,
  computeStatistics,
  statisticsFrom,
  type DateRange,
  type OperationRecord,
  type QueryRecord,
  type Statistics,
} from '../../core/stats.js';
import type { EntryMeta } from '../../core/meta.js';
import type { CatalogSnapshot, StoredEntry } from '../../store/catalog.js';
import type { ServiceContext } from '../context.js';
import type { ReadModel } from '../read-model.js';

/** Statistics aggregates per project selection, with the catalog snapshot they last followed. */
export type Aggregates = Map<string, { agg: EntryAggregate; seen: Map<string, { stamp: string; meta: EntryMeta }>; snap?: CatalogSnapshot }>;

/**
 * getStatistics (Req 22): one project or all, optionally within a date range. Without a range
 * the entry counts come from an aggregate kept per project selection and updated only for the
 * entries whose files changed since the last call (Req 22.9); logs are read incrementally.
 * `refresh: false` (a caller that tracks changes itself) skips re-reading the files.
 */
export function getStatistics(
  ctx: ServiceContext,
  rm: ReadModel,
  aggregates: Aggregates,
  project: string | undefined,
  range: DateRange = {},
  opts: { refresh?: boolean } = {},
): Statistics {
  const projects = project ? [ctx.project(project, true)] : undefined;
  const snap = opts.refresh === false ? (rm.current ?? ctx.lastSnap ?? ctx.snapshot()) : ctx.snapshot();
  const operations = ctx.logs.read<OperationRecord>(ctx.ws, 'operations').filter((o) => !projects || projects.includes(o.project));
  const queries = ctx.logs
    .read<QueryRecord & { projects: string[] | null }>(ctx.ws, 'queries')
    .filter((q) => !projects || !q.projects || q.projects.some((p) => projects.includes(p)));
  const staleIds = new Set([...ctx.evidenceCache.staleKeys()].map((k) => k.slice(k.indexOf('/') + 1)));
  const nowMs = ctx.now().getTime();
  const mineOf = (): StoredEntry[] => snap.entries.filter((se) => !projects || projects.includes(se.project));
  if (range.start_date || range.end_date) {
    return computeStatistics({ project: projects?.[0] ?? null, entries: mineOf().map((se) => se.meta), operations, queries, range, nowMs, staleIds });
  }
  const key = projects ? projects.join(',') : '*';
  let st = aggregates.get(key);
  if (!st) aggregates.set(key, (st = { agg: new EntryAggregate(), seen: new Map() }));
  // The same catalog snapshot as last time: no entry changed, only the logs are read again.
  if (st.snap === snap) return statisticsFrom(st.agg, { project: projects?.[0] ?? null, operations, queries, range, nowMs, staleIds });
  st.snap = snap;
  const mine = mineOf();
  const present = new Set<string>();
  for (const se of mine) {
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
  return statisticsFrom(st.agg, { project: projects?.[0] ?? null, operations, queries, range, nowMs, staleIds });
}

/**
 * `memory list` and `memory query` (002 Req 4, 15): filters, optional text, ranking, limit;
 * the query log.
 */
import { UsageError } from '../../core/errors.js';
import type { DecayConfig } from '../../core/lifecycle.js';
import { lifecycleOf } from '../../core/lifecycle.js';
import type { EntryMeta } from '../../core/meta.js';
import {
  MAX_RESULTS,
  compileFilters,
  matchesFilters,
  rankEntries,
  textFloor,
  textWeight,
  type Candidate,
  type QueryFilters,
  type QueryHit,
} from '../../core/query.js';
import type { CatalogSnapshot, StoredEntry } from '../../store/catalog.js';
import { appendLog } from '../../store/local-log.js';
import type { ServiceContext } from '../context.js';
import type { ReadModel } from '../read-model.js';

/** The longest query text accepted: longer ones are refused, not truncated. */
export const MAX_QUERY_LENGTH = 4096;

/** The deepest page: ranking cost grows with offset + limit. */
export const MAX_OFFSET = 10_000;

export interface QueryOptions {
  limit?: number;
  /** Skip this many of the ranked results first (paging: `limit` results from `offset`). */
  offset?: number;
  includeRelated?: boolean;
  /** Count the results as retrievals (local usage; default true). `list` and resource listings do not. */
  record?: boolean;
  /** Re-read changed files before answering (default true). */
  refresh?: boolean;
}

export interface QueryStats {
  execution_ms: number;
  entries_scanned: number;
  entries_matched_filters: number;
  entries_returned: number;
  index: { loaded_snapshot: boolean; partial: boolean; added: number; replaced: number; removed: number } | null;
}

export { hitJson, type QueryHit } from '../../core/query.js';

export interface QueryResult {
  results: QueryHit[];
  stats: QueryStats;
}

/** `memory list` and `memory query` share this: filters, optional text, ranking, limit (Req 4, 15). */
export function query(ctx: ServiceContext, rm: ReadModel, text: string, filters: QueryFilters, opts: QueryOptions = {}): QueryResult {
  const t0 = performance.now();
  if (text.length > MAX_QUERY_LENGTH) throw new UsageError(`query text is ${text.length} characters; at most ${MAX_QUERY_LENGTH} are accepted`);
  const nowMs = ctx.now().getTime();
  const hasText = text.trim().length > 0;
  const { snap, index, indexStats } = rm.load(text, opts.refresh !== false);
  interface Cand extends Candidate<EntryMeta> {
    se: StoredEntry;
  }
  const accept = compileFilters(filters, nowMs);
  const staleKeys = ctx.evidenceCache.staleKeys();
  const cands: Cand[] = [];
  let matchedCount = 0;
  // A page of at most MAX_RESULTS from `offset`: the ranking goes that far, the page is its tail.
  const offset = Math.max(0, Math.min(Math.floor(opts.offset ?? 0), MAX_OFFSET));
  const limit = Math.max(0, Math.min(opts.limit ?? MAX_RESULTS, MAX_RESULTS)) + offset;
  if (hasText && index) {
    // Relevance does not depend on the filters (MiniSearch scores first and filters after), so
    // look up only the entries the text reaches and apply the filters to those: the same result
    // as restricting first, for the cost of the hits instead of every entry.
    // Hits come by MiniSearch's document number: a long-lived process finds their entries in a
    // table built once per catalog and index version, a one-shot query by key.
    let scores: Float64Array;
    let entryAt: (i: number) => StoredEntry | undefined;
    const raw = index.rawHits(text);
    if (raw) {
      scores = raw.scores;
      const sids = raw.sids;
      if (ctx.longLived) {
        const bySid = rm.sidTable(snap, index);
        entryAt = (i) => bySid[sids[i]];
      } else {
        const byKey = rm.keyed(snap);
        entryAt = (i) => byKey.get(index.keyOf(sids[i]) ?? '');
      }
    } else {
      const byKey = rm.keyed(snap);
      const hits = index.hits(text);
      scores = Float64Array.from(hits, (h) => h.score);
      entryAt = (i) => byKey.get(hits[i].id as string);
    }
    // Filter every hit and weigh it by its priors in typed arrays, then make candidates only of
    // the hits that can still reach the first `limit` (textFloor): at 100K entries a query
    // reaches ~20,000 entries and a few hundred become candidates.
    const accepted = new Int32Array(scores.length);
    const bases = new Float64Array(scores.length);
    let n = 0;
    let max = 0;
    for (let i = 0; i < scores.length; i++) {
      const se = entryAt(i);
      if (!se || !accept(se.meta, se.project)) continue;
      const score = scores[i];
      bases[n] = score * textWeight(se.meta, nowMs, staleKeys.size > 0 && staleKeys.has(se.key));
      accepted[n++] = i;
      if (score > max) max = score;
    }
    const floor = textFloor(bases.subarray(0, n), limit, max);
    for (let j = 0; j < n; j++) {
      if (bases[j] < floor) continue;
      const se = entryAt(accepted[j])!;
      cands.push({ project: se.project, entry: se.meta, se, relevance: scores[accepted[j]], stale: staleKeys.has(se.key) });
    }
    for (const c of cands) c.relevance = max > 0 ? c.relevance! / max : 0;
    matchedCount = n;
  } else {
    for (const se of snap.entries) if (accept(se.meta, se.project)) cands.push({ project: se.project, entry: se.meta, se, stale: staleKeys.has(se.key) });
    matchedCount = cands.length;
  }
  // Decay strength and effective confidence (retrieval boosts, curve) as of now, computed for
  // the candidates ranking needs them for.
  const usage = ctx.usage.load();
  const cfgs = new Map<string, DecayConfig>();
  const lifecycle = (c: Cand): { strength: number; effective_confidence: number } => {
    let cfg = cfgs.get(c.project);
    if (!cfg) cfgs.set(c.project, (cfg = ctx.decayConfig(c.project)));
    return lifecycleOf(c.entry, usage.get(c.se.key), cfg, nowMs, c.entry.importance0);
  };
  // Rank on metadata; read the full entries of the results only.
  const ranked: QueryHit[] = rankEntries<EntryMeta, Cand>(cands, nowMs, hasText, limit, lifecycle)
    .slice(offset)
    .map(({ se, entry: _meta, ...r }) => ({
      ...r,
      entry: se.entry,
    }));
  if (opts.includeRelated) addRelated(ranked, snap, filters, nowMs, limit);
  // 000 "Boost on retrieval": a result counts as a retrieval (local usage, never a commit).
  if (opts.record !== false)
    ctx.usage.recordRetrievals(
      ranked.map((r) => `${r.project}/${r.entry.id}`),
      ctx.now().toISOString(),
    );
  const ms = performance.now() - t0;
  return {
    results: ranked,
    stats: {
      execution_ms: Math.round(ms * 100) / 100,
      entries_scanned: snap.entries.length,
      entries_matched_filters: matchedCount,
      entries_returned: ranked.length,
      index: indexStats,
    },
  };
}

/** Follows related_entries (Req 4.11); related entries obey the same status and validity rules. */
function addRelated(results: QueryHit[], snap: CatalogSnapshot, filters: QueryFilters, nowMs: number, limit: number): void {
  const byId = new Map(snap.entries.map((se) => [se.meta.id, se] as const));
  const present = new Set(results.map((r) => r.entry.id));
  const statusOnly: QueryFilters = {
    status: filters.status,
    minConfidence: filters.minConfidence,
    includeExpired: filters.includeExpired,
  };
  const extra: QueryHit[] = [];
  for (const r of results) {
    for (const rid of r.entry.related_entries) {
      if (present.has(rid) || results.length + extra.length >= limit) continue;
      const se = byId.get(rid);
      if (!se || !matchesFilters(se.meta, se.project, statusOnly, nowMs)) continue;
      present.add(rid);
      const [ranked] = rankEntries([{ project: se.project, entry: se.entry }], nowMs, false);
      extra.push({ ...ranked, score: 0, related_to: r.entry.id });
    }
  }
  results.push(...extra);
}

/** Appends a query to the local query log (statistics read it: Req 22.6). */
export function logQuery(ctx: ServiceContext, record: { text: string; filters: QueryFilters; result_count: number; execution_ms: number }): void {
  appendLog(ctx.ws, 'queries', {
    time: ctx.now().toISOString(),
    text: record.text,
    subject: record.filters.subject ?? null,
    scope: record.filters.scope ?? null,
    projects: record.filters.projects ?? null,
    filters: record.filters,
    result_count: record.result_count,
    execution_ms: record.execution_ms,
  });
}

/** Reads a project's slow-query threshold (Req 11.2). */
export function slowQueryMs(ctx: ServiceContext, project?: string): number {
  try {
    const p = ctx.project(project);
    return ctx.projectConfig(p).query.slow_ms;
  } catch {
    return 200;
  }
}

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
  matchesFilters,
  filterParts,
  filtersOf,
  firstByPriorKeys,
  nthLargest,
  rankEntries,
  textFloor,
  textWeight,
  type Candidate,
  type QueryFilters,
  type QueryHit,
} from '../../core/query.js';
import { CONTEXT_WINDOW, SEMANTIC_ONLY_MAX, SEMANTIC_ONLY_MIN, contextLifts, episodeKey, fuse } from '../../core/retrieval.js';
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
  /**
   * Semantic search: the cosine similarity of the query's vector to an entry's (undefined when
   * the entry has none yet). The caller embeds the query (a daemon, or `--semantic`).
   */
  semantic?: { similarity: (key: string) => number | undefined };
}

export interface QueryStats {
  execution_ms: number;
  entries_scanned: number;
  entries_matched_filters: number;
  entries_returned: number;
  /** Whether semantic similarity was fused with the lexical score. */
  semantic: boolean;
  /** Results lifted by a hit next to them in their episode: `[id, id of the hit]`. */
  context: [string, string][];
  /**
   * `current`: the index snapshot was saved from this very catalog content (no stamp compared,
   * nothing to sync); `files_since`: it was synced by the files changed since the content it was
   * saved from, this many, rather than by every entry's stamp.
   */
  index: { loaded_snapshot: boolean; partial: boolean; added: number; replaced: number; removed: number; current?: boolean; files_since?: number } | null;
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
  const parts = filterParts(filters, nowMs);
  const accept = filtersOf(parts);
  const staleKeys = ctx.evidenceCache.staleKeys();
  const cands: Cand[] = [];
  let matchedCount = 0;
  let semanticUsed = false;
  const liftedBy = new Map<StoredEntry, string>();
  // A page of at most MAX_RESULTS from `offset`: the ranking goes that far, the page is its tail.
  const offset = Math.max(0, Math.min(Math.floor(opts.offset ?? 0), MAX_OFFSET));
  const limit = Math.max(0, Math.min(opts.limit ?? MAX_RESULTS, MAX_RESULTS)) + offset;
  if (hasText && index) {
    // Relevance does not depend on the filters (MiniSearch scores first and filters after), so
    // look up only the entries the text reaches and apply the filters to those: the same result
    // as restricting first, for the cost of the hits instead of every entry.
    // Hits come by the index's document number: a long-lived process finds their entries in a
    // table built once per catalog and index version, a one-shot query by key.
    let entryAt: (i: number) => StoredEntry | undefined;
    const { sids, scores } = index.rawHits(text);
    if (ctx.longLived) {
      const bySid = rm.sidTable(snap, index);
      entryAt = (i) => bySid[sids[i]];
    } else {
      // The snapshot's record of where each document's entry is, when it was saved from this very
      // catalog content (checked by key); else a map of every entry by key.
      const cached = snap.cached;
      entryAt = (i) => {
        const key = index.keyOf(sids[i]);
        const at = index.entryAt(sids[i]);
        const se = at === undefined ? undefined : cached ? (at < cached.count ? cached.at(at) : undefined) : snap.entries[at];
        return se && se.key === key ? se : rm.keyed(snap).get(key ?? '');
      };
    }
    // Every hit that passes the filters, with its lexical relevance (0..1 of the best one).
    let ents: StoredEntry[] = [];
    let rel: number[] = [];
    let max = 0;
    for (let i = 0; i < scores.length; i++) {
      const se = entryAt(i);
      if (!se || !accept(se.meta, se.project)) continue;
      ents.push(se);
      rel.push(scores[i]);
      if (scores[i] > max) max = scores[i];
    }
    for (let j = 0; j < rel.length; j++) rel[j] = max > 0 ? rel[j] / max : 0;
    // Semantic similarity, fused with the lexical score: every entry that passes the filters is
    // a candidate, whether or not it shares a word with the text.
    if (opts.semantic) {
      const sim = opts.semantic.similarity;
      const lexOf = new Map<StoredEntry, number>();
      for (let j = 0; j < ents.length; j++) lexOf.set(ents[j], rel[j]);
      const all: StoredEntry[] = [];
      const sims: (number | undefined)[] = [];
      let lo = Infinity;
      let hi = -Infinity;
      for (const se of snap.entries) {
        if (!accept(se.meta, se.project)) continue;
        const s = sim(se.key);
        all.push(se);
        sims.push(s);
        if (s !== undefined) {
          if (s < lo) lo = s;
          if (s > hi) hi = s;
        }
      }
      const fused = new Float64Array(all.length);
      const meaningOnly: number[] = [];
      for (let j = 0; j < all.length; j++) {
        fused[j] = fuse(lexOf.get(all[j]) ?? 0, sims[j], lo, hi);
        if (!lexOf.has(all[j]) && fused[j] >= SEMANTIC_ONLY_MIN) meaningOnly.push(fused[j]);
      }
      // An entry that shares no word with the text is a match only if its meaning is close, and
      // only the closest few hundred of those: the rest cannot reach a page, and would only cost
      // ranking time (thousands at 10K entries).
      const keepAbove = meaningOnly.length > SEMANTIC_ONLY_MAX ? nthLargest(Float64Array.from(meaningOnly), SEMANTIC_ONLY_MAX) : SEMANTIC_ONLY_MIN;
      ents = [];
      rel = [];
      for (let j = 0; j < all.length; j++) {
        if (lexOf.has(all[j]) || fused[j] >= keepAbove) {
          ents.push(all[j]);
          rel.push(fused[j]);
        }
      }
      semanticUsed = true;
    }
    // Context: the best hits lift their neighbours in the same episode (filters still apply).
    // Only those few neighbours are looked up among the hits (one pass, no map of every hit).
    let neighbours = new Set<StoredEntry>();
    let position: Map<StoredEntry, number> | undefined;
    const positionOf = (se: StoredEntry): number | undefined => {
      if (!position) {
        position = new Map();
        for (let j = 0; j < ents.length; j++) if (neighbours.has(ents[j])) position.set(ents[j], j);
      }
      return position.get(se);
    };
    const lifts = contextLifts(
      ents,
      (j) => rel[j],
      (hits) => {
        const windows = episodesOf(snap, hits, (se) => accept(se.meta, se.project));
        neighbours = new Set(windows.flat().filter((se): se is StoredEntry => se !== undefined));
        return windows;
      },
      (se) => {
        const j = positionOf(se);
        return j === undefined ? 0 : rel[j];
      },
    );
    for (const l of lifts) {
      const j = positionOf(l.item);
      if (j === undefined) {
        ents.push(l.item);
        rel.push(l.relevance);
      } else rel[j] = l.relevance;
      liftedBy.set(l.item, l.by.meta.id);
    }
    // Weigh every hit by its priors, then make candidates only of the hits that can still reach
    // the first `limit` (textFloor): at 100K entries a query reaches ~20,000 entries and a few
    // hundred become candidates.
    const n = ents.length;
    const bases = new Float64Array(n);
    let top = 0;
    for (let j = 0; j < n; j++) {
      const se = ents[j];
      bases[j] = rel[j] * textWeight(se.meta, nowMs, staleKeys.size > 0 && staleKeys.has(se.key));
      if (rel[j] > top) top = rel[j];
    }
    const floor = textFloor(bases, limit, top);
    for (let j = 0; j < n; j++) {
      if (bases[j] < floor || !(rel[j] > 0)) continue;
      const se = ents[j];
      cands.push({ project: se.project, entry: se.meta, se, relevance: rel[j], stale: staleKeys.size > 0 && staleKeys.has(se.key) });
    }
    matchedCount = n;
  } else if (snap.cached) {
    // The catalog cache as loaded holds the entries: the filters and the order read its columns,
    // and only the page's entries are made (rankEntries then orders them exactly so again).
    const ce = snap.cached;
    const staleAt = staleKeys.size > 0 ? (j: number): boolean => staleKeys.has(ce.keyOf(j)) : undefined;
    const passed = ce.passing(parts, accept);
    const page = firstByPriorKeys(ce.priorKeysOf(passed, nowMs, staleAt), limit, (k) => ce.idOf(passed[k]));
    for (const { at } of page) {
      const se = ce.at(passed[at]);
      cands.push({ project: se.project, entry: se.meta, se, stale: staleAt ? staleAt(passed[at]) : false });
    }
    matchedCount = passed.length;
  } else {
    for (const se of snap.entries)
      if (accept(se.meta, se.project)) cands.push({ project: se.project, entry: se.meta, se, stale: staleKeys.size > 0 && staleKeys.has(se.key) });
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
    .map(({ se, entry: _meta, ...r }) => {
      const hit: QueryHit = { ...r, entry: se.entry };
      const by = liftedBy.get(se);
      if (by) hit.lifted_by = by;
      return hit;
    });
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
      entries_scanned: snap.cached ? snap.cached.count : snap.entries.length,
      entries_matched_filters: matchedCount,
      entries_returned: ranked.length,
      semantic: semanticUsed,
      context: ranked.filter((r) => r.lifted_by).map((r) => [r.entry.id, r.lifted_by!]),
      index: indexStats,
    },
  };
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** The random part of a ULID as a number (a batch's ids count up by one from a shared time), or null. */
function ulidSequence(id: string): bigint | null {
  if (id.length !== 26) return null;
  let n = 0n;
  for (let i = 10; i < 26; i++) {
    const d = CROCKFORD.indexOf(id[i].toUpperCase());
    if (d < 0) return null;
    n = n * 32n + BigInt(d);
  }
  return n;
}

/**
 * The neighbourhood of each hit in its episode, as `contextLifts` reads it: an array with the
 * hit in the middle and, on either side, the entries written just before and after it in the
 * same batch (same project, subject and `created_at`; a batch's ids count up by one), each only
 * if it passes the filters. One pass over the catalog's metadata for all the hits.
 */
function episodesOf(snap: CatalogSnapshot, hits: readonly StoredEntry[], accept: (se: StoredEntry) => boolean): (StoredEntry | undefined)[][] {
  const W = CONTEXT_WINDOW;
  const windows = hits.map((h) => {
    const w: (StoredEntry | undefined)[] = new Array<StoredEntry | undefined>(2 * W + 1).fill(undefined);
    w[W] = h;
    return w;
  });
  const seqs = hits.map((h) => ulidSequence(h.meta.id));
  const groups = new Map<string, number[]>();
  const subjects = new Set<string>();
  hits.forEach((h, i) => {
    if (seqs[i] === null) return;
    const k = episodeKey(h.meta, h.project);
    groups.set(k, [...(groups.get(k) ?? []), i]);
    subjects.add(h.meta.subject);
  });
  if (!groups.size) return windows;
  // From the catalog cache's columns when it holds the entries: only the episodes' entries are made.
  const ce = snap.cached;
  for (const j of ce ? ce.withSubject(subjects) : snap.entries.keys()) {
    const meta = ce ? ce.peek(j) : snap.entries[j].meta;
    if (!subjects.has(meta.subject)) continue;
    const group = groups.get(episodeKey(meta, ce ? ce.projectOf(j) : snap.entries[j].project));
    if (!group) continue;
    const seq = ulidSequence(meta.id);
    if (seq === null) continue;
    const se = ce ? ce.at(j) : snap.entries[j];
    for (const i of group) {
      const d = seq - seqs[i]!;
      if (d === 0n || d < BigInt(-W) || d > BigInt(W) || !accept(se)) continue;
      windows[i][W + Number(d)] = se;
    }
  }
  return windows;
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

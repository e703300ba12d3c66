/**
 * `memory list` and `memory query` (002 Req 4, 15): filters, optional text, ranking, limit;
 * the query log.
 */
import { UsageError } from '../../core/errors.js';
import type { DecayConfig } from '../../core/lifecycle.js';
import { lifecycleOf } from '../../core/lifecycle.js';
import type { EntryLike, EntryMeta } from '../../core/meta.js';
import {
  MAX_RESULTS,
  matchesFilters,
  filterParts,
  filtersOf,
  nthLargest,
  rankEntries,
  textFloor,
  textWeight,
  textWeightsOf,
  type Candidate,
  type FilterParts,
  type QueryFilters,
  type QueryHit,
} from '../../core/query.js';
import { CONTEXT_WINDOW, SEMANTIC_ONLY_MAX, SEMANTIC_ONLY_MIN, contextLifts, episodeKey, fuse } from '../../core/retrieval.js';
import type { CatalogSnapshot, StoredEntry } from '../../store/catalog.js';
import type { CachedEntries } from '../../store/cached-entries.js';
import { appendQueryLog, holdsValues } from '../../store/query-log.js';
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
    // table built once per catalog and index version, a one-shot query where the snapshot
    // records them (checked by key), else by key.
    const { sids, scores } = index.rawHits(text);
    let found: TextHits;
    const args = { scores, parts, accept, staleKeys, nowMs, limit, semantic: opts.semantic };
    const cached = snap.cached;
    if (ctx.longLived) {
      const bySid = rm.sidTable(snap, index);
      found = textCandidates(entriesReach(snap.entries, staleKeys.size ? (snap.byKey ?? rm.keyed(snap)) : undefined), (i) => bySid[sids[i]], args);
    } else if (cached) {
      // By entry number: an entry object is made only for what is kept (a query reaches thousands).
      // A snapshot saved from this very catalog content places each document exactly; one saved
      // from another content holding the same entries (or none) is checked hit by hit, by key.
      const exact = index.inSync && index.savedFrom !== undefined && index.savedFrom === snap.contentId;
      let byKey: Map<string, number> | undefined;
      const hitAt = (i: number): number | undefined => {
        const j = index.entryAt(sids[i]);
        if (exact && j !== undefined && j < cached.count) return j;
        const key = index.keyOf(sids[i]) ?? '';
        if (j !== undefined && j < cached.count && cached.hasKey(j, key)) return j;
        if (!byKey) {
          byKey = new Map();
          for (let k = 0; k < cached.count; k++) byKey.set(cached.keyOf(k), k);
        }
        return byKey.get(key);
      };
      found = textCandidates(cachedReach(cached), hitAt, args);
    } else {
      const hitAt = (i: number): StoredEntry | undefined => {
        const key = index.keyOf(sids[i]);
        const at = index.entryAt(sids[i]);
        const se = at === undefined ? undefined : snap.entries[at];
        return se && se.key === key ? se : rm.keyed(snap).get(key ?? '');
      };
      found = textCandidates(entriesReach(snap.entries), hitAt, args);
    }
    cands.push(...found.cands);
    for (const [se, by] of found.liftedBy) liftedBy.set(se, by);
    matchedCount = found.matched;
    semanticUsed = found.semantic;
  } else if (snap.cached) {
    // The catalog cache as loaded holds the entries: the filters and the order read its columns,
    // and only the page's entries are made (rankEntries then orders them exactly so again).
    const ce = snap.cached;
    const staleAt = staleKeys.size > 0 ? (j: number): boolean => staleKeys.has(ce.keyOf(j)) : undefined;
    const passed = ce.passing(parts, accept);
    const page = ce.firstInOrder(passed, limit, nowMs, staleAt);
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

interface Cand extends Candidate<EntryMeta> {
  se: StoredEntry;
}

/**
 * How the text branch reaches entries: a handle `T` is an entry number of a snapshot that is the
 * catalog cache as loaded (an entry object is made only for what is kept: a query reaches
 * thousands of entries and keeps dozens), or the entry itself.
 */
interface Reach<T> {
  /** The metadata of `h`, to read at once: it may be one object moved from entry to entry. */
  meta(h: T): EntryMeta;
  project(h: T): string;
  entry(h: T): StoredEntry;
  key(h: T): string;
  /** Every entry. */
  all(): Iterable<T>;
  /** The entries whose subject is one of `subjects`, in catalog order. */
  withSubject(subjects: ReadonlySet<string>): Iterable<T>;
  /** Whether an entry passes the filters, told faster than `accept(meta(h), project(h))` for many (the same answers). */
  passingSet?(parts: FilterParts, accept: (e: EntryLike, project: string) => boolean): (h: T) => boolean;
  /** Whether an entry's key is among `keys`, told without reading every hit's key (the same answers). */
  staleSet?(keys: ReadonlySet<string>): (h: T) => boolean;
  /** `textWeight` of each of `hs`, told faster than one by one (the same numbers). */
  textWeights?(hs: readonly T[], now: number, staleOf: (h: T) => boolean): Float64Array;
}

function cachedReach(ce: CachedEntries): Reach<number> {
  return {
    meta: (j) => ce.peek(j),
    project: (j) => ce.projectOf(j),
    entry: (j) => ce.at(j),
    key: (j) => ce.keyOf(j),
    all: () => Array.from({ length: ce.count }, (_, j) => j),
    withSubject: (subjects) => ce.withSubject(subjects),
    // From the columns: the filters once over every entry, the weights of the hits kept.
    passingSet: (parts, accept) => {
      const mask = new Uint8Array(ce.count);
      for (const j of ce.passing(parts, accept)) mask[j] = 1;
      return (j) => mask[j] === 1;
    },
    textWeights: (js, now, staleAt) => textWeightsOf(ce.priorKeysOf(js, now, staleAt)),
  };
}

/** `keyed`: the entries by key, when the caller holds that map (then stale evidence is told by entry, not by key). */
function entriesReach(entries: readonly StoredEntry[], keyed?: ReadonlyMap<string, StoredEntry>): Reach<StoredEntry> {
  return {
    meta: (se) => se.meta,
    project: (se) => se.project,
    entry: (se) => se,
    key: (se) => se.key,
    all: () => entries,
    withSubject: (subjects) => entries.filter((se) => subjects.has(se.meta.subject)),
    staleSet: keyed
      ? (keys) => {
          const stale = new Set<StoredEntry>();
          for (const k of keys) {
            const se = keyed.get(k);
            if (se) stale.add(se);
          }
          return (se) => stale.has(se);
        }
      : undefined,
  };
}

/** What the text branch found: candidates, the entries lifted by a hit beside them, how many matched. */
interface TextHits {
  cands: Cand[];
  liftedBy: Map<StoredEntry, string>;
  matched: number;
  semantic: boolean;
}

/**
 * The candidates of a text query from its hits (`hitAt(i)`: the entry of hit i, with lexical
 * score `scores[i]`): the hits that pass the filters, fused with semantic similarity when asked
 * for, their neighbours in an episode lifted, and only those that can still reach the first
 * `limit` (textFloor) made candidates.
 */
function textCandidates<T>(
  reach: Reach<T>,
  hitAt: (i: number) => T | undefined,
  o: {
    scores: ArrayLike<number>;
    parts: FilterParts;
    accept: (e: EntryLike, project: string) => boolean;
    staleKeys: ReadonlySet<string>;
    nowMs: number;
    limit: number;
    semantic?: QueryOptions['semantic'];
  },
): TextHits {
  const { scores, accept, staleKeys, nowMs, limit } = o;
  const mask = reach.passingSet?.(o.parts, accept);
  const passes = mask ?? ((h: T): boolean => accept(reach.meta(h), reach.project(h)));
  const staleOf: (h: T) => boolean = staleKeys.size === 0 ? () => false : (reach.staleSet?.(staleKeys) ?? ((h) => staleKeys.has(reach.key(h))));
  // Every hit that passes the filters, with its lexical relevance (0..1 of the best one). Without
  // a faster way, each hit's metadata is read once, for the filters and its weight together
  // (at 100K entries a query reaches ~17,000 entries, and reading them twice costs cache misses).
  let ents: T[] = [];
  let rel: number[] = [];
  let weightOf: number[] | undefined = reach.textWeights ? undefined : [];
  let max = 0;
  for (let i = 0; i < scores.length; i++) {
    const h = hitAt(i);
    if (h === undefined) continue;
    if (mask) {
      if (!mask(h)) continue;
    } else {
      const meta = reach.meta(h);
      if (!accept(meta, reach.project(h))) continue;
      weightOf?.push(textWeight(meta, nowMs, staleOf(h)));
    }
    ents.push(h);
    rel.push(scores[i]);
    if (scores[i] > max) max = scores[i];
  }
  for (let j = 0; j < rel.length; j++) rel[j] = max > 0 ? rel[j] / max : 0;
  // Semantic similarity, fused with the lexical score: every entry that passes the filters is
  // a candidate, whether or not it shares a word with the text.
  if (o.semantic) {
    const sim = o.semantic.similarity;
    const lexOf = new Map<T, number>();
    for (let j = 0; j < ents.length; j++) lexOf.set(ents[j], rel[j]);
    const all: T[] = [];
    const sims: (number | undefined)[] = [];
    let lo = Infinity;
    let hi = -Infinity;
    for (const h of reach.all()) {
      if (!passes(h)) continue;
      const s = sim(reach.key(h));
      all.push(h);
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
    weightOf = undefined;
    for (let j = 0; j < all.length; j++) {
      if (lexOf.has(all[j]) || fused[j] >= keepAbove) {
        ents.push(all[j]);
        rel.push(fused[j]);
      }
    }
  }
  // Context: the best hits lift their neighbours in the same episode (filters still apply).
  // Only those few neighbours are looked up among the hits (one pass, no map of every hit).
  let neighbours = new Set<T>();
  let position: Map<T, number> | undefined;
  const positionOf = (h: T): number | undefined => {
    if (!position) {
      position = new Map();
      for (let j = 0; j < ents.length; j++) if (neighbours.has(ents[j])) position.set(ents[j], j);
    }
    return position.get(h);
  };
  const lifts = contextLifts(
    ents,
    (j) => rel[j],
    (hits) => {
      const windows = episodesOf(reach, hits, passes);
      neighbours = new Set(windows.flat().filter((h): h is T => h !== undefined));
      return windows;
    },
    (h) => {
      const j = positionOf(h);
      return j === undefined ? 0 : rel[j];
    },
  );
  const liftedBy = new Map<StoredEntry, string>();
  for (const l of lifts) {
    const j = positionOf(l.item);
    if (j === undefined) {
      ents.push(l.item);
      rel.push(l.relevance);
    } else rel[j] = l.relevance;
    const se = reach.entry(l.item);
    liftedBy.set(se, reach.meta(l.by).id);
  }
  // Weigh every hit by its priors, then make candidates only of the hits that can still reach
  // the first `limit` (textFloor): at 100K entries a query reaches ~20,000 entries and a few
  // hundred become candidates.
  const n = ents.length;
  const bases = new Float64Array(n);
  const weights = reach.textWeights?.(ents, nowMs, staleOf) ?? weightOf;
  let top = 0;
  for (let j = 0; j < n; j++) {
    // (entries lifted into the hits come after those weighed above)
    bases[j] = rel[j] * (weights && j < weights.length ? weights[j] : textWeight(reach.meta(ents[j]), nowMs, staleOf(ents[j])));
    if (rel[j] > top) top = rel[j];
  }
  const floor = textFloor(bases, limit, top);
  const cands: Cand[] = [];
  for (let j = 0; j < n; j++) {
    if (bases[j] < floor || !(rel[j] > 0)) continue;
    const se = reach.entry(ents[j]);
    cands.push({ project: se.project, entry: se.meta, se, relevance: rel[j], stale: staleOf(ents[j]) });
  }
  return { cands, liftedBy, matched: n, semantic: Boolean(o.semantic) };
}

/**
 * The neighbourhood of each hit in its episode, as `contextLifts` reads it: an array with the
 * hit in the middle and, on either side, the entries written just before and after it in the
 * same batch (same project, subject and `created_at`; a batch's ids count up by one), each only
 * if it passes the filters. One pass over the entries of the hits' subjects for all the hits.
 */
function episodesOf<T>(reach: Reach<T>, hits: readonly T[], passes: (h: T) => boolean): (T | undefined)[][] {
  const W = CONTEXT_WINDOW;
  const windows = hits.map((h) => {
    const w: (T | undefined)[] = new Array<T | undefined>(2 * W + 1).fill(undefined);
    w[W] = h;
    return w;
  });
  const seqs = hits.map((h) => ulidSequence(reach.meta(h).id));
  const groups = new Map<string, number[]>();
  const subjects = new Set<string>();
  hits.forEach((h, i) => {
    if (seqs[i] === null) return;
    const meta = reach.meta(h);
    const k = episodeKey(meta, reach.project(h));
    groups.set(k, [...(groups.get(k) ?? []), i]);
    subjects.add(meta.subject);
  });
  if (!groups.size) return windows;
  for (const h of reach.withSubject(subjects)) {
    const meta = reach.meta(h);
    const group = groups.get(episodeKey(meta, reach.project(h)));
    if (!group) continue;
    const seq = ulidSequence(meta.id);
    if (seq === null) continue;
    for (const i of group) {
      const d = seq - seqs[i]!;
      if (d === 0n || d < BigInt(-W) || d > BigInt(W) || !passes(h)) continue;
      windows[i][W + Number(d)] = h;
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

/** Appends a query to the local query log (statistics read it: Req 22.6); its text only when the project's config asks (store/query-log.ts). */
export function logQuery(ctx: ServiceContext, record: { text: string; filters: QueryFilters; result_count: number; execution_ms: number }): void {
  let keepText = false;
  try {
    // (A query with nothing to keep, a plain `list`, reads no config for it.)
    if (holdsValues(record)) keepText = ctx.projectConfig(record.filters.projects?.[0] ?? ctx.project()).logging?.query_text === true;
  } catch {
    /* no project, or an unreadable config: nothing kept */
  }
  appendQueryLog(ctx.ws, { time: ctx.now().toISOString(), ...record }, keepText);
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

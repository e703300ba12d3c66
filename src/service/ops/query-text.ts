/**
 * A text query's candidates from its hits: filters, semantic fusion, the context writers state
 * (the best hits' subject and links), and the cut below which a hit cannot reach the page.
 */
import type { EntryLike, EntryMeta } from '../../core/meta.js';
import { nthLargest, textFloor, textWeight, type Candidate, type FilterParts } from '../../core/query.js';
import { CONTEXT_HITS, SEMANTIC_ONLY_MAX, SEMANTIC_ONLY_MIN, bestPlaces, focusSubjects, fuse, linkLifts } from '../../core/retrieval.js';
import { liftBySubjectDocs, subjectGroups } from '../../core/retrieval.js';
import type { StoredEntry } from '../../store/catalog.js';

/** At most this many best hits' links are followed: hits that tie by the thousand read no thousand rows. */
const LINKING_HITS = 64;

export interface Cand extends Candidate<EntryMeta> {
  se: StoredEntry;
}

/**
 * How the text branch reaches entries: a handle `T` is an entry number of a snapshot that is the
 * catalog cache as loaded (an entry object is made only for what is kept: a query reaches
 * thousands of entries and keeps dozens), or the entry itself.
 */
export interface Reach<T> {
  /** The metadata of `h`, to read at once: it may be one object moved from entry to entry. */
  meta(h: T): EntryMeta;
  project(h: T): string;
  entry(h: T): StoredEntry;
  key(h: T): string;
  all(): Iterable<T>;
  byId(project: string, id: string): T | undefined;
  /** Whether an entry passes the filters, told faster than `accept(meta(h), project(h))` for many (the same answers). */
  passingSet?(parts: FilterParts, accept: (e: EntryLike, project: string) => boolean): (h: T) => boolean;
  /** Whether an entry's key is among `keys`, told without reading every hit's key (the same answers). */
  staleSet?(keys: ReadonlySet<string>): (h: T) => boolean;
  /** `textWeight` of each of `hs`, told faster than one by one (the same numbers). */
  textWeights?(hs: readonly T[], now: number, staleOf: (h: T) => boolean): Float64Array;
}

export interface TextArgs {
  scores: ArrayLike<number>;
  /** Each hit's query terms as bits, and the documents in the index (liftBySubjectDocs). */
  masks?: ArrayLike<number>;
  docs?: number;
  parts: FilterParts;
  accept: (e: EntryLike, project: string) => boolean;
  staleKeys: ReadonlySet<string>;
  nowMs: number;
  limit: number;
  /** Cosine similarity to the query (undefined: no vector yet). */
  semantic?: { similarity: (key: string) => number | undefined };
}

export interface TextHits {
  cands: Cand[];
  linked: [string, string][];
  matched: number;
  semantic: boolean;
}

/** `hitAt(i)`: the entry of hit i, of lexical score `scores[i]`. Only hits that can still reach the first `limit` become candidates. */
export function textCandidates<T>(reach: Reach<T>, hitAt: (i: number) => T | undefined, o: TextArgs): TextHits {
  const { scores, accept, staleKeys, nowMs, limit } = o;
  const mask = reach.passingSet?.(o.parts, accept);
  const passes = mask ?? ((h: T): boolean => accept(reach.meta(h), reach.project(h)));
  const staleOf: (h: T) => boolean = staleKeys.size === 0 ? () => false : (reach.staleSet?.(staleKeys) ?? ((h) => staleKeys.has(reach.key(h))));
  // Hits that pass, with relevance 0..1 of the best: each hit's metadata read once for filter and
  // weight (a query reaches thousands; twice costs cache misses). The best few the filters drop
  // are kept: a superseded entry matches the words of its time, and its replacement is context.
  let ents: T[] = [];
  let rel: number[] = [];
  const masks: number[] = [];
  let weightOf: number[] | undefined = reach.textWeights ? undefined : [];
  const dropped: { h: T; score: number }[] = [];
  let max = 0;
  // `!` below: each index is bounded by a loop over arrays that grow together.
  for (let i = 0; i < scores.length; i++) {
    const h = hitAt(i);
    if (h === undefined) continue;
    const score = scores[i]!;
    let ok: boolean;
    if (mask) ok = mask(h);
    else {
      const meta = reach.meta(h);
      ok = accept(meta, reach.project(h));
      if (ok) weightOf?.push(textWeight(meta, nowMs, staleOf(h)));
    }
    if (!ok) {
      if (dropped.length < CONTEXT_HITS || score > dropped[CONTEXT_HITS - 1]!.score) {
        dropped.push({ h, score });
        dropped.sort((a, b) => b.score - a.score).splice(CONTEXT_HITS);
      }
      continue;
    }
    ents.push(h);
    rel.push(score);
    masks.push(o.masks?.[i] ?? 0);
    if (score > max) max = score;
  }
  for (let j = 0; j < rel.length; j++) rel[j] = max > 0 ? rel[j]! / max : 0;
  const groups = subjectGroups(ents, reach);
  if (o.docs && max > 0) liftBySubjectDocs(rel, masks, o.docs, groups);
  // Fused with similarity, every entry that passes is a candidate, sharing a word or not.
  if (o.semantic) {
    const sim = o.semantic.similarity;
    const lexAt = new Map<T, number>();
    for (let j = 0; j < ents.length; j++) lexAt.set(ents[j]!, j);
    // Per entry that passes: lexical relevance (-1: not a hit) and similarity (NaN: no vector).
    const all: T[] = [];
    const lexs: number[] = [];
    const sims: number[] = [];
    let lo = Infinity;
    let hi = -Infinity;
    for (const h of reach.all()) {
      if (!passes(h)) continue;
      const s = sim(reach.key(h));
      const j = lexAt.get(h);
      all.push(h);
      lexs.push(j === undefined ? -1 : rel[j]!);
      if (s === undefined) sims.push(NaN);
      else {
        sims.push(s);
        if (s < lo) lo = s;
        if (s > hi) hi = s;
      }
    }
    const fused = new Float64Array(all.length);
    const meaningOnly: number[] = [];
    for (let j = 0; j < all.length; j++) {
      const lex = lexs[j]!;
      const s = sims[j]!;
      const f = (fused[j] = fuse(lex < 0 ? 0 : lex, s === s ? s : undefined, lo, hi));
      if (lex < 0 && f >= SEMANTIC_ONLY_MIN) meaningOnly.push(f);
    }
    // Meaning-only matches: the closest few hundred above a floor (the rest cannot reach a page).
    const keepAbove = meaningOnly.length > SEMANTIC_ONLY_MAX ? nthLargest(Float64Array.from(meaningOnly), SEMANTIC_ONLY_MAX) : SEMANTIC_ONLY_MIN;
    ents = [];
    rel = [];
    weightOf = undefined;
    for (let j = 0; j < all.length; j++) {
      const f = fused[j]!;
      if (lexs[j]! >= 0 || f >= keepAbove) {
        ents.push(all[j]!);
        rel.push(f);
      }
    }
  }
  focusSubjects(rel, o.semantic ? subjectGroups(ents, reach) : groups);
  // Relevance of the kept hits' scale (if the filters dropped all, the best dropped one's).
  const scale = max || dropped[0]?.score;
  const linked = raiseLinked(reach, ents, rel, passes, scale ? dropped.map((d) => ({ h: d.h, relevance: Math.min(1, d.score / scale) })) : []);
  // Weigh every hit by its priors; only those that can reach the first `limit` become candidates.
  const n = ents.length;
  const bases = new Float64Array(n);
  const weights = reach.textWeights?.(ents, nowMs, staleOf) ?? weightOf;
  let top = 0;
  for (let j = 0; j < n; j++) {
    const h = ents[j]!;
    const r = rel[j]!;
    // (entries raised by a link come after those weighed above)
    bases[j] = r * (weights && j < weights.length ? weights[j]! : textWeight(reach.meta(h), nowMs, staleOf(h)));
    if (r > top) top = r;
  }
  const floor = textFloor(bases, limit, top);
  const cands: Cand[] = [];
  for (let j = 0; j < n; j++) {
    const r = rel[j]!;
    if (bases[j]! < floor || !(r > 0)) continue;
    const h = ents[j]!;
    const se = reach.entry(h);
    cands.push({ project: se.project, entry: se.meta, se, relevance: r, stale: staleOf(h) });
  }
  return { cands, linked, matched: n, semantic: Boolean(o.semantic) };
}

/**
 * Raises (linkLifts) what the best hits link to (related entries, their replacement) and the
 * replacement of the best dropped hits; raised entries pass the filters, those not among the hits
 * are added to `ents`. Returns `[id, id of the hit]` of each raise.
 */
function raiseLinked<T>(reach: Reach<T>, ents: T[], rel: number[], passes: (h: T) => boolean, dropped: { h: T; relevance: number }[]): [string, string][] {
  const best = bestPlaces(rel).slice(0, LINKING_HITS);
  const from = [...best.map((j) => ({ h: ents[j]!, relevance: rel[j]!, kept: true })), ...dropped.map((d) => ({ ...d, kept: false }))];
  const hits = from.map(({ h, relevance, kept }) => {
    const meta = reach.meta(h);
    const project = reach.project(h);
    const ids = [...(kept ? meta.related_entries : []), ...(meta.superseded_by ? [meta.superseded_by] : [])];
    const links: T[] = [];
    for (const id of ids) {
      const t = reach.byId(project, id);
      if (t !== undefined && passes(t)) links.push(t);
    }
    return { item: h, relevance, links };
  });
  if (!hits.some((h) => h.links.length)) return [];
  const place = new Map<T, number>();
  const wanted = new Set(hits.flatMap((h) => h.links));
  for (const [j, h] of ents.entries()) if (wanted.has(h)) place.set(h, j);
  const out: [string, string][] = [];
  for (const [t, { relevance, by }] of linkLifts(hits, (t) => rel[place.get(t) ?? -1] ?? 0)) {
    const j = place.get(t);
    if (j === undefined) {
      ents.push(t);
      rel.push(relevance);
    } else rel[j] = relevance;
    out.push([reach.meta(t).id, reach.meta(by).id]);
  }
  return out;
}

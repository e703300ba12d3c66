/**
 * A text query's candidates from its hits: filters, the context writers state (the best hits'
 * subject, then semantic fusion, then their links), and the cut below which a hit cannot reach the page.
 */
import type { EntryLike, EntryMeta } from '../../core/meta.js';
import { nthLargest, textFloor, textWeight, type Candidate, type FilterParts } from '../../core/query.js';
import { CONTEXT_HITS, SEMANTIC_ONLY_MAX, SEMANTIC_ONLY_MIN, SUBJECT_SIM_SHARE, bestPlaces, focusSubjects, fuse, linkLifts } from '../../core/retrieval.js';
import { groupsByCode, liftBySubjectDocs, subjectGroups, subjectNearness, weighByLength } from '../../core/retrieval.js';
import type { StoredEntry } from '../../store/catalog.js';

/** At most this many best hits' links are followed: hits that tie by the thousand read no thousand rows. */
const LINKING_HITS = 64;

export interface Cand extends Candidate<EntryMeta> {
  se: StoredEntry;
}

/** How the text branch reaches entries: by number, 0 to `count` - 1 (a query reaches thousands and keeps dozens: tables by number, no lookup by key). */
export interface Reach {
  count: number;
  /** The metadata of `j`, to read at once: it may be one object moved from entry to entry. */
  meta(j: number): EntryMeta;
  project(j: number): string;
  entry(j: number): StoredEntry;
  key(j: number): string;
  /** The entries in their numbers' order, the same list query after query while they are unchanged (vectors are found by it). */
  list(): readonly { key: string }[];
  byId(project: string, id: string): number | undefined;
  /** Each entry's subject within its project as a code (the same code, the same subject and project), when kept. */
  subjectCodes?(): { of: Int32Array; count: number };
  /** Whether an entry passes the filters, told faster than `accept(meta(j), project(j))` for many (the same answers). */
  passingSet?(parts: FilterParts, accept: (e: EntryLike, project: string) => boolean): (j: number) => boolean;
  /** `textWeight` of each of `js`, told faster than one by one (the same numbers). */
  textWeights?(js: readonly number[], now: number, staleOf: (j: number) => boolean): Float64Array;
}

export interface TextArgs {
  scores: ArrayLike<number>;
  /** Each hit's query terms as bits (liftBySubjectDocs). */
  masks?: ArrayLike<number>;
  /** Each hit's summary length, and whether it names something when that counts (weighByLength). */
  lengths?: ArrayLike<number>;
  named?: ArrayLike<number>;
  parts: FilterParts;
  accept: (e: EntryLike, project: string) => boolean;
  staleKeys: ReadonlySet<string>;
  nowMs: number;
  limit: number;
  /** Cosine similarity to the query of each entry of a list (NaN: no vector yet). */
  semantic?: { similarity: (list: readonly { key: string }[]) => Float64Array };
}

export interface TextHits {
  cands: Cand[];
  linked: [string, string][];
  matched: number;
  semantic: boolean;
}

/** `hitAt(i)`: the entry of hit i, of lexical score `scores[i]`. Only hits that can still reach the first `limit` become candidates. */
export function textCandidates(reach: Reach, hitAt: (i: number) => number | undefined, o: TextArgs): TextHits {
  const { scores, accept, staleKeys, nowMs, limit } = o;
  let mask = reach.passingSet?.(o.parts, accept);
  if (!mask && o.semantic) {
    // Fused with similarity every entry is weighed: each told once, in entry order (the hits come in any).
    const ok = new Uint8Array(reach.count);
    for (let h = 0; h < ok.length; h++) ok[h] = Number(accept(reach.meta(h), reach.project(h)));
    mask = (h) => ok[h] === 1;
  }
  const passes = mask ?? ((h: number): boolean => accept(reach.meta(h), reach.project(h)));
  const staleOf: (h: number) => boolean = staleKeys.size === 0 ? () => false : (h) => staleKeys.has(reach.key(h));
  // Hits that pass, with relevance 0..1 of the best: each hit's metadata read once for filter and
  // weight (a query reaches thousands; twice costs cache misses). The best few the filters drop
  // are kept: a superseded entry matches the words of its time, and its replacement is context.
  let ents: number[] = [];
  let rel: number[] = [];
  const masks: number[] = [];
  const lengths: number[] = [];
  const named: number[] = [];
  // (fused with similarity, the hits are weighed after the branch below)
  const weightOf: number[] | undefined = reach.textWeights || o.semantic ? undefined : [];
  const dropped: { h: number; score: number }[] = [];
  let max = 0;
  // `!` below: each index is bounded by a loop over arrays that grow together.
  for (let i = 0; i < scores.length; i++) {
    const h = hitAt(i);
    if (h === undefined) continue;
    const score = scores[i]!;
    const meta = mask ? undefined : reach.meta(h);
    const ok = meta ? accept(meta, reach.project(h)) : mask!(h);
    if (ok && meta) weightOf?.push(textWeight(meta, nowMs, staleOf(h)));
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
    lengths.push(o.lengths?.[i] ?? 0);
    named.push(o.named?.[i] ?? 0);
    if (score > max) max = score;
  }
  for (let j = 0; j < rel.length; j++) rel[j] = max > 0 ? rel[j]! / max : 0;
  const groups = reach.subjectCodes ? groupsByCode(ents, reach.subjectCodes()) : subjectGroups(ents, reach);
  if (max > 0) liftBySubjectDocs(rel, masks, groups);
  // Before similarity is fused in: the words a question shares with a session choose the subjects
  // to lift; similarity, which every entry has, near or not, ranks within and across them.
  focusSubjects(rel, groups);
  if (o.lengths) weighByLength(rel, lengths, named);
  // Fused with similarity, every entry that passes is a candidate, sharing a word or not.
  if (o.semantic) {
    const count = reach.count;
    const sims = o.semantic.similarity(reach.list());
    // Per entry: lexical relevance, -1 where it passes but is not a hit, NaN where it does not pass.
    const lexs = new Float64Array(count);
    for (let h = 0; h < count; h++) lexs[h] = passes(h) ? -1 : NaN;
    const top = rel.reduce((a, b) => Math.max(a, b), 0);
    for (let j = 0; j < ents.length; j++) lexs[ents[j]!] = rel[j]! / (top || 1);
    let lo = Infinity;
    let hi = -Infinity;
    const near = new Float64Array(count);
    for (let h = 0; h < count; h++) {
      const s = (near[h] = lexs[h] === lexs[h] ? sims[h]! : NaN); // (NaN: it does not pass, or has no vector; neither)
      if (s < lo) lo = s;
      if (s > hi) hi = s;
    }
    // Similarity's own subject focus, on the fused score: the subjects whose nearest entry is nearest gain.
    const codes = reach.subjectCodes?.() ?? { of: subjectGroups(Array.from(near.keys()), reach), count };
    const nearness = subjectNearness(near, codes.of, codes.count);
    const meaningOnly = new Float64Array(count);
    let m = 0;
    for (let h = 0; h < count; h++) {
      const lex = lexs[h]!;
      const s = sims[h]!;
      const f = (sims[h] = lex === lex ? fuse(lex < 0 ? 0 : lex, s === s ? s : undefined, lo, hi) * (1 + SUBJECT_SIM_SHARE * nearness[codes.of[h]!]!) : NaN);
      if (lex < 0 && f >= SEMANTIC_ONLY_MIN) meaningOnly[m++] = f;
    }
    // Meaning-only matches: the closest few hundred above a floor (the rest cannot reach a page).
    const keepAbove = m > SEMANTIC_ONLY_MAX ? nthLargest(meaningOnly.subarray(0, m), SEMANTIC_ONLY_MAX) : SEMANTIC_ONLY_MIN;
    ents = [];
    rel = [];
    for (let h = 0; h < count; h++) {
      if (lexs[h]! >= 0 || sims[h]! >= keepAbove) {
        ents.push(h);
        rel.push(sims[h]!);
      }
    }
  }
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
function raiseLinked(
  reach: Reach,
  ents: number[],
  rel: number[],
  passes: (h: number) => boolean,
  dropped: { h: number; relevance: number }[],
): [string, string][] {
  const best = bestPlaces(rel).slice(0, LINKING_HITS);
  const from = [...best.map((j) => ({ h: ents[j]!, relevance: rel[j]!, kept: true })), ...dropped.map((d) => ({ ...d, kept: false }))];
  const hits = from.map(({ h, relevance, kept }) => {
    const meta = reach.meta(h);
    const project = reach.project(h);
    const ids = [...(kept ? meta.related_entries : []), ...(meta.superseded_by ? [meta.superseded_by] : [])];
    const links: number[] = [];
    for (const id of ids) {
      const t = reach.byId(project, id);
      if (t !== undefined && passes(t)) links.push(t);
    }
    return { item: h, relevance, links };
  });
  if (!hits.some((h) => h.links.length)) return [];
  const place = new Map<number, number>();
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

/**
 * Pseudo-relevance feedback (why, and its figures: docs/ARCHITECTURE.md, the read path): the words the best hits'
 * summaries share ask again, lightly, re-scoring the first pass's best hits. They are read from a forward table of each
 * document's summary terms kept with the index and its snapshot: a query looks up a few hundred rows, no postings.
 */
import type { PostingIndex, ScoredHits } from './postings.js';
import { FIELD_SHIFT, TF_MAX } from './postings-score.js';
import { STOPWORDS, processTerm } from './options.js';

/** Hits within `gap` of the best score (at most `hits`) give feedback: their `terms` best words ask again at up to `weight` of a query word, re-scoring the first pass's best `rescore` hits. */
export const FEEDBACK = { gap: 0.65, hits: 20, terms: 15, weight: 0.1, rescore: 200 };

/** A row entry: term number x 2^TF_BITS + the term's frequency in the summary (capped: BM25 saturates long before). */
export const TF_BITS = 6;
const TF_CAP = (1 << TF_BITS) - 1;
export const termOf = (x: number): number => Math.floor(x / (TF_CAP + 1));
export const packRow = (tfs: Iterable<[number, number]>): Uint32Array => Uint32Array.from(tfs, ([t, tf]) => t * (TF_CAP + 1) + Math.min(tf, TF_CAP));

/** Each document's summary terms, `row[off[d] .. off[d + 1] - 1]`, and each term's document frequency in the summary. */
export type Forward = Record<'off' | 'row' | 'df', Uint32Array>;

/** What feedback reads of some documents (`docs`: every row it will ask for): their rows, and a term's summary document frequency and text. */
export type SummaryTerms = (docs: readonly number[]) => { row: (d: number) => ArrayLike<number>; df: (t: number) => number; term: (t: number) => string };

/** The forward table of the summary field (fields[0]) from the postings: the base's field 0 comes first in each term's list. */
export function forwardOf(ix: PostingIndex): Forward {
  const { pDoc, pFt, tOff, alive, F, delta } = ix;
  const each = (fn: (d: number, t: number, tf: number) => void): void => {
    // (`!`: positions below tOff's ends, documents below `next`.)
    for (let t = 0; t < ix.baseTerms; t++)
      for (let i = tOff[t]!; i < tOff[t + 1]! && pFt[i]! >>> FIELD_SHIFT === 0; i++) if (alive[pDoc[i]!]) fn(pDoc[i]!, t, pFt[i]! & TF_MAX);
    for (let s = 0; s < delta.length; s += F)
      for (let j = 0, list = delta[s] ?? []; j < list.length; j += 2) if (alive[list[j]!]) fn(list[j]!, s / F, list[j + 1]!);
  };
  const off = new Uint32Array(ix.next + 1);
  each((d) => off[d + 1]!++);
  for (let d = 0; d < ix.next; d++) off[d + 1]! += off[d]!;
  const at = off.slice(0, ix.next);
  const row = new Uint32Array(off[ix.next]!);
  const df = new Uint32Array(ix.ids.size);
  each((d, t, tf) => {
    row[at[d]!++] = t * (TF_CAP + 1) + Math.min(tf, TF_CAP);
    df[t]!++;
  });
  return { off, row, df };
}

/** Words' weights add up as whole multiples of 1 / UNIT: integer sums, exact in any order (hits come in the order their ids gave them). */
const UNIT = 2 ** 32;
const STOP = new Set([...STOPWORDS].map((w) => processTerm(w)));

/**
 * `first` (with its masks: `boosts[s]` weighs the query's distinct term s) re-scored: each hit's coordination counts its
 * matched terms by their weight (a name twice, a feedback word its fraction), and the best hits gain by the feedback words
 * their summaries hold. Hits are chosen by score bounds and words weighed in whole units: the same in any order, any process.
 */
export function withFeedback(ix: PostingIndex, src: SummaryTerms, first: ScoredHits, boosts: number[], query: Set<string>): ScoredHits {
  const { sids, masks } = first;
  if (!masks || boosts.length > 31) return first;
  const n = sids.length;
  const [totals, coord, scores] = [new Float64Array(n), new Float64Array(n), Float64Array.from(first.scores)];
  const named = boosts.some((x) => x !== 1);
  const weigh = (i: number): void => {
    let matched = 0;
    for (let x = masks[i]!, s = 0; x; x >>>= 1, s++) {
      matched += x & 1;
      coord[i]! += (x & 1) * boosts[s]!;
    }
    totals[i] = first.scores[i]! / (matched || 1);
    if (named) scores[i] = totals[i] * coord[i]!;
  };
  // Without a name every term weighs 1: each hit's coordination is its count, as scored, and only the re-scored are weighed.
  if (named) for (let i = 0; i < n; i++) weigh(i);
  let best = 0;
  for (let i = 0; i < n; i++) best = Math.max(best, scores[i]!);
  // Tied hits are all in or all out, so a bound past `most` hits keeps only those above it.
  const sorted = scores.slice().sort();
  const bound = (at: number, most: number): ((x: number) => boolean) => {
    const min = Math.max(at, sorted[n - most] ?? -Infinity);
    let over = n - 1;
    while (over >= 0 && sorted[over]! >= min) over--; // (over < n)
    return n - 1 - over > most ? (x) => x > min : (x) => x >= min;
  };
  const [rescores, gives] = [bound(-Infinity, FEEDBACK.rescore), bound(FEEDBACK.gap * best, FEEDBACK.hits)];
  const rescored: number[] = [];
  for (let i = 0; i < n; i++) if (rescores(scores[i]!)) rescored.push(i);
  if (!named) rescored.forEach(weigh);
  const { row: rowOf, df: dfOf, term } = src(rescored.map((i) => sids[i]!));
  // The feedback words: by their share of each giving hit's summary x the hit's score over the best, x their IDF.
  const N = ix.count;
  const v = new Map<number, number>();
  for (const i of rescored.filter((i) => best > 0 && gives(scores[i]!))) {
    const row = rowOf(sids[i]!);
    for (let j = 0; j < row.length; j++)
      v.set(termOf(row[j]!), (v.get(termOf(row[j]!)) ?? 0) + Math.round((UNIT * scores[i]! * (row[j]! & TF_CAP)) / best / (ix.lens[sids[i]! * ix.F] || 1)));
  }
  const words = [...v]
    .map(([t, x]) => ({ t, w: term(t), x: (x / UNIT) * Math.log(N / Math.max(1, dfOf(t))) }))
    .filter(({ w, x }) => x > 0 && w.length >= 3 && !/\d/.test(w) && !STOP.has(w) && !query.has(w))
    .sort((a, b) => b.x - a.x || (a.w < b.w ? -1 : 1))
    .slice(0, FEEDBACK.terms);
  if (!words.length) return { sids, scores, masks };
  // Each scored in the summary as the index scores a query term (BM25+, the summary's boost), at its weight.
  const { k, b, d } = { k: 1.2, b: 0.7, d: 0.5, ...ix.opts.searchOptions?.bm25 };
  const place = new Map(words.map(({ t }, j) => [t, j]));
  const fb = words.map(({ t, x }) => ({
    w: (FEEDBACK.weight * x) / words[0]!.x,
    idf: Math.log(1 + (N + 0.5 - Math.min(N, dfOf(t))) / (Math.min(N, dfOf(t)) + 0.5)),
  }));
  const tfs = new Float64Array(words.length);
  for (const i of rescored) {
    const row = rowOf(sids[i]!);
    tfs.fill(0);
    for (let j = 0; j < row.length; j++) {
      const at = place.get(termOf(row[j]!));
      if (at !== undefined) tfs[at] = row[j]! & TF_CAP;
    }
    const norm = k * (1 - b + (b * ix.lens[sids[i]! * ix.F]!) / ix.avg[0]!);
    let add = 0;
    let more = 0;
    // (`!`: j < words.length = fb.length = tfs.length.)
    for (let j = 0; j < fb.length; j++) {
      if (!tfs[j]) continue;
      add += fb[j]!.w * ix.boosts[0]! * fb[j]!.idf * (d + (tfs[j]! * (k + 1)) / (tfs[j]! + norm));
      more += fb[j]!.w;
    }
    scores[i] = (totals[i]! + add) * (coord[i]! + more);
  }
  return { sids, scores, masks };
}

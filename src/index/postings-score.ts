/**
 * Scoring a text against the posting index exactly as MiniSearch 7's `search` scores it: BM25+,
 * field and term boosts, prefix and fuzzy terms weighted as it weights them, document frequency
 * over live documents only, the score times the number of distinct query terms matched. The work
 * arrays, one slot per document number, are kept between queries.
 */
import type { SearchOptions } from 'minisearch';
import type { PostingIndex } from './postings.js';
import { queryTerms } from './reachable.js';

/** Scores of every document a text reaches: `sids[i]` is a document number, `scores[i]` its score, `masks[i]` the query's distinct terms it holds as bits (0 past 31). */
export interface ScoredHits {
  sids: Int32Array;
  scores: Float64Array;
  masks?: Int32Array;
  /** Each hit's summary length in distinct words (weighByLength), when asked for. */
  lengths?: Uint16Array;
  /** Whether each hit's summary names something (its `names` field is not empty). */
  named?: Uint8Array;
}

/** A posting's field and term frequency share 16 bits: the field in the top 3, the frequency below. */
export const FIELD_SHIFT = 13;
export const TF_MAX = (1 << FIELD_SHIFT) - 1;

export class PostingScorer {
  private size = 0;
  private cur = new Float64Array(0);
  private total = new Float64Array(0);
  private mask = new Int32Array(0);
  private curList = new Int32Array(0);
  private totList = new Int32Array(0);
  /** Documents in `curList` (those the current query term reached so far). */
  private nCur = 0;
  private fieldStart = new Uint32Array(0);
  private liveIn = new Uint32Array(0);

  private ensure(n: number, fields: number): void {
    if (this.liveIn.length !== fields) {
      this.fieldStart = new Uint32Array(fields + 1);
      this.liveIn = new Uint32Array(fields);
    }
    if (n <= this.size) return;
    const size = Math.max(n, Math.ceil(this.size * 1.25));
    this.cur = new Float64Array(size);
    this.total = new Float64Array(size);
    this.mask = new Int32Array(size);
    this.curList = new Int32Array(size);
    this.totList = new Int32Array(size);
    this.size = size;
  }

  /** Every document `text` reaches with the score of MiniSearch's `search` (an OR query with the index's search options), unsorted. */
  score(ix: PostingIndex, text: string, overrides: SearchOptions = {}): ScoredHits {
    const so: SearchOptions = { ...ix.opts.searchOptions, ...overrides };
    const terms = queryTerms(text, ix.opts, so);
    const sources = [...new Set(terms.map((q) => q.term))];
    const weights = { fuzzy: 0.45, prefix: 0.375, ...so.weights };
    const bm25 = { k: 1.2, b: 0.7, d: 0.5, ...so.bm25 };
    this.ensure(ix.next, ix.F);
    const { cur, total, mask, curList, totList } = this;
    let nTot = 0;
    // A document's matched query terms as bits; past 31 distinct terms, counted the slow way.
    const matchedSets = sources.length > 31 ? new Map<number, Set<number>>() : null;
    for (const { term, boost, prefix, fuzzy } of terms) {
      const source = sources.indexOf(term);
      this.nCur = 0;
      const exact = ix.ids.get(term);
      if (exact !== undefined) this.termResults(ix, bm25, 1, boost, exact);
      const fuzzyMatches = fuzzy ? ix.vocab.fuzzyGet(term, fuzzy) : undefined;
      if (prefix) {
        for (const [t, id] of ix.vocab.atPrefix(term)) {
          const distance = t.length - term.length;
          if (!distance) continue;
          fuzzyMatches?.delete(t);
          this.termResults(ix, bm25, (weights.prefix * t.length) / (t.length + 0.3 * distance), boost, id);
        }
      }
      for (const [t, [id, distance]] of fuzzyMatches ?? [])
        if (distance) this.termResults(ix, bm25, (weights.fuzzy * t.length) / (t.length + distance), boost, id);
      // The OR combinator: a document's total is the running sum of its per-term scores, in query
      // order. (`!`: j < nCur <= size, the length of every work array.)
      for (let j = 0; j < this.nCur; j++) {
        const doc = curList[j]!;
        if (total[doc] === 0) totList[nTot++] = doc;
        total[doc] = total[doc]! + cur[doc]!;
        if (matchedSets) {
          let s = matchedSets.get(doc);
          if (!s) matchedSets.set(doc, (s = new Set()));
          s.add(source);
        } else mask[doc]! |= 1 << source;
        cur[doc] = 0;
      }
    }
    const sids = new Int32Array(nTot);
    const scores = new Float64Array(nTot);
    const masks = new Int32Array(nTot);
    // `!`: j < nTot <= size, the length of every work array.
    for (let j = 0; j < nTot; j++) {
      const doc = totList[j]!;
      let matched = 0;
      if (matchedSets) matched = matchedSets.get(doc)?.size ?? 0;
      else {
        let x = (masks[j] = mask[doc]!);
        while (x) {
          x &= x - 1;
          matched++;
        }
      }
      sids[j] = doc;
      scores[j] = total[doc]! * matched;
      total[doc] = 0;
      mask[doc] = 0;
    }
    return { sids, scores, masks };
  }

  /** MiniSearch's termResults for one derived term `t`, into `cur`, field by field. (`!`: PostingIndex keeps every posting, field and document number within its arrays.) */
  private termResults(ix: PostingIndex, bm25: { k: number; b: number; d: number }, termWeight: number, termBoost: number, t: number): void {
    const { F, count: N, avg, lens, alive, boosts, pDoc, pFt, tOff, baseTerms } = ix;
    const { cur, curList, fieldStart, liveIn } = this;
    const { k, b, d } = bm25;
    // Where each field's base postings start (they are sorted by field), and live counts.
    liveIn.fill(0);
    const inBase = t < baseTerms;
    const anyDead = ix.dead > 0;
    if (inBase) {
      let i = tOff[t]!;
      const end = tOff[t + 1]!;
      for (let f = 0; f < F; f++) {
        fieldStart[f] = i;
        if (anyDead) for (; i < end && pFt[i]! >>> FIELD_SHIFT === f; i++) liveIn[f]! += alive[pDoc[i]!]!;
        else {
          // Every posting is live: the field's end by binary search (postings are sorted by field).
          let hi = end;
          while (i < hi) {
            const mid = (i + hi) >>> 1;
            if (pFt[mid]! >>> FIELD_SHIFT <= f) i = mid + 1;
            else hi = mid;
          }
          liveIn[f] = i - fieldStart[f]!;
        }
      }
      fieldStart[F] = end;
    }
    for (let f = 0; f < F; f++) {
      const list = ix.delta[t * F + f];
      if (!list) continue;
      if (!anyDead) liveIn[f]! += list.length / 2;
      else for (let j = 0; j < list.length; j += 2) liveIn[f]! += alive[list[j]!]!;
    }
    for (let f = 0; f < F; f++) {
      const matching = liveIn[f]!;
      if (matching === 0) continue;
      const avgLen = avg[f]!;
      const idf = Math.log(1 + (N - matching + 0.5) / (matching + 0.5));
      // termWeight * termBoost * fieldBoost * docBoost * rawScore, with docBoost = 1 (exact in floating point).
      const w = termWeight * termBoost * boosts[f]!;
      const add = (doc: number, tf: number): void => {
        const raw = idf * (d + (tf * (k + 1)) / (tf + k * (1 - b + (b * lens[doc * F + f]!) / avgLen)));
        if (cur[doc] === 0) curList[this.nCur++] = doc;
        cur[doc]! += w * raw;
      };
      if (inBase)
        for (let i = fieldStart[f]!; i < fieldStart[f + 1]!; i++) {
          const doc = pDoc[i]!;
          if (alive[doc]) add(doc, pFt[i]! & TF_MAX);
        }
      const list = ix.delta[t * F + f];
      if (list) for (let j = 0; j < list.length; j += 2) if (alive[list[j]!]) add(list[j]!, list[j + 1]!);
    }
  }
}

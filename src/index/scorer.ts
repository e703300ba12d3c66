/**
 * MiniSearch's OR query, scored straight from its postings into typed arrays.
 *
 * `MiniSearch.search` (and its `executeQuery`) builds a result object per hit with the matched
 * terms and fields, merges those objects across query terms, and only then scores: at 100K
 * entries a two-word query reaches ~20,000 documents and that bookkeeping costs ~35 ms of a
 * 60 ms warm query. The scores themselves need none of it. This replays MiniSearch 7's scoring
 * step for step (the same derived terms in the same order: exact, then prefix, then fuzzy; the
 * same fields in the same order; the same BM25+ expression; per-query-term sums folded in query
 * order, then times the number of distinct query terms matched) so every score is bit-for-bit
 * the one MiniSearch gives, with one Float64Array slot per document instead of objects.
 *
 * Postings of discarded documents that the vacuum has not dropped yet (the daemon defers it to a
 * quiet moment) are left out, and the term's documents counted without them: the scores of the
 * vacuumed index, at once. (MiniSearch itself drops them one occurrence per search and counts
 * differently before and after each, so its scores would drift from one query to the next.)
 *
 * Whenever anything is outside what it replays (a document boost, a term boost, AND queries,
 * more than 31 distinct terms, internals that moved in another version), it returns null and
 * the caller uses MiniSearch itself. Tests check it against MiniSearch on every query shape the
 * index options produce.
 */
import type MiniSearch from 'minisearch';

type FieldData = Map<number, Map<number, number>>;

interface SearchOpts {
  combineWith?: string;
  prefix?: boolean | ((term: string, i: number, terms: string[]) => boolean);
  fuzzy?: boolean | number | ((term: string, i: number, terms: string[]) => boolean | number);
  maxFuzzy?: number;
  boost?: Record<string, number>;
  weights?: { fuzzy?: number; prefix?: number };
  bm25?: { k: number; b: number; d: number };
  boostDocument?: unknown;
  boostTerm?: unknown;
  fields?: string[];
  filter?: unknown;
  tokenize?: (text: string) => string[];
  processTerm?: (term: string) => string | string[] | null | undefined | false;
}

/** The parts of a MiniSearch 7 instance the scorer reads (checked before every use). */
interface Internals {
  _options: { fields: string[]; tokenize: (text: string) => string[]; processTerm: SearchOpts['processTerm']; searchOptions: SearchOpts };
  _index: {
    get(term: string): FieldData | undefined;
    atPrefix(term: string): Iterable<[string, FieldData]>;
    fuzzyGet(term: string, d: number): Map<string, [FieldData, number]>;
  };
  _fieldIds: Record<string, number>;
  _fieldLength: Map<number, number[]>;
  _avgFieldLength: number[];
  _documentCount: number;
  _nextId: number;
  _dirtCount: number;
}

function internalsOf(ms: MiniSearch<unknown>): Internals | null {
  const m = ms as unknown as Partial<Internals>;
  const o = m._options;
  const ix = m._index;
  if (!o || !Array.isArray(o.fields) || typeof o.tokenize !== 'function' || typeof o.processTerm !== 'function' || !o.searchOptions) return null;
  if (!ix || typeof ix.get !== 'function' || typeof ix.atPrefix !== 'function' || typeof ix.fuzzyGet !== 'function') return null;
  if (
    !m._fieldIds ||
    !(m._fieldLength instanceof Map) ||
    !Array.isArray(m._avgFieldLength) ||
    typeof m._documentCount !== 'number' ||
    typeof m._nextId !== 'number' ||
    typeof m._dirtCount !== 'number'
  )
    return null;
  return m as Internals;
}

/** Scores of every document a text reaches: `sids[i]` is MiniSearch's document number, `scores[i]` its `search` score. */
export interface ScoredHits {
  sids: Int32Array;
  scores: Float64Array;
}

const own = (o: object | undefined, k: string): number | undefined =>
  o && Object.prototype.hasOwnProperty.call(o, k) ? (o as Record<string, number>)[k] : undefined;

/**
 * Holds the per-document work arrays between queries (a long-lived process asks many), sized to
 * MiniSearch's next document number.
 */
export class PostingScorer {
  private size = 0;
  private cur = new Float64Array(0);
  private total = new Float64Array(0);
  private mask = new Int32Array(0);
  private curList = new Int32Array(0);
  private totList = new Int32Array(0);
  /**
   * Field lengths by document number (`doc * fields + fieldId`), filled up to `lengthsUpTo`: one
   * typed-array read per posting instead of a lookup in MiniSearch's map of 100K arrays. A
   * document's lengths never change (a replaced document gets a new number), so the table only
   * grows; it is used only while no discarded document has postings left (`_dirtCount` 0).
   */
  private lengths = new Uint32Array(0);
  private lengthsUpTo = 0;
  private lengthsOf: unknown = null;

  private ensure(n: number): void {
    if (n <= this.size) return;
    const size = Math.max(n, Math.ceil(this.size * 1.25));
    this.cur = new Float64Array(size);
    this.total = new Float64Array(size);
    this.mask = new Int32Array(size);
    this.curList = new Int32Array(size);
    this.totList = new Int32Array(size);
    this.size = size;
  }

  /** The field-length table of `m`, brought up to its next document number. */
  private lengthTable(m: Internals, stride: number): Uint32Array {
    if (this.lengthsOf !== m) {
      this.lengthsOf = m;
      this.lengthsUpTo = 0;
    }
    const upTo = m._nextId;
    if (upTo <= this.lengthsUpTo) return this.lengths;
    if (upTo * stride > this.lengths.length) {
      const grown = new Uint32Array(Math.max(upTo, Math.ceil(this.lengthsUpTo * 1.25)) * stride);
      grown.set(this.lengths.subarray(0, this.lengthsUpTo * stride));
      this.lengths = grown;
    }
    const t = this.lengths;
    t.fill(0, this.lengthsUpTo * stride, upTo * stride);
    for (let doc = this.lengthsUpTo; doc < upTo; doc++) {
      const fl = m._fieldLength.get(doc);
      if (fl) for (let f = 0; f < fl.length && f < stride; f++) t[doc * stride + f] = fl[f] ?? 0;
    }
    this.lengthsUpTo = upTo;
    return t;
  }

  /**
   * What `ms.search(text)` scores, without its result objects; null when only MiniSearch can say.
   * `denseLengths: false` skips the field-length table, for an index asked once (a one-shot
   * query): building it walks every document, more than a few thousand map lookups cost.
   */
  score(ms: MiniSearch<unknown>, text: string, opts: { denseLengths?: boolean } = {}): ScoredHits | null {
    const m = internalsOf(ms);
    if (!m) return null;
    const g = m._options;
    const so = g.searchOptions;
    // executeQuery's options, then termToQuerySpec's and executeQuerySpec's reading of them.
    const options: SearchOpts = { tokenize: g.tokenize, processTerm: g.processTerm, ...so };
    if (String(options.combineWith ?? 'or').toLowerCase() !== 'or' || options.boostDocument || options.boostTerm || options.filter) return null;
    const bm25 = so.bm25;
    if (!bm25 || typeof bm25.k !== 'number' || typeof bm25.b !== 'number' || typeof bm25.d !== 'number') return null;
    const terms = options.tokenize!(text)
      .flatMap((t) => options.processTerm!(t) as string | string[])
      .filter((t): t is string => !!t);
    const sources: string[] = [];
    for (const t of terms) if (!sources.includes(t)) sources.push(t);
    if (sources.length > 31) return null; // one bit per distinct query term
    const fields = so.fields ?? g.fields;
    const boosts = fields.map((f) => own(so.boost, f) || 1);
    const fieldIds = fields.map((f) => m._fieldIds[f]);
    const { fuzzy: fuzzyWeight, prefix: prefixWeight } = { fuzzy: 0.45, prefix: 0.375, ...so.weights };
    const maxFuzzy = so.maxFuzzy ?? 6;
    const { k, b, d } = bm25;
    const N = m._documentCount;
    const avg = m._avgFieldLength;
    const lengths = m._fieldLength;
    // Field ids are 0..fields-1; with no discarded document's postings left, the dense table.
    const stride = g.fields.length;
    const table =
      opts.denseLengths !== false && m._dirtCount === 0 && fieldIds.every((id) => Number.isInteger(id) && id >= 0 && id < stride)
        ? this.lengthTable(m, stride)
        : null;

    this.ensure(m._nextId);
    const { cur, total, mask, curList, totList } = this;
    let nTot = 0;
    let nCur = 0;
    let bit = 0;

    // MiniSearch's termResults for one derived term, into `cur` (per document, in posting order).
    const termResults = (termWeight: number, termBoost: number, data: FieldData | undefined): void => {
      if (data == null) return;
      for (let f = 0; f < fields.length; f++) {
        const fieldId = fieldIds[f];
        const freqs = data.get(fieldId);
        if (freqs == null) continue;
        let matching = freqs.size;
        const avgLen = avg[fieldId];
        if (table) {
          const idf = Math.log(1 + (N - matching + 0.5) / (matching + 0.5));
          // termWeight * termBoost * fieldBoost * docBoost * rawScore, with docBoost = 1 (exact in floating point).
          const w = termWeight * termBoost * boosts[f];
          freqs.forEach((tf, doc) => {
            const raw = idf * (d + (tf * (k + 1)) / (tf + k * (1 - b + (b * table[doc * stride + fieldId]) / avgLen)));
            if (cur[doc] === 0) curList[nCur++] = doc;
            cur[doc] += w * raw;
          });
          continue;
        }
        // Discarded documents' postings are still here until the vacuum runs (the daemon defers
        // it): score as the vacuumed index will, counting and scoring the live documents only.
        // (MiniSearch itself drops them one occurrence per search and counts a term's documents
        // differently before and after each: its scores would drift from query to query.)
        if (m._dirtCount > 0) {
          matching = 0;
          for (const doc of freqs.keys()) if (lengths.has(doc)) matching++;
          if (matching === 0) continue;
        }
        const idf = Math.log(1 + (N - matching + 0.5) / (matching + 0.5));
        const w = termWeight * termBoost * boosts[f];
        freqs.forEach((tf, doc) => {
          const fl = lengths.get(doc);
          if (fl === undefined) return;
          const raw = idf * (d + (tf * (k + 1)) / (tf + k * (1 - b + (b * fl[fieldId]) / avgLen)));
          if (cur[doc] === 0) curList[nCur++] = doc;
          cur[doc] += w * raw;
        });
      }
    };

    for (let i = 0; i < terms.length; i++) {
      const term = terms[i];
      const fz = typeof options.fuzzy === 'function' ? options.fuzzy(term, i, terms) : options.fuzzy || false;
      const prefix = typeof options.prefix === 'function' ? options.prefix(term, i, terms) : options.prefix === true;
      bit = 1 << sources.indexOf(term);
      nCur = 0;
      termResults(1, 1, m._index.get(term));
      let prefixMatches: Iterable<[string, FieldData]> | undefined;
      let fuzzyMatches: Map<string, [FieldData, number]> | undefined;
      if (prefix) prefixMatches = m._index.atPrefix(term);
      if (fz) {
        const f = fz === true ? 0.2 : fz;
        const maxDistance = f < 1 ? Math.min(maxFuzzy, Math.round(term.length * f)) : f;
        if (maxDistance) fuzzyMatches = m._index.fuzzyGet(term, maxDistance);
      }
      if (prefixMatches) {
        for (const [t, data] of prefixMatches) {
          const distance = t.length - term.length;
          if (!distance) continue;
          fuzzyMatches?.delete(t);
          termResults((prefixWeight * t.length) / (t.length + 0.3 * distance), 1, data);
        }
      }
      if (fuzzyMatches) {
        for (const t of fuzzyMatches.keys()) {
          const [data, distance] = fuzzyMatches.get(t)!;
          if (!distance) continue;
          termResults((fuzzyWeight * t.length) / (t.length + distance), 1, data);
        }
      }
      // The OR combinator: a document's total is the running sum of its per-term scores, in query order.
      for (let j = 0; j < nCur; j++) {
        const doc = curList[j];
        if (total[doc] === 0) totList[nTot++] = doc;
        total[doc] = total[doc] + cur[doc];
        mask[doc] |= bit;
        cur[doc] = 0;
      }
    }
    const sids = new Int32Array(nTot);
    const scores = new Float64Array(nTot);
    for (let j = 0; j < nTot; j++) {
      const doc = totList[j];
      let x = mask[doc];
      let matched = 0;
      while (x) {
        x &= x - 1;
        matched++;
      }
      sids[j] = doc;
      scores[j] = total[doc] * matched;
      total[doc] = 0;
      mask[doc] = 0;
    }
    return { sids, scores };
  }
}

/**
 * The text index in memory: a posting is six bytes in two typed arrays (document number; field
 * and frequency in 16 bits) where MiniSearch holds tens of bytes in Maps, with MiniSearch's radix
 * tree as the vocabulary for prefix and fuzzy matching. The *base* (postings contiguous per term,
 * sorted by field) is immutable between compactions; added documents go to a small *delta*,
 * discarded ones are marked dead until `compact`. Scores are MiniSearch 7's, bit for bit
 * (postings-score.ts reads the fields not marked private).
 */
import SearchableMap from 'minisearch/SearchableMap';
import type { Options, SearchOptions } from 'minisearch';
import type { Doc } from './options.js';
import { FIELD_SHIFT, PostingScorer, TF_MAX, type ScoredHits } from './postings-score.js';

export { FIELD_SHIFT, type ScoredHits } from './postings-score.js';
const LEN_MAX = 0xffff;
/** Distinct raw tokens remembered while adding documents before the cache starts over. */
const RAW_CACHE = 500_000;

/** The base tier (also what a snapshot holds). */
export interface BaseTier {
  /** Sorted vocabulary; the base postings of terms[t] are positions tOff[t] .. tOff[t+1]-1. */
  terms: string[];
  tOff: Uint32Array;
  pDoc: Uint32Array;
  pFt: Uint16Array;
}

export interface DocTables {
  /** Key of each document number; '' for a discarded one. */
  keys: string[];
  /** Unique tokens per field: doc * fields + field. */
  lens: Uint16Array;
  /** MiniSearch's running average of each field's length. */
  avg: number[];
}

function grow<T extends Uint8Array | Uint16Array | Int32Array>(a: T, need: number, make: (n: number) => T): T {
  if (need <= a.length) return a;
  const b = make(Math.max(need, Math.ceil(a.length * 1.5), 64));
  b.set(a);
  return b;
}

export class PostingIndex {
  readonly fields: readonly string[];
  readonly F: number;
  readonly opts: Options<Doc>;
  readonly boosts: number[];
  private keys: string[] = [];
  /** Made on first use: a one-shot query goes from numbers to keys only. */
  private byKeyMap: Map<string, number> | undefined = new Map();
  lens: Uint16Array = new Uint16Array(0);
  alive: Uint8Array = new Uint8Array(0);
  /** One more than the largest document number in use. */
  next = 0;
  /** Documents in the index. */
  count = 0;
  avg: number[];
  /** Documents discarded while their postings are still in the base or the delta. */
  dead = 0;
  // Vocabulary: term → term number (a Map for exact lookups, the radix tree for prefix and fuzzy ones); terms[t] is its text.
  ids = new Map<string, number>();
  vocab = new SearchableMap<number>();
  private terms: string[] = [];
  // Adding documents: the raw-token cache (see rawOf) and per-term counts of the field at hand.
  private rawIds = new Map<string, number>();
  private rawTerm = new Int32Array(0);
  private rawSeen = new Int32Array(0);
  private tf = new Int32Array(0);
  /** Numbers each field added, so `rawSeen` tells whether a token was counted in this one. */
  private marks = 0;
  // Base postings (terms 0 .. baseTerms-1).
  baseTerms = 0;
  tOff: Uint32Array = new Uint32Array(1);
  pDoc: Uint32Array = new Uint32Array(0);
  pFt: Uint16Array = new Uint16Array(0);
  /** Delta postings: term * F + field → [doc, tf, doc, tf, ...]. */
  delta: (number[] | undefined)[] = [];
  private deltaCount = 0;
  private scorer: PostingScorer | undefined;

  constructor(opts: Options<Doc>) {
    this.opts = opts;
    this.fields = opts.fields;
    this.F = opts.fields.length;
    if (this.F > 1 << (16 - FIELD_SHIFT)) throw new Error('too many fields for the posting layout');
    this.avg = new Array<number>(this.F).fill(0);
    const boost = opts.searchOptions?.boost ?? {};
    this.boosts = this.fields.map((f) => (Object.prototype.hasOwnProperty.call(boost, f) ? boost[f] : 0) || 1);
  }

  /** Takes these tables (a snapshot, whole or with some terms' postings only) as its own, not copied, in place of an empty index's. */
  takeTables(docs: DocTables, base: BaseTier): void {
    this.keys = docs.keys;
    this.lens = docs.lens;
    this.alive = Uint8Array.from(docs.keys, (k) => (k ? 1 : 0));
    this.count = docs.keys.filter(Boolean).length;
    this.byKeyMap = undefined;
    this.next = docs.keys.length;
    this.avg = [...docs.avg];
    this.useBase(base);
  }

  private get byKey(): Map<string, number> {
    if (!this.byKeyMap) {
      this.byKeyMap = new Map();
      this.keys.forEach((key, d) => {
        if (this.alive[d]) this.byKeyMap!.set(key, d);
      });
    }
    return this.byKeyMap;
  }

  /** Postings waiting in the delta, and discarded documents whose postings are still held. */
  get pending(): { delta: number; dead: number; base: number } {
    return { delta: this.deltaCount, dead: this.dead, base: this.pDoc.length };
  }

  termText(t: number): string {
    return this.terms[t] ?? '';
  }

  keyOf(doc: number): string | undefined {
    return this.alive[doc] ? this.keys[doc] : undefined;
  }

  docOf(key: string): number | undefined {
    return this.byKey.get(key);
  }

  /** Adds a document under a new number (MiniSearch's `add`); throws on a key already present. */
  add(doc: Doc): number {
    if (this.byKey.has(doc.key)) throw new Error(`duplicate document ${doc.key}`);
    const d = this.next++;
    const F = this.F;
    this.keys[d] = doc.key;
    this.byKey.set(doc.key, d);
    this.alive = grow(this.alive, d + 1, (n) => new Uint8Array(n));
    this.lens = grow(this.lens, (d + 1) * F, (n) => new Uint16Array(n));
    this.alive[d] = 1;
    this.count++;
    const tokenize = this.opts.tokenize!;
    const touched: number[] = [];
    if (this.rawIds.size >= RAW_CACHE || this.marks > 0x7fffffff - F) {
      this.rawIds.clear();
      this.rawSeen.fill(0);
      this.marks = 0;
    }
    this.fields.forEach((field, f) => {
      const value = doc[field as keyof Doc];
      const tokens = tokenize(value == null ? '' : String(value), field);
      // Each token once through the raw-token cache: its term, and whether this field counted it yet.
      const mark = ++this.marks;
      let unique = 0;
      touched.length = 0;
      for (const token of tokens) {
        // `!`: rawOf sizes rawSeen and rawTerm past r, and termId sizes tf past every term.
        const r = this.rawOf(token);
        if (this.rawSeen[r] !== mark) {
          this.rawSeen[r] = mark;
          unique++;
        }
        const t = this.rawTerm[r]!;
        if (t < 0) continue;
        if (this.tf[t] === 0) touched.push(t);
        this.tf[t]!++;
      }
      this.lens[d * F + f] = Math.min(unique, LEN_MAX);
      // MiniSearch's running average, updated as it updates it (the same bits).
      this.avg[f] = ((this.avg[f] || 0) * (this.count - 1) + unique) / this.count;
      for (const t of touched) {
        const slot = t * F + f;
        let list = this.delta[slot];
        if (!list) this.delta[slot] = list = [];
        list.push(d, Math.min(this.tf[t]!, TF_MAX));
        this.tf[t] = 0;
        this.deltaCount++;
      }
    });
    return d;
  }

  /** The number of a term, added to the vocabulary when new. */
  private termId(term: string): number {
    let t = this.ids.get(term);
    if (t === undefined) {
      this.ids.set(term, (t = this.terms.push(term) - 1));
      this.vocab.set(term, t);
      this.tf = grow(this.tf, t + 1, (n) => new Int32Array(n));
    }
    return t;
  }

  /**
   * The raw-token number of `token`, whose term is `rawTerm[r]` (-1: dropped). Entries repeat
   * their words: each distinct token is processed (stemmed) once per index, which holds because
   * the analyzer gives one term or none and treats every field alike.
   */
  private rawOf(token: string): number {
    let r = this.rawIds.get(token);
    if (r !== undefined) return r;
    this.rawIds.set(token, (r = this.rawIds.size));
    this.rawTerm = grow(this.rawTerm, r + 1, (n) => new Int32Array(n));
    this.rawSeen = grow(this.rawSeen, r + 1, (n) => new Int32Array(n));
    const p = this.opts.processTerm!(token);
    if (Array.isArray(p)) throw new Error('the posting index takes one term per token');
    this.rawTerm[r] = p ? this.termId(p) : -1;
    return r;
  }

  /** Discards a document (MiniSearch's `discard`): its postings stay, unscored, until `compact`. */
  discard(key: string): boolean {
    const d = this.byKey.get(key);
    if (d === undefined) return false;
    const F = this.F;
    const n = this.count;
    this.avg = this.avg.map((avg, f) => (n === 1 ? 0 : (avg * n - (this.lens[d * F + f] ?? 0)) / (n - 1)));
    this.byKey.delete(key);
    this.alive[d] = 0;
    this.keys[d] = '';
    this.count--;
    this.dead++;
    return true;
  }

  /** Rebuilds the base without discarded documents, renumbered 0..n-1 in order. */
  compact(): void {
    const F = this.F;
    const remap = new Int32Array(this.next).fill(-1);
    const keys: string[] = [];
    const lens = new Uint16Array(this.count * F);
    this.keys.forEach((key, d) => {
      if (!this.alive[d]) return;
      remap[d] = keys.length;
      lens.set(this.lens.subarray(d * F, d * F + F), keys.length * F);
      keys.push(key);
    });
    const order = this.liveTermsInOrder(remap);
    const nOff = new Uint32Array(order.length + 1);
    order.forEach(([, n], j) => (nOff[j + 1] = nOff[j]! + n));
    const total = nOff[order.length]!;
    const nDoc = new Uint32Array(total);
    const nFt = new Uint16Array(total);
    // A term's postings by field, then document: the base's of that field, then the delta's.
    // (`!`: positions below tOff's ends and document numbers below `next` index the typed arrays.)
    const { pDoc, pFt, tOff, baseTerms } = this;
    order.forEach(([t], j) => {
      let at = nOff[j]!;
      const baseEnd = t < baseTerms ? tOff[t + 1]! : 0;
      let i = t < baseTerms ? tOff[t]! : 0;
      for (let f = 0; f < F; f++) {
        for (; i < baseEnd && pFt[i]! >>> FIELD_SHIFT === f; i++) {
          const nd = remap[pDoc[i]!]!;
          if (nd < 0) continue;
          nDoc[at] = nd;
          nFt[at++] = pFt[i]!;
        }
        const list = this.delta[t * F + f] ?? [];
        for (let k = 0; k < list.length; k += 2) {
          const nd = remap[list[k]!]!;
          if (nd < 0) continue;
          nDoc[at] = nd;
          nFt[at++] = (f << FIELD_SHIFT) | list[k + 1]!;
        }
      }
    });
    this.keys = keys;
    this.byKeyMap = new Map(keys.map((k, d) => [k, d]));
    this.lens = lens;
    this.alive = new Uint8Array(keys.length).fill(1);
    this.next = keys.length;
    this.dead = 0;
    this.delta = [];
    this.deltaCount = 0;
    this.useBase({ terms: order.map(([t]) => this.terms[t] ?? ''), tOff: nOff, pDoc: nDoc, pFt: nFt });
  }

  /** The terms keeping live postings after `remap`, sorted by text, each with how many. (`!`: as in compact.) */
  private liveTermsInOrder(remap: Int32Array): [term: number, postings: number][] {
    const { pDoc, tOff, baseTerms, F } = this;
    const per = new Uint32Array(this.terms.length);
    for (let t = 0; t < baseTerms; t++) for (let i = tOff[t]!; i < tOff[t + 1]!; i++) if (remap[pDoc[i]!]! >= 0) per[t]!++;
    this.delta.forEach((list, slot) => {
      const t = Math.floor(slot / F);
      for (let i = 0; i < (list?.length ?? 0); i += 2) if (remap[list![i]!]! >= 0) per[t]!++;
    });
    const order: [number, number][] = [];
    per.forEach((n, t) => {
      if (n > 0) order.push([t, n]);
    });
    const text = (t: number): string => this.terms[t] ?? '';
    return order.sort(([a], [b]) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
  }

  /** Takes `base` as the base tier and its terms as the whole vocabulary (term numbers change). */
  private useBase(base: BaseTier): void {
    ({ terms: this.terms, tOff: this.tOff, pDoc: this.pDoc, pFt: this.pFt } = base);
    this.baseTerms = base.terms.length;
    // Term numbers change: the raw-token cache starts over.
    this.rawIds.clear();
    this.rawSeen.fill(0);
    this.ids = new Map();
    this.vocab = new SearchableMap<number>();
    this.tf = new Int32Array(this.terms.length);
    this.terms.forEach((term, t) => {
      this.ids.set(term, t);
      this.vocab.set(term, t);
    });
  }

  /** The tables a snapshot stores: call `compact` first (the delta and the dead are not written). */
  tables(): { docs: DocTables; base: BaseTier } {
    if (this.deltaCount || this.dead) throw new Error('compact the index before writing it');
    return {
      docs: { keys: this.keys, lens: this.lens.subarray(0, this.next * this.F), avg: [...this.avg] },
      base: { terms: this.terms, tOff: this.tOff, pDoc: this.pDoc, pFt: this.pFt },
    };
  }

  /** Every document `text` reaches with MiniSearch's score, unsorted (postings-score.ts). */
  score(text: string, overrides: SearchOptions = {}): ScoredHits {
    return (this.scorer ??= new PostingScorer()).score(this, text, overrides);
  }
}

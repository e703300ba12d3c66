/**
 * The full-text index (MiniSearch) over summary, content, subject, tags, kind and scope.
 *
 * Persisted under `.bass-agents/cache/index.bin`: the postings of every term (one JSON object per
 * term, in vocabulary order), then a JSON header (version, options hash, file stamps, MiniSearch's
 * document tables, the sorted vocabulary with byte offsets), then the header's length. Putting the
 * header last lets a save stream the postings straight from MiniSearch's maps to the file, one
 * term at a time: at 100K entries a `toJSON` copy of the whole index would not fit comfortably in
 * memory. A long-lived process (daemon, MCP server) loads it whole. A one-shot
 * `memory query` loads only the header and the postings of the terms its text can match (exact,
 * prefix and fuzzy, by MiniSearch's own rules), which gives exactly the scores of the whole index
 * at a fraction of the cost: the document count, field lengths and per-term document frequencies
 * that BM25 needs are all there. Entries whose files changed since the snapshot are replaced or
 * discarded by id (the catalog's stamps say which). A corrupt or mismatched snapshot is rebuilt,
 * never fatal. Queries score through `rawHits` (see PostingScorer); the service filters the hits,
 * which gives what filtering first would (Req 15.5): MiniSearch's scores do not depend on filters.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import MiniSearch, { type Options, type SearchOptions, type SearchResult } from 'minisearch';
import type { MemoryEntry } from '../core/schema.js';
import { writeFileAtomicWith } from '../store/fsutil.js';
import { PostingScorer, type ScoredHits } from './scorer.js';

const SNAPSHOT_VERSION = 4;
/** The last bytes of a snapshot: `\n`, the header's byte length in 12 digits, `\n`. */
const TRAILER = 14;
const MAGIC = 'BASS-AGENTS-INDEX\n';

interface Doc {
  key: string;
  summary: string;
  content: string;
  subject: string;
  tags: string;
  kind: string;
  scope: string;
}

/** Splits on anything that is not a letter or digit, so `auth-service.tokens` → auth, service, tokens. */
const tokenize = (text: string): string[] => text.split(/[^\p{L}\p{N}]+/u).filter(Boolean);

export const INDEX_OPTIONS: Options<Doc> = {
  idField: 'key',
  fields: ['summary', 'content', 'subject', 'tags', 'kind', 'scope'],
  storeFields: [],
  tokenize,
  processTerm: (t) => (t.length > 1 || /\d/.test(t) ? t.toLowerCase() : null),
  // Vacuumed synchronously after every sync that discards (see SearchIndex.vacuum).
  autoVacuum: false,
  searchOptions: {
    boost: { summary: 3, subject: 3, tags: 2, kind: 1, scope: 1, content: 1 },
    prefix: (term) => term.length >= 3,
    fuzzy: (term) => (term.length >= 6 ? 0.15 : false),
    combineWith: 'OR',
  },
};

/**
 * Names the tokenizer and term processing above: change it whenever they change, so an old
 * snapshot is rebuilt rather than misread. (Not their source text: the bundled CLI and dist/
 * hold the same functions formatted differently, and must share one snapshot.)
 */
const ANALYZER = 'split-non-letter-digit/lowercase-min2-or-digit/v1';

/** Changes whenever the options above change, so an old snapshot is rebuilt rather than misread. */
export const OPTIONS_HASH = createHash('sha1')
  .update(JSON.stringify({ v: SNAPSHOT_VERSION, fields: INDEX_OPTIONS.fields, analyzer: ANALYZER }))
  .digest('hex')
  .slice(0, 12);

export interface IndexedDoc {
  key: string;
  stamp: string;
  /** The entry, fetched only when the index has to (re)index it. */
  load: () => MemoryEntry;
}

function docOf(key: string, e: MemoryEntry): Doc {
  return { key, summary: e.summary, content: e.content, subject: e.subject, tags: e.tags.join(' '), kind: e.kind, scope: e.scope };
}

export interface SyncPlan {
  add: IndexedDoc[];
  replace: IndexedDoc[];
  discard: string[];
  size: number;
}

export interface SyncReport {
  loaded: boolean;
  added: number;
  replaced: number;
  removed: number;
}

type MiniSearchJS = Parameters<typeof MiniSearch.loadJS>[0];
type Postings = MiniSearchJS['index'][number][1];

interface Header {
  v: number;
  optionsHash: string;
  /** The file stamp of each document, in the order of `ms.documentIds` (an array parses ~4x faster than a keyed object). */
  stamps: string[];
  /** MiniSearch's serialized state without `index`. */
  ms: Omit<MiniSearchJS, 'index'>;
  /** Sorted vocabulary; the postings of terms[i] are body bytes offsets[i] .. offsets[i+1]-2 (a comma follows each). */
  terms: string[];
  offsets: number[];
}

function checkHeader(header: Header): Header | null {
  if (header.v !== SNAPSHOT_VERSION || header.optionsHash !== OPTIONS_HASH) return null;
  if (!Array.isArray(header.terms) || !Array.isArray(header.offsets) || header.offsets.length !== header.terms.length + 1 || !Array.isArray(header.stamps))
    return null;
  return header;
}

/** Document key → file stamp, from the header's arrays. */
function stampsOf(header: Header): Map<string, string> {
  const keys = Object.values(header.ms.documentIds) as string[];
  if (keys.length !== header.stamps.length) throw new Error('snapshot stamps do not match its documents');
  const out = new Map<string, string>();
  for (let i = 0; i < keys.length; i++) out.set(keys[i], header.stamps[i]);
  return out;
}

/** Reads `len` bytes at `pos` of an open file. */
function readAt(fd: number, pos: number, len: number): Buffer {
  const buf = Buffer.allocUnsafe(len);
  let got = 0;
  while (got < len) {
    const n = readSync(fd, buf, got, len - got, pos + got);
    if (n === 0) throw new Error('snapshot ends early');
    got += n;
  }
  return buf;
}

/** The header of an open snapshot file, or null when it is not one of ours (or another version). */
function readHeader(fd: number): Header | null {
  const size = fstatSync(fd).size;
  if (size < MAGIC.length + TRAILER) return null;
  if (readAt(fd, 0, MAGIC.length).toString('latin1') !== MAGIC) return null;
  const trailer = readAt(fd, size - TRAILER, TRAILER).toString('latin1');
  const len = Number(trailer.slice(1, -1));
  if (trailer[0] !== '\n' || !/^\d{12}$/.test(trailer.slice(1, -1)) || len <= 0 || MAGIC.length + len + TRAILER > size) return null;
  const header = JSON.parse(readAt(fd, size - TRAILER - len, len).toString('utf8')) as Header;
  if (!checkHeader(header) || MAGIC.length + header.offsets[header.offsets.length - 1] + len + TRAILER !== size) return null;
  return header;
}

/** Writes a snapshot to `file` atomically, streaming the postings: `terms` must be sorted. */
function writeSnapshot(file: string, terms: string[], postingsJson: (i: number) => string, rest: Header['ms'], stamps: Map<string, string>): void {
  writeFileAtomicWith(
    file,
    (fd) => {
      const offsets: number[] = [0];
      let at = 0;
      let chunk: string[] = [MAGIC];
      let chunkLen = 0;
      const flush = (): void => {
        if (chunk.length) writeFileSync(fd, chunk.join(''));
        chunk = [];
        chunkLen = 0;
      };
      for (let i = 0; i < terms.length; i++) {
        const piece = `${postingsJson(i)},`;
        chunk.push(piece);
        chunkLen += piece.length;
        at += Buffer.byteLength(piece);
        offsets.push(at);
        if (chunkLen > 1 << 22) flush();
      }
      const header: Header = {
        v: SNAPSHOT_VERSION,
        optionsHash: OPTIONS_HASH,
        stamps: Object.values(rest.documentIds).map((k) => stamps.get(k as string) ?? ''),
        ms: rest,
        terms,
        offsets,
      };
      const headerJson = JSON.stringify(header);
      chunk.push(headerJson, `\n${String(Buffer.byteLength(headerJson)).padStart(12, '0')}\n`);
      flush();
    },
    { fsync: false },
  );
}

/** MiniSearch's private maps, read directly by `save` (checked: a version without them falls back to `toJSON`). */
interface MiniSearchInternals {
  _index: Iterable<[string, Map<number, Map<number, number>>]>;
  _documentIds: Map<number, string>;
  _fieldLength: Map<number, number[]>;
  _storedFields: Map<number, unknown>;
}

/** Levenshtein distance, or `max + 1` as soon as it must exceed `max`. */
function boundedDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur.push(v);
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    prev = cur;
  }
  return prev[b.length];
}

/** First index in sorted `terms` whose term is >= `t`. */
function lowerBound(terms: string[], t: string): number {
  let lo = 0;
  let hi = terms.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (terms[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Indexes of the vocabulary terms a search for `text` can reach, by the same tokenizer, term
 * processing, prefix and fuzzy rules MiniSearch applies (a superset is harmless: MiniSearch
 * re-checks every term against its own tree).
 */
export function reachableTerms(terms: string[], text: string, opts: Options<Doc> = INDEX_OPTIONS): Set<number> {
  const so = opts.searchOptions ?? {};
  const tok = so.tokenize ?? opts.tokenize ?? tokenize;
  const proc = so.processTerm ?? opts.processTerm ?? ((t: string) => t.toLowerCase());
  const maxFuzzy = so.maxFuzzy ?? 6;
  const out = new Set<number>();
  const raw = tok(text);
  const queryTerms = raw.flatMap((t) => {
    const p = proc(t);
    return p == null || p === false ? [] : Array.isArray(p) ? p : [p];
  });
  queryTerms.forEach((q, i) => {
    const exact = lowerBound(terms, q);
    if (terms[exact] === q) out.add(exact);
    const prefix = typeof so.prefix === 'function' ? so.prefix(q, i, queryTerms) : so.prefix;
    if (prefix) for (let k = exact; k < terms.length && terms[k].startsWith(q); k++) out.add(k);
    const fz = typeof so.fuzzy === 'function' ? so.fuzzy(q, i, queryTerms) : so.fuzzy;
    if (fz) {
      const f = fz === true ? 0.2 : fz;
      const max = f < 1 ? Math.min(maxFuzzy, Math.round(q.length * f)) : f;
      if (max > 0) {
        for (let k = 0; k < terms.length; k++) {
          const t = terms[k];
          if (Math.abs(t.length - q.length) <= max && boundedDistance(q, t, max) <= max) out.add(k);
        }
      }
    }
  });
  return out;
}

export class SearchIndex {
  private ms: MiniSearch<Doc>;
  private stamps: Map<string, string>;
  private dirty = false;
  /** A sync discarded documents and left the vacuum for later (vacuumIfDeferred). */
  private dirt = false;
  private gen = 0;
  /** Documents added, replaced or discarded since the snapshot was last saved or loaded. */
  private unsaved = 0;
  private readonly scorer = new PostingScorer();
  /** Holds only the postings one query needs: searchable for that query, never saved. */
  readonly partial: boolean;

  private constructor(ms: MiniSearch<Doc>, stamps: Map<string, string>, partial = false) {
    this.ms = ms;
    this.stamps = stamps;
    this.partial = partial;
  }

  static empty(): SearchIndex {
    return new SearchIndex(new MiniSearch<Doc>(INDEX_OPTIONS), new Map());
  }

  static snapshotPath(localDir: string): string {
    return join(localDir, 'cache', 'index.bin');
  }

  /** Loads a whole snapshot; an empty index when it is missing, corrupt or built with other options. */
  static load(file: string): { index: SearchIndex; loaded: boolean } {
    let fd: number | undefined;
    try {
      fd = openSync(file, 'r');
      const header = readHeader(fd);
      if (!header) return { index: SearchIndex.empty(), loaded: false };
      // One term at a time: a single JSON.parse of every posting would need the whole body as one string.
      const body = readAt(fd, MAGIC.length, header.offsets[header.offsets.length - 1]);
      const index = header.terms.map(
        (t, i) => [t, JSON.parse(body.toString('utf8', header.offsets[i], header.offsets[i + 1] - 1)) as Postings] as [string, Postings],
      );
      const ms = MiniSearch.loadJS<Doc>({ ...header.ms, index }, INDEX_OPTIONS);
      return { index: new SearchIndex(ms, stampsOf(header)), loaded: true };
    } catch {
      return { index: SearchIndex.empty(), loaded: false };
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /**
   * Loads the snapshot with only the postings `text` can reach: the same results and scores as
   * the whole index for that text. Returns null when there is no usable snapshot.
   */
  static loadFor(file: string, text: string): SearchIndex | null {
    let fd: number | undefined;
    try {
      // Read the header, then only the postings this text can reach (positional reads, not the whole file).
      fd = openSync(file, 'r');
      const header = readHeader(fd);
      if (!header) return null;
      const index: [string, Postings][] = [];
      for (const i of reachableTerms(header.terms, text)) {
        const start = header.offsets[i];
        const raw = readAt(fd, MAGIC.length + start, header.offsets[i + 1] - 1 - start).toString('utf8');
        index.push([header.terms[i], JSON.parse(raw) as Postings]);
      }
      const ms = MiniSearch.loadJS<Doc>({ ...header.ms, index }, INDEX_OPTIONS);
      return new SearchIndex(ms, stampsOf(header), true);
    } catch {
      return null;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  get size(): number {
    return this.ms.documentCount;
  }

  /** What making the index hold exactly `docs` takes: documents to add, to replace (by stamp), keys to discard. */
  plan(docs: IndexedDoc[]): SyncPlan {
    const add: IndexedDoc[] = [];
    const replace: IndexedDoc[] = [];
    let seen = 0;
    for (const d of docs) {
      const old = this.stamps.get(d.key);
      if (old === undefined) add.push(d);
      else {
        seen++;
        if (old !== d.stamp) replace.push(d);
      }
    }
    const discard: string[] = [];
    if (seen < this.stamps.size) {
      const keys = new Set(docs.map((d) => d.key));
      for (const k of this.stamps.keys()) if (!keys.has(k)) discard.push(k);
    }
    return { add, replace, discard, size: add.length + replace.length + discard.length };
  }

  /**
   * The plan for some keys only (a watcher batch): each key with the document that holds it now,
   * or null when none does. Costs what the keys do, not a pass over every document.
   */
  planKeys(touched: Iterable<[string, IndexedDoc | null]>): SyncPlan {
    const add: IndexedDoc[] = [];
    const replace: IndexedDoc[] = [];
    const discard: string[] = [];
    for (const [key, d] of touched) {
      const old = this.stamps.get(key);
      if (!d) {
        if (old !== undefined) discard.push(key);
      } else if (old === undefined) add.push(d);
      else if (old !== d.stamp) replace.push(d);
    }
    return { add, replace, discard, size: add.length + replace.length + discard.length };
  }

  /** How many of `docs` the index would have to add, replace or discard. */
  drift(docs: IndexedDoc[]): number {
    return this.plan(docs).size;
  }

  /** Makes the index hold exactly `docs`: adds new ones, replaces changed ones (by stamp), discards gone ones. */
  sync(docs: IndexedDoc[], plan: SyncPlan = this.plan(docs), opts: { deferVacuum?: boolean } = {}): SyncReport {
    for (const d of plan.add) {
      this.ms.add(docOf(d.key, d.load()));
      this.stamps.set(d.key, d.stamp);
    }
    for (const d of plan.replace) {
      this.ms.replace(docOf(d.key, d.load()));
      this.stamps.set(d.key, d.stamp);
    }
    for (const key of plan.discard) {
      this.ms.discard(key);
      this.stamps.delete(key);
    }
    const report: SyncReport = { loaded: true, added: plan.add.length, replaced: plan.replace.length, removed: plan.discard.length };
    if (plan.size) {
      this.dirty = true;
      this.gen++;
      this.unsaved += plan.size;
    }
    if (report.replaced || report.removed) {
      if (opts.deferVacuum) this.dirt = true;
      else this.vacuum();
    }
    return report;
  }

  /**
   * Drops the postings of discarded documents now. MiniSearch otherwise drops them lazily while
   * scoring, one occurrence per search, and a term's document frequency (part of its BM25 score)
   * shrinks as it does: the same text would score differently from one query to the next, and a
   * partial index differently from the whole one. Its `vacuum` runs synchronously up to its first
   * await, so with one unbounded batch the whole cleanup is done when this returns. (Unless the
   * previous one is still settling, after two syncs in one tick: MiniSearch then queues this one
   * a microtask later, and until it runs the scorer sees the dirt and lets MiniSearch score.)
   */
  private vacuum(): void {
    this.dirt = false;
    void this.ms.vacuum({ batchSize: Number.POSITIVE_INFINITY });
  }

  /**
   * Vacuums now if a sync deferred it. The cleanup walks the whole vocabulary (~50 ms at 10K
   * entries, ten times that at 100K), so the daemon defers it from its watcher batches to a quiet
   * moment; until then `rawHits` leaves the discarded postings out (see PostingScorer). A
   * snapshot is always saved vacuumed.
   */
  vacuumIfDeferred(): boolean {
    if (!this.dirt) return false;
    this.vacuum();
    return true;
  }

  /** Relevance per key for `text`, restricted to `allowed` keys (filters applied first). */
  search(text: string, allowed?: Set<string>, options: SearchOptions = {}): Map<string, number> {
    const out = new Map<string, number>();
    for (const r of this.hits(text, allowed, options)) out.set(r.id as string, r.score);
    return out;
  }

  /** How far the saved snapshot is behind: documents added, replaced or discarded since. */
  get unsavedChanges(): number {
    return this.unsaved;
  }

  /** Bumped whenever documents are added, replaced or discarded (their internal numbers change). */
  get generation(): number {
    return this.gen;
  }

  /**
   * Every document `text` reaches, as MiniSearch's internal document number and the score its
   * `search` would give (BM25 times the number of query terms matched), unsorted: scored straight
   * from the postings (see PostingScorer), without the result objects, the sort and the key
   * strings `search` makes for every hit (20,000 at 100K entries). Where the scorer cannot
   * replay MiniSearch exactly it falls back to MiniSearch's own query; null should even that
   * ever change (callers then use `hits`).
   */
  rawHits(text: string): ScoredHits | null {
    const fast = this.scorer.score(this.ms as unknown as MiniSearch<unknown>, text, { denseLengths: !this.partial });
    if (fast) return fast;
    const inner = this.ms as unknown as { executeQuery?: (q: string, o: SearchOptions) => Map<number, { score: number; terms: string[] }> };
    if (typeof inner.executeQuery !== 'function') return null;
    const raw = inner.executeQuery.call(this.ms, text, {});
    const sids = new Int32Array(raw.size);
    const scores = new Float64Array(raw.size);
    let i = 0;
    for (const [sid, r] of raw) {
      sids[i] = sid;
      scores[i++] = r.score * (r.terms.length || 1);
    }
    return { sids, scores };
  }

  /** One more than the largest internal document number in use (see rawHits). */
  get documentNumbers(): number {
    return (this.ms as unknown as { _nextId?: number })._nextId ?? 0;
  }

  /** The document key of one of MiniSearch's internal numbers (see rawHits). */
  keyOf(sid: number): string | undefined {
    return (this.ms as unknown as { _documentIds?: Map<number, string> })._documentIds?.get(sid);
  }

  /** MiniSearch's internal number of a document key (see rawHits). */
  sidOf(key: string): number | undefined {
    return (this.ms as unknown as { _idToShortId?: Map<string, number> })._idToShortId?.get(key);
  }

  /** The same as MiniSearch's results (best first; `id` is the key): no map of 10K+ keys built per query. */
  hits(text: string, allowed?: Set<string>, options: SearchOptions = {}): SearchResult[] {
    return this.ms.search(text, allowed ? { ...options, filter: (r) => allowed.has(r.id as string) } : options);
  }

  /** Writes the snapshot (atomically) when anything changed; a partial index is never saved. */
  save(file: string, force = false, opts: { viaToJSON?: boolean } = {}): boolean {
    if (this.partial || (!this.dirty && !force)) return false;
    this.vacuumIfDeferred();
    const inner = this.ms as unknown as Partial<MiniSearchInternals>;
    if (!opts.viaToJSON && inner._index && inner._documentIds instanceof Map && inner._fieldLength instanceof Map && inner._storedFields instanceof Map) {
      // Straight from MiniSearch's maps, one term at a time (what its toJSON reads, without the copy).
      const byTerm: [string, Map<number, Map<number, number>>][] = [...inner._index];
      byTerm.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      // MiniSearch's own toJSON for the document tables, on a shallow copy with an empty vocabulary.
      const js: MiniSearchJS = this.ms.toJSON.call({ ...this.ms, _index: [] });
      const { index: _none, ...rest } = js;
      writeSnapshot(
        file,
        byTerm.map((t) => t[0]),
        (i) => {
          const data: Record<string, Record<string, number>> = {};
          for (const [fieldId, freqs] of byTerm[i][1]) data[fieldId] = Object.fromEntries(freqs);
          return JSON.stringify(data);
        },
        rest,
        this.stamps,
      );
    } else {
      // The public way, should MiniSearch's internals ever change: the same bytes, with a copy of everything in memory.
      const { index, ...rest } = this.ms.toJSON();
      index.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      writeSnapshot(
        file,
        index.map((t) => t[0]),
        (i) => JSON.stringify(index[i][1]),
        rest,
        this.stamps,
      );
    }
    this.dirty = false;
    this.unsaved = 0;
    return true;
  }
}

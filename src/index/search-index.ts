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
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import MiniSearch, { type SearchOptions, type SearchResult } from 'minisearch';
import type { MemoryEntry } from '../core/schema.js';
import { PostingScorer, type ScoredHits } from './scorer.js';
import { INDEX_OPTIONS, docOf, type Doc } from './options.js';
import { reachableTerms } from './reachable.js';
import { MAGIC, readAt, readHeader, stampsOf, writeSnapshot, type MiniSearchJS, type Postings } from './snapshot-file.js';

export { INDEX_OPTIONS, OPTIONS_HASH } from './options.js';
export { reachableTerms } from './reachable.js';

export interface IndexedDoc {
  key: string;
  stamp: string;
  /** The entry, fetched only when the index has to (re)index it. */
  load: () => MemoryEntry;
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

/** MiniSearch's private maps, read directly by `save` (checked: a version without them falls back to `toJSON`). */
interface MiniSearchInternals {
  _index: Iterable<[string, Map<number, Map<number, number>>]>;
  _documentIds: Map<number, string>;
  _fieldLength: Map<number, number[]>;
  _storedFields: Map<number, unknown>;
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

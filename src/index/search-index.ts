/**
 * The text index kept in step with the catalog, by the file stamp each document was indexed
 * from, and its snapshot `cache/index.bin`: a long-lived process loads it whole, a one-shot query
 * only the postings its text can reach (BM25 needs only counts). A corrupt or mismatched snapshot
 * is rebuilt, never fatal.
 */
import { join } from 'node:path';
import { tryOr, writeFileAtomic } from '../store/fsutil.js';
import { readNoFollow } from '../store/state-dir.js';
import type { MemoryEntry } from '../core/schema.js';
import { INDEX_OPTIONS, NAME_BOOST, docOf, namedTerms } from './options.js';
import { PostingIndex, type ScoredHits } from './postings.js';
import { queryTerms, reachableTerms } from './reachable.js';
import { forwardOf, packRow, termOf, withFeedback, type Forward, type SummaryTerms } from './feedback.js';
import { lowerBoundBy } from '../core/sorted.js';
import { NO_POS, readSnapshot, writeSnapshot, type CatalogMark, type Loaded } from './snapshot-file.js';

export type { ScoredHits } from './postings.js';

export interface IndexedDoc {
  key: string;
  stamp: string;
  /** The entry, fetched only when the index has to (re)index it. */
  load: () => MemoryEntry;
}

const SAME_ENTRIES = 'index-catalog.json';

export interface SyncPlan {
  add: IndexedDoc[];
  replace: IndexedDoc[];
  discard: string[];
  size: number;
}

/** A compaction is due past this many postings in the delta or discarded documents, or an eighth of the base. */
const COMPACT_DELTA_MIN = 200_000;
const COMPACT_DEAD_MIN = 2_000;
/** Within a large sync (a first build) past this many delta postings or half the base: delta postings cost several times a base one, and the arrays they outgrow are old-generation garbage (a first start's peak memory). */
const BUILD_DELTA_MAX = 1_000_000;

/** The posting index with the stamp each document was indexed from, kept in step with the catalog. */
export class SearchIndex extends PostingIndex {
  private dirty = false;
  /** Bumped whenever documents are added, replaced or discarded, or renumbered by a compaction. */
  generation = 0;
  /** Documents added, replaced or discarded since the snapshot was last saved or loaded. */
  unsavedChanges = 0;
  /** A partial index saved from the very catalog content the caller holds (see loadFor): nothing to sync, and no stamps to sync by. */
  inSync = false;
  /** The catalog content the snapshot was saved from, when it recorded one. */
  savedFrom: string | undefined;
  private pos: Uint32Array | undefined;
  private readonly stamps = new Map<string, string>();

  /** `partial`: holds only the postings one query needs, searchable for that query, never saved. */
  private constructor(readonly partial = false) {
    super(INDEX_OPTIONS);
  }

  static empty(): SearchIndex {
    return new SearchIndex();
  }

  static snapshotPath(localDir: string): string {
    return join(localDir, 'cache', 'index.bin');
  }

  /** The catalog contents a snapshot holding exactly the entries of `content` may have been saved from: that one, and one a query found to hold the same entries (noteSameEntries), so that a catalog saved as a new base keeps one-shot queries from comparing every stamp. */
  static contentsFor(localDir: string, content: string | undefined): string[] {
    if (content === undefined) return [];
    const r = tryOr(() => JSON.parse(readNoFollow(join(localDir, 'cache', SAME_ENTRIES), 'utf8')) as { from?: unknown; to?: unknown }, null);
    return r?.to === content && typeof r.from === 'string' ? [content, r.from] : [content];
  }

  /** Notes that the index snapshot saved from catalog content `from` holds exactly the entries of content `to` (see contentsFor). */
  static noteSameEntries(localDir: string, from: string, to: string): void {
    // A failed write costs only speed: the next query compares stamps again.
    tryOr(() => writeFileAtomic(join(localDir, 'cache', SAME_ENTRIES), JSON.stringify({ from, to }), { fsync: false, dirExists: true }), undefined);
  }

  private static of(loaded: Loaded, partial: boolean): SearchIndex {
    const index = new SearchIndex(partial);
    index.takeTables(loaded.docs, loaded.base);
    if (!loaded.inSync) loaded.docs.keys.forEach((key, d) => index.stamps.set(key, loaded.stamps[d] ?? ''));
    ({ inSync: index.inSync, pos: index.pos, catalog: index.savedFrom } = loaded);
    index.snapshotRows = loaded.forward;
    return index;
  }

  /** Loads a whole snapshot; an empty index when there is no usable one. */
  static load(file: string): { index: SearchIndex; loaded: boolean } {
    const loaded = readSnapshot(file);
    return loaded ? { index: SearchIndex.of(loaded, false), loaded: true } : { index: SearchIndex.empty(), loaded: false };
  }

  /** Loads the snapshot with only the postings `text` can reach (the whole index's scores for it); null when there is none. `catalog`: see contentsFor. */
  static loadFor(file: string, text: string, catalog: readonly string[] = []): SearchIndex | null {
    const loaded = readSnapshot(file, (terms) => reachableTerms(terms, text), catalog);
    return loaded && SearchIndex.of(loaded, true);
  }

  /** Where document `sid`'s entry is among the saved-from catalog's entries (a hint: the caller checks the key). */
  entryAt(sid: number): number | undefined {
    const p = this.pos?.[sid];
    return p === undefined || p === NO_POS ? undefined : p;
  }

  get size(): number {
    return this.count;
  }

  /** What making the index hold exactly `docs` takes: documents to add, to replace (by stamp), keys to discard. */
  plan(docs: IndexedDoc[]): SyncPlan {
    const p = this.planKeys(docs.map((d) => [d.key, d]));
    if (docs.length - p.add.length < this.stamps.size) {
      const keys = new Set(docs.map((d) => d.key));
      for (const k of this.stamps.keys()) if (!keys.has(k)) p.discard.push(k);
    }
    return { ...p, size: p.size + p.discard.length };
  }

  /** The plan for some keys only (a watcher batch): each with the document holding it now, or null. */
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

  /**
   * Carries out `plan`; compacts when due, unless `deferCompact` (the daemon compacts at a quiet
   * moment). `compacted`: called after each compaction within a large sync (the delta it leaves
   * is old-generation garbage, worth collecting before the next one grows).
   */
  sync(
    docs: IndexedDoc[],
    plan: SyncPlan = this.plan(docs),
    opts: { deferCompact?: boolean; compacted?: () => void } = {},
  ): { added: number; replaced: number; removed: number } {
    let n = 0;
    const bounded = (): void => {
      if (++n % 1024 !== 0) return;
      const p = this.pending;
      if (p.delta <= Math.max(BUILD_DELTA_MAX, p.base / 2)) return;
      this.compact();
      opts.compacted?.();
    };
    // A synced document's summary terms, for feedback: numbered as the partial index's snapshot, or the index's own (once added, a document's terms are in it).
    const numberOf = this.snapshotRows ? this.snapshotNumber(this.snapshotRows.terms) : (w: string): number => this.ids.get(w)!;
    for (const d of [...plan.add, ...plan.replace]) {
      const doc = docOf(d.key, d.load());
      this.discard(d.key); // a replaced document's old version
      const at = this.add(doc);
      if (this.snapshotRows || this.forward) this.added.set(at, this.summaryRow(doc.summary, numberOf));
      this.stamps.set(d.key, d.stamp);
      bounded();
    }
    for (const key of plan.discard) {
      this.discard(key);
      this.stamps.delete(key);
    }
    if (plan.size) {
      this.dirty = true;
      this.generation++;
      this.unsavedChanges += plan.size;
      if (!opts.deferCompact) this.compactIfDue();
    }
    return { added: plan.add.length, replaced: plan.replace.length, removed: plan.discard.length };
  }

  /** Compacts when due; a partial index, never saved, does not. */
  compactIfDue(): boolean {
    const p = this.pending;
    if (this.partial || (p.delta <= Math.max(COMPACT_DELTA_MIN, p.base / 8) && p.dead <= Math.max(COMPACT_DEAD_MIN, this.size / 8))) return false;
    this.compact();
    return true;
  }

  override compact(): void {
    const p = this.pending;
    if (!p.delta && !p.dead) return;
    super.compact();
    this.generation++;
    // Documents are numbered anew: the forward table is made again when next asked.
    if (!this.snapshotRows) {
      [this.forward, this.adjusted] = [undefined, undefined];
      this.added.clear();
    }
  }

  /** Every document `text` reaches, by number, with MiniSearch's score (the names it holds boosted: namedTerms), unsorted; with `feedback`, re-scored by it, and each hit's summary length (and, for a `which` question, whether it names something: asksWhich). */
  rawHits(text: string, feedback = false, which = false): ScoredHits {
    const names = namedTerms(text);
    const so = names.size ? { boostTerm: (term: string) => (names.has(term) ? NAME_BOOST : 1) } : {};
    const first = this.score(text, so);
    if (!feedback) return first;
    const terms = queryTerms(text, this.opts, { ...this.opts.searchOptions, ...so });
    const boosts = [...new Map(terms.map((q) => [q.term, q.boost])).values()]; // the scorer's distinct terms, in its order
    const hits = withFeedback(this, this.summaryTerms(), first, boosts, new Set(terms.map((q) => q.term)));
    const [lengths, named] = [new Uint16Array(hits.sids.length), which ? new Uint8Array(hits.sids.length) : undefined];
    for (let i = 0; i < lengths.length; i++) {
      const d = hits.sids[i]! * this.F; // (document numbers below `next`)
      lengths[i] = this.lens[d]!;
      if (named) named[i] = Number(this.lens[d + this.F - 1]! > 0); // (`names`, the last field)
    }
    return { ...hits, lengths, named };
  }

  /** The whole index's forward table, made at its first use after a compaction; documents synced since are in `added`, their counts in `adjusted`. */
  private forward: Forward | undefined;
  private adjusted: { generation: number; df: Map<number, number> } | undefined;
  /** A partial index's rows, read from its snapshot (term numbers of the snapshot's vocabulary); those of documents a sync added, numbered alike (words the snapshot lacks after its). */
  private snapshotRows: Loaded['forward'];
  private readonly added = new Map<number, Uint32Array>();
  private readonly extra = new Map<string, number>();

  /** The documents' summary terms (feedback.ts) as of the last compaction (or first use): a sync adds rows, it does not make the table again. */
  private forwardTable(): Forward {
    if (!this.forward) [this.forward, this.adjusted] = [forwardOf(this), undefined];
    return this.forward;
  }

  private summaryTerms(): SummaryTerms {
    const part = this.snapshotRows;
    if (!part) {
      const { off, row, df } = this.forwardTable();
      const inTable = off.length - 1;
      if (this.adjusted?.generation !== this.generation) {
        // The table's documents dropped since count out, those synced since in (as the partial index does below).
        const adj = new Map<number, number>();
        const count = (r: ArrayLike<number>, by: number): void => {
          for (let j = 0; j < r.length; j++) adj.set(termOf(r[j]!), (adj.get(termOf(r[j]!)) ?? 0) + by);
        };
        for (let d = 0; d < inTable; d++) if (!this.alive[d]) count(row.subarray(off[d], off[d + 1]), -1);
        for (const [d, r] of this.added) if (this.alive[d]) count(r, 1);
        this.adjusted = { generation: this.generation, df: adj };
      }
      const adj = this.adjusted.df;
      return () => ({
        row: (d) => this.added.get(d) ?? (d < inTable ? row.subarray(off[d], off[d + 1]) : []),
        df: (t) => (df[t] ?? 0) + (adj.get(t) ?? 0),
        term: (t) => this.termText(t),
      });
    }
    return (docs) => {
      // Synced: the documents it dropped count out of the snapshot's df, those it added in.
      const gone: number[] = [];
      if (this.dead) for (let d = 0; d < part.docs; d++) if (!this.alive[d]) gone.push(d);
      const { rows, df } = part.read([...docs.filter((d) => d < part.docs), ...gone]);
      const adj = new Map<number, number>();
      const count = (row: Uint32Array | undefined, by: number): void => row?.forEach((x) => adj.set(termOf(x), (adj.get(termOf(x)) ?? 0) + by));
      for (const d of gone) count(rows.get(d), -1);
      for (const [d, row] of this.added) if (this.alive[d]) count(row, 1);
      const extra = [...this.extra.keys()];
      return {
        row: (d) => this.added.get(d) ?? rows.get(d) ?? [],
        df: (t) => (df[t] ?? 0) + (adj.get(t) ?? 0),
        term: (t) => part.terms[t] ?? extra[t - part.terms.length] ?? '',
      };
    };
  }

  /** A summary's terms as a row, numbered by `numberOf`. */
  private summaryRow(summary: string, numberOf: (w: string) => number): Uint32Array {
    const tfs = new Map<number, number>();
    for (const token of this.opts.tokenize!(summary, 'summary')) {
      const w = this.opts.processTerm!(token);
      if (typeof w !== 'string' || !w) continue;
      const t = numberOf(w);
      tfs.set(t, (tfs.get(t) ?? 0) + 1);
    }
    return packRow(tfs);
  }

  /** A term's number in the snapshot's vocabulary `terms` (words it lacks after its). */
  private snapshotNumber(terms: string[]): (w: string) => number {
    return (w) => {
      const t = lowerBoundBy(terms, w, (x) => x);
      return terms[t] === w ? t : terms.length + (this.extra.get(w) ?? this.extra.set(w, this.extra.size).get(w)!);
    };
  }

  /** Writes the snapshot (compacted first) when anything changed. `catalog`: the catalog content it holds exactly. */
  save(file: string, force = false, catalog?: CatalogMark): boolean {
    if (this.partial || (!this.dirty && !force)) return false;
    this.compact();
    const { docs, base } = this.tables();
    const stamps = docs.keys.map((k) => this.stamps.get(k) ?? '');
    writeSnapshot(file, docs, stamps, base, this.forwardTable(), catalog);
    this.dirty = false;
    this.unsavedChanges = 0;
    return true;
  }
}

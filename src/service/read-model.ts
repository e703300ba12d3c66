/**
 * The read model: the catalog snapshot and the text index a process holds between calls, kept
 * current from disk (one-shot processes) or by the daemon's watcher batches (`refresh` with
 * paths). Queries and every write's checks against the store read from it.
 */
import type { QueryStats } from './ops/query.js';
import { SearchIndex, type IndexedDoc } from '../index/search-index.js';
import type { CatalogSnapshot, StoredEntry } from '../store/catalog.js';
import { entryPath, keyOfFile } from '../store/stored-entry.js';
import { SECTIONS } from '../core/constants.js';
import { MEMORY_DIR } from '../store/root.js';
import { lowerBoundBy } from '../core/sorted.js';
import type { WarningSink } from './caller.js';
import type { Engine } from './engine.js';
import { collectGarbage } from './semantic.js';

/** A one-shot query uses the partial snapshot while at most this many files changed since it was saved... */
const PARTIAL_DRIFT_MIN = 64;
/** ...or this share of all entries, whichever is larger; past that it refreshes and saves the snapshot. */
const PARTIAL_DRIFT_SHARE = 0.02;

/** An entry as the index takes it (its text read only if the index must index it). */
function docOf(se: StoredEntry): IndexedDoc {
  return { key: se.key, stamp: se.stamp, load: () => se.readOnce() };
}

/**
 * The keys of these files with the entry that holds each now (null: none), for an index plan;
 * undefined when the snapshot's entries are not in path order. A file that is no entry (gone,
 * unusable, a duplicate) may leave its key to a file of the same id in another section.
 */
function touchedKeys(snap: CatalogSnapshot, files: string[]): [string, IndexedDoc | null][] | undefined {
  let find: (rel: string) => StoredEntry | undefined;
  const cached = snap.cached;
  if (cached) find = (rel) => cached.find(rel);
  else {
    const entries = snap.entries;
    for (let i = 1; i < entries.length; i++) if (!(entries[i - 1]!.file < entries[i]!.file)) return undefined; // i < length
    find = (rel) => {
      const se = entries[lowerBoundBy(entries, rel, (e) => e.file)];
      return se?.file === rel ? se : undefined;
    };
  }
  const out = new Map<string, IndexedDoc | null>();
  for (const rel of files) {
    const where = entryPath(rel);
    if (!where) continue;
    const key = keyOfFile(rel, where.project);
    if (out.has(key)) continue;
    let se = find(rel);
    for (const section of SECTIONS) if (!se) se = find(`${MEMORY_DIR}/${where.project}/${section}/${where.id}.json`);
    out.set(key, se ? docOf(se) : null);
  }
  return [...out];
}

export class ReadModel {
  private readonly engine: Engine;
  private state: { snap: CatalogSnapshot; index: SearchIndex | null } | undefined;
  private byKey: { snap: CatalogSnapshot; map: Map<string, StoredEntry> } | undefined;
  private bySid: { snap: CatalogSnapshot; index: SearchIndex; gen: number; table: (StoredEntry | undefined)[] } | undefined;

  constructor(engine: Engine) {
    this.engine = engine;
  }

  /** The snapshot this process holds (the daemon's watcher keeps it current), if any. */
  get current(): CatalogSnapshot | undefined {
    return this.state?.snap;
  }

  /**
   * The catalog and (when needed) the text index, refreshed from disk. A long-lived process (the
   * daemon, an MCP server, a benchmark: `longLived`) keeps the whole index between queries;
   * `refresh: false` reuses them without touching the disk, for a caller that tracks changes
   * itself. A one-shot process answering one text query loads only the postings that text can
   * reach (same scores, a fraction of the cost) unless the snapshot is far behind the files, in
   * which case it loads the whole index, brings it up to date and saves it for the next process.
   */
  load(
    text: string,
    refresh: boolean,
    wholeIndex = false,
    save: boolean | 'drifted' = this.engine.longLived ? 'drifted' : true,
    warn?: WarningSink,
  ): { snap: CatalogSnapshot; index: SearchIndex | null; indexStats: QueryStats['index'] } {
    const needIndex = wholeIndex || text.trim().length > 0;
    if (!refresh && this.state && (!needIndex || this.state.index)) return { ...this.state, indexStats: null };
    const snap = this.engine.refreshSnapshot(warn);
    if (snap !== this.state?.snap) this.engine.semantic?.noteTouched(undefined); // it cannot say which entries changed
    let index = this.state?.index ?? null;
    if (!needIndex && !index) {
      this.state = { snap, index: null };
      return { snap, index: null, indexStats: null };
    }
    this.engine.ws.local('cache'); // checked before anything in it is read
    const file = SearchIndex.snapshotPath(this.engine.ws.localDir);
    let docs: IndexedDoc[] | undefined;
    const docsOf = (): IndexedDoc[] => (docs ??= snap.entries.map(docOf));
    if (!index && !this.engine.longLived && !wholeIndex) {
      // A snapshot saved from this very catalog content holds exactly these entries: no sync at all.
      const localDir = this.engine.ws.localDir;
      const partial = SearchIndex.loadFor(file, text, SearchIndex.contentsFor(localDir, snap.contentId));
      if (partial?.inSync) {
        this.state = { snap, index: null };
        return { snap, index: partial, indexStats: { loaded_snapshot: true, partial: true, added: 0, replaced: 0, removed: 0, current: true } };
      }
      // Else, when the snapshot was saved from a content this catalog went through, only the files
      // changed since can differ: their keys are planned, not every entry's stamp compared.
      const since = partial?.savedFrom !== undefined ? snap.changedSince?.(partial.savedFrom) : undefined;
      const touched = since && touchedKeys(snap, since);
      const plan = touched ? partial?.planKeys(touched) : partial?.plan(docsOf());
      // Nothing to sync: the snapshot holds exactly these entries, so the next query need not look (see SearchIndex.contentsFor).
      if (plan?.size === 0 && partial?.savedFrom !== undefined && snap.contentId !== undefined)
        SearchIndex.noteSameEntries(localDir, partial.savedFrom, snap.contentId);
      // Synced here only when the next query will not compare every stamp again: the changes are
      // named by the catalog's delta, or there are none. Otherwise the whole index is brought up
      // to date and saved below, once, for the queries after this one.
      const cheapNext = touched !== undefined || plan?.size === 0 || snap.contentId === undefined;
      if (partial && plan && cheapNext && plan.size <= Math.max(PARTIAL_DRIFT_MIN, (snap.cached?.count ?? snap.entries.length) * PARTIAL_DRIFT_SHARE)) {
        const rep = partial.sync(touched ? [] : docsOf(), plan);
        this.state = { snap, index: null };
        const stats = { loaded_snapshot: true, partial: true, added: rep.added, replaced: rep.replaced, removed: rep.removed };
        return { snap, index: partial, indexStats: touched ? { ...stats, files_since: since.length } : stats };
      }
    }
    let loaded = true;
    if (!index) ({ index, loaded } = SearchIndex.load(file));
    const rep = index.sync(docsOf(), undefined, { compacted: collectGarbage });
    this.state = { snap, index };
    if (save) this.saveIndex(index, save === 'drifted' ? 'drifted' : 'changed');
    return { snap, index, indexStats: { loaded_snapshot: loaded, partial: false, added: rep.added, replaced: rep.replaced, removed: rep.removed } };
  }

  /**
   * Re-reads changed files and brings the whole index up to date (the daemon's watcher batches
   * and reconciles call this): returns what changed.
   */
  refresh(opts: { saveIndex?: boolean | 'drifted'; paths?: string[] } = {}): {
    snap: CatalogSnapshot;
    files: number;
    indexed: number;
    changed: string[];
    removed: string[];
    index: QueryStats['index'];
  } {
    if (opts.paths && this.state?.index) {
      // A watcher batch: re-read just those files and update the index by key (dropping the old
      // postings of replaced entries is left to compactIndex, at a quiet moment).
      // Both cost what the batch's files do: the catalog keeps its maps between batches and says
      // which keys the files touched; the index follows just those, and so does the query table.
      const prev = this.state.snap;
      const snap = this.engine.catalog.refreshPaths(prev, opts.paths);
      this.engine.semantic?.noteTouched(snap.touched!.keys());
      const index = this.state.index;
      const touched = [...snap.touched!].map(([key, se]) => [key, se && docOf(se)] as [string, IndexedDoc | null]);
      const rep = index.sync([], index.planKeys(touched), { deferCompact: true });
      this.followSidTable(prev, snap, index);
      this.state = { snap, index };
      if (opts.saveIndex) this.saveIndex(index, opts.saveIndex === 'drifted' ? 'drifted' : 'changed');
      return {
        snap,
        files: snap.entries.length + snap.bad.length,
        indexed: index.size,
        changed: snap.changed,
        removed: snap.removed,
        index: { loaded_snapshot: true, partial: false, ...rep },
      };
    }
    const { snap, index, indexStats } = this.load('', true, true, opts.saveIndex ?? true);
    return { snap, files: snap.entries.length + snap.bad.length, indexed: index?.size ?? 0, changed: snap.changed, removed: snap.removed, index: indexStats };
  }

  /** Compacts the index if watcher batches left it worth it (the daemon calls this when no batch came for a while). */
  compactIndex(): boolean {
    return this.state?.index?.compactIfDue() ?? false;
  }

  /**
   * Saves the index snapshot if it changed. `'drifted'`: only once it is further behind than a
   * one-shot query patches up by itself (PARTIAL_DRIFT_*): a long-lived process calls it that way
   * at its reconciles, because a save holds the process while it compacts and writes the whole
   * index, and saves for good when it stops.
   */
  saveIndex(index: SearchIndex | null = this.state?.index ?? null, when: 'changed' | 'drifted' = 'changed'): void {
    if (!index) return;
    if (when === 'drifted' && index.unsavedChanges <= Math.max(PARTIAL_DRIFT_MIN, index.size * PARTIAL_DRIFT_SHARE)) return;
    try {
      if (!this.engine.ws.ensureLocal()) return;
      this.engine.ws.local('cache', true);
      // The index follows the snapshot this process holds: saved with its catalog content id, if
      // it has one, and where each document's entry is among its entries.
      const snap = this.state?.index === index ? this.state.snap : undefined;
      let at: Map<string, number> | undefined;
      const mark = snap?.contentId
        ? { id: snap.contentId, posOf: (key: string) => (at ??= new Map(snap.entries.map((se, i) => [se.key, i]))).get(key) }
        : undefined;
      index.save(SearchIndex.snapshotPath(this.engine.ws.localDir), false, mark);
    } catch {
      /* a snapshot that cannot be saved only costs speed next time */
    }
  }

  /**
   * For a long-lived process that is stopping: brings the index it holds up to date with the
   * files and saves the snapshot, for the one-shot commands that come next. Nothing when it
   * never loaded an index.
   */
  flushIndex(): void {
    if (!this.state?.index) return;
    this.load('', true, true, true);
  }

  /** Entries of a snapshot by MiniSearch document number, built once per snapshot and index version. */
  sidTable(snap: CatalogSnapshot, index: SearchIndex): (StoredEntry | undefined)[] {
    const t = this.bySid;
    if (t && t.snap === snap && t.index === index && t.gen === index.generation) return t.table;
    // Filled to its length first: assigning document numbers in any order to an empty array
    // would give V8 a dictionary-backed array, several times slower to index per hit.
    const table: (StoredEntry | undefined)[] = [];
    for (let i = index.documentNumbers; i > 0; i--) table.push(undefined);
    for (const se of snap.entries) {
      const sid = index.sidOf(se.key);
      if (sid !== undefined) table[sid] = se;
    }
    this.bySid = { snap, index, gen: index.generation, table };
    return table;
  }

  /**
   * Carries the document-number table from `prev` to `snap` after a watcher batch: the entries
   * the batch touched get their new numbers; numbers of discarded documents keep a stale entry
   * that no hit can name (MiniSearch never returns a discarded document).
   */
  private followSidTable(prev: CatalogSnapshot, snap: CatalogSnapshot, index: SearchIndex): void {
    const t = this.bySid;
    if (!t || t.snap !== prev || t.index !== index || !snap.touched) return;
    for (const [key, se] of snap.touched) {
      if (!se) continue;
      const sid = index.sidOf(key);
      if (sid === undefined) continue;
      while (t.table.length <= sid) t.table.push(undefined);
      t.table[sid] = se;
    }
    this.bySid = { snap, index, gen: index.generation, table: t.table };
  }

  /** Entries of a snapshot by index key (`project/id`), built once per snapshot. */
  keyed(snap: CatalogSnapshot): Map<string, StoredEntry> {
    if (this.byKey?.snap !== snap) this.byKey = { snap, map: new Map(snap.entries.map((se) => [se.key, se])) };
    return this.byKey.map;
  }
}

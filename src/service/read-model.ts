/**
 * The catalog snapshot and text index a process holds between calls, kept current from disk
 * (one-shot processes) or by the daemon's watcher batches (`refresh` with paths).
 */
import type { QueryStats } from './ops/query.js';
import { SearchIndex, type IndexedDoc } from '../index/search-index.js';
import type { CatalogSnapshot, StoredEntry } from '../store/catalog.js';
import { entryPath } from '../store/stored-entry.js';
import { SECTIONS } from '../core/constants.js';
import { MEMORY_DIR } from '../store/root.js';
import { lowerBoundBy } from '../core/sorted.js';
import type { WarningSink } from './caller.js';
import type { Engine } from './engine.js';
import { collectGarbage } from './semantic.js';
import { tryOr, writeFileAtomic } from '../store/fsutil.js';
import { readNoFollow } from '../store/state-dir.js';

/** A one-shot query patches the partial snapshot while at most this many files, or this share of all, changed since it was saved. */
const PARTIAL_DRIFT_MIN = 64;
const PARTIAL_DRIFT_SHARE = 0.02;

/** An entry as the index takes it (its text read only if the index must index it). */
const docOf = (se: StoredEntry): IndexedDoc => ({ key: se.key, stamp: se.stamp, load: () => se.readOnce() });

/**
 * The keys of these files with the entry holding each now (null: none), undefined when the
 * entries are not in path order: a file that is no entry may leave its key to another section's.
 */
function touchedKeys(snap: CatalogSnapshot, files: string[]): [string, IndexedDoc | null][] | undefined {
  const cached = snap.cached;
  const entries = cached ? [] : snap.entries; // (made from `cached` only when asked for)
  for (let i = 1; i < entries.length; i++) if (!(entries[i - 1]!.file < entries[i]!.file)) return undefined; // i < length
  const find = (project: string, id: string): StoredEntry | undefined => {
    if (cached) return ((j) => (j === undefined ? undefined : cached.at(j)))(cached.byId(project, id));
    for (const section of SECTIONS) {
      const rel = `${MEMORY_DIR}/${project}/${section}/${id}.json`;
      const se = entries[lowerBoundBy(entries, rel, (e) => e.file)];
      if (se?.file === rel) return se;
    }
    return undefined;
  };
  const out = new Map<string, IndexedDoc | null>();
  for (const rel of files) {
    const where = entryPath(rel);
    if (!where) continue;
    const se = find(where.project, where.id);
    out.set(`${where.project}/${where.id}`, se ? docOf(se) : null);
  }
  return [...out];
}

export class ReadModel {
  private state: { snap: CatalogSnapshot; index: SearchIndex | null } | undefined;
  private bySid: { snap: CatalogSnapshot; index: SearchIndex; gen: number; table: Int32Array } | undefined;

  constructor(private readonly engine: Engine) {}

  /** The snapshot this process holds (the daemon's watcher keeps it current), if any. */
  get current(): CatalogSnapshot | undefined {
    return this.state?.snap;
  }

  /**
   * The catalog and (when needed) the text index, refreshed from disk unless `refresh` is false. A
   * long-lived process keeps the whole index between queries. A one-shot text query loads only
   * the postings its text can reach (same scores) unless the snapshot is far behind the files:
   * then it loads the whole index, brings it up to date and saves it for the next process.
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
      // Saved from a content this catalog went through: only the files changed since are planned.
      const since = partial?.savedFrom !== undefined ? snap.changedSince?.(partial.savedFrom) : undefined;
      const touched = since && touchedKeys(snap, since);
      const plan = touched ? partial?.planKeys(touched) : partial?.plan(docsOf());
      // Nothing to sync: the next query need not look (SearchIndex.contentsFor).
      if (plan?.size === 0 && partial?.savedFrom !== undefined && snap.contentId !== undefined)
        SearchIndex.noteSameEntries(localDir, partial.savedFrom, snap.contentId);
      // Patched here only when the next query will not compare every stamp again, else synced and saved below.
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

  /** Re-reads changed files (`paths`: a watcher batch's) and brings the whole index up to date. */
  refresh(opts: { saveIndex?: boolean | 'drifted'; paths?: string[] } = {}) {
    let snap: CatalogSnapshot;
    let index: SearchIndex | null;
    let stats: QueryStats['index'];
    if (opts.paths && this.state?.index) {
      // Costs what the batch's files do: the catalog says which keys they touched, the index
      // follows those (old postings are dropped by compactIndex, at a quiet moment).
      const prev = this.state.snap;
      snap = this.engine.catalog.refreshPaths(prev, opts.paths);
      this.engine.semantic?.noteTouched(snap.touched!.keys());
      const ix = (index = this.state.index);
      const touched = [...snap.touched!].map(([key, se]) => [key, se && docOf(se)] as [string, IndexedDoc | null]);
      const was = touched.map(([key]) => ix.docOf(key));
      stats = { loaded_snapshot: true, partial: false, ...index.sync([], index.planKeys(touched), { deferCompact: true }) };
      this.followSidTable(prev, snap, index, was);
      this.state = { snap, index };
      if (opts.saveIndex) this.saveIndex(index, opts.saveIndex === 'drifted' ? 'drifted' : 'changed');
    } else ({ snap, index, indexStats: stats } = this.load('', true, true, opts.saveIndex ?? true));
    return { snap, files: snap.entries.length + snap.bad.length, indexed: index?.size ?? 0, changed: snap.changed, removed: snap.removed, index: stats };
  }

  /** The no-text window (entry numbers in order) and how many passed: kept in local state for the next process, by catalog content and `key`. */
  savedWindow(snap: CatalogSnapshot, key: string, make: () => { js: number[]; matched: number }): { js: number[]; matched: number } {
    if (!snap.contentId) return make();
    const [file, id] = [`${this.engine.ws.local('cache')}/list-window.json`, `${snap.contentId}\n${key}`];
    const saved = tryOr(() => JSON.parse(readNoFollow(file, 'utf8')) as { id: string; js: number[]; matched: number }, undefined);
    if (saved?.id === id) return saved;
    const w = make();
    tryOr(() => this.engine.ws.ensureLocal() && writeFileAtomic(file, JSON.stringify({ id, ...w }), { fsync: false }), undefined);
    return w;
  }

  /** Compacts the index if watcher batches left it worth it (the daemon calls this when idle). */
  compactIndex(): boolean {
    return this.state?.index?.compactIfDue() ?? false;
  }

  /**
   * Saves the index snapshot if it changed; `'drifted'`: only once it is further behind than a
   * one-shot query patches up (a save holds a long-lived process while it writes the whole index).
   */
  saveIndex(index: SearchIndex | null = this.state?.index ?? null, when: 'changed' | 'drifted' = 'changed'): void {
    if (!index) return;
    if (when === 'drifted' && index.unsavedChanges <= Math.max(PARTIAL_DRIFT_MIN, index.size * PARTIAL_DRIFT_SHARE)) return;
    // A snapshot that cannot be saved only costs speed next time.
    tryOr(() => {
      if (!this.engine.ws.ensureLocal()) return;
      this.engine.ws.local('cache', true);
      // Saved with the catalog content id, if any, and each document's place among the entries.
      const snap = this.state?.index === index ? this.state.snap : undefined;
      let at: Map<string, number> | undefined;
      const mark = snap?.contentId
        ? { id: snap.contentId, posOf: (key: string) => (at ??= new Map(snap.entries.map((se, i) => [se.key, i]))).get(key) }
        : undefined;
      index.save(SearchIndex.snapshotPath(this.engine.ws.localDir), false, mark);
    }, undefined);
  }

  /** For a long-lived process that is stopping: the index it holds, synced and saved for the one-shot commands next. */
  flushIndex(): void {
    if (this.state?.index) this.load('', true, true, true);
  }

  /** Each document's entry by its place among the snapshot's entries (-1: none), built once per snapshot and index version. */
  sidTable(snap: CatalogSnapshot, index: SearchIndex): Int32Array {
    const t = this.bySid;
    if (t && t.snap === snap && t.index === index && t.gen === index.generation) return t.table;
    const table = new Int32Array(index.next).fill(-1);
    snap.entries.forEach((se, j) => (table[index.docOf(se.key) ?? table.length] = j)); // (past the end: dropped)
    this.bySid = { snap, index, gen: index.generation, table };
    return table;
  }

  /** Carries the table over a watcher batch (`was`: each touched key's document before): an entry keeps its place, new ones come last; a removal: built again. */
  private followSidTable(prev: CatalogSnapshot, snap: CatalogSnapshot, index: SearchIndex, was: (number | undefined)[]): void {
    const t = this.bySid;
    if (!t || t.snap !== prev || t.index !== index || !snap.touched) return;
    let table = t.table;
    if (table.length < index.next) (table = new Int32Array(2 * index.next).fill(-1)).set(t.table);
    let added = prev.entries.length;
    for (const [k, [key, se]] of [...snap.touched].entries()) {
      const j = was[k] === undefined ? added++ : (table[was[k]] ?? -1);
      if (!se || snap.entries[j] !== se) return; // (checked: a place that moved is never used)
      table[index.docOf(key) ?? table.length] = j;
    }
    this.bySid = { snap, index, gen: index.generation, table };
  }
}

/**
 * The catalog: every entry file of the workspace, validated once and cached under `cache/` of the
 * local state folder (store/state-dir.ts; the layout: catalog-cache.ts, and docs/ARCHITECTURE.md,
 * "The catalog on disk"). A command stats the files (catalog-scan.ts), re-reads only those that
 * changed, and records what moved; full entries are read from their files only when asked for
 * (`entry`). The files are the truth: a missing or corrupt cache is rebuilt, never fatal, and
 * deleting the local state folder loses nothing. A watcher-fed process follows batches of paths
 * instead (catalog-live.ts).
 */
import { lstatSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { entryMeta, type EntryMeta } from '../core/meta.js';
import type { MemoryEntry } from '../core/schema.js';
import { CatalogCache, contentOf, contentPosition, stampAt, type CatalogContent, type CatalogFile } from './catalog-cache.js';
import { lowerBoundText } from './texts.js';
import { stampOf, writeFileAtomic } from './fsutil.js';
import { MEMORY_DIR } from './root.js';
import { gitBlobId, readViewRecord, takeGitView, VIEW_RECORD } from './git-view.js';
import { putColumns } from './catalog-columns.js';
import { CachedEntries } from './cached-entries.js';
import { CatalogScan, SECTIONS_IN_PATH_ORDER } from './catalog-scan.js';
import { LiveCatalog } from './catalog-live.js';
import { RecentEntries, dropDuplicates, entryPath, metaRow, type CatalogSnapshot } from './stored-entry.js';
import type { Workspace } from './workspace.js';

export { StoredEntry, entryPath, keyOfFile, readEntryFile, type BadFile, type CatalogSnapshot } from './stored-entry.js';

/** Full entries a long-lived process keeps (its queries show the same few again and again). */
const RECENT_ENTRIES = 512;

/** What a full refresh found: the cache's base and delta, and its contents, as loaded (unchanged) or as built. */
interface Found {
  id: string;
  deltaLines: number;
  /** What was found as content to change: built by the refresh, or made from `loaded` only when the whole cache must be saved. */
  content?: CatalogContent;
  /** Positions of `content`'s files, once asked for. */
  positions?: Map<string, number>;
  loaded?: CatalogFile;
  /** Files noted since `loaded` (null: removed), to apply when `content` is made from it. */
  pending?: Map<string, NotedFile | null>;
  /** The content id the refresh found, and the one after what this process noted since (see carryGitView). */
  foundContent?: string;
  contentId?: string;
  /** The blob of each file noted since the refresh (null: removed). */
  notedBlobs: Map<string, string | null>;
}

/** A file this process wrote, as noteWritten found it. */
interface NotedFile {
  st: [size: number, mtimeMs: number, ctimeMs: number];
  blob: string;
  meta: EntryMeta;
  line: string;
}

export class Catalog {
  private ws: Workspace;
  private readonly cache: CatalogCache;
  private live: LiveCatalog | undefined;
  /** What the last full refresh found (the cache's contents), for `noteWritten`. */
  private found: Found | undefined;
  /** Keep what a refresh found for `noteWritten` (a long-lived watcher-fed process does not need it). */
  private notesWrites: boolean;
  /** Entries keep their full text once read (see StoredEntry); in a long-lived process only the last few hundred. */
  private readonly recent: RecentEntries | undefined;

  /** The real time, for how long ago a folder last changed (a test moves it on; a fixed command clock must not). */
  private readonly wallClock: () => number;

  constructor(ws: Workspace, opts: { noteWrites?: boolean; holdEntries?: boolean; wallClock?: () => number } = {}) {
    this.ws = ws;
    this.wallClock = opts.wallClock ?? Date.now;
    this.notesWrites = opts.noteWrites !== false;
    this.recent = opts.holdEntries === false ? new RecentEntries(RECENT_ENTRIES) : undefined;
    this.cache = new CatalogCache(ws);
  }

  /** Re-reads only `files` (paths relative to the root) on top of `prev`, the snapshot returned last (see catalog-live.ts). */
  refreshPaths(prev: CatalogSnapshot, files: Iterable<string>): CatalogSnapshot {
    return (this.live ??= new LiveCatalog(this.ws.root, this.recent)).refreshPaths(prev, files);
  }

  /** Checks every entry file against the cache (catalog-scan.ts), re-reads the changed ones, and records what moved. */
  refresh(): CatalogSnapshot {
    const cache = this.cache.load();
    const scan = new CatalogScan(this.ws, cache, cache ? this.viewedClean(cache) : undefined, this.wallClock(), this.recent).run();
    const { next, bad, changed } = scan;
    const removed = scan.removed();
    // Every cached file still there and unchanged: what was found is the cache itself (with the
    // folders as listed now), copied only if a write of this process changes it (noteWritten).
    const reused = scan.unchanged ? cache! : undefined;
    if (reused) reused.dirs = next.dirs;
    else scan.build();
    // The cache as loaded holds the entries: made when asked for.
    const lazy = reused ? new CachedEntries(reused, this.ws.root, this.recent) : undefined;
    // Files that lose their id to another: none when nothing changed since a cache that had none.
    const noted = reused?.nodup === true; // as the cache says: nothing to note in its delta
    const knownUnique = reused !== undefined && (noted || this.noIdShared(reused));
    const unique = knownUnique ? { entries: scan.entries } : dropDuplicates(lazy ? lazy.all() : scan.entries, bad);
    next.nodup = !unique.duplicates;
    if (reused) reused.nodup = next.nodup;
    const { found, contentId } = this.record(cache, scan, removed, reused);
    // Looked for files that lose their id (the delta made the cache unsure) and found none: the
    // delta says so, for the next process, as of the lines before it.
    if (reused && !noted && next.nodup && found.id === reused.id && this.cache.appendDelta(found.id, [['#nodup', found.deltaLines]]) !== null)
      found.deltaLines++;
    if (this.notesWrites) this.found = { ...found, foundContent: contentId, contentId };
    const changedSince = cache
      ? (id: string): string[] | undefined => {
          const at = contentPosition(cache, id);
          return at === undefined ? undefined : [...new Set([...cache.changeLog.slice(at), ...changed, ...removed])];
        }
      : undefined;
    const snap: CatalogSnapshot = { ...unique, bad, changed, removed, contentId, changedSince };
    if (lazy && knownUnique) {
      snap.cached = lazy;
      Object.defineProperty(snap, 'entries', { get: () => lazy.all(), enumerable: true, configurable: true });
    }
    return snap;
  }

  /**
   * Records what the scan found: appended to the delta when it is small, the whole cache saved
   * when not (or when there was none). Returns what was found and its content id (see
   * CatalogSnapshot.contentId).
   */
  private record(cache: CatalogFile | null, scan: CatalogScan, removed: string[], reused: CatalogFile | undefined): { found: Found; contentId: string } {
    const { next, newDirs, changedAt } = scan;
    const moved = scan.changed.length + removed.length;
    const count = reused ? reused.paths.length : next.files.length;
    const as = (id: string, deltaLines: number): Found =>
      reused ? { id, deltaLines, loaded: reused, notedBlobs: new Map() } : { id, deltaLines, content: next, notedBlobs: new Map() };
    const save = (): string => this.cache.save(reused ? contentOf(reused) : next);
    if (!cache || ((moved || newDirs.length) && !this.cache.deltaFits(moved + newDirs.length, cache.deltaLines, count))) {
      const found = as(save(), 0);
      return { found, contentId: found.id };
    }
    if (!moved && !newDirs.length) return { found: as(cache.id, cache.deltaLines), contentId: cache.content };
    const rows: unknown[][] = changedAt.map((at) => [
      next.files[at],
      ...next.st.slice(3 * at, 3 * at + 3),
      stampAt(next.st, at),
      next.lines[at],
      next.bad[at] ?? null,
      next.oids[at],
    ]);
    for (const rel of removed) rows.push([rel]);
    for (const [dir, r] of newDirs) rows.push(['#dir', dir, ...r]);
    const after = this.cache.appendDelta(cache.id, rows, cache.content);
    const found = after !== null ? as(cache.id, cache.deltaLines + rows.length) : as(save(), 0);
    return { found, contentId: after ?? found.id };
  }

  /**
   * Whether no file of the cache as loaded loses its id to another, told from the files changed
   * since that was last known (`uniqueUpTo`): one of them would be one of the pair, so each is
   * looked for under the project's other sections (a few lookups, not an entry made for each of
   * 10K files, the first read after any write used to make). A file found there, usable or not,
   * leaves it to the full check.
   */
  private noIdShared(file: CatalogFile): boolean {
    if (file.uniqueUpTo < 0) return false;
    const has = (rel: string): boolean => {
      const at = lowerBoundText(file.paths, rel);
      return at < file.paths.length && file.paths.equals(at, rel, 0, rel.length);
    };
    for (const rel of new Set(file.changeLog.slice(file.uniqueUpTo))) {
      const where = entryPath(rel);
      if (!where) return false;
      if (!has(rel)) continue; // removed
      for (const section of SECTIONS_IN_PATH_ORDER)
        if (section !== where.section && has(`${MEMORY_DIR}/${where.project}/${section}/${where.id}.json`)) return false;
    }
    return true;
  }

  /**
   * What git's view offered to this process (if any) vouches for among the cache's files; keeps
   * the record of a listing every cached file matched (see git-view.ts), and drops one that could
   * not be used, so that the next command asks git for a listing again.
   */
  private viewedClean(cache: CatalogFile): Uint8Array | undefined {
    const view = takeGitView(this.ws.root);
    if (!view) return undefined;
    const m = view.matching(cache.paths, cache.oids, (content) => {
      const at = contentPosition(cache, content);
      return at === undefined ? undefined : cache.changeLog.slice(at);
    });
    const record = join(this.ws.local('cache'), VIEW_RECORD);
    try {
      if (view.index && m?.complete && this.ws.ensureLocal())
        writeFileAtomic(record, JSON.stringify({ index: view.index, content: cache.content }), { fsync: false });
      else if (view.vouchedFor !== undefined && !m) rmSync(record, { force: true });
    } catch {
      /* only costs the next command a listing */
    }
    return m?.clean;
  }

  /**
   * This process has just written (or removed) these files (paths relative to the root): put
   * their stamps and metadata into the cache now, so that the next command finds nothing changed
   * and neither re-reads them nor rewrites the cache (~250 ms for the first query after a write
   * at 100K entries). Only our own writer calls this, with entries it validated before writing;
   * files that are not entry files are ignored. A no-op in a process that has not refreshed.
   * `written`: what was written to each file (by path relative to the root), so a file that still
   * holds exactly that text is not parsed again.
   */
  noteWritten(files: string[], written?: ReadonlyMap<string, { text: string | null; entry?: MemoryEntry }>): void {
    const found = this.found;
    if (!found) return;
    const rows: unknown[][] = [];
    for (const rel of new Set(files)) {
      const where = entryPath(rel);
      if (!where) continue;
      const st = lstatSync(join(this.ws.root, rel), { throwIfNoEntry: false });
      if (!st || !st.isFile()) {
        if (!this.knows(found, rel)) continue;
        this.note(found, rel, null);
        found.notedBlobs.set(rel, null);
        rows.push([rel]);
        continue;
      }
      // Read after the lstat: a change in between leaves an older stamp, which the next refresh re-reads.
      let entry: MemoryEntry;
      let blob: string;
      try {
        const bytes = readFileSync(join(this.ws.root, rel));
        const text = bytes.toString('utf8');
        const w = written?.get(rel);
        entry = w?.entry && w.text === text ? w.entry : (JSON.parse(text) as MemoryEntry);
        blob = gitBlobId(bytes);
      } catch {
        continue; // not what we wrote after all: the next refresh reads it
      }
      if (entry?.id !== where.id || entry.section !== where.section) continue;
      const meta = entryMeta(entry);
      const line = JSON.stringify(metaRow(meta));
      this.note(found, rel, { st: [st.size, st.mtimeMs, st.ctimeMs], blob, meta, line });
      found.notedBlobs.set(rel, blob);
      rows.push([rel, st.size, st.mtimeMs, st.ctimeMs, stampOf(st), line, null, blob]);
    }
    if (!rows.length) return;
    const count = found.content ? found.content.files.length : found.loaded!.paths.length;
    const after = this.cache.deltaFits(rows.length, found.deltaLines, count) ? this.cache.appendDelta(found.id, rows, found.contentId) : null;
    if (after !== null) {
      found.deltaLines += rows.length;
      found.contentId = after;
      return;
    }
    // Too much for the delta: rewrite the whole cache from what this process knows (save drops the dead slots).
    found.id = found.contentId = this.cache.save(this.contentOf(found));
    found.deltaLines = 0;
  }

  /**
   * After a memory commit replaced git's index with one that differs only at the files this
   * process noted: when git's listing was recorded as matching the content the refresh found
   * (see git-view.ts), the new index matches the content after those files just as well, so the
   * record moves on to both, and the next command asks git only for what changed instead of
   * listing and matching every entry again (~110 ms of the first read after a write at 100K).
   * Anything short of exactly that leaves the record as it is (the next command then lists).
   * (git made the index entries at `paths` from the files as this process wrote them.)
   */
  carryGitView(change: { before: string | null; after: string | null; paths: string[] }): void {
    const found = this.found;
    if (!found?.foundContent || !found.contentId || !change.before || !change.after) return;
    const cacheDir = this.ws.local('cache');
    const record = readViewRecord(cacheDir);
    if (record?.index !== change.before || record.content !== found.foundContent) return;
    if (change.paths.length !== found.notedBlobs.size) return;
    for (const p of change.paths) if (!found.notedBlobs.has(p)) return;
    try {
      writeFileAtomic(join(cacheDir, VIEW_RECORD), JSON.stringify({ index: change.after, content: found.contentId }), { fsync: false });
    } catch {
      /* only costs the next command a listing */
    }
  }

  /** Whether what was found (with what was noted since) holds the file at `rel`. */
  private knows(found: Found, rel: string): boolean {
    if (found.content) return this.positionsOf(found).has(rel);
    const noted = found.pending?.get(rel);
    if (noted !== undefined) return noted !== null;
    const paths = found.loaded!.paths;
    const at = lowerBoundText(paths, rel);
    return at < paths.length && paths.equals(at, rel, 0, rel.length);
  }

  /**
   * Notes a file this process wrote (null: removed) in what was found: in its content when there
   * is one, else beside the cache as loaded, which a one-shot write never has to copy (10K
   * entries' paths, rows and columns: ~30 ms) unless the whole cache is saved.
   */
  private note(found: Found, rel: string, file: NotedFile | null): void {
    if (!found.content) {
      (found.pending ??= new Map()).set(rel, file);
      return;
    }
    const f = found.content;
    f.nodup = false; // not known any more: the next refresh looks again
    const pos = this.positionsOf(found);
    let at = pos.get(rel);
    if (!file) {
      if (at !== undefined) {
        pos.delete(rel);
        f.files[at] = ''; // a dead slot, skipped from now on
      }
      return;
    }
    if (at === undefined) {
      at = f.files.length;
      f.files.push(rel);
      f.st.push(0, 0, 0);
      f.oids.push('');
      f.lines.push('');
      pos.set(rel, at);
    }
    [f.st[3 * at], f.st[3 * at + 1], f.st[3 * at + 2]] = file.st;
    f.oids[at] = file.blob;
    f.lines[at] = file.line;
    putColumns(f.cols, file.meta, at);
    delete f.bad[at];
  }

  private positionsOf(found: Found): Map<string, number> {
    if (!found.positions) {
      const positions = (found.positions = new Map());
      found.content!.files.forEach((rel, i) => {
        if (rel) positions.set(rel, i);
      });
    }
    return found.positions;
  }

  /** What was found as content to save, made from the cache as loaded and the files noted since when needed. */
  private contentOf(found: Found): CatalogContent {
    if (!found.content) {
      found.content = contentOf(found.loaded!);
      found.loaded = undefined;
      for (const [rel, file] of found.pending ?? []) this.note(found, rel, file);
      found.pending = undefined;
    }
    return found.content;
  }
}

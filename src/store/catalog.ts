/** The catalog: every entry file, validated once and cached (docs/ARCHITECTURE.md, "The read path"); the files are the truth. */
import { lstatSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { entryMeta } from '../core/meta.js';
import type { MemoryEntry } from '../core/schema.js';
import { CatalogCache, emptyCatalog, type CatalogFile } from './catalog-cache.js';
import { contentPosition, deltaFits, mergeChanges } from './catalog-delta.js';
import { positionOfText } from './texts.js';
import { tryOr, writeFileAtomic } from './fsutil.js';
import { MEMORY_DIR } from './root.js';
import { gitBlobId, readViewRecord, takeGitView, VIEW_RECORD } from './git-view.js';
import { CachedEntries } from './cached-entries.js';
import { CatalogScan, SECTIONS_IN_PATH_ORDER } from './catalog-scan.js';
import { LiveCatalog } from './catalog-live.js';
import { metaRow } from './catalog-columns.js';
import { RecentEntries, dropDuplicates, entryPath, readEntryFile, type BadFile, type CatalogSnapshot } from './stored-entry.js';
import type { Workspace } from './workspace.js';

export { StoredEntry, entryPath, keyOfFile, readEntryFile, type BadFile, type CatalogSnapshot } from './stored-entry.js';

/** Full entries a long-lived process keeps (its queries show the same few again and again). */
const RECENT_ENTRIES = 512;

export class Catalog {
  private ws: Workspace;
  private readonly cache: CatalogCache;
  private live: LiveCatalog | undefined;
  /** What a full refresh found (base, content ids then and now), and the blob of each file noted since (null: removed). */
  private found: { id: string; foundContent: string; contentId: string; notedBlobs: Map<string, string | null> } | undefined;
  /** A watcher-fed process needs no `found`. */
  private notesWrites: boolean;
  /** In a long-lived process, entries keep their full text only among the last few hundred read. */
  private readonly recent: RecentEntries | undefined;
  /** For how long ago a folder changed: real time (a test moves it on; a fixed command clock must not). */
  private readonly wallClock: () => number;

  constructor(ws: Workspace, opts: { noteWrites?: boolean; holdEntries?: boolean; wallClock?: () => number } = {}) {
    this.ws = ws;
    this.wallClock = opts.wallClock ?? Date.now;
    this.notesWrites = opts.noteWrites !== false;
    this.recent = opts.holdEntries === false ? new RecentEntries(RECENT_ENTRIES) : undefined;
    this.cache = new CatalogCache(ws);
  }

  /** Re-reads only `files` on top of `prev`, the snapshot returned last (catalog-live.ts). */
  refreshPaths(prev: CatalogSnapshot, files: Iterable<string>): CatalogSnapshot {
    return (this.live ??= new LiveCatalog(this.ws.root, this.recent)).refreshPaths(prev, files);
  }

  /** Checks every entry file against the cache, re-reads the changed ones, and records what moved. */
  refresh(): CatalogSnapshot {
    const loaded = this.cache.load();
    const file = loaded ?? emptyCatalog();
    const scan = new CatalogScan(this.ws, file, loaded ? this.viewedClean(loaded) : undefined, this.wallClock(), this.recent ? 0 : Infinity).run();
    const { changes, changed, removed, newDirs } = scan;
    const changedSince = loaded
      ? (id: string): string[] | undefined => {
          const at = contentPosition(loaded, id);
          return at === undefined ? undefined : [...new Set([...loaded.changeLog.slice(at), ...changed, ...removed])];
        }
      : undefined;
    if (changes.size) mergeChanges(file, changes);
    file.dirs = scan.dirs;
    const cached = new CachedEntries(file, this.ws.root, this.recent, scan.read);
    const bad: BadFile[] = Object.entries(file.bad).map(([i, problems]) => ({ file: file.paths.get(Number(i)), problems }));
    bad.push(...scan.links);
    const dups = this.noIdShared(file, [...file.changeLog, ...changed]) ? undefined : dropDuplicates(cached.all(), bad);
    const moved = changes.size + newDirs.length;
    let { id, deltaLines, content: contentId } = file;
    // A base that had shared ids is saved again once they are gone, so the next refresh need not look.
    if (!loaded || !deltaFits(moved, deltaLines, file.paths.length) || (!file.nodup && !dups?.duplicates)) {
      file.nodup = !dups?.duplicates;
      id = contentId = this.cache.save(file);
    } else if (moved) {
      const rows = [...changes].map(([rel, state]) => (state ? [rel, ...state] : [rel]));
      for (const [dir, r] of newDirs) rows.push(['#dir', dir, ...r]);
      const after = this.cache.appendDelta(id, rows, contentId);
      if (after === null) id = contentId = this.cache.save(file);
      else [deltaLines, contentId] = [deltaLines + rows.length, after];
    }
    if (this.notesWrites) this.found = { id, foundContent: contentId, contentId, notedBlobs: new Map() };
    if (dups?.duplicates) return { ...dups, bad, changed, removed, contentId, changedSince };
    const snap: CatalogSnapshot = { entries: [], bad, changed, removed, contentId, changedSince, cached };
    Object.defineProperty(snap, 'entries', { get: () => cached.all(), enumerable: true, configurable: true });
    return snap;
  }

  /** Whether no file loses its id to another: the base knew none, so one of a pair is among `changed` (looked up in the other sections). */
  private noIdShared(file: CatalogFile, changed: string[]): boolean {
    if (!file.nodup) return false;
    const has = (rel: string): boolean => positionOfText(file.paths, rel) !== undefined;
    for (const rel of new Set(changed)) {
      const where = entryPath(rel);
      if (!where) return false;
      if (!has(rel)) continue; // removed
      for (const section of SECTIONS_IN_PATH_ORDER)
        if (section !== where.section && has(`${MEMORY_DIR}/${where.project}/${section}/${where.id}.json`)) return false;
    }
    return true;
  }

  /** What git's view (if any) vouches for among the cache's files; records a complete match, drops an unusable record. */
  private viewedClean(cache: CatalogFile): Uint8Array | undefined {
    const view = takeGitView(this.ws.root);
    if (!view) return undefined;
    const m = view.matching(cache.paths, cache.oids, (content) => {
      const at = contentPosition(cache, content);
      return at === undefined ? undefined : cache.changeLog.slice(at);
    });
    const record = join(this.ws.local('cache'), VIEW_RECORD);
    // A failure only costs the next command a listing.
    tryOr(() => {
      if (view.index && m?.complete && this.ws.ensureLocal())
        writeFileAtomic(record, JSON.stringify({ index: view.index, content: cache.content }), { fsync: false });
      else if (view.vouchedFor !== undefined && !m) rmSync(record, { force: true });
    }, undefined);
    return m?.clean;
  }

  /** Our writer has just written (or removed) these validated files: to the delta, so the next command re-reads none. */
  noteWritten(files: string[], written?: ReadonlyMap<string, { text: string | null; entry?: MemoryEntry }>): void {
    const found = this.found;
    if (!found) return;
    const rows: unknown[][] = [];
    for (const rel of new Set(files)) {
      const where = entryPath(rel);
      if (!where) continue;
      const abs = join(this.ws.root, rel);
      const st = lstatSync(abs, { throwIfNoEntry: false });
      if (!st?.isFile()) {
        found.notedBlobs.set(rel, null);
        rows.push([rel]);
        continue;
      }
      // Read after the lstat: a change in between leaves an older stamp, which the next refresh re-reads; gone again: the next refresh sees it.
      const { entry, blob } = tryOr((): { entry?: MemoryEntry; blob?: string } => {
        const bytes = readFileSync(abs);
        const w = written?.get(rel);
        // The writer's own (validated) entry while the file holds exactly its text, else the file checked as a refresh checks it.
        return w?.entry && w.text === bytes.toString('utf8')
          ? { entry: w.entry, blob: gitBlobId(bytes) }
          : readEntryFile(abs, rel, where.section, where.id, true);
      }, {});
      if (!entry || !blob) continue;
      found.notedBlobs.set(rel, blob);
      rows.push([rel, st.size, st.mtimeMs, st.ctimeMs, JSON.stringify(metaRow(entryMeta(entry))), null, blob]);
    }
    const after = rows.length ? this.cache.appendDelta(found.id, rows, found.contentId) : null;
    if (after !== null) found.contentId = after;
  }

  /** After a memory commit that changed git's index only at the files noted here, git's view record moves on to the content after them. */
  carryGitView(change: { before: string | null; after: string | null; paths: string[] }): void {
    const found = this.found;
    if (!found?.foundContent || !found.contentId || !change.before || !change.after) return;
    const cacheDir = this.ws.local('cache');
    const record = readViewRecord(cacheDir);
    if (record?.index !== change.before || record.content !== found.foundContent) return;
    if (change.paths.length !== found.notedBlobs.size) return;
    for (const p of change.paths) if (!found.notedBlobs.has(p)) return;
    // A failure only costs the next command a listing.
    tryOr(() => writeFileAtomic(join(cacheDir, VIEW_RECORD), JSON.stringify({ index: change.after, content: found.contentId }), { fsync: false }), undefined);
  }
}

/**
 * The catalog: every entry file of the workspace, validated once and cached under
 * `cache/catalog.bin` of the local state folder (store/state-dir.ts) as metadata (no summary or
 * content) keyed by (size, mtime, ctime). A command stats the files, re-reads only those that
 * changed, and saves the cache when anything moved; full entries are read from their files only
 * when asked for (`entry`). The files are the truth: a missing or corrupt cache is rebuilt,
 * never fatal, and deleting the local state folder loses nothing.
 */
import { lstatSync, readdirSync, readFileSync, rmSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { SECTIONS, type Section } from '../core/constants.js';
import { entryMeta, type EntryMeta } from '../core/meta.js';
import type { MemoryEntry } from '../core/schema.js';
import {
  blobAt,
  CatalogCache,
  stampAt,
  contentOf,
  contentPosition,
  DIR_SETTLE_MS,
  type CatalogContent,
  type CatalogFile,
  type DirRecord,
} from './catalog-cache.js';
import { lowerBoundText } from './texts.js';
import { stampOf, writeFileAtomic } from './fsutil.js';
import { MEMORY_DIR } from './root.js';
import { gitBlobId, readViewRecord, takeGitView, VIEW_RECORD } from './git-view.js';
import { copyColumns, emptyColumns, putColumns } from './catalog-columns.js';
import { CachedEntries, cachedEntry } from './cached-entries.js';
import {
  RecentEntries,
  StoredEntry,
  dropDuplicates,
  duplicateProblem,
  entryPath,
  keyOfFile,
  metaRow,
  readEntryFile,
  type BadFile,
  type CatalogSnapshot,
} from './stored-entry.js';
import type { Workspace } from './workspace.js';

export { StoredEntry, entryPath, keyOfFile, readEntryFile, type BadFile, type CatalogSnapshot } from './stored-entry.js';

/**
 * What `refreshPaths` keeps between watcher batches, for the snapshot it returned last: the
 * entries by file and by key, the bad files, and the files skipped as duplicates by key. Updated
 * in place, so a batch costs what its files do, not a pass over every entry.
 */
interface LiveState {
  snap: CatalogSnapshot;
  byFile: Map<string, StoredEntry>;
  byKey: Map<string, StoredEntry>;
  bad: Map<string, BadFile>;
  /** Key → files skipped because an earlier-sorting file has that key. */
  dups: Map<string, Set<string>>;
  /**
   * Live entries (not superseded) by project and duplicate hash (`project\0dup`): the duplicate
   * rule's lookup, so that a write in the daemon does not scan every entry. Built on first use
   * (from the catalog's columns: no row is parsed for it), then kept by the batches.
   */
  dupIndex?: Map<string, StoredEntry | Set<StoredEntry>>;
}

const dupSlot = (se: StoredEntry): string => `${se.project}\0${se.meta.dup}`;

/** Adds or removes a live entry (one per slot is the rule; a set only where hand edits made more). */
function indexDup(idx: Map<string, StoredEntry | Set<StoredEntry>>, se: StoredEntry, add: boolean): void {
  if (se.meta.status === 'superseded') return;
  const slot = dupSlot(se);
  const had = idx.get(slot);
  if (add) {
    if (!had) idx.set(slot, se);
    else if (had instanceof Set) had.add(se);
    else if (had !== se) idx.set(slot, new Set([had, se]));
  } else if (had === se) idx.delete(slot);
  else if (had instanceof Set && had.delete(se)) {
    if (had.size === 1) idx.set(slot, had.values().next().value!);
  }
}

/** Full entries a long-lived process keeps (its queries show the same few again and again). */
const RECENT_ENTRIES = 512;

/** Folder names in the order of the paths under them (`a-b/` sorts before `a/`). */
function inPathOrder(names: readonly string[]): string[] {
  return names
    .map((n) => `${n}/`)
    .sort()
    .map((n) => n.slice(0, -1));
}

const SECTIONS_IN_PATH_ORDER = inPathOrder(SECTIONS) as Section[];

/** The project of an entry file's path (`ai-memory/<project>/...`). */
function projectOf(rel: string): string {
  const from = MEMORY_DIR.length + 1;
  return rel.slice(from, rel.indexOf('/', from));
}

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
  private live: LiveState | undefined;
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

  /** The live state for `prev`: kept from the last batch, or built once from the snapshot. */
  private liveFor(prev: CatalogSnapshot): LiveState {
    if (this.live?.snap === prev) return this.live;
    const byKey = new Map<string, StoredEntry>();
    for (const se of prev.entries) byKey.set(se.key, se);
    const dups = new Map<string, Set<string>>();
    for (const rel of prev.duplicates ?? []) {
      const key = keyOfFile(rel);
      let set = dups.get(key);
      if (!set) dups.set(key, (set = new Set()));
      set.add(rel);
    }
    return { snap: prev, byFile: new Map(prev.entries.map((se) => [se.file, se])), byKey, bad: new Map(prev.bad.map((b) => [b.file, b])), dups };
  }

  /**
   * Re-reads only `files` (paths relative to the root) on top of `prev`: what a watcher batch
   * needs, instead of a stat of every file. Paths that are not entry files are ignored; the cache
   * file is not rewritten (the next full refresh does that). Costs what the files do: the maps
   * behind `prev` are kept and updated in place (so `prev` must be the snapshot this catalog
   * returned last, or it rebuilds them once), and only the entries array is copied.
   */
  refreshPaths(prev: CatalogSnapshot, files: Iterable<string>): CatalogSnapshot {
    const live = this.liveFor(prev);
    const { byFile, byKey, bad, dups } = live;
    const changed: string[] = [];
    const removed: string[] = [];
    const touched = new Map<string, StoredEntry | null>();
    /** The entry each touched key had before this batch. */
    const before = new Map<string, StoredEntry | undefined>();
    const loseDup = (key: string, rel: string): void => {
      const set = dups.get(key);
      if (set?.delete(rel) && set.size === 0) dups.delete(key);
    };
    /** The entry of `key` leaves (its file changed or went): an earlier-skipped duplicate may take over. */
    const release = (key: string): void => {
      byKey.delete(key);
      const set = dups.get(key);
      if (!set) return;
      for (const rel of [...set].sort()) {
        set.delete(rel);
        bad.delete(rel);
        const r = this.readStored(rel);
        if (r instanceof StoredEntry) {
          byFile.set(rel, r);
          byKey.set(key, r);
          changed.push(rel);
          break;
        }
        if (r) bad.set(rel, r);
        else removed.push(rel);
      }
      if (set.size === 0) dups.delete(key);
      else for (const rel of set) bad.set(rel, duplicateProblem(rel, byKey.get(key)?.file ?? rel));
    };
    /** `se` claims its key: the file that sorts first keeps it, the other is skipped as a duplicate. */
    const claim = (se: StoredEntry): void => {
      const holder = byKey.get(se.key);
      if (!holder || holder.file === se.file) {
        byFile.set(se.file, se);
        byKey.set(se.key, se);
        return;
      }
      const [keep, skip] = se.file < holder.file ? [se, holder] : [holder, se];
      byFile.delete(skip.file);
      byFile.set(keep.file, keep);
      byKey.set(keep.key, keep);
      let set = dups.get(se.key);
      if (!set) dups.set(se.key, (set = new Set()));
      set.add(skip.file);
      bad.set(skip.file, duplicateProblem(skip.file, keep.file));
      if (skip === holder) {
        changed.push(holder.file);
        for (const rel of set) if (rel !== skip.file) bad.set(rel, duplicateProblem(rel, keep.file));
      }
    };
    // A file below a linked project or section folder is not read (the full refresh reports the link).
    const linked = new Map<string, boolean>();
    const viaLink = (dir: string): boolean => {
      let v = linked.get(dir);
      if (v === undefined) linked.set(dir, (v = lstatSync(join(this.ws.root, dir), { throwIfNoEntry: false })?.isSymbolicLink() === true));
      return v;
    };
    for (const rel of new Set(files)) {
      const where = entryPath(rel);
      if (!where) continue;
      const key = `${where.project}/${where.id}`;
      const abs = join(this.ws.root, rel);
      let st: Stats | undefined;
      try {
        const projectDir = `${MEMORY_DIR}/${where.project}`;
        st = viaLink(projectDir) || viaLink(`${projectDir}/${where.section}`) ? undefined : lstatSync(abs);
      } catch {
        st = undefined;
      }
      const old = byFile.get(rel);
      if (st?.isFile() && old && old.stamp === stampOf(st)) continue;
      // The file is no longer what it was: it gives up its key (or its place among the duplicates).
      if (!touched.has(key)) before.set(key, byKey.get(key));
      touched.set(key, null);
      if (old) {
        byFile.delete(rel);
        release(key);
      } else loseDup(key, rel);
      const wasBad = bad.delete(rel);
      if (!st || !st.isFile()) {
        if (old || wasBad) removed.push(rel);
        if (st?.isSymbolicLink()) bad.set(rel, { file: rel, problems: [{ path: rel, message: 'is a symbolic link; entry files must be regular files' }] });
        continue;
      }
      const r = this.readStored(rel, st);
      changed.push(rel);
      if (r instanceof StoredEntry) claim(r);
      else if (r) bad.set(rel, r);
    }
    for (const key of touched.keys()) {
      const now = byKey.get(key);
      touched.set(key, now ?? null);
      const was = before.get(key);
      if (live.dupIndex && was !== now) {
        if (was) indexDup(live.dupIndex, was, false);
        if (now) indexDup(live.dupIndex, now, true);
      }
    }
    const duplicates = [...dups.values()].flatMap((set) => [...set]);
    const snap: CatalogSnapshot = {
      entries: [...byFile.values()],
      bad: [...bad.values()],
      changed: [...new Set(changed)],
      removed: [...new Set(removed)],
      touched,
      ...(duplicates.length ? { duplicates } : {}),
      byKey,
      findDuplicate: (project, dup) => {
        if (!live.dupIndex) {
          live.dupIndex = new Map();
          for (const se of byKey.values()) indexDup(live.dupIndex, se, true);
        }
        const found = live.dupIndex.get(`${project}\0${dup}`);
        if (!found) return undefined;
        return found instanceof Set ? found.values().next().value?.meta.id : found.meta.id;
      },
    };
    live.snap = snap;
    this.live = live;
    return snap;
  }

  /** Reads and validates one entry file: its StoredEntry, why it cannot be used, or undefined when it is gone. */
  private readStored(rel: string, st?: Stats): StoredEntry | BadFile | undefined {
    const where = entryPath(rel)!;
    if (!st) {
      try {
        st = lstatSync(join(this.ws.root, rel));
      } catch {
        return undefined;
      }
      if (!st.isFile()) return undefined;
    }
    const r = readEntryFile(join(this.ws.root, rel), rel, where.section, where.id);
    if (r.entry) return new StoredEntry(this.ws.root, where.project, rel, stampOf(st), entryMeta(r.entry), r.entry, this.recent);
    return { file: rel, problems: r.problems ?? [] };
  }

  /**
   * Checks every entry file against the cache, re-reads the changed ones, and saves the cache if
   * anything moved. Two things spare most of the system calls on a large store:
   * - a section folder whose ctime and inode are those recorded when it was last listed (and
   *   that listing came well after its last change, see DirRecord) still holds the same names,
   *   so it is not listed again;
   * - a file git's view (when this process was offered one, see git-view.ts) vouches for, still
   *   holding the blob its cached row was read from, is not stat'ed.
   * Everything else gets an lstat and, if its stamp moved, a read.
   */
  refresh(): CatalogSnapshot {
    const cache = this.cache.load();
    const clean = cache ? this.viewedClean(cache) : undefined;
    const listedAt = this.wallClock();
    // What to save: files, their numbers, stamps, blob ids, rows, folders. While the files found
    // are the cache's own, in order, they are only counted (`same`); the first difference copies
    // that run of the cache into `next`, which is built from then on. When nothing differs, the
    // cache as loaded is what was found, and nothing is copied (~20 ms of a cold command at 10K).
    const next: CatalogContent = { files: [], st: [], oids: [], lines: [], bad: {}, dirs: {}, cols: emptyColumns(cache?.cols) };
    let same = 0; // files found so far that are cache.files[0 .. same), unchanged
    let building = !cache;
    const copyCached = (i: number): void => {
      const at = next.files.length;
      next.files.push(cache!.paths.get(i));
      next.st.push(cache!.st[3 * i], cache!.st[3 * i + 1], cache!.st[3 * i + 2]);
      next.oids.push(blobAt(cache!, i));
      next.lines.push(cache!.lines.get(i));
      copyColumns(next.cols, cache!.cols, i);
      const problems = cache!.bad[i];
      if (problems) next.bad[at] = problems;
    };
    // The entries of the unchanged run are made only once something differs (then in order,
    // before any other): when nothing does, the snapshot makes them from the cache on demand.
    const fromCache = (i: number): StoredEntry => {
      const rel = cache!.paths.get(i);
      return cachedEntry(cache!, i, projectOf(rel), root, this.recent, rel);
    };
    const build = (): void => {
      if (building) return;
      building = true;
      for (let i = 0; i < same; i++) {
        copyCached(i);
        if (!cache!.bad[i]) entries.push(fromCache(i));
      }
    };
    const newDirs: [string, DirRecord][] = [];
    const kept = cache ? new Uint8Array(cache.paths.length) : undefined;
    const entries: StoredEntry[] = [];
    const bad: BadFile[] = [];
    const changed: string[] = [];
    const changedAt: number[] = [];
    const root = this.ws.root;
    /** One file: `i` its position in the cache, if it has one. */
    const visit = (project: string, section: string, sdir: string, rel: string, name: string, i: number | undefined): void => {
      const abs = `${sdir}/${name}`; // sdir is normalized; join() costs ~1 µs × 10K files
      // lstat, not stat: a link is reported, never followed.
      const st = i !== undefined && clean?.[i] === 1 ? undefined : lstatSync(abs, { throwIfNoEntry: false });
      if (st === null || (st && !st.isFile() && !st.isSymbolicLink())) return;
      if (cache && i !== undefined && (!st || (cache.st[3 * i] === st.size && cache.st[3 * i + 1] === st.mtimeMs && cache.st[3 * i + 2] === st.ctimeMs))) {
        // Unchanged (git vouched for it, or its stamp is the cached one): the cached row.
        kept![i] = 1;
        if (!building && i === same)
          same++; // its entry is made later, if at all (see build)
        else {
          build();
          copyCached(i);
        }
        const problems = cache.bad[i];
        if (problems) bad.push({ file: rel, problems });
        else if (building) entries.push(fromCache(i));
        return;
      }
      if (i !== undefined) kept![i] = 1;
      build();
      const at = next.files.length;
      next.files.push(rel);
      next.st.push(st!.size, st!.mtimeMs, st!.ctimeMs);
      // A symlinked entry could point anywhere; entries are always plain files. (Kept in the cache as a bad file, so a folder not listed again still reports it.)
      const r = st!.isSymbolicLink()
        ? { problems: [{ path: rel, message: 'is a symbolic link; entry files must be regular files' }], blob: '' }
        : readEntryFile(abs, rel, section as Section, name.slice(0, -'.json'.length), true);
      const k = stampOf(st!);
      next.oids.push(r.blob ?? '');
      changed.push(rel);
      changedAt.push(at);
      if (r.entry) {
        const meta = entryMeta(r.entry);
        const se = new StoredEntry(root, project, rel, k, meta, r.entry, this.recent);
        next.lines.push(se.metaLine());
        putColumns(next.cols, meta);
        entries.push(se);
      } else {
        const problems = r.problems ?? [];
        next.lines.push('');
        putColumns(next.cols, null);
        next.bad[at] = problems;
        bad.push({ file: rel, problems });
      }
    };
    // In the cache's order (paths sorted), so that an unchanged store is walked as one run of it.
    for (const project of inPathOrder(this.ws.listProjects())) {
      const pdir = this.ws.projectDir(project);
      for (const section of SECTIONS_IN_PATH_ORDER) {
        const sdir = join(pdir, section);
        const dirRel = `${MEMORY_DIR}/${project}/${section}`;
        const prefix = `${dirRel}/`;
        // The cached files of this folder: one run of the sorted list (from the prefix to the
        // folder's name followed by '0', the character after '/').
        const lo = cache ? lowerBoundText(cache.paths, prefix) : 0;
        const hi = cache ? Math.max(lo, lowerBoundText(cache.paths, `${dirRel}0`)) : 0;
        const dst = lstatSync(sdir, { throwIfNoEntry: false });
        // A linked section folder could point anywhere: reported, never listed (its cached files go).
        if (dst?.isSymbolicLink()) {
          bad.push({
            file: dirRel,
            problems: [{ path: dirRel, message: 'is a symbolic link; section folders must be real folders in the repository (not followed)' }],
          });
          continue;
        }
        const rec = cache?.dirs[dirRel];
        if (dst?.isDirectory() && rec && rec[0] === dst.ctimeMs && rec[1] === dst.ino && rec[0] + DIR_SETTLE_MS < rec[2]) {
          // Still the names of its last listing: the cached ones.
          next.dirs[dirRel] = rec;
          for (let i = lo; i < hi; i++) {
            if (clean?.[i] === 1 && !building && i === same) {
              // git vouches for it and nothing differed so far: counted, nothing made.
              kept![i] = 1;
              same++;
              const problems = cache.bad[i];
              if (problems) bad.push({ file: cache.paths.get(i), problems });
              continue;
            }
            const rel = cache.paths.get(i);
            visit(project, section, sdir, rel, rel.slice(prefix.length), i);
          }
          continue;
        }
        let names: string[];
        try {
          names = readdirSync(sdir);
        } catch {
          continue;
        }
        if (dst?.isDirectory() && dst.ctimeMs + DIR_SETTLE_MS < listedAt) {
          const r: DirRecord = [dst.ctimeMs, dst.ino, listedAt];
          next.dirs[dirRel] = r;
          if (!rec || rec[0] !== r[0] || rec[1] !== r[1]) newDirs.push([dirRel, r]);
        }
        names = names.filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort();
        // Beside the cached run, both in order.
        let c = lo;
        for (const name of names) {
          const rel = prefix + name;
          while (c < hi && cache!.paths.get(c) < rel) c++;
          visit(project, section, sdir, rel, name, c < hi && cache!.paths.equals(c, rel, 0, rel.length) ? c : undefined);
        }
      }
    }
    for (const p of this.ws.linkedProjects)
      bad.push({
        file: `${MEMORY_DIR}/${p}`,
        problems: [{ path: `${MEMORY_DIR}/${p}`, message: 'is a symbolic link; project folders must be real folders in the repository (not followed)' }],
      });
    const removed: string[] = [];
    if (kept) for (let i = 0; i < kept.length; i++) if (!kept[i]) removed.push(cache!.paths.get(i));
    const moved = changed.length + removed.length;
    // Every cached file still there and unchanged: what was found is the cache itself (with the
    // folders as listed now), copied only if a write of this process changes it (noteWritten).
    const reused = !building && cache && same === cache.paths.length ? cache : undefined;
    if (reused) reused.dirs = next.dirs;
    else build();
    // The cache as loaded holds the entries: made when asked for.
    const lazy = reused ? new CachedEntries(reused, root, this.recent) : undefined;
    // Files that lose their id to another: none when nothing changed since a cache that had none.
    const noted = reused?.nodup === true; // as the cache says: nothing to note in its delta
    const knownUnique = reused !== undefined && (noted || this.noIdShared(reused));
    const unique = knownUnique ? { entries } : dropDuplicates(lazy ? lazy.all() : entries, bad);
    next.nodup = !unique.duplicates;
    if (reused) reused.nodup = next.nodup;
    const count = reused ? reused.paths.length : next.files.length;
    const as = (id: string, deltaLines: number): Found =>
      reused ? { id, deltaLines, loaded: reused, notedBlobs: new Map() } : { id, deltaLines, content: next, notedBlobs: new Map() };
    const save = (): string => this.cache.save(reused ? contentOf(reused) : next);
    let found: Found;
    // The content id of what was found (see CatalogSnapshot.contentId).
    let contentId: string;
    if (cache && (moved || newDirs.length) && this.cache.deltaFits(moved + newDirs.length, cache.deltaLines, count)) {
      const rows: unknown[][] = changedAt.map((at) => [
        next.files[at],
        next.st[3 * at],
        next.st[3 * at + 1],
        next.st[3 * at + 2],
        stampAt(next.st, at),
        next.lines[at],
        next.bad[at] ?? null,
        next.oids[at],
      ]);
      for (const rel of removed) rows.push([rel]);
      for (const [dir, r] of newDirs) rows.push(['#dir', dir, ...r]);
      const after = this.cache.appendDelta(cache.id, rows, cache.content);
      found = after !== null ? as(cache.id, cache.deltaLines + rows.length) : as(save(), 0);
      contentId = after ?? found.id;
    } else if (moved || newDirs.length || !cache) contentId = (found = as(save(), 0)).id;
    else {
      found = as(cache.id, cache.deltaLines);
      contentId = cache.content;
    }
    // Looked for files that lose their id (the delta made the cache unsure) and found none: the
    // delta says so, for the next process, as of the lines before it.
    if (reused && !noted && next.nodup && found.id === cache!.id && this.cache.appendDelta(found.id, [['#nodup', found.deltaLines]]) !== null)
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
      const f = found.content!;
      found.positions = new Map();
      for (let i = 0; i < f.files.length; i++) if (f.files[i]) found.positions.set(f.files[i], i);
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

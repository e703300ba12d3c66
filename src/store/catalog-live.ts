/**
 * The catalog of a watcher-fed process (the daemon): `refreshPaths` re-reads only a batch's files
 * on top of the last snapshot, keeping its maps between batches: a batch costs what its files do.
 */
import { lstatSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { entryMeta } from '../core/meta.js';
import { stampOf } from './fsutil.js';
import { MEMORY_DIR } from './root.js';
import { duplicateProblem, entryPath, keyOfFile, readEntryFile, StoredEntry, type BadFile, type CatalogSnapshot, type RecentEntries } from './stored-entry.js';

type DupIndex = Map<string, StoredEntry | Set<StoredEntry>>;

/** Adds or removes a live entry (one per slot is the rule; a set only where hand edits made more). */
function indexDup(idx: DupIndex, se: StoredEntry, add: boolean): void {
  if (se.meta.status === 'superseded') return;
  const slot = `${se.project}\0${se.meta.dup}`;
  const had = idx.get(slot);
  if (add) {
    if (!had) idx.set(slot, se);
    else if (had instanceof Set) had.add(se);
    else if (had !== se) idx.set(slot, new Set([had, se]));
  } else if (had === se) idx.delete(slot);
  else if (had instanceof Set && had.delete(se)) {
    const [only] = had;
    if (had.size === 1 && only) idx.set(slot, only);
  }
}

/** What one batch found: files read again, and files gone. */
interface Batch {
  changed: string[];
  removed: string[];
}

export class LiveCatalog {
  /** The snapshot returned last, and its entries by file and key, bad files, and skipped duplicates by key. */
  private snap: CatalogSnapshot | undefined;
  private byFile = new Map<string, StoredEntry>();
  private byKey = new Map<string, StoredEntry>();
  private bad = new Map<string, BadFile>();
  private dups = new Map<string, Set<string>>();
  /** Live entries by project and duplicate hash, so a write does not scan every entry (built on first use). */
  private dupIndex: DupIndex | undefined;

  constructor(
    private readonly root: string,
    private readonly recent: RecentEntries | undefined,
  ) {}

  /** Takes the maps from a snapshot this did not return. */
  private reset(snap: CatalogSnapshot): void {
    this.byKey = new Map(snap.entries.map((se) => [se.key, se]));
    this.dups = new Map();
    for (const rel of snap.duplicates ?? []) this.dupsOf(keyOfFile(rel)).add(rel);
    this.byFile = new Map(snap.entries.map((se) => [se.file, se]));
    this.bad = new Map(snap.bad.map((b) => [b.file, b]));
    this.dupIndex = undefined;
  }

  private dupsOf(key: string): Set<string> {
    let set = this.dups.get(key);
    if (!set) this.dups.set(key, (set = new Set()));
    return set;
  }

  private loseDup(key: string, rel: string): void {
    const set = this.dups.get(key);
    if (set?.delete(rel) && set.size === 0) this.dups.delete(key);
  }

  /** The entry of `key` leaves (its file changed or went): an earlier-skipped duplicate may take over. */
  private release(key: string, batch: Batch): void {
    const { byFile, byKey, bad } = this;
    byKey.delete(key);
    const set = this.dups.get(key);
    if (!set) return;
    for (const rel of [...set].sort()) {
      set.delete(rel);
      bad.delete(rel);
      const r = this.readStored(rel);
      if (r instanceof StoredEntry) {
        byFile.set(rel, r);
        byKey.set(key, r);
        batch.changed.push(rel);
        break;
      }
      if (r) bad.set(rel, r);
      else batch.removed.push(rel);
    }
    if (set.size === 0) this.dups.delete(key);
    else for (const rel of set) bad.set(rel, duplicateProblem(rel, byKey.get(key)?.file ?? rel));
  }

  /** `se` claims its key: the file that sorts first keeps it, the other is skipped as a duplicate. */
  private claim(se: StoredEntry, batch: Batch): void {
    const { byFile, byKey, bad } = this;
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
    const set = this.dupsOf(se.key);
    set.add(skip.file);
    bad.set(skip.file, duplicateProblem(skip.file, keep.file));
    if (skip === holder) {
      batch.changed.push(holder.file);
      for (const rel of set) if (rel !== skip.file) bad.set(rel, duplicateProblem(rel, keep.file));
    }
  }

  private findDuplicate(project: string, dup: string): string | undefined {
    if (!this.dupIndex) {
      this.dupIndex = new Map();
      for (const se of this.byKey.values()) indexDup(this.dupIndex, se, true);
    }
    const found = this.dupIndex.get(`${project}\0${dup}`);
    if (!found) return undefined;
    return found instanceof Set ? found.values().next().value?.meta.id : found.meta.id;
  }

  /** After a batch: each touched key with the entry that holds it now (null: none), the duplicate lookup kept in step. */
  private settle(before: Map<string, StoredEntry | undefined>): Map<string, StoredEntry | null> {
    const touched = new Map<string, StoredEntry | null>();
    for (const [key, was] of before) {
      const now = this.byKey.get(key);
      touched.set(key, now ?? null);
      if (this.dupIndex && was !== now) {
        if (was) indexDup(this.dupIndex, was, false);
        if (now) indexDup(this.dupIndex, now, true);
      }
    }
    return touched;
  }

  /**
   * Re-reads only `files` (relative paths; others than entry files ignored) on top of `prev`, the
   * snapshot this returned last (else the maps are rebuilt from it). The cache file is left to the
   * next full refresh.
   */
  refreshPaths(prev: CatalogSnapshot, files: Iterable<string>): CatalogSnapshot {
    if (this.snap !== prev) this.reset(prev);
    const { byFile, byKey, bad } = this;
    const batch: Batch = { changed: [], removed: [] };
    /** The entry each touched key had before this batch. */
    const before = new Map<string, StoredEntry | undefined>();
    const viaLink = this.linkTest();
    for (const rel of new Set(files)) {
      const where = entryPath(rel);
      if (!where) continue;
      const key = `${where.project}/${where.id}`;
      const projectDir = `${MEMORY_DIR}/${where.project}`;
      let st: Stats | undefined;
      try {
        st = viaLink(projectDir) || viaLink(`${projectDir}/${where.section}`) ? undefined : lstatSync(join(this.root, rel));
      } catch {
        st = undefined;
      }
      const old = byFile.get(rel);
      if (st?.isFile() && old && old.stamp === stampOf(st)) continue;
      // The file is no longer what it was: it gives up its key (or its place among the duplicates).
      if (!before.has(key)) before.set(key, byKey.get(key));
      if (old) {
        byFile.delete(rel);
        this.release(key, batch);
      } else this.loseDup(key, rel);
      const wasBad = bad.delete(rel);
      if (!st?.isFile()) {
        if (old || wasBad) batch.removed.push(rel);
        if (st?.isSymbolicLink()) bad.set(rel, { file: rel, problems: [{ path: rel, message: 'is a symbolic link; entry files must be regular files' }] });
        continue;
      }
      const r = this.readStored(rel, st);
      batch.changed.push(rel);
      if (r instanceof StoredEntry) this.claim(r, batch);
      else if (r) bad.set(rel, r);
    }
    const duplicates = [...this.dups.values()].flatMap((set) => [...set]);
    const snap: CatalogSnapshot = {
      entries: [...byFile.values()],
      bad: [...bad.values()],
      changed: [...new Set(batch.changed)],
      removed: [...new Set(batch.removed)],
      touched: this.settle(before),
      ...(duplicates.length ? { duplicates } : {}),
      byKey,
      findDuplicate: (project, dup) => this.findDuplicate(project, dup),
    };
    this.snap = snap;
    return snap;
  }

  /** Whether a folder is a link: files below a linked project or section are not read (the full refresh reports it). */
  private linkTest(): (dir: string) => boolean {
    const linked = new Map<string, boolean>();
    return (dir) => {
      let v = linked.get(dir);
      if (v === undefined) linked.set(dir, (v = lstatSync(join(this.root, dir), { throwIfNoEntry: false })?.isSymbolicLink() === true));
      return v;
    };
  }

  /** Reads and validates one entry file: its StoredEntry, why it cannot be used, or undefined when it is gone. */
  private readStored(rel: string, st?: Stats): StoredEntry | BadFile | undefined {
    const where = entryPath(rel);
    if (!where) return undefined;
    if (!st) {
      try {
        st = lstatSync(join(this.root, rel));
      } catch {
        return undefined;
      }
      if (!st.isFile()) return undefined;
    }
    const r = readEntryFile(join(this.root, rel), rel, where.section, where.id);
    if (r.entry) return new StoredEntry(this.root, where.project, rel, stampOf(st), entryMeta(r.entry), r.entry, this.recent);
    return { file: rel, problems: r.problems ?? [] };
  }
}

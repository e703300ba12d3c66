/**
 * The daemon's catalog: a batch re-reads only its files, and each key it touched is settled among
 * that id's files in the sections alone (the only ones that can share it; the first path keeps it).
 */
import { lstatSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { entryMeta } from '../core/meta.js';
import { stampOf, tryOr } from './fsutil.js';
import { MEMORY_DIR } from './root.js';
import { linkProblem, SECTIONS_IN_PATH_ORDER } from './catalog-scan.js';
import { duplicateProblem, entryPath, readEntryFile, StoredEntry, type BadFile, type CatalogSnapshot, type RecentEntries } from './stored-entry.js';

export class LiveCatalog {
  private snap: CatalogSnapshot | undefined;
  /** Every entry file read, usable or not: a skipped duplicate keeps its entry, to take its key back. */
  private files = new Map<string, StoredEntry | BadFile>();
  private byKey = new Map<string, StoredEntry>();
  /** Each skipped duplicate, with the file that keeps its key. */
  private dups = new Map<string, string>();
  /** Live entries by project and duplicate hash, so a write does not scan every entry. */
  private dupIndex: Map<string, StoredEntry[]> | undefined;

  constructor(
    private readonly root: string,
    private readonly recent: RecentEntries | undefined,
  ) {}

  /** Takes the maps from a snapshot this did not return. */
  private reset(snap: CatalogSnapshot): void {
    const skipped = new Set(snap.duplicates);
    this.files = new Map(snap.entries.map((se) => [se.file, se]));
    for (const b of snap.bad) if (!skipped.has(b.file)) this.files.set(b.file, b);
    this.byKey = new Map(snap.entries.map((se) => [se.key, se]));
    this.dups = new Map();
    for (const rel of skipped) {
      const r = this.readStored(rel);
      if (r) this.files.set(rel, r);
      if (r instanceof StoredEntry) this.dups.set(rel, this.byKey.get(r.key)?.file ?? rel);
    }
    this.dupIndex = undefined;
  }

  private indexDup(se: StoredEntry | undefined, add: boolean): void {
    if (!this.dupIndex || !se || se.meta.status === 'superseded') return;
    const slot = `${se.project}\0${se.meta.dup}`;
    const list = this.dupIndex.get(slot) ?? [];
    this.dupIndex.set(slot, add ? [...list, se] : list.filter((o) => o !== se));
  }

  private findDuplicate(project: string, dup: string): string | undefined {
    if (!this.dupIndex) {
      this.dupIndex = new Map();
      for (const se of this.byKey.values()) this.indexDup(se, true);
    }
    return this.dupIndex.get(`${project}\0${dup}`)?.[0]?.meta.id;
  }

  /** Re-reads only `files` (relative; not entry files: ignored) on top of `prev` (if this did not return it, the maps are rebuilt from it). */
  refreshPaths(prev: CatalogSnapshot, files: Iterable<string>): CatalogSnapshot {
    if (this.snap !== prev) this.reset(prev);
    const changed: string[] = [];
    const removed: string[] = [];
    const keys = new Map<string, [project: string, id: string]>();
    const viaLink = this.linkTest();
    for (const rel of new Set(files)) {
      const where = entryPath(rel);
      if (!where) continue;
      const projectDir = `${MEMORY_DIR}/${where.project}`;
      const st = tryOr(() => (viaLink(projectDir) || viaLink(`${projectDir}/${where.section}`) ? undefined : lstatSync(join(this.root, rel))), undefined);
      const old = this.files.get(rel);
      // (A skipped duplicate is read again: the one a reset read may be newer than its batch.)
      if (st?.isFile() && old instanceof StoredEntry && old.stamp === stampOf(st) && !this.dups.has(rel)) continue;
      keys.set(`${where.project}/${where.id}`, [where.project, where.id]);
      this.files.delete(rel);
      if (st?.isFile()) {
        changed.push(rel);
        const r = this.readStored(rel, st);
        if (r) this.files.set(rel, r);
        continue;
      }
      if (old) removed.push(rel);
      if (st?.isSymbolicLink()) this.files.set(rel, linkProblem(rel, 'entry files must be regular files'));
    }
    const touched = new Map<string, StoredEntry | null>();
    for (const [key, [project, id]] of keys) {
      const was = this.byKey.get(key);
      let holder: StoredEntry | undefined;
      for (const section of SECTIONS_IN_PATH_ORDER) {
        const rel = `${MEMORY_DIR}/${project}/${section}/${id}.json`;
        const f = this.files.get(rel);
        this.dups.delete(rel);
        if (!(f instanceof StoredEntry)) continue;
        if (holder) this.dups.set(rel, holder.file);
        else holder = f;
      }
      if (holder) this.byKey.set(key, holder);
      else this.byKey.delete(key);
      if (was !== holder) {
        this.indexDup(was, false);
        this.indexDup(holder, true);
      }
      touched.set(key, holder ?? null);
    }
    const bad: BadFile[] = [];
    for (const f of this.files.values()) if (!(f instanceof StoredEntry)) bad.push(f);
    for (const [rel, holder] of this.dups) bad.push(duplicateProblem(rel, holder));
    return (this.snap = {
      entries: [...this.byKey.values()],
      bad,
      changed,
      removed,
      touched,
      ...(this.dups.size ? { duplicates: [...this.dups.keys()] } : {}),
      byKey: this.byKey,
      findDuplicate: (project, dup) => this.findDuplicate(project, dup),
    });
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

  /** One entry file: its StoredEntry, why it cannot be used, or undefined when it is gone. */
  private readStored(rel: string, st?: Stats): StoredEntry | BadFile | undefined {
    const where = entryPath(rel);
    if (!where) return undefined;
    st ??= tryOr(() => lstatSync(join(this.root, rel)), undefined);
    if (!st?.isFile()) return undefined;
    const r = readEntryFile(join(this.root, rel), rel, where.section, where.id);
    if (r.entry) return new StoredEntry(this.root, where.project, rel, stampOf(st), entryMeta(r.entry), r.entry, this.recent);
    return { file: rel, problems: r.problems ?? [] };
  }
}

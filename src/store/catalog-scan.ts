/**
 * A full pass over the entry files against the cache as loaded: a folder unchanged since its last
 * listing is not listed, a file git's view vouches for not stat'ed; the rest get an lstat (a link is
 * reported, never followed) and, if the stamp moved, a read (a delta line).
 */
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SECTIONS, type Section } from '../core/constants.js';
import { entryMeta } from '../core/meta.js';
import type { MemoryEntry } from '../core/schema.js';
import { DIR_SETTLE_MS, type CatalogFile, type DirRecord } from './catalog-cache.js';
import type { FileState } from './catalog-delta.js';
import { MEMORY_DIR } from './root.js';
import { tryOr } from './fsutil.js';
import { metaRow } from './catalog-columns.js';
import { readEntryFile, type BadFile } from './stored-entry.js';
import { lowerBoundText } from './texts.js';
import type { Workspace } from './workspace.js';

/** Folder names in the order of the paths under them (`a-b/` sorts before `a/`). */
const inPathOrder = (names: readonly string[]): string[] =>
  names
    .map((n) => `${n}/`)
    .sort()
    .map((n) => n.slice(0, -1));

export const SECTIONS_IN_PATH_ORDER = inPathOrder(SECTIONS) as Section[];

export const linkProblem = (rel: string, what: string): BadFile => ({ file: rel, problems: [{ path: rel, message: `is a symbolic link; ${what}` }] });

export class CatalogScan {
  /** Each file read again (its new state) or gone (null), by path. */
  readonly changes = new Map<string, FileState | null>();
  readonly changed: string[] = [];
  readonly removed: string[] = [];
  /** The entries read again, whole (the cache holds only their metadata). */
  readonly read = new Map<string, MemoryEntry>();
  /** Every folder's listing still valid, and those recorded by this pass. */
  readonly dirs: Record<string, DirRecord> = {};
  readonly newDirs: [string, DirRecord][] = [];
  /** Project and section folders that are links: reported, never followed. */
  readonly links: BadFile[] = [];
  /** Which of the cache's files were found. */
  private readonly kept: Uint8Array;

  constructor(
    private readonly ws: Workspace,
    private readonly cache: CatalogFile,
    private readonly clean: Uint8Array | undefined,
    private readonly listedAt: number,
    /** How many entries read it keeps (the last ones); none in a long-lived process (StoredEntry.readOnce says why). */
    private readonly keepRead = Infinity,
  ) {
    this.kept = new Uint8Array(cache.paths.length);
  }

  /** Walks every section folder of every project, in the cache's order. */
  run(): this {
    for (const project of inPathOrder(this.ws.listProjects())) {
      const pdir = this.ws.projectDir(project);
      for (const section of SECTIONS_IN_PATH_ORDER) this.folder(project, section, join(pdir, section));
    }
    for (const p of this.ws.linkedProjects)
      this.links.push(linkProblem(`${MEMORY_DIR}/${p}`, 'project folders must be real folders in the repository (not followed)'));
    this.kept.forEach((k, i) => {
      if (k) return;
      const rel = this.cache.paths.get(i);
      this.changes.set(rel, null);
      this.removed.push(rel);
    });
    return this;
  }

  private folder(project: string, section: Section, sdir: string): void {
    const cache = this.cache;
    const dirRel = `${MEMORY_DIR}/${project}/${section}`;
    const prefix = `${dirRel}/`;
    // The cached files of this folder: one run of the sorted list ('0' follows '/').
    const lo = lowerBoundText(cache.paths, prefix);
    const hi = Math.max(lo, lowerBoundText(cache.paths, `${dirRel}0`));
    const dst = lstatSync(sdir, { throwIfNoEntry: false });
    // A linked section folder could point anywhere: reported, never listed (its cached files go).
    if (dst?.isSymbolicLink()) {
      this.links.push(linkProblem(dirRel, 'section folders must be real folders in the repository (not followed)'));
      return;
    }
    const rec = cache.dirs[dirRel];
    if (dst?.isDirectory() && rec && rec[0] === dst.ctimeMs && rec[1] === dst.ino && rec[0] + DIR_SETTLE_MS < rec[2]) {
      this.dirs[dirRel] = rec;
      for (let i = lo; i < hi; i++) {
        if (this.clean?.[i] === 1)
          this.kept[i] = 1; // git vouches for it
        else this.visit(section, sdir, cache.paths.get(i), i);
      }
      return;
    }
    const names = tryOr(() => readdirSync(sdir), null);
    if (!names) return;
    if (dst?.isDirectory() && dst.ctimeMs + DIR_SETTLE_MS < this.listedAt) {
      const r: DirRecord = [dst.ctimeMs, dst.ino, this.listedAt];
      this.dirs[dirRel] = r;
      if (!rec || rec[0] !== r[0] || rec[1] !== r[1]) this.newDirs.push([dirRel, r]);
    }
    // Beside the cached run, both in order.
    let c = lo;
    let at = c < hi ? cache.paths.get(c) : undefined; // each cached path made once
    for (const name of names.filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort()) {
      const rel = prefix + name;
      while (at !== undefined && at < rel) at = ++c < hi ? cache.paths.get(c) : undefined;
      this.visit(section, sdir, rel, at === rel ? c : undefined);
    }
  }

  /** One file: `i` its position in the cache, if it has one. */
  private visit(section: Section, sdir: string, rel: string, i: number | undefined): void {
    const cache = this.cache;
    if (i !== undefined && this.clean?.[i] === 1) return void (this.kept[i] = 1); // git vouches for it
    const name = rel.slice(rel.lastIndexOf('/') + 1);
    const abs = `${sdir}/${name}`; // sdir is normalized; join() costs a little on every file
    const st = lstatSync(abs, { throwIfNoEntry: false });
    if (st && !st.isFile() && !st.isSymbolicLink()) return;
    if (i !== undefined && (!st || (cache.st[3 * i] === st.size && cache.st[3 * i + 1] === st.mtimeMs && cache.st[3 * i + 2] === st.ctimeMs))) {
      this.kept[i] = 1; // unchanged: its stamp is the cached one
      return;
    }
    if (!st) return; // gone since the listing
    if (i !== undefined) this.kept[i] = 1;
    // A link could point anywhere: kept as a bad file, so a folder not listed again still reports it.
    const r = st.isSymbolicLink()
      ? { ...linkProblem(rel, 'entry files must be regular files'), blob: '' }
      : readEntryFile(abs, rel, section, name.slice(0, -'.json'.length), true);
    if (r.entry && this.keepRead) this.read.set(rel, r.entry);
    if (this.read.size > this.keepRead) this.read.delete(this.read.keys().next().value!);
    const row = r.entry ? JSON.stringify(metaRow(entryMeta(r.entry))) : '';
    this.changes.set(rel, [st.size, st.mtimeMs, st.ctimeMs, row, r.entry ? null : (r.problems ?? []), r.blob ?? '']);
    this.changed.push(rel);
  }
}

/**
 * A full pass over the entry files against the catalog cache as loaded (Catalog.refresh): which
 * files are the cached ones, which changed and were read again, which went. A section folder
 * whose ctime and inode are those of its last listing (see DirRecord) is not listed again, and a
 * file git's view vouches for (git-view.ts) is not stat'ed; everything else gets an lstat (a link
 * is reported, never followed) and, if its stamp moved, a read.
 *
 * While the files found are the cache's own, in order, they are only counted (`same`); the first
 * difference copies that run into `next`, built from then on. Unchanged, nothing is copied.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SECTIONS, type Section } from '../core/constants.js';
import { entryMeta } from '../core/meta.js';
import { blobAt, DIR_SETTLE_MS, type CatalogContent, type CatalogFile, type DirRecord } from './catalog-cache.js';
import { cachedEntry } from './cached-entries.js';
import { stampOf } from './fsutil.js';
import { MEMORY_DIR } from './root.js';
import { metaRow, readEntryFile, StoredEntry, type BadFile, type RecentEntries } from './stored-entry.js';
import { lowerBoundText } from './texts.js';
import type { Workspace } from './workspace.js';

/** Folder names in the order of the paths under them (`a-b/` sorts before `a/`). */
export function inPathOrder(names: readonly string[]): string[] {
  return names
    .map((n) => `${n}/`)
    .sort()
    .map((n) => n.slice(0, -1));
}

export const SECTIONS_IN_PATH_ORDER = inPathOrder(SECTIONS) as Section[];

/** The project of an entry file's path (`ai-memory/<project>/...`). */
function projectOf(rel: string): string {
  const from = MEMORY_DIR.length + 1;
  return rel.slice(from, rel.indexOf('/', from));
}

const linkProblem = (rel: string, what: string): BadFile => ({
  file: rel,
  problems: [{ path: rel, message: `is a symbolic link; ${what}` }],
});

export class CatalogScan {
  /** What to save when anything differs: files, their numbers, blob ids, rows, folders. */
  readonly next: CatalogContent;
  /** Files found so far that are cache.paths[0 .. same), unchanged. */
  same = 0;
  private building: boolean;
  /** Folder listings recorded by this pass (for the delta). */
  readonly newDirs: [string, DirRecord][] = [];
  /** Which of the cache's files were found. */
  private readonly kept: Uint8Array | undefined;
  readonly entries: StoredEntry[] = [];
  readonly bad: BadFile[] = [];
  readonly changed: string[] = [];
  /** Where in `next` each of `changed` is. */
  readonly changedAt: number[] = [];

  constructor(
    private readonly ws: Workspace,
    private readonly cache: CatalogFile | null,
    private readonly clean: Uint8Array | undefined,
    private readonly listedAt: number,
    private readonly recent: RecentEntries | undefined,
  ) {
    this.next = { files: [], st: [], oids: [], lines: [], bad: {}, dirs: {} };
    this.building = !cache;
    this.kept = cache ? new Uint8Array(cache.paths.length) : undefined;
  }

  /** Walks every section folder of every project, in the cache's order (paths sorted), so that an unchanged store is one run of it. */
  run(): this {
    for (const project of inPathOrder(this.ws.listProjects())) {
      const pdir = this.ws.projectDir(project);
      for (const section of SECTIONS_IN_PATH_ORDER) this.folder(project, section, join(pdir, section));
    }
    for (const p of this.ws.linkedProjects)
      this.bad.push(linkProblem(`${MEMORY_DIR}/${p}`, 'project folders must be real folders in the repository (not followed)'));
    return this;
  }

  /** The cache's files that were not found again. */
  removed(): string[] {
    const out: string[] = [];
    this.kept?.forEach((k, i) => {
      if (!k) out.push(this.cache!.paths.get(i));
    });
    return out;
  }

  /** Whether every cached file was found unchanged: the cache as loaded is what was found. */
  get unchanged(): boolean {
    return !this.building && this.cache !== null && this.same === this.cache.paths.length;
  }

  private folder(project: string, section: Section, sdir: string): void {
    const cache = this.cache;
    const dirRel = `${MEMORY_DIR}/${project}/${section}`;
    const prefix = `${dirRel}/`;
    // The cached files of this folder: one run of the sorted list ('0' is the character after '/').
    const lo = cache ? lowerBoundText(cache.paths, prefix) : 0;
    const hi = cache ? Math.max(lo, lowerBoundText(cache.paths, `${dirRel}0`)) : 0;
    const dst = lstatSync(sdir, { throwIfNoEntry: false });
    // A linked section folder could point anywhere: reported, never listed (its cached files go).
    if (dst?.isSymbolicLink()) {
      this.bad.push(linkProblem(dirRel, 'section folders must be real folders in the repository (not followed)'));
      return;
    }
    const rec = cache?.dirs[dirRel];
    if (cache && dst?.isDirectory() && rec && rec[0] === dst.ctimeMs && rec[1] === dst.ino && rec[0] + DIR_SETTLE_MS < rec[2]) {
      // Still the names of its last listing: the cached ones.
      this.next.dirs[dirRel] = rec;
      for (let i = lo; i < hi; i++) {
        if (this.clean?.[i] === 1 && !this.building && i === this.same) {
          // git vouches for it and nothing differed so far: counted, nothing made.
          this.kept![i] = 1;
          this.same++;
          const problems = cache.bad[i];
          if (problems) this.bad.push({ file: cache.paths.get(i), problems });
          continue;
        }
        const rel = cache.paths.get(i);
        this.visit(project, section, sdir, rel, rel.slice(prefix.length), i);
      }
      return;
    }
    let names: string[];
    try {
      names = readdirSync(sdir);
    } catch {
      return;
    }
    if (dst?.isDirectory() && dst.ctimeMs + DIR_SETTLE_MS < this.listedAt) {
      const r: DirRecord = [dst.ctimeMs, dst.ino, this.listedAt];
      this.next.dirs[dirRel] = r;
      if (!rec || rec[0] !== r[0] || rec[1] !== r[1]) this.newDirs.push([dirRel, r]);
    }
    // Beside the cached run, both in order.
    let c = lo;
    for (const name of names.filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort()) {
      const rel = prefix + name;
      while (c < hi && cache!.paths.get(c) < rel) c++;
      this.visit(project, section, sdir, rel, name, c < hi && cache!.paths.equals(c, rel, 0, rel.length) ? c : undefined);
    }
  }

  /** One file: `i` its position in the cache, if it has one. */
  private visit(project: string, section: Section, sdir: string, rel: string, name: string, i: number | undefined): void {
    const cache = this.cache;
    const abs = `${sdir}/${name}`; // sdir is normalized; join() costs a little on every file
    // lstat, not stat: a link is reported, never followed.
    const st = i !== undefined && this.clean?.[i] === 1 ? undefined : lstatSync(abs, { throwIfNoEntry: false });
    if (st && !st.isFile() && !st.isSymbolicLink()) return;
    if (cache && i !== undefined && (!st || (cache.st[3 * i] === st.size && cache.st[3 * i + 1] === st.mtimeMs && cache.st[3 * i + 2] === st.ctimeMs))) {
      // Unchanged (git vouched for it, or its stamp is the cached one): the cached row.
      this.kept![i] = 1;
      if (!this.building && i === this.same)
        this.same++; // its entry is made later, if at all (see build)
      else {
        this.build();
        this.copyCached(i);
      }
      const problems = cache.bad[i];
      if (problems) this.bad.push({ file: rel, problems });
      else if (this.building) this.entries.push(this.fromCache(i));
      return;
    }
    if (!st) return; // gone since the listing
    if (i !== undefined) this.kept![i] = 1;
    this.build();
    const next = this.next;
    const at = next.files.length;
    next.files.push(rel);
    next.st.push(st.size, st.mtimeMs, st.ctimeMs);
    // A link could point anywhere: kept as a bad file, so a folder not listed again still reports it.
    const r = st.isSymbolicLink()
      ? { ...linkProblem(rel, 'entry files must be regular files'), blob: '' }
      : readEntryFile(abs, rel, section, name.slice(0, -'.json'.length), true);
    next.oids.push(r.blob ?? '');
    this.changed.push(rel);
    this.changedAt.push(at);
    if (r.entry) {
      const meta = entryMeta(r.entry);
      const se = new StoredEntry(this.ws.root, project, rel, stampOf(st), meta, r.entry, this.recent);
      next.lines.push(JSON.stringify(metaRow(meta)));
      this.entries.push(se);
    } else {
      const problems = r.problems ?? [];
      next.lines.push('');
      next.bad[at] = problems;
      this.bad.push({ file: rel, problems });
    }
  }

  /** Cached file `i`, copied into `next`. */
  private copyCached(i: number): void {
    const cache = this.cache!;
    const next = this.next;
    const at = next.files.length;
    next.files.push(cache.paths.get(i));
    next.st.push(...cache.st.subarray(3 * i, 3 * i + 3));
    next.oids.push(blobAt(cache, i));
    next.lines.push(cache.lines.get(i));
    const problems = cache.bad[i];
    if (problems) next.bad[at] = problems;
  }

  /** The entry of cached file `i`. */
  private fromCache(i: number): StoredEntry {
    const rel = this.cache!.paths.get(i);
    return cachedEntry(this.cache!, i, projectOf(rel), this.ws.root, this.recent, rel);
  }

  /** Starts building `next` (once): the unchanged run so far is copied and its entries made, in order. */
  build(): void {
    if (this.building) return;
    this.building = true;
    for (let i = 0; i < this.same; i++) {
      this.copyCached(i);
      if (!this.cache!.bad[i]) this.entries.push(this.fromCache(i));
    }
  }
}

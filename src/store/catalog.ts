/**
 * The catalog: every entry file of the workspace, validated once and cached under
 * `.bass-agents/cache/catalog.json` as metadata (no summary or content) keyed by (size, mtime,
 * ctime). A command stats the files, re-reads only those that changed, and saves the cache when
 * anything moved; full entries are read from their files only when asked for (`entry`). The
 * files are the truth: a missing or corrupt cache is rebuilt, never fatal, and deleting
 * `.bass-agents/` loses nothing.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, lstatSync, readdirSync, readFileSync, rmSync, type Dirent, type Stats } from 'node:fs';
import { join } from 'node:path';
import { SECTIONS, type Section } from '../core/constants.js';
import { ValidationError, type Problem } from '../core/errors.js';
import { entryMeta, type EntryMeta } from '../core/meta.js';
import type { MemoryEntry } from '../core/schema.js';
import { lazy } from '../lazy.js';
import { stampOf, writeFileAtomic } from './fsutil.js';
import type { Workspace } from './workspace.js';

const validation = lazy<typeof import('../core/validate.js')>('./core/validate.js');

const CATALOG_VERSION = 7;
/**
 * Small changes (a write, an edit) are appended to `catalog.delta` instead of rewriting the whole
 * cache (3.6 MB at 10K entries, 36 MB at 100K): up to this many files at once, and until the
 * delta holds this many lines or a twentieth of the files, whichever is more.
 */
const DELTA_BATCH_MAX = 256;
const DELTA_LINES_MIN = 1000;

/**
 * The parts of an entry file's path relative to the root (`ai-memory/<project>/<section>/<id>.json`),
 * or null for any other path (a folder, config.yaml, a dot file, an unknown section).
 */
export function entryPath(rel: string): { project: string; section: Section; id: string } | null {
  const m = /^ai-memory\/([^/]+)\/([^/]+)\/([^/]+)\.json$/.exec(rel);
  if (!m || m[3].startsWith('.') || !(SECTIONS as readonly string[]).includes(m[2])) return null;
  return { project: m[1], section: m[2] as Section, id: m[3] };
}

/** `project/id` of an entry file path (`ai-memory/<project>/<section>/<id>.json`): the key of the index and of local usage. */
export function keyOfFile(rel: string, project = rel.split('/')[1]): string {
  return `${project}/${rel.slice(rel.lastIndexOf('/') + 1, -'.json'.length)}`;
}

/** One entry file: where it is, its stamp, its metadata, and the full entry on demand. */
export class StoredEntry {
  readonly project: string;
  /** Path relative to the workspace root. */
  readonly file: string;
  /** size:mtime:ctime of the file, which changes whenever the file does. */
  readonly stamp: string;
  /** `project/id`: the key of the index and of local usage. */
  readonly key: string;
  private root: string;
  /** The metadata, or its catalog line (a JSON row) until first used. */
  private metaSrc: EntryMeta | string;
  private full: MemoryEntry | undefined;

  constructor(root: string, project: string, file: string, stamp: string, meta: EntryMeta | string, full?: MemoryEntry) {
    this.root = root;
    this.project = project;
    this.file = file;
    this.stamp = stamp;
    this.key = keyOfFile(file, project);
    this.metaSrc = meta;
    this.full = full;
  }

  /** Filter, ranking and statistics fields, parsed from the cached row on first use. */
  get meta(): EntryMeta {
    if (typeof this.metaSrc === 'string') this.metaSrc = metaFromRow(JSON.parse(this.metaSrc) as unknown[]);
    return this.metaSrc;
  }

  /** Whether this entry's metadata might contain `text`: a substring test on its unparsed catalog row, else true. */
  mentions(text: string): boolean {
    return typeof this.metaSrc === 'string' ? this.metaSrc.includes(text) : true;
  }

  /** The catalog line of this entry's metadata (its row as JSON), without parsing it when it was never used. */
  metaLine(): string {
    return typeof this.metaSrc === 'string' ? this.metaSrc : JSON.stringify(metaRow(this.metaSrc));
  }

  /** The whole entry, read from its file the first time (it was validated when its stamp was cached). */
  get entry(): MemoryEntry {
    if (this.full) return this.full;
    const abs = join(this.root, this.file);
    let parsed: MemoryEntry | undefined;
    try {
      parsed = JSON.parse(readFileSync(abs, 'utf8')) as MemoryEntry;
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.id !== this.meta.id || parsed.updated_at !== this.meta.updated_at) {
      // The file changed after the catalog was read: validate it again rather than trust it.
      const r = readEntryFile(abs, this.file, this.meta.section, this.meta.id);
      if (!r.entry) throw new ValidationError(r.problems ?? [], 'entry file');
      parsed = r.entry;
    }
    this.full = parsed;
    return parsed;
  }
}

/** A file that could not be used, with why. */
export interface BadFile {
  file: string;
  problems: Problem[];
}

/**
 * On disk the catalog is a header line (file names, stat numbers and stamps as parallel arrays,
 * the problems of bad files) followed by one JSON row per file: that file's metadata as an array,
 * not an object. A one-shot command parses the header (3 ms at 10K entries) and only the rows it
 * uses; parsing every row as keyed objects up front cost 40 ms.
 */
const META_KEYS = [
  'id',
  'section',
  'kind',
  'subject',
  'scope',
  'tags',
  'confidence',
  'evidence',
  'status',
  'superseded_by',
  'related_entries',
  'valid_from',
  'valid_to',
  'review_interval',
  'created_by',
  'created_at',
  'updated_at',
  'lifecycle',
  'dup',
  'importance0',
] as const satisfies readonly (keyof EntryMeta)[];

interface CatalogHeader {
  v: number;
  /** A hash of the rest: the base that lines of `catalog.delta` name (others are ignored). */
  id: string;
  files: string[];
  /** size, mtimeMs, ctimeMs of files[i] at 3i .. 3i+2. */
  st: number[];
  stamps: string[];
  /** Problems of the files that could not be used, by position. */
  bad: Record<string, Problem[]>;
}

interface CatalogFile {
  id: string;
  /** Lines of `catalog.delta` applied on top of the base. */
  deltaLines: number;
  /** Position of each file in the arrays below (a file the delta removed keeps a dead slot). */
  pos: Map<string, number>;
  st: number[];
  stamps: string[];
  /** The metadata row of each usable file (a JSON array), '' for a bad one. */
  lines: string[];
  bad: Record<string, Problem[]>;
}

function metaRow(m: EntryMeta): unknown[] {
  return META_KEYS.map((k) => (k === 'evidence' ? m.evidence.map((e) => e.type) : (m[k] ?? null)));
}

function metaFromRow(v: unknown[]): EntryMeta {
  // One literal with every key, in META_KEYS order, so V8 gives all metas one fast shape.
  const m = {
    id: v[0],
    section: v[1],
    kind: v[2],
    subject: v[3],
    scope: v[4],
    tags: v[5],
    confidence: v[6],
    evidence: (v[7] as string[]).map((type) => ({ type })),
    status: v[8],
    superseded_by: v[9],
    related_entries: v[10],
    valid_from: v[11],
    valid_to: v[12],
    review_interval: v[13] ?? undefined,
    created_by: v[14],
    created_at: v[15],
    updated_at: v[16],
    lifecycle: v[17] ?? undefined,
    dup: v[18],
    importance0: v[19],
  };
  return m as unknown as EntryMeta;
}

export interface CatalogSnapshot {
  /** Usable entries, one per key (`project/id`). */
  entries: StoredEntry[];
  bad: BadFile[];
  /** Files (relative) whose content changed since the cache was last saved, and removed ones. */
  changed: string[];
  removed: string[];
  /**
   * From `refreshPaths` only: every key a changed or removed file has, with the entry that holds
   * it now (null: none does). What the index needs to follow a batch without a pass over all.
   */
  touched?: Map<string, StoredEntry | null>;
  /** Files skipped because an earlier-sorting file of the project has the same id (also in `bad`). */
  duplicates?: string[];
}

/**
 * Two files of one project with the same id (a copied file, a move merged with an edit): the
 * file whose path sorts first keeps the id, the others are reported and skipped, so the id means
 * one entry everywhere (index, usage, links). Not a property of the file alone, so never cached.
 */
function duplicateProblem(rel: string, holder: string): BadFile {
  const id = rel.slice(rel.lastIndexOf('/') + 1, -'.json'.length);
  return {
    file: rel,
    problems: [{ path: rel, message: `has id ${id}, which ${holder} already has; ids must be unique within a project (this file is skipped)` }],
  };
}

/** Moves every entry whose key an earlier-sorting file also has to `bad` (see duplicateProblem). */
function dropDuplicates(entries: StoredEntry[], bad: BadFile[]): { entries: StoredEntry[]; duplicates?: string[] } {
  const holder = new Map<string, StoredEntry>();
  let dups: StoredEntry[] | undefined;
  for (const se of entries) {
    const other = holder.get(se.key);
    if (!other) holder.set(se.key, se);
    else {
      (dups ??= []).push(other.file < se.file ? se : other);
      if (se.file < other.file) holder.set(se.key, se);
    }
  }
  if (!dups) return { entries };
  const skip = new Set(dups);
  for (const d of dups) bad.push(duplicateProblem(d.file, holder.get(d.key)!.file));
  return { entries: entries.filter((se) => !skip.has(se)), duplicates: dups.map((d) => d.file) };
}

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
}

/** Reads one entry file: parse, validate, and check that id and section match the file's place. */
export function readEntryFile(abs: string, rel: string, section: Section, id: string): { entry?: MemoryEntry; problems?: Problem[] } {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(abs, 'utf8'));
  } catch (err) {
    return { problems: [{ path: rel, message: `not valid JSON (${(err as Error).message})` }] };
  }
  const r = validation().validateStoredEntry(raw);
  if (!r.ok) return { problems: r.errors.map((p) => ({ path: `${rel}: ${p.path}`, message: p.message })) };
  const problems: Problem[] = [];
  if (r.value.id !== id) problems.push({ path: `${rel}: id`, message: `is ${JSON.stringify(r.value.id)} but the file is named ${id}.json` });
  if (r.value.section !== section) {
    problems.push({ path: `${rel}: section`, message: `is ${JSON.stringify(r.value.section)} but the file is in the ${section}/ folder` });
  }
  return problems.length ? { problems } : { entry: r.value };
}

export class Catalog {
  private ws: Workspace;
  private cacheFile: string;
  private live: LiveState | undefined;
  /** What the last full refresh found (the cache's contents), for `noteWritten`. */
  private found: (Omit<CatalogHeader, 'v'> & { lines: string[]; deltaLines: number }) | undefined;
  private deltaFile: string;
  /** Keep what a refresh found for `noteWritten` (a long-lived watcher-fed process does not need it). */
  private notesWrites: boolean;

  constructor(ws: Workspace, opts: { noteWrites?: boolean } = {}) {
    this.ws = ws;
    this.notesWrites = opts.noteWrites !== false;
    this.cacheFile = join(ws.localDir, 'cache', 'catalog.json');
    this.deltaFile = join(ws.localDir, 'cache', 'catalog.delta');
  }

  private load(): CatalogFile | null {
    try {
      const text = readFileSync(this.cacheFile, 'utf8');
      const nl = text.indexOf('\n');
      const h = JSON.parse(nl < 0 ? text : text.slice(0, nl)) as CatalogHeader;
      const n = h?.files?.length;
      if (
        h.v !== CATALOG_VERSION ||
        typeof h.id !== 'string' ||
        !Array.isArray(h.st) ||
        h.st.length !== 3 * n ||
        h.stamps?.length !== n ||
        typeof h.bad !== 'object'
      )
        return null;
      const lines = n === 0 ? [] : text.slice(nl + 1).split('\n');
      if (lines.length !== n) return null;
      const pos = new Map<string, number>();
      for (let i = 0; i < n; i++) pos.set(h.files[i], i);
      const file: CatalogFile = { id: h.id, deltaLines: 0, pos, st: h.st, stamps: h.stamps, lines, bad: h.bad ?? {} };
      this.applyDelta(file);
      return file;
    } catch {
      return null; // missing or corrupt: rebuilt by the caller
    }
  }

  /**
   * Applies the lines of `catalog.delta` that name this base, in order: `[id, file, size,
   * mtimeMs, ctimeMs, stamp, row, problems]` sets a file, `[id, file]` removes one. A line cut
   * short (a concurrent append) or naming another base is skipped: every use of the cache is
   * checked against the file's own stamp anyway.
   */
  private applyDelta(file: CatalogFile): void {
    let text: string;
    try {
      text = readFileSync(this.deltaFile, 'utf8');
    } catch {
      return;
    }
    for (const raw of text.split('\n')) {
      if (!raw) continue;
      let d: unknown;
      try {
        d = JSON.parse(raw);
      } catch {
        continue;
      }
      if (!Array.isArray(d) || d[0] !== file.id || typeof d[1] !== 'string') continue;
      const rel = d[1];
      file.deltaLines++;
      if (d.length === 2) {
        file.pos.delete(rel);
        continue;
      }
      const [, , size, mtime, ctime, stamp, row, problems] = d as [string, string, number, number, number, string, string, Problem[] | null];
      if (typeof size !== 'number' || typeof mtime !== 'number' || typeof ctime !== 'number' || typeof stamp !== 'string' || typeof row !== 'string') continue;
      let i = file.pos.get(rel);
      if (i === undefined) {
        i = file.stamps.length;
        file.stamps.push('');
        file.lines.push('');
        file.st.push(0, 0, 0);
        file.pos.set(rel, i);
      }
      file.st[3 * i] = size;
      file.st[3 * i + 1] = mtime;
      file.st[3 * i + 2] = ctime;
      file.stamps[i] = stamp;
      file.lines[i] = row;
      if (Array.isArray(problems)) file.bad[i] = problems;
      else delete file.bad[i];
    }
  }

  /** Appends changes to `catalog.delta` (one write: concurrent appenders do not interleave lines). */
  private appendDelta(id: string, rows: unknown[][]): boolean {
    if (!rows.length) return true;
    try {
      if (!this.ws.ensureLocal()) return false;
      appendFileSync(this.deltaFile, `${rows.map((r) => JSON.stringify([id, ...r])).join('\n')}\n`);
      return true;
    } catch {
      return false;
    }
  }

  /** Whether `count` more changes still go to the delta rather than a rewrite of the whole cache. */
  private deltaFits(count: number, deltaLines: number, files: number): boolean {
    return count <= DELTA_BATCH_MAX && deltaLines + count <= Math.max(DELTA_LINES_MIN, files / 20);
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
    for (const rel of new Set(files)) {
      const where = entryPath(rel);
      if (!where) continue;
      const key = `${where.project}/${where.id}`;
      const abs = join(this.ws.root, rel);
      let st: Stats | undefined;
      try {
        st = lstatSync(abs);
      } catch {
        st = undefined;
      }
      const old = byFile.get(rel);
      if (st?.isFile() && old && old.stamp === stampOf(st)) continue;
      // The file is no longer what it was: it gives up its key (or its place among the duplicates).
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
    for (const key of touched.keys()) touched.set(key, byKey.get(key) ?? null);
    const duplicates = [...dups.values()].flatMap((set) => [...set]);
    const snap: CatalogSnapshot = {
      entries: [...byFile.values()],
      bad: [...bad.values()],
      changed: [...new Set(changed)],
      removed: [...new Set(removed)],
      touched,
      ...(duplicates.length ? { duplicates } : {}),
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
    if (r.entry) return new StoredEntry(this.ws.root, where.project, rel, stampOf(st), entryMeta(r.entry), r.entry);
    return { file: rel, problems: r.problems ?? [] };
  }

  /** Stats every entry file, re-reads the changed ones, saves the cache if anything moved. */
  refresh(): CatalogSnapshot {
    const cache = this.load();
    // What to save (built as we go; cheap next to the stat): files in order, their numbers, stamps, rows.
    const next = { files: [] as string[], st: [] as number[], stamps: [] as string[], lines: [] as string[], bad: {} as Record<string, Problem[]> };
    let fromCache = 0;
    const entries: StoredEntry[] = [];
    const bad: BadFile[] = [];
    const changed: string[] = [];
    const changedAt: number[] = [];
    const projects = this.ws.listProjects();
    const memRel = 'ai-memory';
    const root = this.ws.root;
    for (const project of projects) {
      const pdir = this.ws.projectDir(project);
      if (!existsSync(pdir)) continue;
      for (const section of SECTIONS) {
        const sdir = join(pdir, section);
        let names: Dirent[];
        try {
          names = readdirSync(sdir, { withFileTypes: true });
        } catch {
          continue;
        }
        for (const d of names) {
          if (!d.name.endsWith('.json') || d.name.startsWith('.')) continue;
          const rel = `${memRel}/${project}/${section}/${d.name}`;
          const abs = `${sdir}/${d.name}`; // sdir is normalized; join() costs ~1 µs × 10K files
          if (d.isSymbolicLink()) {
            // A symlinked entry could point anywhere; entries are always plain files.
            const problems = [{ path: rel, message: 'is a symbolic link; entry files must be regular files' }];
            bad.push({ file: rel, problems });
            continue;
          }
          if (!d.isFile()) continue;
          // lstat (a little cheaper than stat, and the dirent said regular file): one that became a link since is skipped.
          const st = lstatSync(abs, { throwIfNoEntry: false });
          if (!st || !st.isFile()) continue;
          const at = next.files.length;
          next.files.push(rel);
          next.st.push(st.size, st.mtimeMs, st.ctimeMs);
          const i = cache?.pos.get(rel);
          if (i !== undefined) fromCache++;
          if (cache && i !== undefined && cache.st[3 * i] === st.size && cache.st[3 * i + 1] === st.mtimeMs && cache.st[3 * i + 2] === st.ctimeMs) {
            const k = cache.stamps[i];
            const line = cache.lines[i];
            next.stamps.push(k);
            next.lines.push(line);
            const problems = cache.bad[i];
            if (problems) {
              next.bad[at] = problems;
              bad.push({ file: rel, problems });
            } else {
              entries.push(new StoredEntry(root, project, rel, k, line));
            }
            continue;
          }
          const id = d.name.slice(0, -'.json'.length);
          const r = readEntryFile(abs, rel, section, id);
          const k = stampOf(st);
          next.stamps.push(k);
          changed.push(rel);
          changedAt.push(at);
          if (r.entry) {
            const se = new StoredEntry(root, project, rel, k, entryMeta(r.entry), r.entry);
            next.lines.push(se.metaLine());
            entries.push(se);
          } else {
            const problems = r.problems ?? [];
            next.lines.push('');
            next.bad[at] = problems;
            bad.push({ file: rel, problems });
          }
        }
      }
    }
    let removed: string[] = [];
    if (cache && fromCache < cache.pos.size) {
      const present = new Set(next.files);
      removed = [...cache.pos.keys()].filter((f) => !present.has(f));
    }
    const moved = changed.length + removed.length;
    let found: NonNullable<typeof this.found>;
    if (cache && moved && this.deltaFits(moved, cache.deltaLines, next.files.length)) {
      const rows: unknown[][] = changedAt.map((at) => [
        next.files[at],
        next.st[3 * at],
        next.st[3 * at + 1],
        next.st[3 * at + 2],
        next.stamps[at],
        next.lines[at],
        next.bad[at] ?? null,
      ]);
      for (const rel of removed) rows.push([rel]);
      found = this.appendDelta(cache.id, rows)
        ? { ...next, id: cache.id, deltaLines: cache.deltaLines + moved }
        : { ...next, id: this.save(next), deltaLines: 0 };
    } else if (moved || !cache) found = { ...next, id: this.save(next), deltaLines: 0 };
    else found = { ...next, id: cache.id, deltaLines: cache.deltaLines };
    if (this.notesWrites) this.found = found;
    return { ...dropDuplicates(entries, bad), bad, changed, removed };
  }

  /**
   * This process has just written (or removed) these files (paths relative to the root): put
   * their stamps and metadata into the cache now, so that the next command finds nothing changed
   * and neither re-reads them nor rewrites the cache (~250 ms for the first query after a write
   * at 100K entries). Only our own writer calls this, with entries it validated before writing;
   * files that are not entry files are ignored. A no-op in a process that has not refreshed.
   */
  noteWritten(files: string[]): void {
    const f = this.found;
    if (!f) return;
    const rows: unknown[][] = [];
    let pos: Map<string, number> | undefined;
    for (const rel of new Set(files)) {
      const where = entryPath(rel);
      if (!where) continue;
      if (!pos) {
        pos = new Map();
        for (let i = 0; i < f.files.length; i++) if (f.files[i]) pos.set(f.files[i], i);
      }
      let at = pos.get(rel);
      const st = lstatSync(join(this.ws.root, rel), { throwIfNoEntry: false });
      if (!st || !st.isFile()) {
        if (at !== undefined) {
          rows.push([rel]);
          pos.delete(rel);
          f.files[at] = ''; // a dead slot, skipped from now on
        }
        continue;
      }
      let entry: MemoryEntry;
      try {
        entry = JSON.parse(readFileSync(join(this.ws.root, rel), 'utf8')) as MemoryEntry;
      } catch {
        continue; // not what we wrote after all: the next refresh reads it
      }
      if (entry?.id !== where.id || entry.section !== where.section) continue;
      if (at === undefined) {
        at = f.files.length;
        f.files.push(rel);
        f.st.push(0, 0, 0);
        f.stamps.push('');
        f.lines.push('');
        pos.set(rel, at);
      }
      f.st[3 * at] = st.size;
      f.st[3 * at + 1] = st.mtimeMs;
      f.st[3 * at + 2] = st.ctimeMs;
      f.stamps[at] = stampOf(st);
      f.lines[at] = JSON.stringify(metaRow(entryMeta(entry)));
      delete f.bad[at];
      rows.push([rel, st.size, st.mtimeMs, st.ctimeMs, f.stamps[at], f.lines[at], null]);
    }
    if (!rows.length) return;
    if (this.deltaFits(rows.length, f.deltaLines, f.files.length) && this.appendDelta(f.id, rows)) {
      f.deltaLines += rows.length;
      return;
    }
    // Too much for the delta: rewrite the whole cache from what this process knows (dead slots dropped).
    const live = f.files.flatMap((name, i) => (name ? [i] : []));
    const bad: Record<string, Problem[]> = {};
    live.forEach((i, j) => {
      if (f.bad[i]) bad[j] = f.bad[i]!;
    });
    const next = {
      files: live.map((i) => f.files[i]),
      st: live.flatMap((i) => [f.st[3 * i], f.st[3 * i + 1], f.st[3 * i + 2]]),
      stamps: live.map((i) => f.stamps[i]),
      lines: live.map((i) => f.lines[i]),
      bad,
    };
    this.found = { ...next, id: this.save(next), deltaLines: 0 };
  }

  /** Rewrites the whole cache (a new base: the delta goes) and returns its id. */
  private save(c: Omit<CatalogHeader, 'v' | 'id'> & { lines: string[] }): string {
    const core = JSON.stringify({ files: c.files, st: c.st, stamps: c.stamps, bad: c.bad });
    const id = createHash('sha1').update(core).digest('hex').slice(0, 16);
    try {
      if (!this.ws.ensureLocal()) return id;
      const body = c.lines.length ? `\n${c.lines.join('\n')}` : '';
      writeFileAtomic(this.cacheFile, `{"v":${CATALOG_VERSION},"id":"${id}",${core.slice(1)}${body}`, { fsync: false });
      rmSync(this.deltaFile, { force: true });
    } catch {
      /* a cache that cannot be saved only costs speed */
    }
    return id;
  }
}

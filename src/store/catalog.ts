/**
 * The catalog: every entry file of the workspace, validated once and cached under
 * `.bass-agents/cache/catalog.json` as metadata (no summary or content) keyed by (size, mtime,
 * ctime). A command stats the files, re-reads only those that changed, and saves the cache when
 * anything moved; full entries are read from their files only when asked for (`entry`). The
 * files are the truth: a missing or corrupt cache is rebuilt, never fatal, and deleting
 * `.bass-agents/` loses nothing.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { SECTIONS, type Section } from '../core/constants.js';
import { ValidationError, type Problem } from '../core/errors.js';
import { entryMeta, type EntryMeta } from '../core/meta.js';
import type { MemoryEntry } from '../core/schema.js';
import { lazy } from '../lazy.js';
import { writeFileAtomic } from './fsutil.js';
import type { Workspace } from './workspace.js';

const validation = lazy<typeof import('../core/validate.js')>('./core/validate.js');

const CATALOG_VERSION = 6;

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
    this.key = `${project}/${file.slice(file.lastIndexOf('/') + 1, -'.json'.length)}`;
    this.metaSrc = meta;
    this.full = full;
  }

  /** Filter, ranking and statistics fields, parsed from the cached row on first use. */
  get meta(): EntryMeta {
    if (typeof this.metaSrc === 'string') this.metaSrc = metaFromRow(JSON.parse(this.metaSrc) as unknown[]);
    return this.metaSrc;
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
  'id', 'section', 'kind', 'subject', 'scope', 'tags', 'confidence', 'evidence', 'status', 'superseded_by',
  'related_entries', 'valid_from', 'valid_to', 'review_interval', 'created_by', 'created_at', 'updated_at', 'lifecycle', 'dup', 'importance0',
] as const satisfies readonly (keyof EntryMeta)[];

interface CatalogHeader {
  v: number;
  files: string[];
  /** size, mtimeMs, ctimeMs of files[i] at 3i .. 3i+2. */
  st: number[];
  stamps: string[];
  /** Problems of the files that could not be used, by position. */
  bad: Record<string, Problem[]>;
}

interface CatalogFile {
  /** Position of each file in the arrays below. */
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
    id: v[0], section: v[1], kind: v[2], subject: v[3], scope: v[4], tags: v[5], confidence: v[6],
    evidence: (v[7] as string[]).map((type) => ({ type })), status: v[8], superseded_by: v[9], related_entries: v[10],
    valid_from: v[11], valid_to: v[12], review_interval: v[13] ?? undefined, created_by: v[14], created_at: v[15],
    updated_at: v[16], lifecycle: v[17] ?? undefined, dup: v[18], importance0: v[19],
  };
  return m as unknown as EntryMeta;
}

export interface CatalogSnapshot {
  entries: StoredEntry[];
  bad: BadFile[];
  /** Files (relative) whose content changed since the cache was last saved, and removed ones. */
  changed: string[];
  removed: string[];
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

  constructor(ws: Workspace) {
    this.ws = ws;
    this.cacheFile = join(ws.localDir, 'cache', 'catalog.json');
  }

  private load(): CatalogFile | null {
    try {
      const text = readFileSync(this.cacheFile, 'utf8');
      const nl = text.indexOf('\n');
      const h = JSON.parse(nl < 0 ? text : text.slice(0, nl)) as CatalogHeader;
      const n = h?.files?.length;
      if (h.v !== CATALOG_VERSION || !Array.isArray(h.st) || h.st.length !== 3 * n || h.stamps?.length !== n || typeof h.bad !== 'object') return null;
      const lines = n === 0 ? [] : text.slice(nl + 1).split('\n');
      if (lines.length !== n) return null;
      const pos = new Map<string, number>();
      for (let i = 0; i < n; i++) pos.set(h.files[i]!, i);
      return { pos, st: h.st, stamps: h.stamps, lines, bad: h.bad ?? {} };
    } catch {
      return null; // missing or corrupt: rebuilt by the caller
    }
  }

  /**
   * Re-reads only `files` (paths relative to the root) on top of `prev`: what a watcher batch
   * needs, instead of a stat of every file. Paths that are not entry files are ignored; the cache
   * file is not rewritten (the next full refresh does that).
   */
  refreshPaths(prev: CatalogSnapshot, files: Iterable<string>): CatalogSnapshot {
    const byFile = new Map(prev.entries.map((se) => [se.file, se]));
    const bad = new Map(prev.bad.map((b) => [b.file, b]));
    const changed: string[] = [];
    const removed: string[] = [];
    for (const rel of new Set(files)) {
      const m = /^ai-memory\/([^/]+)\/([^/]+)\/([^/]+)\.json$/.exec(rel);
      if (!m || m[3]!.startsWith('.') || !(SECTIONS as readonly string[]).includes(m[2]!)) continue;
      const [, project, section, id] = m as unknown as [string, string, Section, string];
      const abs = join(this.ws.root, rel);
      let st: ReturnType<typeof lstatSync> | undefined;
      try {
        st = lstatSync(abs);
      } catch {
        st = undefined;
      }
      if (!st || !st.isFile()) {
        if (byFile.delete(rel) || bad.delete(rel)) removed.push(rel);
        if (st?.isSymbolicLink()) bad.set(rel, { file: rel, problems: [{ path: rel, message: 'is a symbolic link; entry files must be regular files' }] });
        continue;
      }
      const old = byFile.get(rel);
      const k = `${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
      if (old && old.stamp === k) continue;
      const r = readEntryFile(abs, rel, section, id);
      changed.push(rel);
      if (r.entry) {
        bad.delete(rel);
        byFile.set(rel, new StoredEntry(this.ws.root, project, rel, k, entryMeta(r.entry), r.entry));
      } else {
        byFile.delete(rel);
        bad.set(rel, { file: rel, problems: r.problems ?? [] });
      }
    }
    return { entries: [...byFile.values()], bad: [...bad.values()], changed, removed };
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
            const k = cache.stamps[i]!;
            const line = cache.lines[i]!;
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
          const k = `${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
          next.stamps.push(k);
          changed.push(rel);
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
    if (changed.length || removed.length || !cache) this.save(next);
    return { entries, bad, changed, removed };
  }

  private save(c: Omit<CatalogHeader, 'v'> & { lines: string[] }): void {
    try {
      const header: CatalogHeader = { v: CATALOG_VERSION, files: c.files, st: c.st, stamps: c.stamps, bad: c.bad };
      const body = c.lines.length ? `\n${c.lines.join('\n')}` : '';
      writeFileAtomic(this.cacheFile, `${JSON.stringify(header)}${body}`, { fsync: false });
    } catch {
      /* a cache that cannot be saved only costs speed */
    }
  }
}

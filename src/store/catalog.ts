/**
 * The catalog: every entry file of the workspace, parsed and validated, cached under
 * `.bass-agents/cache/catalog.json` keyed by (size, mtime, ctime). A command stats the files,
 * re-reads only those that changed, and saves the cache when anything moved. The files are the
 * truth: a missing or corrupt cache is rebuilt, never fatal, and deleting `.bass-agents/` loses
 * nothing.
 */
import { existsSync, readdirSync, readFileSync, statSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import type { Problem } from '../core/errors.js';
import { SECTIONS, type MemoryEntry, type Section } from '../core/schema.js';
import { validateStoredEntry } from '../core/validate.js';
import { writeFileAtomic } from './fsutil.js';
import type { Workspace } from './workspace.js';

const CATALOG_VERSION = 1;

export interface StoredEntry {
  project: string;
  /** Path relative to the workspace root. */
  file: string;
  /** size:mtime:ctime of the file, which changes whenever the file does. */
  stamp: string;
  entry: MemoryEntry;
}

/** A file that could not be used, with why. */
export interface BadFile {
  file: string;
  problems: Problem[];
}

type Stamp = [size: number, mtimeMs: number, ctimeMs: number];
interface CachedFile {
  s: Stamp;
  e?: MemoryEntry;
  p?: Problem[];
}
interface CatalogFile {
  v: number;
  files: Record<string, CachedFile>;
}

export interface CatalogSnapshot {
  entries: StoredEntry[];
  bad: BadFile[];
  /** Files (relative) whose content changed since the cache was last saved, and removed ones. */
  changed: string[];
  removed: string[];
}

function sameStamp(a: Stamp, b: Stamp): boolean {
  return a[0] === b[0] && a[1] === b[1] && a[2] === b[2];
}

/** Reads one entry file: parse, validate, and check that id and section match the file's place. */
export function readEntryFile(abs: string, rel: string, section: Section, id: string): { entry?: MemoryEntry; problems?: Problem[] } {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(abs, 'utf8'));
  } catch (err) {
    return { problems: [{ path: rel, message: `not valid JSON (${(err as Error).message})` }] };
  }
  const r = validateStoredEntry(raw);
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

  private load(): CatalogFile {
    try {
      const c = JSON.parse(readFileSync(this.cacheFile, 'utf8')) as CatalogFile;
      if (c && c.v === CATALOG_VERSION && c.files && typeof c.files === 'object') return c;
    } catch {
      /* missing or corrupt: rebuilt below */
    }
    return { v: CATALOG_VERSION, files: {} };
  }

  /** Stats every entry file, re-reads the changed ones, saves the cache if anything moved. */
  refresh(): CatalogSnapshot {
    const cache = this.load();
    const next: Record<string, CachedFile> = {};
    const entries: StoredEntry[] = [];
    const bad: BadFile[] = [];
    const changed: string[] = [];
    const projects = this.ws.listProjects();
    const memRel = 'ai-memory';
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
          const abs = join(sdir, d.name);
          if (d.isSymbolicLink()) {
            // A symlinked entry could point anywhere; entries are always plain files.
            const problems = [{ path: rel, message: 'is a symbolic link; entry files must be regular files' }];
            bad.push({ file: rel, problems });
            continue;
          }
          if (!d.isFile()) continue;
          const st = statSync(abs, { throwIfNoEntry: false });
          if (!st) continue;
          const stamp: Stamp = [st.size, st.mtimeMs, st.ctimeMs];
          let cached = cache.files[rel];
          if (!cached || !sameStamp(cached.s, stamp)) {
            const id = d.name.slice(0, -'.json'.length);
            const r = readEntryFile(abs, rel, section, id);
            cached = { s: stamp, ...(r.entry ? { e: r.entry } : { p: r.problems }) };
            changed.push(rel);
          }
          next[rel] = cached;
          if (cached.e) entries.push({ project, file: rel, stamp: cached.s.join(':'), entry: cached.e });
          else bad.push({ file: rel, problems: cached.p ?? [] });
        }
      }
    }
    const removed = Object.keys(cache.files).filter((f) => !(f in next));
    if (changed.length || removed.length) this.save({ v: CATALOG_VERSION, files: next });
    return { entries, bad, changed, removed };
  }

  private save(c: CatalogFile): void {
    try {
      writeFileAtomic(this.cacheFile, JSON.stringify(c), { fsync: false });
    } catch {
      /* a cache that cannot be saved only costs speed */
    }
  }
}

/** One entry file as the catalog holds it; the reading and checking of one; the rule for two files with one id. */
import { readFileSync } from 'node:fs';
import { SECTIONS, type Section } from '../core/constants.js';
import { ValidationError, type Problem } from '../core/errors.js';
import type { EntryMeta } from '../core/meta.js';
import type { MemoryEntry } from '../core/schema.js';
import { shown } from '../core/redact.js';
import { lazy } from '../lazy.js';
import { gitBlobId } from './git-view.js';
import { tryOr } from './fsutil.js';
import type { CachedEntries } from './cached-entries.js';

const validation = lazy<typeof import('../core/validate.js')>('./core/validate.js');

/** The parts of an entry file's path (`ai-memory/<project>/<section>/<id>.json`), or null for any other path. */
export function entryPath(rel: string): { project: string; section: Section; id: string } | null {
  const [, project, section, id] = /^ai-memory\/([^/]+)\/([^/]+)\/([^/]+)\.json$/.exec(rel) ?? [];
  if (!project || !section || !id || id.startsWith('.') || !(SECTIONS as readonly string[]).includes(section)) return null;
  return { project, section: section as Section, id };
}

/** `project/id` of an entry file path: the key of the index and of local usage. */
export const keyOfFile = (rel: string, project = rel.split('/')[1]): string => `${project}/${rel.slice(rel.lastIndexOf('/') + 1, -'.json'.length)}`;

export class StoredEntry {
  /** The whole entry once read; in a long-lived process only among the `recent` few (held weakly, they would swell the old generation). */
  private full: MemoryEntry | undefined;
  private keyText: string | undefined;

  constructor(
    private root: string,
    readonly project: string,
    /** Path relative to the workspace root. */
    readonly file: string,
    /** size:mtime:ctime of the file, or how to make it (most entries of a cold read never need it). */
    private stampSrc: string | (() => string),
    readonly meta: EntryMeta,
    full?: MemoryEntry,
    private readonly recent?: RecentEntries,
  ) {
    if (full) this.keep(full);
  }

  get stamp(): string {
    if (typeof this.stampSrc !== 'string') this.stampSrc = this.stampSrc();
    return this.stampSrc;
  }

  /** `project/id` (made on first use: a cold `list` of 10K entries asks for a few). */
  get key(): string {
    return (this.keyText ??= keyOfFile(this.file, this.project));
  }

  private keep(e: MemoryEntry): MemoryEntry {
    if (this.recent) this.recent.set(this, e);
    else this.full = e;
    return e;
  }

  /** The whole entry, read from its file when not held (validated when its stamp was cached). */
  get entry(): MemoryEntry {
    return (this.recent ? this.recent.get(this) : this.full) ?? this.keep(this.read());
  }

  /** The whole entry for a pass over many (index, vectors, evidence): in a long-lived process not kept, to spare the recent few. */
  readOnce(): MemoryEntry {
    return this.recent ? (this.recent.get(this) ?? this.read()) : this.entry;
  }

  private read(): MemoryEntry {
    const abs = `${this.root}/${this.file}`; // both normalized: join() costs a little on every entry
    let parsed = tryOr(() => JSON.parse(readFileSync(abs, 'utf8')) as MemoryEntry | undefined, undefined);
    if (!parsed || parsed.id !== this.meta.id || parsed.updated_at !== this.meta.updated_at) {
      // The file changed after the catalog was read: validate it again rather than trust it.
      const r = readEntryFile(abs, this.file, this.meta.section, this.meta.id);
      if (!r.entry) throw new ValidationError(r.problems ?? [], 'entry file');
      parsed = r.entry;
    }
    return parsed;
  }
}

/** The entries read last, for a long-lived process (least recently used first out). */
export class RecentEntries {
  private readonly map = new Map<StoredEntry, MemoryEntry>();
  constructor(private readonly max: number) {}

  /** The entry held for `se`, made the most recently used (set again: the size does not change). */
  get(se: StoredEntry): MemoryEntry | undefined {
    const e = this.map.get(se);
    if (e) this.set(se, e);
    return e;
  }

  set(se: StoredEntry, e: MemoryEntry): void {
    this.map.delete(se);
    this.map.set(se, e);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
}

export interface BadFile {
  file: string;
  problems: Problem[];
}

export interface CatalogSnapshot {
  /** Usable entries, one per key (`project/id`). */
  entries: StoredEntry[];
  bad: BadFile[];
  /** Files (relative) whose content changed since the cache was last saved, and removed ones. */
  changed: string[];
  removed: string[];
  /** Files skipped because an earlier-sorting file of the project has the same id (also in `bad`). */
  duplicates?: string[];
  /** From `refreshPaths`: each key a changed or removed file has, with its entry now (null: none). */
  touched?: Map<string, StoredEntry | null>;
  /** From `refreshPaths`, kept current by later batches: entries by key, a live entry's id by duplicate hash. */
  byKey?: ReadonlyMap<string, StoredEntry>;
  findDuplicate?: (project: string, dup: string) => string | undefined;
  /** From a full refresh: the id of the cache content holding exactly these entries. */
  contentId?: string;
  /** From a full refresh: the files that may differ from content `contentId`, if this cache went through it. */
  changedSince?: (contentId: string) => string[] | undefined;
  /** From a full refresh with no shared ids: the entries by number (`entries` made from it on first use). */
  cached?: CachedEntries;
}

/** Two files of one project with one id (a copy, a move merged with an edit): the first path keeps it. Never cached (not the file's alone). */
export function duplicateProblem(rel: string, holder: string): BadFile {
  const id = rel.slice(rel.lastIndexOf('/') + 1, -'.json'.length);
  return {
    file: rel,
    problems: [{ path: rel, message: `has id ${id}, which ${holder} already has; ids must be unique within a project (this file is skipped)` }],
  };
}

/** Moves every entry whose key an earlier-sorting file also has to `bad`. */
export function dropDuplicates(entries: StoredEntry[], bad: BadFile[]): { entries: StoredEntry[]; duplicates?: string[] } {
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

/** Reads one entry file: parse, validate, and check id and section against its place; `withBlob`: its git blob id too. */
export function readEntryFile(
  abs: string,
  rel: string,
  section: Section,
  id: string,
  withBlob = false,
): { entry?: MemoryEntry; problems?: Problem[]; blob?: string } {
  let raw: unknown;
  let blob: string | undefined;
  try {
    const bytes = readFileSync(abs);
    if (withBlob) blob = gitBlobId(bytes);
    raw = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    return { problems: [{ path: rel, message: `not valid JSON (${(err as Error).message})` }], blob };
  }
  const r = validation().validateStoredEntry(raw);
  if (!r.ok) return { problems: r.errors.map((p) => ({ path: `${rel}: ${p.path}`, message: p.message })), blob };
  const problems: Problem[] = [];
  if (r.value.id !== id) problems.push({ path: `${rel}: id`, message: `is ${shown(r.value.id)} but the file is named ${id}.json` });
  if (r.value.section !== section)
    problems.push({ path: `${rel}: section`, message: `is ${JSON.stringify(r.value.section)} but the file is in the ${section}/ folder` });
  return problems.length ? { problems, blob } : { entry: r.value, blob };
}

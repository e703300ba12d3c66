/**
 * The catalog's cache file, `.bass-agents/cache/catalog.json`: a header line (every entry file's
 * path, stamp numbers and stamp string as parallel arrays, the problems of unusable files), then
 * one metadata row per file; and `catalog.delta`, small changes appended on top of it. A missing,
 * corrupt or foreign cache reads as none: the files are the truth.
 */
import { nodeCrypto } from '../node-crypto.js';
import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Problem } from '../core/errors.js';
import { writeFileAtomic } from './fsutil.js';
import type { Workspace } from './workspace.js';

const CATALOG_VERSION = 7;
/**
 * Small changes (a write, an edit) are appended to `catalog.delta` instead of rewriting the whole
 * cache (3.6 MB at 10K entries, 36 MB at 100K): up to this many files at once, and until the
 * delta holds this many lines or a twentieth of the files, whichever is more.
 */
const DELTA_BATCH_MAX = 256;
const DELTA_LINES_MIN = 1000;

export interface CatalogHeader {
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

export interface CatalogFile {
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

export class CatalogCache {
  private readonly ws: Workspace;
  private readonly cacheFile: string;
  private readonly deltaFile: string;

  constructor(ws: Workspace) {
    this.ws = ws;
    this.cacheFile = join(ws.localDir, 'cache', 'catalog.json');
    this.deltaFile = join(ws.localDir, 'cache', 'catalog.delta');
  }

  load(): CatalogFile | null {
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
  appendDelta(id: string, rows: unknown[][]): boolean {
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
  deltaFits(count: number, deltaLines: number, files: number): boolean {
    return count <= DELTA_BATCH_MAX && deltaLines + count <= Math.max(DELTA_LINES_MIN, files / 20);
  }

  /** Rewrites the whole cache (a new base: the delta goes) and returns its id. */
  save(c: Omit<CatalogHeader, 'v' | 'id'> & { lines: string[] }): string {
    const core = JSON.stringify({ files: c.files, st: c.st, stamps: c.stamps, bad: c.bad });
    const id = nodeCrypto().createHash('sha1').update(core).digest('hex').slice(0, 16);
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

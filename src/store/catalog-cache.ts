/**
 * The catalog's cache file, `.bass-agents/cache/catalog.json`: a header line (every entry file's
 * path in sorted order, with its stat numbers, stamp and git blob id as parallel arrays; the
 * problems of unusable files; what each section folder looked like when it was last listed),
 * then one metadata row per file; and `catalog.delta`, small changes appended on top of it. A
 * missing, corrupt or foreign cache reads as none: the files are the truth.
 *
 * The file is plain ASCII (other characters are written as JSON escapes), so it is read as
 * latin1, a straight copy, instead of being decoded as UTF-8 (~10 ms of a 4 MB file).
 */
import { nodeCrypto } from '../node-crypto.js';
import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Problem } from '../core/errors.js';
import { lowerBound } from '../core/sorted.js';
import { metaFromRow } from './meta-row.js';
import { copyColumns, emptyColumns, permuteColumns, putColumns, validColumns, type Columns } from './catalog-columns.js';
import { writeFileAtomic } from './fsutil.js';
import type { Workspace } from './workspace.js';

const CATALOG_VERSION = 11;

/** The blob id of a file whose blob is not known (git's own "no object"): never matches git's view. */
const NO_BLOB = '0'.repeat(40);
/**
 * Small changes (a write, an edit) are appended to `catalog.delta` instead of rewriting the whole
 * cache (3.6 MB at 10K entries, 36 MB at 100K): up to this many files at once, and until the
 * delta holds this many lines or a twentieth of the files, whichever is more.
 */
const DELTA_BATCH_MAX = 256;
const DELTA_LINES_MIN = 1000;

/**
 * A section folder as it was listed: its ctime and inode before the listing, and when that was
 * (ms since the epoch). Any change to the folder's names (a file added, removed or renamed) sets
 * its ctime to the time of the change, so a folder whose ctime and inode are still these, and
 * whose ctime was at least `DIR_SETTLE_MS` older than the listing, still holds exactly the names
 * listed then (see Catalog.refresh).
 */
export type DirRecord = [ctimeMs: number, ino: number, listedAt: number];

/** File systems with coarse timestamps (2 s on FAT) could give a change right after a listing the listed ctime. */
export const DIR_SETTLE_MS = 2_000;

export interface CatalogHeader {
  v: number;
  /** A hash of the rest: the base that lines of `catalog.delta` name (others are ignored). */
  id: string;
  /** Paths relative to the root, sorted (JavaScript string order). */
  files: string[];
  /**
   * size, mtimeMs, ctimeMs of files[i] at 3i .. 3i+2, as a Float64Array in base64 (this
   * machine's byte order: the cache never leaves it). Read ~8x faster than a JSON array of
   * numbers, and held outside the JavaScript heap.
   */
  st: string;
  stamps: string[];
  /**
   * The git blob id of the bytes each file's row was read from (see git-view.ts), 40 hex digits
   * per file one after another, NO_BLOB when not known: one string, not one per file.
   */
  oids: string;
  /** Problems of the files that could not be used, by position. */
  bad: Record<string, Problem[]>;
  /** Section folders (relative to the root) by how they were last listed. */
  dirs: Record<string, DirRecord>;
  /** The filter and ranking fields of every row, as columns (catalog-columns.ts). */
  cols: Columns;
  /** No file loses its id to another file of its project: a reader that finds nothing changed need not look for such files. */
  nodup?: boolean;
}

/** The cache as loaded: the header's arrays with the delta applied, still sorted by path. */
export interface CatalogFile {
  id: string;
  /** Lines of `catalog.delta` applied on top of the base. */
  deltaLines: number;
  files: string[];
  st: Float64Array;
  stamps: string[];
  /** As in the header (see blobAt). */
  oids: string;
  /** The metadata row of each usable file (a JSON array), '' for a bad one. */
  lines: string[];
  bad: Record<string, Problem[]>;
  dirs: Record<string, DirRecord>;
  cols: Columns;
  nodup: boolean;
  /** The id of this content: the base's id, chained through the delta's file lines (see chainContent). */
  content: string;
}

/** What the cache is saved from (files in any order: `save` sorts them): the header's fields as plain arrays ('' for an unknown blob). */
export type CatalogContent = Omit<CatalogHeader, 'v' | 'id' | 'st' | 'oids'> & { st: number[]; oids: string[]; lines: string[] };

/** The blob id the cache holds for file `i` ('' when not known). */
export function blobAt(file: CatalogFile, i: number): string {
  const b = file.oids.slice(40 * i, 40 * i + 40);
  return b === NO_BLOB ? '' : b;
}

/** A loaded cache as content to change and save again. */
export function contentOf(file: CatalogFile): CatalogContent {
  return {
    files: file.files.slice(),
    st: Array.from(file.st),
    stamps: file.stamps.slice(),
    oids: file.files.map((_, i) => blobAt(file, i)),
    lines: file.lines.slice(),
    bad: { ...file.bad },
    dirs: { ...file.dirs },
    cols: permuteColumns(
      file.cols,
      file.files.map((_, i) => i),
    ),
    nodup: file.nodup,
  };
}

/** The numbers of a header's `st`, or null when they are not 3 per file. */
function decodeNumbers(text: unknown, n: number): Float64Array | null {
  if (typeof text !== 'string') return null;
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length !== 24 * n) return null;
  const out = new Float64Array(3 * n); // its own, aligned buffer
  new Uint8Array(out.buffer).set(bytes);
  return out;
}

/** One file's state in a delta line: `[size, mtimeMs, ctimeMs, stamp, row, problems, blob]`. */
type FileState = [number, number, number, string, string, Problem[] | null, string];

/** JSON with every character outside ASCII escaped, so that the text reads back exactly as latin1. */
function asciiJson(text: string): string {
  return /[^\x00-\x7f]/.test(text) ? text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : text;
}

/**
 * The id of a content after one more delta line about a file. Readers chain the lines they apply
 * in the order they find them, a writer the lines it appends: when another process appended a
 * line in between, the two chains differ, so equal ids always mean equal lines.
 */
function chainContent(content: string, line: string): string {
  return nodeCrypto().createHash('sha1').update(content).update('\n').update(line).digest('hex').slice(0, 20);
}

/** A cache read ahead of its first use (see preload), by the path of its file. */
let preloaded: { cacheFile: string; file: CatalogFile | null } | undefined;

export class CatalogCache {
  private readonly ws: Workspace;
  private readonly cacheFile: string;
  private readonly deltaFile: string;

  constructor(ws: Workspace | { localDir: string; ensureLocal?: undefined }) {
    this.ws = ws as Workspace;
    this.cacheFile = join(ws.localDir, 'cache', 'catalog.json');
    this.deltaFile = join(ws.localDir, 'cache', 'catalog.delta');
  }

  /**
   * Reads the cache of the workspace whose local folder is `localDir` now, for the first `load`
   * in this process: a one-shot command does this while git checks the entry files on the other
   * core (git-view.ts), instead of after. Reading it a few milliseconds early changes nothing:
   * every row is checked against its file when it is used.
   */
  static preload(localDir: string): void {
    const c = new CatalogCache({ localDir });
    preloaded = { cacheFile: c.cacheFile, file: c.read() };
  }

  load(): CatalogFile | null {
    const p = preloaded;
    if (p) {
      preloaded = undefined;
      if (p.cacheFile === this.cacheFile) return p.file;
    }
    return this.read();
  }

  private read(): CatalogFile | null {
    try {
      const text = readFileSync(this.cacheFile, 'latin1');
      const nl = text.indexOf('\n');
      const h = JSON.parse(nl < 0 ? text : text.slice(0, nl)) as CatalogHeader;
      const n = h?.files?.length;
      const st = h.v === CATALOG_VERSION ? decodeNumbers(h.st, n) : null;
      if (
        !st ||
        typeof h.id !== 'string' ||
        h.stamps?.length !== n ||
        typeof h.oids !== 'string' ||
        h.oids.length !== 40 * n ||
        typeof h.bad !== 'object' ||
        typeof h.dirs !== 'object' ||
        h.dirs === null ||
        !validColumns(h.cols, n)
      )
        return null;
      const lines = n === 0 ? [] : text.slice(nl + 1).split('\n');
      if (lines.length !== n) return null;
      for (let i = 1; i < n; i++) if (!(h.files[i - 1] < h.files[i])) return null; // not ours: sorted and unique
      const file: CatalogFile = {
        id: h.id,
        deltaLines: 0,
        files: h.files,
        st,
        stamps: h.stamps,
        oids: h.oids,
        lines,
        bad: h.bad,
        dirs: h.dirs,
        cols: h.cols,
        nodup: h.nodup === true,
        content: h.id,
      };
      this.applyDelta(file);
      return file;
    } catch {
      return null; // missing or corrupt: rebuilt by the caller
    }
  }

  /**
   * Applies the lines of `catalog.delta` that name this base, in order: `[id, file, size,
   * mtimeMs, ctimeMs, stamp, row, problems, blob]` sets a file, `[id, file]` removes one, `[id,
   * "#dir", folder, ctimeMs, ino, listedAt]` records a folder's listing. A line cut short (a
   * concurrent append) or naming another base is skipped: every use of the cache is checked
   * against the file's own stamp anyway. The arrays stay sorted.
   */
  private applyDelta(file: CatalogFile): void {
    let text: string;
    try {
      text = readFileSync(this.deltaFile, 'latin1');
    } catch {
      return;
    }
    const changes = new Map<string, FileState | null>();
    let nodup = file.nodup;
    for (const raw of text.split('\n')) {
      if (!raw) continue;
      let d: unknown;
      try {
        d = JSON.parse(raw);
      } catch {
        continue;
      }
      if (!Array.isArray(d) || d[0] !== file.id || typeof d[1] !== 'string') continue;
      if (d[1] === '#nodup') {
        // Valid for the lines before it only if they are the ones it was written after (a change appended by another process in between voids it).
        if (d[2] === file.deltaLines) nodup = true;
        file.deltaLines++;
        continue;
      }
      if (d[1] === '#dir') {
        const [, , dir, ctime, ino, at] = d as unknown[];
        if (typeof dir === 'string' && typeof ctime === 'number' && typeof ino === 'number' && typeof at === 'number') {
          file.dirs[dir] = [ctime, ino, at];
          file.deltaLines++;
        }
        continue;
      }
      const rel = d[1];
      if (d.length === 2) {
        changes.set(rel, null);
        nodup = false;
        file.deltaLines++;
        file.content = chainContent(file.content, raw);
        continue;
      }
      const [, , size, mtime, ctime, stamp, row, problems, oid] = d as unknown[];
      if (typeof size !== 'number' || typeof mtime !== 'number' || typeof ctime !== 'number' || typeof stamp !== 'string' || typeof row !== 'string') continue;
      changes.set(rel, [size, mtime, ctime, stamp, row, Array.isArray(problems) ? (problems as Problem[]) : null, typeof oid === 'string' ? oid : '']);
      nodup = false;
      file.deltaLines++;
      file.content = chainContent(file.content, raw);
    }
    file.nodup = nodup;
    if (!changes.size) return;
    // One merge of the sorted base with the changed files (new ones sorted in).
    const added = [...changes.keys()].filter((rel) => changes.get(rel) && file.files[lowerBound(file.files, rel)] !== rel).sort();
    const out: CatalogContent = { ...file, files: [], st: [], stamps: [], oids: [], lines: [], bad: {}, cols: emptyColumns(file.cols) };
    /** A file's state; `from`: its position in the base when unchanged (its columns are copied). */
    const put = (rel: string, s: FileState, from?: number): void => {
      const at = out.files.length;
      out.files.push(rel);
      out.st.push(s[0], s[1], s[2]);
      out.stamps.push(s[3]);
      out.lines.push(s[4]);
      out.oids.push(s[6]);
      if (s[5]) out.bad[at] = s[5];
      if (from !== undefined) copyColumns(out.cols, file.cols, from);
      else putColumns(out.cols, rowMeta(s[4], Boolean(s[5])));
    };
    let a = 0;
    for (let i = 0; i < file.files.length; i++) {
      const rel = file.files[i];
      for (; a < added.length && added[a] < rel; a++) put(added[a], changes.get(added[a])!);
      const c = changes.get(rel);
      if (c === null) continue;
      if (c) put(rel, c);
      else put(rel, [file.st[3 * i], file.st[3 * i + 1], file.st[3 * i + 2], file.stamps[i], file.lines[i], file.bad[i] ?? null, blobAt(file, i)], i);
    }
    for (; a < added.length; a++) put(added[a], changes.get(added[a])!);
    Object.assign(file, {
      files: out.files,
      st: Float64Array.from(out.st),
      stamps: out.stamps,
      oids: out.oids.map((b) => (b.length === 40 ? b : NO_BLOB)).join(''),
      lines: out.lines,
      bad: out.bad,
      cols: out.cols,
    });
  }

  /**
   * Appends changes to `catalog.delta` (one write: concurrent appenders do not interleave lines).
   * Returns the content id after them, chained from `content` (the content the rows change), or
   * null when they could not be written.
   */
  appendDelta(id: string, rows: unknown[][], content = ''): string | null {
    if (!rows.length) return content;
    const lines = rows.map((r) => asciiJson(JSON.stringify([id, ...r])));
    try {
      if (!this.ws.ensureLocal()) return null;
      appendFileSync(this.deltaFile, `${lines.join('\n')}\n`);
    } catch {
      return null;
    }
    // Only lines about files change the content (a folder's listing, a note on duplicates do not).
    for (let i = 0; i < rows.length; i++) if (rows[i][0] !== '#dir' && rows[i][0] !== '#nodup') content = chainContent(content, lines[i]);
    return content;
  }

  /** Whether `count` more changes still go to the delta rather than a rewrite of the whole cache. */
  deltaFits(count: number, deltaLines: number, files: number): boolean {
    return count <= DELTA_BATCH_MAX && deltaLines + count <= Math.max(DELTA_LINES_MIN, files / 20);
  }

  /** Rewrites the whole cache (a new base: the delta goes) and returns its id. Files in any order ('' entries are dropped). */
  save(c: CatalogContent): string {
    const s = sortedContent(c);
    const core = JSON.stringify({
      files: s.files,
      st: Buffer.from(Float64Array.from(s.st).buffer).toString('base64'),
      stamps: s.stamps,
      oids: s.oids.map((b) => (b.length === 40 ? b : NO_BLOB)).join(''),
      bad: s.bad,
      dirs: s.dirs,
      cols: s.cols,
      ...(s.nodup ? { nodup: true } : {}),
    });
    const id = nodeCrypto().createHash('sha1').update(core).digest('hex').slice(0, 16);
    try {
      if (!this.ws.ensureLocal()) return id;
      const body = s.lines.length ? `\n${s.lines.join('\n')}` : '';
      writeFileAtomic(this.cacheFile, asciiJson(`{"v":${CATALOG_VERSION},"id":"${id}",${core.slice(1)}${body}`), { fsync: false });
      rmSync(this.deltaFile, { force: true });
    } catch {
      /* a cache that cannot be saved only costs speed */
    }
    return id;
  }
}

/** The content with its files sorted and unique ('' slots dropped; for a repeated path the last wins). */
function sortedContent(c: CatalogContent): CatalogContent {
  let ordered = true;
  for (let i = 0; i < c.files.length && ordered; i++) if (!c.files[i] || (i > 0 && !(c.files[i - 1] < c.files[i]))) ordered = false;
  if (ordered) return c;
  const last = new Map<string, number>();
  c.files.forEach((f, i) => {
    if (f) last.set(f, i);
  });
  const order = [...last.keys()].sort().map((f) => last.get(f)!);
  const bad: Record<string, Problem[]> = {};
  order.forEach((i, j) => {
    if (c.bad[i]) bad[j] = c.bad[i]!;
  });
  return {
    files: order.map((i) => c.files[i]),
    st: order.flatMap((i) => [c.st[3 * i], c.st[3 * i + 1], c.st[3 * i + 2]]),
    stamps: order.map((i) => c.stamps[i]),
    oids: order.map((i) => c.oids[i]),
    lines: order.map((i) => c.lines[i]),
    bad,
    dirs: c.dirs,
    cols: permuteColumns(c.cols, order),
    nodup: c.nodup,
  };
}

/** The metadata of a row ('' or a bad file's: none). */
function rowMeta(line: string, bad: boolean): ReturnType<typeof metaFromRow> | null {
  if (bad || !line) return null;
  try {
    return metaFromRow(JSON.parse(line) as unknown[]);
  } catch {
    return null;
  }
}

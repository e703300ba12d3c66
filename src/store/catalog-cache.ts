/**
 * The catalog's cache file, `cache/catalog.bin` (in the local state folder): a header line (JSON: counts,
 * tables, the problems of unusable files, what each section folder looked like when it was last
 * listed), then every entry file's path in sorted order with its stat numbers, git blob id and
 * filter columns as typed arrays and byte strings, then one metadata row per file; and
 * `catalog.delta`, small changes appended on top of it. A missing, corrupt or foreign cache reads
 * as none: the files are the truth.
 *
 * Reading it makes no string per file: numbers are views of the file's bytes, and a path, row or
 * date is decoded when something asks for it (texts.ts). The JSON header of version 13 (arrays of
 * 10K paths, dates and hashes) cost a cold `list` or `query` ~15 ms to parse and collect.
 */
import { nodeCrypto } from '../node-crypto.js';
import { closeSync, constants, fstatSync, rmSync } from 'node:fs';
import { appendNoFollow, openNoFollow, readNoFollow } from './state-dir.js';
import { endianness } from 'node:os';
import { join } from 'node:path';
import type { Problem } from '../core/errors.js';
import { metaFromRow } from './meta-row.js';
import { copyColumns, emptyColumns, encodeColumns, permuteColumns, putColumns, type CachedColumns, type Columns, type Rows } from './catalog-columns.js';
import { readAt, writeFileAtomic } from './fsutil.js';
import { ByteTexts, FileRegion, MergedTexts, encodeTexts, lowerBoundText, type Texts } from './texts.js';
import type { Workspace } from './workspace.js';

const CATALOG_VERSION = 14;
/** The cache file; version 13 and before kept everything in JSON under another name (removed when this one is saved). */
const CACHE_FILE = 'catalog.bin';
const OLD_CACHE_FILE = 'catalog.json';

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

/** The header line: what is not per file, and how long the byte sections after it are. */
interface CatalogHeader {
  v: number;
  /** A hash of the rest: the base that lines of `catalog.delta` name (others are ignored). */
  id: string;
  /** How many files. */
  n: number;
  /** The machine's byte order the numbers are in (the cache never leaves it). */
  le: boolean;
  /** Problems of the files that could not be used, by position. */
  bad: Record<string, Problem[]>;
  /** Section folders (relative to the root) by how they were last listed. */
  dirs: Record<string, DirRecord>;
  /** No file loses its id to another file of its project: a reader that finds nothing changed need not look for such files. */
  nodup?: boolean;
  /** The tables the columns' codes index (see CachedColumns). */
  scopes: string[];
  subjects: string[];
  evs: string[];
  dates: string[];
  lcs: string[];
  /** Byte lengths of the paths, the `updated_at` texts, the duplicate hashes, the `created_at` texts and the rows. */
  sizes: [paths: number, upd: number, dup: number, crt: number, rows: number];
  /** Whether the paths, hashes and times are ASCII (read as latin1, a straight copy). */
  ascii: [paths: boolean, upd: boolean, dup: boolean, crt: boolean];
}

/**
 * The sections after the header line, in order, each at a multiple of 8 bytes from the start of
 * the file: kind of numbers and how many (for n files; `bytes` sections by the header's sizes).
 */
function layout(n: number, sizes: CatalogHeader['sizes']): [name: string, type: 'f64' | 'u32' | 'i32' | 'i8' | 'bytes', count: number][] {
  return [
    ['st', 'f64', 3 * n],
    ['conf', 'f64', n],
    ['updMs', 'f64', n],
    ['imp0', 'f64', n],
    ['rowStarts', 'u32', n + 1],
    ['pathStarts', 'u32', n + 1],
    ['updStarts', 'u32', n + 1],
    ['dupStarts', 'u32', n + 1],
    ['crtStarts', 'u32', n + 1],
    ['ev', 'i32', n],
    ['lc', 'i32', n],
    ['scope', 'i32', n],
    ['subject', 'i32', n],
    ['vf', 'i32', n],
    ['vt', 'i32', n],
    ['kind', 'i8', n],
    ['status', 'i8', n],
    ['paths', 'bytes', sizes[0]],
    ['upd', 'bytes', sizes[1]],
    ['crt', 'bytes', sizes[3]],
    // Read when first asked for by a one-shot command (see CatalogCache.preload), from here on.
    ['dup', 'bytes', sizes[2]],
    ['oids', 'bytes', 40 * n],
    ['rows', 'bytes', sizes[4]],
  ];
}

const WIDTH = { f64: 8, u32: 4, i32: 4, i8: 1, bytes: 1 } as const;
/** The first section a one-shot command reads only when asked for: duplicate hashes, blob ids and rows (see CatalogCache.preload). */
const FIRST_LAZY = 'dup';
/** How much of the file a lazy read takes first, for the header line (see CatalogCache.preload). */
const HEAD_READ = 64 * 1024;
const align8 = (x: number): number => (x + 7) & ~7;

/** The cache as loaded: the header's tables and the sections with the delta applied, still sorted by path. */
export interface CatalogFile {
  id: string;
  /** Lines of `catalog.delta` applied on top of the base. */
  deltaLines: number;
  /** Paths relative to the root, sorted (JavaScript string order). */
  paths: Texts;
  /** size, mtimeMs, ctimeMs of file i at 3i .. 3i+2. */
  st: Float64Array;
  /**
   * The git blob id of the bytes each file's row was read from (see git-view.ts), 40 hex digits
   * per file one after another, NO_BLOB when not known: one string, not one per file.
   */
  oids: () => string;
  /** The metadata row of each usable file (a JSON array), '' for a bad one. */
  lines: Rows;
  bad: Record<string, Problem[]>;
  dirs: Record<string, DirRecord>;
  /** The filter and ranking fields of every row, as columns (catalog-columns.ts). */
  cols: CachedColumns;
  nodup: boolean;
  /**
   * How many files of `changeLog` had been changed when no file was known to lose its id (the
   * base's `nodup`, or a later `#nodup` line); -1 when never. A file that loses its id after that
   * is one of the rest, or shares its id with one of them.
   */
  uniqueUpTo: number;
  /** The id of this content: the base's id, and how many of the delta's file lines follow with the last one's hash (see contentAfter). */
  content: string;
  /**
   * The files named by the delta's file lines, in order, and for each content id along the
   * chain how many of them came before it: the files that may differ from that content are the
   * rest of the list.
   */
  changeLog: string[];
  /** The text of each of the delta's file lines, parallel to `changeLog`. */
  changeLines: string[];
}

/** What the cache is saved from (files in any order: `save` sorts them), as plain arrays ('' for an unknown blob). */
export interface CatalogContent {
  files: string[];
  st: number[];
  oids: string[];
  lines: string[];
  bad: Record<string, Problem[]>;
  dirs: Record<string, DirRecord>;
  cols: Columns;
  nodup?: boolean;
}

/**
 * The stamp of file `i` (see stampOf): made from its stat numbers, which are the ones it was
 * made from, so the cache does not keep 10K stamp strings beside them.
 */
export function stampAt(st: ArrayLike<number>, i: number): string {
  return `${st[3 * i]}:${st[3 * i + 1]}:${st[3 * i + 2]}`;
}

/** The blob id the cache holds for file `i` ('' when not known). */
export function blobAt(file: CatalogFile, i: number): string {
  const b = file.oids().slice(40 * i, 40 * i + 40);
  return b === NO_BLOB ? '' : b;
}

/** A loaded cache as content to change and save again. */
export function contentOf(file: CatalogFile): CatalogContent {
  const n = file.paths.length;
  const cols = emptyColumns(file.cols);
  const files = new Array<string>(n);
  const oids = new Array<string>(n);
  const text = file.oids();
  const lines = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    files[i] = file.paths.get(i);
    const b = text.slice(40 * i, 40 * i + 40);
    oids[i] = b === NO_BLOB ? '' : b;
    lines[i] = file.lines.get(i);
    copyColumns(cols, file.cols, i);
  }
  return { files, st: Array.from(file.st), oids, lines, bad: { ...file.bad }, dirs: { ...file.dirs }, cols, nodup: file.nodup };
}

/** One file's state in a delta line: `[size, mtimeMs, ctimeMs, stamp, row, problems, blob]`. */
type FileState = [number, number, number, string, string, Problem[] | null, string];

/** A string made by `make` when first asked for, then kept. */
function lazyText(make: () => string): () => string {
  let text: string | undefined;
  return () => (text ??= make());
}

/** JSON with every character outside ASCII escaped, so that the text reads back exactly as latin1. */
function asciiJson(text: string): string {
  return /[^\x00-\x7f]/.test(text) ? text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : text;
}

/**
 * The id of base `base` with the first `k` file lines of its delta, the k-th being `line`. The
 * delta is only ever appended to (a new base starts a new one), and a file line states a file
 * whole (its stat numbers, row and blob), so a reader that finds this very line k-th holds the
 * content the id was made for: a line another process appended in between puts some other line
 * at that place. (The ids used to chain a SHA-1 through every line: ~5 ms of every cold read
 * after a write to load node:crypto, and a hash per line.)
 */
export function contentAfter(base: string, k: number, line: string): string {
  return k === 0 ? base : `${base}+${k}.${lineHash(line)}`;
}

/**
 * How many of the delta's file lines `content` (an id from contentAfter) holds, if it is a
 * content of this loaded cache's base that the delta went through; else undefined.
 */
export function contentPosition(file: CatalogFile, content: string): number | undefined {
  const c = contentParts(content);
  if (c?.base !== file.id) return undefined;
  return c.lines === 0 || (c.lines <= file.changeLines.length && lineHash(file.changeLines[c.lines - 1]) === c.check) ? c.lines : undefined;
}

/** The parts of a content id (see contentAfter): a base's own id has no delta lines. */
function contentParts(content: string): { base: string; lines: number; check?: string } | null {
  const m = /^([^+]+)(?:\+(\d+)\.([0-9a-f]{16}))?$/.exec(content);
  return m ? { base: m[1], lines: m[2] === undefined ? 0 : Number(m[2]), check: m[3] } : null;
}

/** 64 bits of a line (two 32-bit lanes: FNV-1a and a multiply-rotate mix), as 16 hex digits: a check, not a defence. */
function lineHash(line: string): string {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 13;
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

/** A cache read ahead of its first use (see preload), by the path of its file. */
let preloaded: { cacheFile: string; file: CatalogFile | null } | undefined;

export class CatalogCache {
  private readonly ws: Workspace;
  private readonly cacheFile: string;
  private readonly deltaFile: string;

  constructor(ws: Workspace | { localDir: string; ensureLocal?: undefined; local?: undefined }) {
    this.ws = ws as Workspace;
    this.cacheFile = join(ws.localDir, 'cache', CACHE_FILE);
    this.deltaFile = join(ws.localDir, 'cache', 'catalog.delta');
  }

  /**
   * Reads the cache of the workspace whose local folder is `localDir` now, for the first `load`
   * in this process: a one-shot command does this while git checks the entry files on the other
   * core (git-view.ts), instead of after. Reading it a few milliseconds early changes nothing:
   * every row is checked against its file when it is used. Only what a command may look at for
   * every entry is read now (the numbers, paths and times, ~2 of 4.4 MB at 10K entries); the
   * rows, duplicate hashes and blob ids are read from the open file when asked for (FileRegion).
   * The file stays open until the process ends.
   */
  static preload(localDir: string): void {
    const c = new CatalogCache({ localDir });
    preloaded = { cacheFile: c.cacheFile, file: c.read(true) };
  }

  load(): CatalogFile | null {
    const p = preloaded;
    if (p) {
      preloaded = undefined;
      if (p.cacheFile === this.cacheFile) return p.file;
    }
    this.ws.local?.('cache'); // checked before anything in it is read (state-dir.ts)
    return this.read();
  }

  /** The cache as saved, with the delta applied; `lazy`: see preload. */
  private read(lazy = false): CatalogFile | null {
    let fd: number | undefined;
    let keepOpen = false;
    try {
      let bytes: Buffer;
      let size: number;
      if (lazy) {
        fd = openNoFollow(this.cacheFile, constants.O_RDONLY);
        size = fstatSync(fd).size;
        bytes = readAt(fd, 0, Math.min(size, HEAD_READ));
      } else {
        bytes = readNoFollow(this.cacheFile);
        size = bytes.length;
      }
      let nl = bytes.indexOf(10);
      if (nl < 0 && fd !== undefined && size > bytes.length) {
        bytes = readAt(fd, 0, size); // a header longer than the first read: everything now
        nl = bytes.indexOf(10);
      }
      if (nl < 0) return null;
      const h = JSON.parse(bytes.toString('latin1', 0, nl)) as CatalogHeader;
      const n = h?.n;
      const sizes = h.sizes;
      if (
        h.v !== CATALOG_VERSION ||
        h.le !== (endianness() === 'LE') ||
        typeof h.id !== 'string' ||
        !Number.isInteger(n) ||
        n < 0 ||
        !Array.isArray(sizes) ||
        sizes.length !== 5 ||
        !sizes.every((x) => Number.isInteger(x) && x >= 0) ||
        !Array.isArray(h.ascii) ||
        h.ascii.length !== 4 ||
        typeof h.bad !== 'object' ||
        h.bad === null ||
        typeof h.dirs !== 'object' ||
        h.dirs === null ||
        ![h.scopes, h.subjects, h.evs, h.dates, h.lcs].every(Array.isArray)
      )
        return null;
      // Where each section is; the numbers, paths and times are read now, the rest (lazy) when asked for.
      const spans: [name: string, type: keyof typeof WIDTH, off: number, count: number][] = [];
      let off = nl + 1;
      for (const [name, type, count] of layout(n, sizes)) {
        off = align8(off);
        spans.push([name, type, off, count]);
        off += count * WIDTH[type];
      }
      if (off !== size) return null;
      const eagerEnd = spans.find(([name]) => name === FIRST_LAZY)!;
      const needed = eagerEnd[2];
      if (bytes.length < needed) bytes = readAt(fd!, 0, lazy ? needed : size);
      // The sections are views of the bytes, which must then start at a multiple of 8.
      if (bytes.byteOffset % 8 !== 0) bytes = Buffer.from(new Uint8Array(bytes));
      const at: Record<string, Float64Array | Uint32Array | Int32Array | Int8Array | Buffer | FileRegion> = {};
      for (const [name, type, o, count] of spans) {
        const end = o + count * WIDTH[type];
        const base = bytes.byteOffset + o;
        if (end > bytes.length) {
          if (type !== 'bytes' || fd === undefined) return null;
          at[name] = new FileRegion(fd, o, count);
          keepOpen = true;
          continue;
        }
        at[name] =
          type === 'f64'
            ? new Float64Array(bytes.buffer, base, count)
            : type === 'u32'
              ? new Uint32Array(bytes.buffer, base, count)
              : type === 'i32'
                ? new Int32Array(bytes.buffer, base, count)
                : type === 'i8'
                  ? new Int8Array(bytes.buffer, base, count)
                  : bytes.subarray(o, end);
      }
      const starts = (k: string): Uint32Array => at[`${k}Starts`] as Uint32Array;
      const region = (k: string): Buffer | FileRegion => at[k] as Buffer | FileRegion;
      // What was written is consistent by construction (starts in order, codes in their tables,
      // paths sorted); a file cut short or padded is caught by its size above, and each text
      // table must end where its bytes do. (Checking every number of 10K entries cost ~9 ms of
      // loops in a process whose code has not warmed up.)
      for (const [k, i] of [
        ['path', 0],
        ['upd', 1],
        ['dup', 2],
        ['crt', 3],
        ['row', 4],
      ] as const) {
        const t = starts(k);
        if (t[0] !== 0 || t[n] !== sizes[i]) return null;
      }
      const [pathsAscii, updAscii, dupAscii, crtAscii] = h.ascii.map((a) => a === true);
      const cols: CachedColumns = {
        kind: at.kind as Int8Array,
        status: at.status as Int8Array,
        conf: at.conf as Float64Array,
        ev: at.ev as Int32Array,
        evs: h.evs,
        upd: new ByteTexts(region('upd'), starts('upd'), updAscii),
        updMs: at.updMs as Float64Array,
        scope: at.scope as Int32Array,
        subject: at.subject as Int32Array,
        vf: at.vf as Int32Array,
        vt: at.vt as Int32Array,
        dates: h.dates,
        dup: new ByteTexts(region('dup'), starts('dup'), dupAscii),
        crt: new ByteTexts(region('crt'), starts('crt'), crtAscii),
        imp0: at.imp0 as Float64Array,
        lc: at.lc as Int32Array,
        lcs: h.lcs,
        scopes: h.scopes,
        subjects: h.subjects,
      };
      // The blob ids as one string, made when first asked for (a listing to match).
      const oids = region('oids');
      const file: CatalogFile = {
        id: h.id,
        deltaLines: 0,
        paths: new ByteTexts(region('paths'), starts('path'), pathsAscii),
        st: at.st as Float64Array,
        lines: new ByteTexts(region('rows'), starts('row'), true, 1),
        bad: h.bad,
        dirs: h.dirs,
        cols,
        nodup: h.nodup === true,
        uniqueUpTo: h.nodup === true ? 0 : -1,
        content: h.id,
        changeLog: [],
        changeLines: [],
        oids: lazyText(() => (oids instanceof FileRegion ? oids.all() : oids).toString('latin1')),
      };
      this.applyDelta(file);
      return file;
    } catch {
      return null; // missing or corrupt: rebuilt by the caller
    } finally {
      if (fd !== undefined && !keepOpen) closeSync(fd);
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
      text = readNoFollow(this.deltaFile).toString('latin1');
    } catch {
      return;
    }
    const changes = new Map<string, FileState | null>();
    let nodup = file.nodup;
    let uniqueUpTo = file.nodup ? 0 : -1;
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
        if (d[2] === file.deltaLines) {
          nodup = true;
          uniqueUpTo = file.changeLog.length;
        }
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
      const chained = (): void => {
        file.deltaLines++;
        file.changeLog.push(rel);
        file.changeLines.push(raw);
        file.content = contentAfter(file.id, file.changeLog.length, raw);
      };
      if (d.length === 2) {
        changes.set(rel, null);
        nodup = false;
        chained();
        continue;
      }
      const [, , size, mtime, ctime, stamp, row, problems, oid] = d as unknown[];
      if (typeof size !== 'number' || typeof mtime !== 'number' || typeof ctime !== 'number' || typeof stamp !== 'string' || typeof row !== 'string') continue;
      changes.set(rel, [size, mtime, ctime, stamp, row, Array.isArray(problems) ? (problems as Problem[]) : null, typeof oid === 'string' ? oid : '']);
      nodup = false;
      chained();
    }
    file.nodup = nodup;
    file.uniqueUpTo = uniqueUpTo;
    if (!changes.size) return;
    // One merge of the sorted base with the changed files (new ones sorted in), as runs: the
    // unchanged files between two changes (nearly all: a write changes a few of 10K) are copied
    // a run at a time (typed-array copies), and their paths, rows and texts stay where they are
    // in the file (MergedTexts). Copying them one by one cost a cold read after any write ~25 ms.
    const n = file.paths.length;
    // The changes in order: where in the base each goes (an added file before the base file it
    // sorts before), and what it is (null: the base file there is removed).
    const events: { at: number; rel: string; state: FileState | null; adds: boolean }[] = [];
    for (const [rel, state] of changes) {
      const at = lowerBoundText(file.paths, rel);
      const adds = at === n || !file.paths.equals(at, rel, 0, rel.length);
      if (adds && !state) continue; // removed, and never in the base
      events.push({ at, rel, state, adds });
    }
    events.sort((x, y) => x.at - y.at || Number(y.adds) - Number(x.adds) || (x.rel < y.rel ? -1 : 1));
    /** In order: a run of the base [from, to), or a file's new state. */
    const parts: ([from: number, to: number] | [rel: string, state: FileState])[] = [];
    let run = 0;
    for (const e of events) {
      if (e.at > run) parts.push([run, e.at]);
      run = Math.max(run, e.adds ? e.at : e.at + 1);
      if (e.state) parts.push([e.rel, e.state]);
    }
    if (n > run) parts.push([run, n]);
    // The new files' columns, coded with the base's tables (which they may extend: the base's
    // codes stay valid).
    const plain = emptyColumns(file.cols);
    for (const p of parts) if (typeof p[0] === 'string') putColumns(plain, rowMeta((p[1] as FileState)[4], Boolean((p[1] as FileState)[5])));
    const fresh = encodeColumns(plain, file.cols);
    let count = 0;
    for (const p of parts) count += typeof p[0] === 'number' ? (p[1] as number) - p[0] : 1;
    const c = file.cols;
    const cols: CachedColumns = {
      kind: new Int8Array(count),
      status: new Int8Array(count),
      conf: new Float64Array(count),
      ev: new Int32Array(count),
      evs: fresh.evs,
      upd: c.upd,
      updMs: new Float64Array(count),
      scope: new Int32Array(count),
      subject: new Int32Array(count),
      vf: new Int32Array(count),
      vt: new Int32Array(count),
      dates: fresh.dates,
      dup: c.dup,
      crt: c.crt,
      imp0: new Float64Array(count),
      lc: new Int32Array(count),
      lcs: fresh.lcs,
      scopes: fresh.scopes,
      subjects: fresh.subjects,
    };
    const numeric = ['kind', 'status', 'conf', 'ev', 'updMs', 'scope', 'subject', 'vf', 'vt', 'imp0', 'lc'] as const;
    const oidParts: (readonly [lo: number, hi: number] | string)[] = [];
    const st = new Float64Array(3 * count);
    const from = new Int32Array(count); // a base position, or -1 - (index into the new files)
    const extra = { paths: [] as string[], rows: [] as string[], upd: [] as string[], dup: [] as string[], crt: [] as string[] };
    const bad: Record<string, Problem[]> = {};
    const badAt = Object.keys(file.bad).map(Number);
    let at = 0;
    for (const p of parts) {
      if (typeof p[0] === 'number') {
        const [lo, hi] = p as [number, number];
        for (const k of numeric) cols[k].set(c[k].subarray(lo, hi), at);
        oidParts.push([lo, hi]);
        st.set(file.st.subarray(3 * lo, 3 * hi), 3 * at);
        for (let i = lo; i < hi; i++) from[at + i - lo] = i;
        for (const b of badAt) if (b >= lo && b < hi) bad[at + b - lo] = file.bad[b];
        at += hi - lo;
      } else {
        const [rel, state] = p as [string, FileState];
        const k = extra.paths.length; // its place in `fresh`
        for (const key of numeric) cols[key][at] = fresh[key][k];
        oidParts.push(state[6].length === 40 ? state[6] : NO_BLOB);
        st.set([state[0], state[1], state[2]], 3 * at);
        from[at] = -1 - k;
        extra.paths.push(rel);
        extra.rows.push(state[4]);
        extra.upd.push(fresh.upd[k]);
        extra.dup.push(fresh.dup[k]);
        extra.crt.push(fresh.crt[k]);
        if (state[5]) bad[at] = state[5];
        at++;
      }
    }
    cols.upd = new MergedTexts(c.upd, from, extra.upd);
    cols.dup = new MergedTexts(c.dup, from, extra.dup);
    cols.crt = new MergedTexts(c.crt, from, extra.crt);
    const baseOids = file.oids;
    Object.assign(file, {
      paths: new MergedTexts(file.paths, from, extra.paths),
      st,
      // Made when first asked for, from the base's (whose whole region is then read).
      oids: lazyText(() => {
        const base = baseOids();
        return oidParts.map((p) => (typeof p === 'string' ? p : base.slice(40 * p[0], 40 * p[1]))).join('');
      }),
      lines: new MergedTexts(file.lines, from, extra.rows),
      bad,
      cols,
    });
  }

  /**
   * Appends changes to `catalog.delta` (one write: concurrent appenders do not interleave lines).
   * Returns the content id after them, counted on from `content` (the content the rows change:
   * base `id` with some of its delta's file lines), or null when they could not be written.
   */
  appendDelta(id: string, rows: unknown[][], content = id): string | null {
    if (!rows.length) return content;
    const lines = rows.map((r) => asciiJson(JSON.stringify([id, ...r])));
    try {
      if (!this.ws.ensureLocal()) return null;
      this.ws.local('cache', true);
      appendNoFollow(this.deltaFile, `${lines.join('\n')}\n`);
    } catch {
      return null;
    }
    // Only lines about files change the content (a folder's listing, a note on duplicates do not).
    let k = contentParts(content)?.lines ?? 0;
    let last: string | undefined;
    for (let i = 0; i < rows.length; i++)
      if (rows[i][0] !== '#dir' && rows[i][0] !== '#nodup') {
        k++;
        last = lines[i];
      }
    return last === undefined ? content : contentAfter(id, k, last);
  }

  /** Whether `count` more changes still go to the delta rather than a rewrite of the whole cache. */
  deltaFits(count: number, deltaLines: number, files: number): boolean {
    return count <= DELTA_BATCH_MAX && deltaLines + count <= Math.max(DELTA_LINES_MIN, files / 20);
  }

  /** Rewrites the whole cache (a new base: the delta goes) and returns its id. Files in any order ('' entries are dropped). */
  save(c: CatalogContent): string {
    const s = sortedContent(c);
    const n = s.files.length;
    const enc = encodeColumns(s.cols);
    const texts = [encodeTexts(s.files), encodeTexts(enc.upd), encodeTexts(enc.dup), encodeTexts(enc.crt)];
    const lines = s.lines.map(asciiJson);
    const rowStarts = new Uint32Array(n + 1);
    for (let i = 0; i < n; i++) rowStarts[i + 1] = rowStarts[i] + lines[i].length + 1;
    const [paths, upd, dup, crt] = texts;
    if (!paths || !upd || !dup || !crt) return nodeCrypto().createHash('sha1').update(JSON.stringify(s.files)).digest('hex').slice(0, 16); // not savable as read back: no cache
    const rows = Buffer.from(n ? `${lines.join('\n')}\n` : '', 'latin1');
    const sections: Record<string, ArrayBufferView> = {
      st: Float64Array.from(s.st),
      conf: enc.conf,
      updMs: enc.updMs,
      imp0: enc.imp0,
      rowStarts,
      pathStarts: paths.starts,
      updStarts: upd.starts,
      dupStarts: dup.starts,
      crtStarts: crt.starts,
      ev: enc.ev,
      lc: enc.lc,
      scope: enc.scope,
      subject: enc.subject,
      vf: enc.vf,
      vt: enc.vt,
      kind: enc.kind,
      status: enc.status,
      paths: paths.bytes,
      upd: upd.bytes,
      dup: dup.bytes,
      crt: crt.bytes,
      oids: Buffer.from(s.oids.map((b) => (b.length === 40 ? b : NO_BLOB)).join(''), 'latin1'),
      rows,
    };
    const core = {
      n,
      le: endianness() === 'LE',
      bad: s.bad,
      dirs: s.dirs,
      ...(s.nodup ? { nodup: true } : {}),
      scopes: enc.scopes,
      subjects: enc.subjects,
      evs: enc.evs,
      lcs: enc.lcs,
      dates: enc.dates,
      sizes: [paths.bytes.length, upd.bytes.length, dup.bytes.length, crt.bytes.length, rows.length],
      ascii: [paths.ascii, upd.ascii, dup.ascii, crt.ascii],
    };
    const hash = nodeCrypto().createHash('sha1').update(JSON.stringify(core));
    const body: Buffer[] = [];
    for (const [name] of layout(n, core.sizes as CatalogHeader['sizes'])) {
      const v = sections[name];
      const b = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
      hash.update(b);
      body.push(b);
    }
    const id = hash.digest('hex').slice(0, 16);
    try {
      if (!this.ws.ensureLocal()) return id;
      this.ws.local('cache', true);
      const head = Buffer.from(`${asciiJson(JSON.stringify({ v: CATALOG_VERSION, id, ...core }))}\n`, 'latin1');
      const parts: Buffer[] = [head];
      let off = head.length;
      for (const b of body) {
        const pad = align8(off) - off;
        if (pad) parts.push(Buffer.alloc(pad));
        parts.push(b);
        off += pad + b.length;
      }
      writeFileAtomic(this.cacheFile, Buffer.concat(parts), { fsync: false });
      rmSync(this.deltaFile, { force: true });
      rmSync(join(this.cacheFile, '..', OLD_CACHE_FILE), { force: true });
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

/**
 * `cache/catalog.bin` (docs/ARCHITECTURE.md, "The catalog on disk"): a JSON header line, then
 * each entry file's sorted path, stat numbers, git blob id, filter columns and metadata row as
 * typed arrays and byte strings; `catalog.delta` (catalog-delta.ts) holds small changes on top.
 * Reading it makes no string per file (texts.ts). A missing, corrupt or foreign cache reads as none.
 */
import { nodeCrypto } from '../node-crypto.js';
import { rmSync } from 'node:fs';
import { appendNoFollow, readNoFollow } from './state-dir.js';
import { endianness } from 'node:os';
import { join } from 'node:path';
import type { Problem } from '../core/errors.js';
import { encodeColumns, NUMERIC, NUMERIC_COLUMNS, type CachedColumns, type NumericColumn } from './catalog-columns.js';
import { writeFileAtomic } from './fsutil.js';
import { ByteTexts, encodeTexts, type Texts } from './texts.js';
import { applyDelta, asciiJson, deltaLinesOf, NO_BLOB, rowMeta } from './catalog-delta.js';
import type { Workspace } from './workspace.js';

export { contentPosition, deltaFits } from './catalog-delta.js';

const CATALOG_VERSION = 16;
const CACHE_FILE = 'catalog.bin';

/**
 * A section folder as listed: its ctime and inode before the listing, and when that was. Any
 * change to its names sets its ctime, so a folder with these, listed `DIR_SETTLE_MS` after its
 * ctime, still holds exactly the names listed then.
 */
export type DirRecord = [ctimeMs: number, ino: number, listedAt: number];

/** File systems with coarse timestamps (2 s on FAT) could give a change right after a listing the listed ctime. */
export const DIR_SETTLE_MS = 2_000;

/** The text tables, a string per file each: bytes and a table of starts (rows: ASCII JSON). */
const TEXTS = ['paths', 'upd', 'dup', 'crt', 'rows'] as const;
type TextTable = (typeof TEXTS)[number];

/** The header line: what is not per file, and how long the byte sections after it are. */
interface CatalogHeader {
  v: number;
  /** A hash of the rest: the base that lines of `catalog.delta` name. */
  id: string;
  n: number;
  /** The machine's byte order (the cache never leaves it). */
  le: boolean;
  /** Problems of the files that could not be used, by position. */
  bad: Record<string, Problem[]>;
  dirs: Record<string, DirRecord>;
  /** No file loses its id to another file of its project. */
  nodup?: boolean;
  /** The tables the columns' codes index. */
  scopes: string[];
  subjects: string[];
  evs: string[];
  dates: string[];
  lcs: string[];
  /** Each text table's byte length, and whether it is ASCII (read as latin1, a straight copy). */
  texts: Record<TextTable, [bytes: number, ascii: boolean]>;
}

type Section = Float64Array | Uint32Array | Int32Array | Int8Array | Buffer;
type ArrayType = { new (buffer: ArrayBufferLike, offset: number, length: number): Section; BYTES_PER_ELEMENT: number };

/** The sections after the header line, in order, each at a multiple of 8 bytes: typed array (none: bytes) and count. */
function layout(n: number, texts: CatalogHeader['texts']): [name: string, type: ArrayType | null, count: number][] {
  return [
    ['st', Float64Array, 3 * n],
    ...Object.entries(NUMERIC).map(([k, type]) => [k, type, n] as [string, ArrayType, number]),
    ...TEXTS.map((t) => [`${t}Starts`, Uint32Array, n + 1] as [string, ArrayType, number]),
    ...TEXTS.map((t) => [t, null, texts[t][0]] as [string, null, number]),
    ['oids', null, 40 * n],
  ];
}

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
  /** The git blob id each file's row was read from, 40 hex digits per file (NO_BLOB: unknown), as one string. */
  oids: () => string;
  /** The metadata row of each usable file (a JSON array), '' for a bad one. */
  lines: Texts;
  bad: Record<string, Problem[]>;
  dirs: Record<string, DirRecord>;
  cols: CachedColumns;
  nodup: boolean;
  /** How many of `changeLog` came before no file was known to lose its id (`nodup`, a `#nodup` line); -1: never. */
  uniqueUpTo: number;
  /** The id of this content (see contentAfter). */
  content: string;
  /** The files the delta's file lines name, in order: those after a content id's count may differ from it. */
  changeLog: string[];
  /** The text of each of the delta's file lines, parallel to `changeLog`. */
  changeLines: string[];
}

/** The stamp of file `i` (see stampOf), made from its stat numbers rather than kept as a string. */
export function stampAt(st: ArrayLike<number>, i: number): string {
  return `${st[3 * i]}:${st[3 * i + 1]}:${st[3 * i + 2]}`;
}

/** The blob id the cache holds for file `i` ('' when not known). */
export function blobAt(file: CatalogFile, i: number): string {
  const b = file.oids().slice(40 * i, 40 * i + 40);
  return b === NO_BLOB ? '' : b;
}

/** No cache: what a first pass builds on. */
export function emptyCatalog(): CatalogFile {
  const none = new ByteTexts(Buffer.alloc(0), new Uint32Array(1), true);
  const cols = { ...encodeColumns([]), upd: none, dup: none, crt: none };
  return {
    id: '',
    deltaLines: 0,
    paths: none,
    st: new Float64Array(0),
    oids: () => '',
    lines: none,
    bad: {},
    dirs: {},
    cols,
    nodup: false,
    uniqueUpTo: -1,
    content: '',
    changeLog: [],
    changeLines: [],
  };
}

/** The header line of `bytes`, if it is one this version wrote on this machine; and where the sections start. */
function parseHeader(bytes: Buffer): { h: CatalogHeader; start: number } | null {
  const nl = bytes.indexOf(10);
  if (nl < 0) return null;
  const h = JSON.parse(bytes.toString('latin1', 0, nl)) as CatalogHeader;
  const ok =
    h.v === CATALOG_VERSION &&
    h.le === (endianness() === 'LE') &&
    typeof h.id === 'string' &&
    Number.isInteger(h.n) &&
    h.n >= 0 &&
    TEXTS.every((t) => Number.isInteger(h.texts?.[t]?.[0]) && h.texts[t][0] >= 0) &&
    typeof h.bad === 'object' &&
    h.bad !== null &&
    typeof h.dirs === 'object' &&
    h.dirs !== null &&
    [h.scopes, h.subjects, h.evs, h.dates, h.lcs].every(Array.isArray);
  return ok ? { h, start: nl + 1 } : null;
}

/**
 * The cache as saved (without its delta), its sections views of `bytes`; null when not a whole
 * cache. Our writer's output is consistent by construction: a file cut short or padded is caught
 * by its size, and each text table must end where its bytes do.
 */
function parseCache(bytes: Buffer): CatalogFile | null {
  const head = parseHeader(bytes);
  if (!head) return null;
  const { h } = head;
  // The sections are views of the bytes, which must then start at a multiple of 8.
  if (bytes.byteOffset % 8 !== 0) bytes = Buffer.from(new Uint8Array(bytes));
  const at = new Map<string, Section>();
  let off = head.start;
  for (const [name, type, count] of layout(h.n, h.texts)) {
    off = align8(off);
    const end = off + count * (type?.BYTES_PER_ELEMENT ?? 1);
    if (end > bytes.length) return null;
    at.set(name, type ? new type(bytes.buffer, bytes.byteOffset + off, count) : bytes.subarray(off, end));
    off = end;
  }
  if (off !== bytes.length) return null;
  const get = <T extends Section>(name: string): T => at.get(name) as T;
  const texts = {} as Record<TextTable, ByteTexts>;
  for (const t of TEXTS) {
    const starts = get<Uint32Array>(`${t}Starts`);
    // A text table whose starts do not end where its bytes do is not one our writer saved.
    if (starts[0] !== 0 || starts[h.n] !== h.texts[t][0]) return null;
    texts[t] = new ByteTexts(get(t), starts, h.texts[t][1] === true);
  }
  const { evs, dates, lcs, scopes, subjects } = h;
  const numbers = Object.fromEntries(NUMERIC_COLUMNS.map((k) => [k, get(k)])) as Pick<CachedColumns, NumericColumn>;
  const { paths, upd, dup, crt, rows } = texts;
  let oids: string | undefined;
  return {
    id: h.id,
    deltaLines: 0,
    paths,
    st: get('st'),
    lines: rows,
    bad: h.bad,
    dirs: h.dirs,
    cols: { ...numbers, evs, dates, lcs, scopes, subjects, upd, dup, crt },
    nodup: h.nodup === true,
    uniqueUpTo: h.nodup === true ? 0 : -1,
    content: h.id,
    changeLog: [],
    changeLines: [],
    // The blob ids as one string, made when first asked for (a listing to match).
    oids: () => (oids ??= get<Buffer>('oids').toString('latin1')),
  };
}

export class CatalogCache {
  private readonly ws: Workspace;
  private readonly cacheFile: string;
  private readonly deltaFile: string;

  constructor(ws: Workspace | { localDir: string; ensureLocal?: undefined; local?: undefined }) {
    this.ws = ws as Workspace;
    this.cacheFile = join(ws.localDir, 'cache', CACHE_FILE);
    this.deltaFile = join(ws.localDir, 'cache', 'catalog.delta');
  }

  /** The cache as saved, with the delta applied; null when missing, corrupt or foreign (rebuilt by the caller). */
  load(): CatalogFile | null {
    this.ws.local?.('cache'); // checked before anything in it is read (state-dir.ts)
    let file: CatalogFile | null;
    try {
      file = parseCache(readNoFollow(this.cacheFile));
    } catch {
      return null;
    }
    if (!file) return null;
    let delta = '';
    try {
      delta = readNoFollow(this.deltaFile).toString('latin1');
    } catch {
      /* no delta */
    }
    applyDelta(file, delta);
    return file;
  }

  /**
   * Appends changes to `catalog.delta` in one write (concurrent appenders do not interleave
   * lines). The content id after them, counted on from `content`; null when not written.
   */
  appendDelta(id: string, rows: unknown[][], content = id): string | null {
    if (!rows.length) return content;
    const after = deltaLinesOf(id, rows, content);
    try {
      if (!this.ws.ensureLocal()) return null;
      this.ws.local('cache', true);
      appendNoFollow(this.deltaFile, `${after.lines.join('\n')}\n`);
    } catch {
      return null;
    }
    return after.content;
  }

  /** Rewrites the whole cache (a new base: the delta goes) and returns its id. */
  save(f: CatalogFile): string {
    const n = f.paths.length;
    const all = (t: Texts): string[] => Array.from({ length: t.length }, (_, i) => t.get(i));
    const files = all(f.paths);
    const lines = all(f.lines);
    // The columns are made again from the rows (their tables keep only the values in use).
    const enc = encodeColumns(lines.map((line, i) => rowMeta(line, Boolean(f.bad[i]))));
    const strings: Record<TextTable, string[]> = { paths: files, upd: enc.upd, dup: enc.dup, crt: enc.crt, rows: lines.map(asciiJson) };
    const sections: Record<string, ArrayBufferView> = { st: f.st, oids: Buffer.from(f.oids(), 'latin1') };
    for (const k of NUMERIC_COLUMNS) sections[k] = enc[k];
    const texts = {} as CatalogHeader['texts'];
    for (const t of TEXTS) {
      const e = encodeTexts(strings[t]);
      // Not savable as read back (a string that does not survive the trip, or unsorted paths): no cache.
      if (!e || (t === 'paths' && !files.every((p, i) => i === 0 || files[i - 1]! < p)))
        return nodeCrypto().createHash('sha1').update(JSON.stringify(files)).digest('hex').slice(0, 16);
      sections[`${t}Starts`] = e.starts;
      sections[t] = e.bytes;
      texts[t] = [e.bytes.length, e.ascii];
    }
    const core = {
      n,
      le: endianness() === 'LE',
      bad: f.bad,
      dirs: f.dirs,
      ...(f.nodup ? { nodup: true } : {}),
      scopes: enc.scopes,
      subjects: enc.subjects,
      evs: enc.evs,
      lcs: enc.lcs,
      dates: enc.dates,
      texts,
    };
    const hash = nodeCrypto().createHash('sha1').update(JSON.stringify(core));
    const body: Buffer[] = [];
    for (const [name] of layout(n, texts)) {
      const v = sections[name];
      if (!v) throw new Error(`catalog cache: no section ${name}`);
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
    } catch {
      /* a cache that cannot be saved only costs speed */
    }
    return id;
  }
}

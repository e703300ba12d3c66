/** `cache/catalog.bin`, the catalog's base (layout: docs/ARCHITECTURE.md, "The read path"); a missing, corrupt or foreign one reads as none. */
import { nodeCrypto } from '../node-crypto.js';
import { rmSync } from 'node:fs';
import { deserialize, serialize } from 'node:v8';
import { appendNoFollow, readNoFollow } from './state-dir.js';
import { join } from 'node:path';
import type { Problem } from '../core/errors.js';
import { encodeColumns, NUMERIC, NUMERIC_COLUMNS, TABLES, TEXT_TABLES, type CachedColumns, type TextTable } from './catalog-columns.js';
import { tryOr, writeFileAtomic } from './fsutil.js';
import { ByteTexts, encodeTexts, type Texts } from './texts.js';
import { applyDelta, asciiJson, deltaLinesOf, rowMeta } from './catalog-delta.js';
import type { Workspace } from './workspace.js';

const CATALOG_VERSION = 18;
const CACHE_FILE = 'catalog.bin';
const ID_LENGTH = 16;

/**
 * A section folder as listed: its ctime and inode before the listing, and when. Any change to its
 * names sets its ctime, so one listed `DIR_SETTLE_MS` after its ctime still holds those names
 * (coarse timestamps, 2 s on FAT, could give a change right after a listing the listed ctime).
 */
export type DirRecord = [ctimeMs: number, ino: number, listedAt: number];
export const DIR_SETTLE_MS = 2_000;

/** What catalog.bin holds after its id. */
interface Saved {
  v: number;
  bad: Record<string, Problem[]>;
  dirs: Record<string, DirRecord>;
  nodup: boolean;
  st: Float64Array;
  oids: Buffer;
  cols: CachedColumns;
  texts: Record<TextTable, [bytes: Buffer, starts: Uint32Array, ascii: boolean]>;
}

/** The cache as loaded: the base's sections with the delta applied, still sorted by path. */
export interface CatalogFile extends Record<TextTable, Texts> {
  id: string;
  /** Lines of `catalog.delta` applied on top of the base. */
  deltaLines: number;
  /** size, mtimeMs, ctimeMs of file i at 3i .. 3i+2. */
  st: Float64Array;
  /** The git blob id of each file's row, 40 hex digits per file (NO_BLOB: unknown), as one string. */
  oids: () => string;
  /** Problems of the files that could not be used, by position. */
  bad: Record<string, Problem[]>;
  dirs: Record<string, DirRecord>;
  cols: CachedColumns;
  /** The base knew no file to lose its id to another of its project. */
  nodup: boolean;
  /** The id of this content (see contentAfter). */
  content: string;
  /** The files the delta's file lines name, in order, and each line's text. */
  changeLog: string[];
  changeLines: string[];
}

/** No cache: what a first pass builds on. */
export function emptyCatalog(): CatalogFile {
  const none: Saved['texts']['paths'] = [Buffer.alloc(0), new Uint32Array(1), true];
  const texts = Object.fromEntries(TEXT_TABLES.map((t) => [t, none])) as Saved['texts'];
  const cols = encodeColumns([]);
  return parseCache('', { v: CATALOG_VERSION, bad: {}, dirs: {}, nodup: false, st: new Float64Array(0), oids: Buffer.alloc(0), cols, texts })!;
}

/** The base as saved, or null unless every section has the type and length this version writes. */
function parseCache(id: string, s: Saved): CatalogFile | null {
  if (s?.v !== CATALOG_VERSION || !(s.st instanceof Float64Array) || !Buffer.isBuffer(s.oids) || typeof s.bad !== 'object' || typeof s.dirs !== 'object')
    return null;
  const n = s.st.length / 3;
  if (!Number.isInteger(n) || s.oids.length !== 40 * n) return null;
  for (const k of NUMERIC_COLUMNS) if (!(s.cols?.[k] instanceof NUMERIC[k]) || s.cols[k].length !== n) return null;
  if (!TABLES.every((t) => Array.isArray(s.cols[t]))) return null;
  const texts = {} as Record<TextTable, Texts>;
  for (const t of TEXT_TABLES) {
    const [b, starts, ascii] = s.texts?.[t] ?? [];
    if (!Buffer.isBuffer(b) || !(starts instanceof Uint32Array) || starts.length !== n + 1 || starts[0] !== 0 || starts[n] !== b.length) return null;
    texts[t] = new ByteTexts(b, starts, ascii === true);
  }
  let oids: string | undefined;
  return {
    id,
    deltaLines: 0,
    ...texts,
    st: s.st,
    bad: s.bad,
    dirs: s.dirs,
    cols: s.cols,
    nodup: s.nodup === true,
    content: id,
    changeLog: [],
    changeLines: [],
    oids: () => (oids ??= s.oids.toString('latin1')),
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

  /** The cache with its delta applied; null when missing, corrupt or foreign. */
  load(): CatalogFile | null {
    this.ws.local?.('cache'); // checked before anything in it is read (state-dir.ts)
    const file = tryOr(() => {
      const bytes = readNoFollow(this.cacheFile);
      return parseCache(bytes.toString('latin1', 0, ID_LENGTH), deserialize(bytes.subarray(ID_LENGTH)) as Saved);
    }, null);
    if (!file) return null;
    applyDelta(file, tryOr(() => readNoFollow(this.deltaFile), Buffer.alloc(0)).toString('latin1'));
    return file;
  }

  /** Appends to `catalog.delta` in one write (appenders do not interleave); the content id after, null when not written. */
  appendDelta(id: string, rows: unknown[][], content = id): string | null {
    if (!rows.length) return content;
    const after = deltaLinesOf(id, rows, content);
    return tryOr(() => {
      if (!this.ws.ensureLocal()) return null;
      this.ws.local('cache', true);
      appendNoFollow(this.deltaFile, `${after.lines.join('\n')}\n`);
      return after.content;
    }, null);
  }

  /** Rewrites the whole cache (a new base: the delta goes) and returns its id. */
  save(f: CatalogFile): string {
    const all = (t: Texts): string[] => Array.from({ length: t.length }, (_, i) => t.get(i));
    const files = all(f.paths);
    const lines = all(f.rows);
    // The columns are made again from the rows (their tables keep only the values in use).
    const { upd, dup, crt, ...cols } = encodeColumns(lines.map((line, i) => rowMeta(line, Boolean(f.bad[i]))));
    const strings: Record<TextTable, string[]> = { paths: files, upd, dup, crt, rows: lines.map(asciiJson) };
    const texts = {} as Saved['texts'];
    for (const t of TEXT_TABLES) {
      const e = encodeTexts(strings[t]);
      // Not savable as read back (a string that does not survive the trip, or unsorted paths): no cache.
      if (!e || (t === 'paths' && !files.every((p, i) => i === 0 || files[i - 1]! < p)))
        return nodeCrypto().createHash('sha1').update(JSON.stringify(files)).digest('hex').slice(0, ID_LENGTH);
      texts[t] = [e.bytes, e.starts, e.ascii];
    }
    const saved: Saved = { v: CATALOG_VERSION, bad: f.bad, dirs: f.dirs, nodup: f.nodup, st: f.st, oids: Buffer.from(f.oids(), 'latin1'), cols, texts };
    const body = serialize(saved);
    const id = nodeCrypto().createHash('sha1').update(body).digest('hex').slice(0, ID_LENGTH);
    // A cache that cannot be saved only costs speed.
    tryOr(() => {
      if (!this.ws.ensureLocal()) return;
      this.ws.local('cache', true);
      writeFileAtomic(this.cacheFile, Buffer.concat([Buffer.from(id, 'latin1'), body]), { fsync: false });
      rmSync(this.deltaFile, { force: true });
    }, undefined);
    return id;
  }
}

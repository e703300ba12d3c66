/**
 * The catalog's cache file, `.bass-agents/cache/catalog.json`: a header line (every entry file's
 * path in sorted order, with its stat numbers, stamp and git blob id as parallel arrays; the
 * problems of unusable files; what each section folder looked like when it was last listed),
 * then one metadata row per file; and `catalog.delta`, small changes appended on top of it. A
 * missing, corrupt or foreign cache reads as none: the files are the truth.
 *
 * The file is plain ASCII (other characters are written as JSON escapes), so its text is read
 * as latin1, a straight copy, instead of being decoded as UTF-8 (~10 ms of a 4 MB file): the
 * header when loaded, each row only when asked for (FileRows).
 */
import { nodeCrypto } from '../node-crypto.js';
import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Problem } from '../core/errors.js';
import { lowerBound } from '../core/sorted.js';
import { metaFromRow } from './meta-row.js';
import { emptyColumns, permuteColumns, putColumns, validColumns, type Columns, type Rows } from './catalog-columns.js';
import { writeFileAtomic } from './fsutil.js';
import type { Workspace } from './workspace.js';

const CATALOG_VERSION = 13;

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
  /** Where each row starts after the header line, and where one more would: a Uint32Array in base64 (see rowStarts). */
  rows?: string;
}

/** The cache as loaded: the header's arrays with the delta applied, still sorted by path. */
export interface CatalogFile {
  id: string;
  /** Lines of `catalog.delta` applied on top of the base. */
  deltaLines: number;
  files: string[];
  st: Float64Array;
  /** As in the header (see blobAt). */
  oids: string;
  /** The metadata row of each usable file (a JSON array), '' for a bad one. */
  lines: Rows;
  bad: Record<string, Problem[]>;
  dirs: Record<string, DirRecord>;
  cols: Columns;
  nodup: boolean;
  /** The id of this content: the base's id, chained through the delta's file lines (see chainContent). */
  content: string;
  /**
   * The files named by the delta's file lines, in order, and for each content id along the
   * chain how many of them came before it: the files that may differ from that content are the
   * rest of the list.
   */
  changeLog: string[];
  chainAt: Map<string, number>;
}

/** What the cache is saved from (files in any order: `save` sorts them): the header's fields as plain arrays ('' for an unknown blob). */
export type CatalogContent = Omit<CatalogHeader, 'v' | 'id' | 'st' | 'oids'> & { st: number[]; oids: string[]; lines: string[] };

/**
 * The stamp of file `i` (see stampOf): made from its stat numbers, which are the ones it was
 * made from, so the cache does not keep 10K stamp strings beside them.
 */
export function stampAt(st: ArrayLike<number>, i: number): string {
  return `${st[3 * i]}:${st[3 * i + 1]}:${st[3 * i + 2]}`;
}

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
    oids: file.files.map((_, i) => blobAt(file, i)),
    lines: Array.from({ length: file.lines.length }, (_, i) => file.lines.get(i)),
    bad: { ...file.bad },
    dirs: { ...file.dirs },
    cols: permuteColumns(
      file.cols,
      file.files.map((_, i) => i),
    ),
    nodup: file.nodup,
  };
}

/**
 * Rows read from the cache file, each decoded from the file's bytes when asked for: a cold
 * command reads a few of 10K (decoding all 2.3 MB of them, and 10K strings, was ~5 ms).
 */
class FileRows implements Rows {
  constructor(
    private readonly bytes: Buffer,
    /** Where row i starts; row i ends one byte before row i + 1 starts (its newline). */
    private readonly starts: Uint32Array,
  ) {}

  get length(): number {
    return this.starts.length - 1;
  }

  get(i: number): string {
    return this.bytes.toString('latin1', this.starts[i], this.starts[i + 1] - 1);
  }
}

/** The rows of a cache with its delta applied: the base's where a file did not change, the delta's where it did. */
class MergedRows implements Rows {
  constructor(
    private readonly base: Rows,
    /** Per position: the base's position of its row, or -1 - its index in `extra`. */
    private readonly from: Int32Array,
    private readonly extra: string[],
  ) {}

  get length(): number {
    return this.from.length;
  }

  get(i: number): string {
    const f = this.from[i];
    return f >= 0 ? this.base.get(f) : this.extra[-1 - f];
  }
}

/**
 * Where each of the `n` rows after the header line starts in the file, from the header's record
 * of them (`rows`: where each starts after the header line, and where one more would): null
 * unless every row ends with a newline but the last, which ends the file. (Finding the 10K
 * newlines with Buffer.indexOf cost ~10 ms.)
 */
function rowStarts(bytes: Buffer, nl: number, n: number, record: unknown): Uint32Array | null {
  if (n === 0) return nl < 0 ? new Uint32Array(1) : null;
  if (typeof record !== 'string' || nl < 0) return null;
  const raw = Buffer.from(record, 'base64');
  if (raw.length !== 4 * (n + 1)) return null;
  const starts = new Uint32Array(n + 1);
  new Uint8Array(starts.buffer).set(raw);
  for (let i = 0; i <= n; i++) starts[i] += nl + 1;
  if (starts[0] !== nl + 1 || starts[n] !== bytes.length + 1) return null;
  for (let i = 1; i < n; i++) if (!(starts[i] > starts[i - 1]) || bytes[starts[i] - 1] !== 10) return null;
  return starts;
}

/** The arrays one after another (a few big slices: one copy each, not a push per element). */
function joined<T>(arrays: T[][]): T[] {
  let out: T[] = [];
  for (let i = 0; i < arrays.length; i += 1024) out = out.concat(...arrays.slice(i, i + 1024));
  return out;
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
      const bytes = readFileSync(this.cacheFile);
      const nl = bytes.indexOf(10);
      const h = JSON.parse(bytes.toString('latin1', 0, nl < 0 ? bytes.length : nl)) as CatalogHeader;
      const n = h?.files?.length;
      const st = h.v === CATALOG_VERSION ? decodeNumbers(h.st, n) : null;
      if (
        !st ||
        typeof h.id !== 'string' ||
        typeof h.oids !== 'string' ||
        h.oids.length !== 40 * n ||
        typeof h.bad !== 'object' ||
        typeof h.dirs !== 'object' ||
        h.dirs === null ||
        !validColumns(h.cols, n)
      )
        return null;
      const starts = rowStarts(bytes, nl, n, h.rows);
      if (!starts) return null;
      for (let i = 1; i < n; i++) if (!(h.files[i - 1] < h.files[i])) return null; // not ours: sorted and unique
      const file: CatalogFile = {
        id: h.id,
        deltaLines: 0,
        files: h.files,
        st,
        oids: h.oids,
        lines: new FileRows(bytes, starts),
        bad: h.bad,
        dirs: h.dirs,
        cols: h.cols,
        nodup: h.nodup === true,
        content: h.id,
        changeLog: [],
        chainAt: new Map([[h.id, 0]]),
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
      const chained = (): void => {
        file.deltaLines++;
        file.changeLog.push(rel);
        file.content = chainContent(file.content, raw);
        file.chainAt.set(file.content, file.changeLog.length);
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
    if (!changes.size) return;
    // One merge of the sorted base with the changed files (new ones sorted in), as runs: the
    // unchanged files between two changes (nearly all: a write changes a few of 10K) are copied
    // a run at a time (slices), and their rows stay where they are in the file (MergedRows).
    // Copying them one by one, field by field, cost a cold read after any write ~25 ms.
    const n = file.files.length;
    // The changes in order: where in the base each goes (an added file before the base file it
    // sorts before), and what it is (null: the base file there is removed).
    const events: { at: number; rel: string; state: FileState | null; adds: boolean }[] = [];
    for (const [rel, state] of changes) {
      const at = lowerBound(file.files, rel);
      const adds = file.files[at] !== rel;
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
    const fresh = emptyColumns(file.cols);
    for (const p of parts) if (typeof p[0] === 'string') putColumns(fresh, rowMeta((p[1] as FileState)[4], Boolean((p[1] as FileState)[5])));
    const perFile = (Object.keys(fresh) as (keyof Columns)[]).filter((c) => c !== 'scopes' && c !== 'subjects');
    const segments = { files: [] as string[][], cols: new Map(perFile.map((c) => [c, [] as unknown[][]])) };
    let count = 0;
    for (const p of parts) count += typeof p[0] === 'number' ? (p[1] as number) - p[0] : 1;
    const oids: string[] = [];
    const st = new Float64Array(3 * count);
    const rowOf = new Int32Array(count); // a base position, or -1 - (index into `extra`)
    const extra: string[] = [];
    const bad: Record<string, Problem[]> = {};
    const badAt = Object.keys(file.bad).map(Number);
    let at = 0;
    let k = 0; // the next new file's place in `fresh`
    for (const p of parts) {
      if (typeof p[0] === 'number') {
        const [from, to] = p as [number, number];
        segments.files.push(file.files.slice(from, to));
        for (const c of perFile) segments.cols.get(c)!.push((file.cols[c] as unknown[]).slice(from, to));
        oids.push(file.oids.slice(40 * from, 40 * to));
        st.set(file.st.subarray(3 * from, 3 * to), 3 * at);
        for (let i = from; i < to; i++) rowOf[at + i - from] = i;
        for (const b of badAt) if (b >= from && b < to) bad[at + b - from] = file.bad[b];
        at += to - from;
      } else {
        const [rel, state] = p as [string, FileState];
        segments.files.push([rel]);
        for (const c of perFile) segments.cols.get(c)!.push([(fresh[c] as unknown[])[k]]);
        oids.push(state[6].length === 40 ? state[6] : NO_BLOB);
        st.set([state[0], state[1], state[2]], 3 * at);
        rowOf[at] = -1 - extra.length;
        extra.push(state[4]);
        if (state[5]) bad[at] = state[5];
        k++;
        at++;
      }
    }
    const cols = { scopes: fresh.scopes, subjects: fresh.subjects } as Columns;
    for (const c of perFile) (cols as unknown as Record<string, unknown[]>)[c] = joined(segments.cols.get(c)!);
    Object.assign(file, {
      files: joined(segments.files),
      st,
      oids: oids.join(''),
      lines: new MergedRows(file.lines, rowOf, extra),
      bad,
      cols,
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
      oids: s.oids.map((b) => (b.length === 40 ? b : NO_BLOB)).join(''),
      bad: s.bad,
      dirs: s.dirs,
      cols: s.cols,
      ...(s.nodup ? { nodup: true } : {}),
    });
    const id = nodeCrypto().createHash('sha1').update(core).digest('hex').slice(0, 16);
    try {
      if (!this.ws.ensureLocal()) return id;
      const lines = s.lines.map(asciiJson);
      const starts = new Uint32Array(lines.length + 1);
      for (let i = 0; i < lines.length; i++) starts[i + 1] = starts[i] + lines[i].length + 1;
      const rows = lines.length ? `"rows":"${Buffer.from(starts.buffer).toString('base64')}",` : '';
      const body = lines.length ? `\n${lines.join('\n')}` : '';
      writeFileAtomic(this.cacheFile, `{"v":${CATALOG_VERSION},"id":"${id}",${rows}${asciiJson(core.slice(1))}${body}`, { fsync: false });
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

/**
 * `catalog.delta`: changes appended on top of the cache's base, and the content ids they chain.
 * One JSON array per line, each naming its base: `[id, file, size, mtimeMs, ctimeMs, row,
 * problems, blob]` sets a file, `[id, file]` removes one, `[id, "#dir", folder, ctimeMs, ino,
 * listedAt]` records a folder's listing.
 */
import type { Problem } from '../core/errors.js';
import { encodeColumns, metaFromRow, numericColumns, NUMERIC_COLUMNS, TEXT_TABLES, type CachedColumns, type TextTable } from './catalog-columns.js';
import { MergedTexts, lowerBoundText } from './texts.js';
import type { CatalogFile } from './catalog-cache.js';
import { tryOr } from './fsutil.js';

/** The blob id of a file whose blob is not known (git's "no object"): never matches git's view. */
export const NO_BLOB = '0'.repeat(40);

/** Up to this many changes at once go to the delta, until it holds this many lines or a twentieth of the files. */
const DELTA_BATCH_MAX = 256;
const DELTA_LINES_MIN = 1000;

/** Whether `count` more changes still go to the delta rather than a rewrite of the whole cache. */
export const deltaFits = (count: number, deltaLines: number, files: number): boolean =>
  count <= DELTA_BATCH_MAX && deltaLines + count <= Math.max(DELTA_LINES_MIN, files / 20);

export type FileState = [number, number, number, string, Problem[] | null, string];

/** JSON with every character outside ASCII escaped, so it reads back exactly as latin1. */
export const asciiJson = (text: string): string =>
  /[^\x00-\x7f]/.test(text) ? text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : text;

/** The id of `base` with the first `k` file lines of its delta, the k-th being `line` (the delta is only appended to, and a line states a file whole). */
export const contentAfter = (base: string, k: number, line: string): string => (k === 0 ? base : `${base}+${k}.${lineHash(line)}`);

/** How many of the delta's file lines `content` holds, if this loaded cache went through it. */
export function contentPosition(file: CatalogFile, content: string): number | undefined {
  const c = contentParts(content);
  if (c?.base !== file.id) return undefined;
  if (c.lines === 0) return 0;
  const line = file.changeLines[c.lines - 1];
  return line !== undefined && lineHash(line) === c.check ? c.lines : undefined;
}

function contentParts(content: string): { base: string; lines: number; check?: string } | null {
  const m = /^([^+]+)(?:\+(\d+)\.([0-9a-f]{16}))?$/.exec(content);
  return m?.[1] ? { base: m[1], lines: m[2] === undefined ? 0 : Number(m[2]), check: m[3] } : null;
}

/** 64 bits of a line (FNV-1a and a multiply-rotate mix), as 16 hex digits: a check, not a defence. */
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

/** The lines to append for `rows` on base `id`, and the content id after them, counted on from `content`. */
export function deltaLinesOf(id: string, rows: unknown[][], content: string): { lines: string[]; content: string } {
  const lines = rows.map((r) => asciiJson(JSON.stringify([id, ...r])));
  let k = contentParts(content)?.lines ?? 0;
  let last: string | undefined;
  rows.forEach((r, i) => {
    if (r[0] === '#dir') return;
    k++;
    last = lines[i];
  });
  return { lines, content: last === undefined ? content : contentAfter(id, k, last) };
}

/** Applies the lines of `text` that name this base, in order; a torn or foreign line is skipped. */
export function applyDelta(file: CatalogFile, text: string): void {
  const changes = new Map<string, FileState | null>();
  for (const raw of text.split('\n')) {
    const d = tryOr<unknown>(() => (raw ? JSON.parse(raw) : undefined), undefined);
    if (!Array.isArray(d) || d[0] !== file.id || typeof d[1] !== 'string') continue;
    const [, rel, ...rest] = d as [string, string, ...unknown[]];
    if (rel === '#dir') {
      const [dir, ctime, ino, at] = rest;
      if (typeof dir === 'string' && typeof ctime === 'number' && typeof ino === 'number' && typeof at === 'number') {
        file.dirs[dir] = [ctime, ino, at];
        file.deltaLines++;
      }
      continue;
    }
    const state = rest.length ? fileState(rest) : null;
    if (state === undefined) continue;
    changes.set(rel, state);
    file.deltaLines++;
    file.changeLog.push(rel);
    file.changeLines.push(raw);
    file.content = contentAfter(file.id, file.changeLog.length, raw);
  }
  if (changes.size) mergeChanges(file, changes);
}

function fileState([size, mtime, ctime, row, problems, oid]: unknown[]): FileState | undefined {
  if (typeof size !== 'number' || typeof mtime !== 'number' || typeof ctime !== 'number' || typeof row !== 'string') return undefined;
  return [size, mtime, ctime, row, Array.isArray(problems) ? (problems as Problem[]) : null, typeof oid === 'string' ? oid : ''];
}

/** A run of the base [from, to), or a file's new state. */
type Part = { run: [from: number, to: number] } | { rel: string; state: FileState };

/** The changes in path order, as runs of the base and new states (a removed file: a gap). */
function mergePlan(file: CatalogFile, changes: Map<string, FileState | null>): Part[] {
  const n = file.paths.length;
  const events: { at: number; rel: string; state: FileState | null; adds: boolean }[] = [];
  for (const [rel, state] of changes) {
    const at = lowerBoundText(file.paths, rel);
    const adds = at === n || !file.paths.equals(at, rel, 0, rel.length);
    if (adds && !state) continue; // removed, and never in the base
    events.push({ at, rel, state, adds });
  }
  events.sort((x, y) => x.at - y.at || Number(y.adds) - Number(x.adds) || (x.rel < y.rel ? -1 : 1));
  const parts: Part[] = [];
  let run = 0;
  for (const e of events) {
    if (e.at > run) parts.push({ run: [run, e.at] });
    run = Math.max(run, e.adds ? e.at : e.at + 1);
    if (e.state) parts.push({ rel: e.rel, state: e.state });
  }
  if (n > run) parts.push({ run: [run, n] });
  return parts;
}

/** Merges the changed files into the sorted base: unchanged runs are typed-array copies, their texts left in place. */
export function mergeChanges(file: CatalogFile, changes: Map<string, FileState | null>): void {
  const parts = mergePlan(file, changes);
  const news = parts.filter((p): p is Extract<Part, { state: FileState }> => 'state' in p);
  const metas = news.map(({ state }) => rowMeta(state[3], Boolean(state[4])));
  const fresh = encodeColumns(metas, file.cols);
  const count = parts.reduce((sum, p) => sum + ('run' in p ? p.run[1] - p.run[0] : 1), 0);
  const c = file.cols;
  const { upd, dup, crt, ...tables } = fresh;
  const cols: CachedColumns = { ...tables, ...numericColumns(count) };
  const oidParts: (readonly [lo: number, hi: number] | string)[] = [];
  const st = new Float64Array(3 * count);
  const from = new Int32Array(count); // a base position, or -1 - (index into `news`)
  const bad: Record<string, Problem[]> = {};
  const badAt = Object.entries(file.bad).map(([k, v]) => [Number(k), v] as const);
  let at = 0;
  let k = 0;
  for (const p of parts) {
    if ('run' in p) {
      const [lo, hi] = p.run;
      for (const k of NUMERIC_COLUMNS) cols[k].set(c[k].subarray(lo, hi), at);
      oidParts.push(p.run);
      st.set(file.st.subarray(3 * lo, 3 * hi), 3 * at);
      for (let i = lo; i < hi; i++) from[at + i - lo] = i;
      for (const [b, problems] of badAt) if (b >= lo && b < hi) bad[at + b - lo] = problems;
      at += hi - lo;
      continue;
    }
    const { state } = p;
    for (const key of NUMERIC_COLUMNS) cols[key][at] = fresh[key][k] ?? 0;
    oidParts.push(state[5].length === 40 ? state[5] : NO_BLOB);
    st.set([state[0], state[1], state[2]], 3 * at);
    from[at] = -1 - k++;
    if (state[4]) bad[at] = state[4];
    at++;
  }
  const added: Record<TextTable, string[]> = { paths: news.map((p) => p.rel), upd, dup, crt, rows: news.map((p) => p.state[3]) };
  for (const t of TEXT_TABLES) file[t] = new MergedTexts(file[t], from, added[t]);
  const baseOids = file.oids;
  let oids: string | undefined;
  Object.assign(file, {
    st,
    oids: () => (oids ??= oidParts.map((p) => (typeof p === 'string' ? p : baseOids().slice(40 * p[0], 40 * p[1]))).join('')),
    bad,
    cols,
  });
}

/** The metadata of a row ('' or a bad file's: none). */
export const rowMeta = (line: string, bad: boolean): ReturnType<typeof metaFromRow> | null =>
  bad || !line ? null : tryOr(() => metaFromRow(JSON.parse(line) as unknown[]), null);

/**
 * The index snapshot, `cache/index.bin`: PostingIndex's tables as they are in memory, so loading
 * it is reading it. MAGIC, the head's byte length in 12 digits and `\n`, the head (`v8.serialize`
 * of Head: the tables every load reads), then from the next multiple of 8 bytes the postings,
 * pDoc (Uint32 each) then pFt (Uint16 each), then from the next multiple of 4 the summary terms of
 * each document (feedback.ts: off, Uint32 per document and one more; row, Uint32 each; df, Uint32 per term). A
 * one-shot query reads the head, the postings of the terms its text can reach and its best hits' rows only. Anything inconsistent (a cut or foreign file, another format
 * or byte order, numbers out of range) reads as no snapshot: it is rebuilt, never trusted.
 */
import { closeSync, constants, fstatSync, writeFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { deserialize, serialize } from 'node:v8';
import { readAt, readInto, writeFileAtomicWith } from '../store/fsutil.js';
import { openNoFollow } from '../store/state-dir.js';
import { INDEX_FORMAT, INDEX_OPTIONS } from './options.js';
import { FIELD_SHIFT, type BaseTier, type DocTables } from './postings.js';
import { TF_BITS, type Forward } from './feedback.js';

const MAGIC = 'BASS-AGENTS-INDEX\n';
/** MAGIC and the head's length. */
const PREFIX = MAGIC.length + 13;
const LE = endianness() === 'LE';
const FIELDS = INDEX_OPTIONS.fields.length;

interface Head {
  format: string;
  le: boolean;
  postings: number;
  /** Entries of the summary terms' rows. */
  rows: number;
  /** MiniSearch's running averages of field lengths. */
  avg: number[];
  /** The sorted vocabulary; each document's key; each document's file stamp (one a line, documents in number order). */
  terms: string;
  keys: string;
  stamps: string;
  /** Per document and field, unique tokens (MiniSearch's field length); per term and one more, where its postings start. */
  lens: Uint16Array;
  tOff: Uint32Array;
  /**
   * The catalog content the documents are exactly (CatalogSnapshot.contentId), when the index
   * was saved from a snapshot that had one; `pos`: each document's place among that snapshot's
   * entries (NO_POS for none), so that a reader holding the same content finds a hit's entry
   * without a map of every key.
   */
  catalog?: string;
  pos?: Uint32Array;
}

/** Whether a head is one of this format written on a machine of this byte order, its tables of consistent sizes. */
function checkHead(h: Head): boolean {
  if (h?.format !== INDEX_FORMAT || h.le !== LE || !Number.isInteger(h.postings) || h.postings < 0) return false;
  if (!Number.isInteger(h.rows) || h.rows < 0) return false;
  if (!Array.isArray(h.avg) || h.avg.length !== FIELDS || !h.avg.every((x) => typeof x === 'number')) return false;
  if (typeof h.terms !== 'string' || typeof h.keys !== 'string' || typeof h.stamps !== 'string') return false;
  if (!(h.lens instanceof Uint16Array) || h.lens.length % FIELDS !== 0 || !(h.tOff instanceof Uint32Array)) return false;
  if (h.tOff[0] !== 0 || h.tOff[h.tOff.length - 1] !== h.postings) return false;
  return h.pos === undefined || (h.pos instanceof Uint32Array && h.pos.length === h.lens.length / FIELDS);
}

/** The `n` lines of `text`, or null when it holds another number of them. */
function lines(text: string, n: number): string[] | null {
  if (n === 0) return text === '' ? [] : null;
  const out = text.split('\n');
  return out.length === n ? out : null;
}

/** Whether every posting names a document below `docs` and a field of the index (a function of its own: V8 optimises its loop). */
function inRange({ pDoc, pFt }: BaseTier, docs: number): boolean {
  for (let i = 0; i < pDoc.length; i++) if (pDoc[i]! >= docs || pFt[i]! >>> FIELD_SHIFT >= FIELDS) return false;
  return true;
}

export interface Loaded {
  docs: DocTables;
  /** Empty when `inSync`. */
  stamps: string[];
  base: BaseTier;
  /** The catalog content the snapshot was saved from (see Head.catalog). */
  catalog?: string;
  /** The snapshot holds exactly the documents of the caller's catalog (see readSnapshot): their stamps were not read. */
  inSync: boolean;
  /** When `inSync`: each document's place among the caller's catalog entries (see Head.pos). */
  pos?: Uint32Array;
  /** A partial load's reader of its best hits' summary terms and every term's df (term numbers of `terms`, the whole vocabulary); a whole load makes them again from its postings. */
  forward?: { read: RowReader; terms: string[]; docs: number };
}

export type RowReader = (docs: readonly number[]) => { rows: Map<number, Uint32Array>; df: Uint32Array };

/**
 * A reader of some documents' rows and the terms' df from the snapshot `file` as loaded (`same`: its fstat then): a
 * one-shot query's best hits are known only once it has scored. A file replaced since gives none (no feedback).
 */
function rowReader(file: string, same: { ino: number; size: number; mtimeMs: number }, at: number, n: number, rows: number, terms: number): RowReader {
  return (docs) => {
    const got = new Map<number, Uint32Array>();
    const df = new Uint32Array(terms);
    let fd: number | undefined;
    try {
      fd = openNoFollow(file, constants.O_RDONLY);
      const st = fstatSync(fd);
      if (st.ino !== same.ino || st.size !== same.size || st.mtimeMs !== same.mtimeMs) return { rows: got, df };
      readInto(fd, at + 4 * (n + 1 + rows), new Uint8Array(df.buffer));
      for (const d of docs) {
        if (!(d >= 0 && d < n) || got.has(d)) continue;
        const [from, to] = new Uint32Array(Uint8Array.from(readAt(fd, at + 4 * d, 8)).buffer);
        if (!(from! <= to! && to! <= rows)) continue;
        const row = new Uint32Array(to! - from!);
        if (row.length) readInto(fd, at + 4 * (n + 1) + 4 * from!, new Uint8Array(row.buffer));
        if (row.every((x) => x >>> TF_BITS < terms)) got.set(d, row);
      }
    } catch {
      /* no rows: no feedback */
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    return { rows: got, df };
  };
}

/**
 * Reads a snapshot; null when there is no usable one. With `pick` (it gets the sorted vocabulary
 * and names the terms to keep), the postings of those terms only, by positional reads.
 * `catalog`: the content ids of catalogs that hold the caller's entries (its own, and one known
 * to hold the same, see ReadModel.load); when the snapshot was saved from one of them, the stamps
 * are not read (`inSync`).
 */
export function readSnapshot(file: string, pick?: (terms: string[]) => Iterable<number>, catalog: readonly string[] = []): Loaded | null {
  let fd: number | undefined;
  try {
    fd = openNoFollow(file, constants.O_RDONLY);
    const size = fstatSync(fd).size;
    const prefix = size >= PREFIX ? readAt(fd, 0, PREFIX).toString('latin1') : '';
    if (!prefix.startsWith(MAGIC) || !/^\d{12}\n$/.test(prefix.slice(MAGIC.length))) return null;
    const len = Number(prefix.slice(MAGIC.length, -1));
    const h = deserialize(readAt(fd, PREFIX, len)) as Head;
    const at = (PREFIX + len + 7) & ~7; // where the postings start
    if (!checkHead(h)) return null;
    const n = h.lens.length / FIELDS;
    const fAt = (at + 6 * h.postings + 3) & ~3; // where the summary terms start
    const T = h.tOff.length - 1;
    if (fAt + 4 * (n + 1 + h.rows + T) !== size) return null;
    const inSync = typeof h.catalog === 'string' && catalog.includes(h.catalog);
    const keys = lines(h.keys, n);
    const stamps = inSync ? [] : lines(h.stamps, n);
    const terms = lines(h.terms, h.tOff.length - 1);
    if (!keys || !stamps || !terms) return null;
    // `!`: every chosen term i < terms.length, so i + 1 < tOff.length; j <= chosen.length < nOff.length.
    const { tOff } = h;
    const chosen = pick ? [...new Set(pick(terms))].filter((i) => i >= 0 && i < terms.length).sort((a, b) => a - b) : terms.map((_, i) => i);
    const nOff = new Uint32Array(chosen.length + 1);
    for (const [j, i] of chosen.entries()) {
      if (tOff[i]! > tOff[i + 1]!) return null;
      nOff[j + 1] = nOff[j]! + (tOff[i + 1]! - tOff[i]!);
    }
    const total = nOff[chosen.length]!;
    const base = { terms: chosen.map((i) => terms[i]!), tOff: nOff, pDoc: new Uint32Array(total), pFt: new Uint16Array(total) };
    const f = fd;
    const postings = (from: number, count: number, to: Uint32Array | Uint16Array): void => {
      if (count) readInto(f, at + from * to.BYTES_PER_ELEMENT, new Uint8Array(to.buffer, to.byteOffset, count * to.BYTES_PER_ELEMENT));
    };
    // Adjacent terms' postings are adjacent in the file: one read per run (a whole load is one).
    for (let j = 0, k = 1; j < chosen.length; j = k++) {
      while (k < chosen.length && chosen[k] === chosen[k - 1]! + 1) k++;
      const from = tOff[chosen[j]!]!;
      postings(from, nOff[k]! - nOff[j]!, base.pDoc.subarray(nOff[j]));
      postings(2 * h.postings + from, nOff[k]! - nOff[j]!, base.pFt.subarray(nOff[j])); // pFt follows pDoc: in units of pFt
    }
    if (!inRange(base, n)) return null;
    const forward = pick && { read: rowReader(file, fstatSync(fd), fAt, n, h.rows, T), terms, docs: n };
    return { docs: { keys, lens: h.lens, avg: h.avg }, stamps, base, catalog: h.catalog, inSync, pos: inSync ? h.pos : undefined, ...(forward && { forward }) };
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A document without a place among the catalog's entries (see Head.pos). */
export const NO_POS = 0xffffffff;

/** What a snapshot records of the catalog snapshot it was saved from (see Head.catalog). */
export interface CatalogMark {
  id: string;
  posOf: (key: string) => number | undefined;
}

export function writeSnapshot(file: string, docs: DocTables, stamps: string[], base: BaseTier, forward: Forward, catalog?: CatalogMark): void {
  const head: Head = {
    format: INDEX_FORMAT,
    le: LE,
    postings: base.pDoc.length,
    rows: forward.row.length,
    avg: docs.avg,
    terms: base.terms.join('\n'),
    keys: docs.keys.join('\n'),
    stamps: stamps.join('\n'),
    lens: docs.lens,
    tOff: base.tOff,
    ...(catalog ? { catalog: catalog.id, pos: Uint32Array.from(docs.keys, (k) => catalog.posOf(k) ?? NO_POS) } : {}),
  };
  const bytes = serialize(head);
  const pad = new Uint8Array((8 - ((PREFIX + bytes.length) % 8)) % 8);
  const raw = (a: Uint16Array | Uint32Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const gap = new Uint8Array((6 * base.pDoc.length) % 4); // to a multiple of 4 after the postings (they start at one of 8)
  const parts = [Buffer.from(`${MAGIC}${String(bytes.length).padStart(12, '0')}\n`, 'latin1'), bytes, pad, raw(base.pDoc), raw(base.pFt), gap];
  parts.push(raw(forward.off), raw(forward.row), raw(forward.df));
  writeFileAtomicWith(file, (fd) => parts.forEach((b) => writeFileSync(fd, b)), { fsync: false }); // each written whole, one after the other
}

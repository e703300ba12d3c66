/**
 * The index snapshot's file format, `cache/index.bin`: the in-memory layout of PostingIndex
 * written as it is, so loading it is reading it.
 *
 *   MAGIC, the head's byte length in 12 digits and `\n`;
 *   the head, `v8.serialize` of the version, options hash, byte order, counts, MiniSearch's
 *   running averages, the catalog mark (see Head.catalog), and the tables every load reads:
 *     terms   the sorted vocabulary, one term per line
 *     keys    each document's key, one per line, in document-number order
 *     stamps  each document's file stamp, one per line, in the same order
 *     lens    Uint16 per document and field: unique tokens (MiniSearch's field length)
 *     tOff    Uint32 per term + 1: where its postings start in pDoc/pFt
 *   then, from the next multiple of 8 bytes, the postings:
 *     pDoc    Uint32 per posting: the document number
 *     pFt     Uint16 per posting: field (top 3 bits) and term frequency
 *
 * A one-shot query reads the head and only the postings of the terms its text can reach
 * (positional reads). Anything inconsistent (a cut or foreign file, another version or byte
 * order, numbers out of range) reads as no snapshot: it is rebuilt, never trusted.
 */
import { closeSync, constants, fstatSync, writeSync } from 'node:fs';
import { endianness } from 'node:os';
import { deserialize, serialize } from 'node:v8';
import { readAt, readInto, writeFileAtomicWith } from '../store/fsutil.js';
import { openNoFollow } from '../store/state-dir.js';
import { OPTIONS_HASH, SNAPSHOT_VERSION } from './options.js';
import { FIELD_SHIFT, type BaseTier, type DocTables } from './postings.js';

const MAGIC = 'BASS-AGENTS-INDEX\n';
/** MAGIC and the head's length. */
const PREFIX = MAGIC.length + 13;
const LE = endianness() === 'LE';

export interface Head {
  v: number;
  optionsHash: string;
  le: boolean;
  fields: number;
  postings: number;
  avg: number[];
  terms: string;
  keys: string;
  stamps: string;
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

/** Whether a head is one this version wrote on a machine of this byte order, its tables of consistent sizes. */
function checkHead(h: Head): boolean {
  if (h?.v !== SNAPSHOT_VERSION || h.optionsHash !== OPTIONS_HASH || h.le !== LE || !Number.isInteger(h.fields) || h.fields <= 0) return false;
  if (!Number.isInteger(h.postings) || h.postings < 0 || !Array.isArray(h.avg) || h.avg.length !== h.fields || !h.avg.every((x) => typeof x === 'number'))
    return false;
  if (typeof h.terms !== 'string' || typeof h.keys !== 'string' || typeof h.stamps !== 'string') return false;
  if (!(h.lens instanceof Uint16Array) || h.lens.length % h.fields !== 0 || !(h.tOff instanceof Uint32Array)) return false;
  if (h.tOff[0] !== 0 || h.tOff[h.tOff.length - 1] !== h.postings) return false;
  return h.pos === undefined || (h.pos instanceof Uint32Array && h.pos.length === h.lens.length / h.fields);
}

/** The `n` lines of `text`, or null when it holds another number of them. */
function lines(text: string, n: number): string[] | null {
  if (n === 0) return text === '' ? [] : null;
  const out = text.split('\n');
  return out.length === n ? out : null;
}

/** Checks the numbers a corrupt file could get wrong: offsets ascending, documents and fields in range. */
function checkPostings(base: BaseTier, docs: number, fields: number): boolean {
  const { tOff, pDoc, pFt } = base;
  if (tOff.length !== base.terms.length + 1 || pFt.length !== pDoc.length) return false;
  // `!`: within the lengths just checked.
  for (let t = 0; t < base.terms.length; t++) if (tOff[t]! > tOff[t + 1]!) return false;
  for (let i = 0; i < pDoc.length; i++) if (pDoc[i]! >= docs || pFt[i]! >>> FIELD_SHIFT >= fields) return false;
  return true;
}

export interface Loaded {
  header: Head;
  docs: DocTables;
  /** Empty when `inSync`. */
  stamps: string[];
  base: BaseTier;
  /** The snapshot holds exactly the documents of the caller's catalog (see readSnapshot): their stamps were not read. */
  inSync?: boolean;
  /** When `inSync`: each document's place among the caller's catalog entries (see Head.pos). */
  pos?: Uint32Array;
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
    if (!checkHead(h) || at + 6 * h.postings !== size) return null;
    const n = h.lens.length / h.fields;
    const inSync = typeof h.catalog === 'string' && catalog.includes(h.catalog);
    const keys = lines(h.keys, n);
    const stamps = inSync ? [] : lines(h.stamps, n);
    const terms = lines(h.terms, h.tOff.length - 1);
    if (!keys || !stamps || !terms) return null;
    const f = fd;
    const postings = (from: number, count: number, to: Uint32Array | Uint16Array): void => {
      if (count) readInto(f, at + from * to.BYTES_PER_ELEMENT, new Uint8Array(to.buffer, to.byteOffset, count * to.BYTES_PER_ELEMENT));
    };
    let base: BaseTier;
    if (!pick) {
      base = { terms, tOff: h.tOff, pDoc: new Uint32Array(h.postings), pFt: new Uint16Array(h.postings) };
      postings(0, h.postings, base.pDoc);
      postings(2 * h.postings, h.postings, base.pFt); // after pDoc, in units of pFt
    } else {
      // `!`: every chosen term i < terms.length, so i + 1 < tOff.length; j < nOff.length - 1.
      const { tOff } = h;
      const chosen = [...new Set(pick(terms))].filter((i) => i >= 0 && i < terms.length).sort((a, b) => a - b);
      const nOff = new Uint32Array(chosen.length + 1);
      for (const [j, i] of chosen.entries()) {
        if (tOff[i]! > tOff[i + 1]!) return null;
        nOff[j + 1] = nOff[j]! + (tOff[i + 1]! - tOff[i]!);
      }
      base = { terms: chosen.map((i) => terms[i]!), tOff: nOff, pDoc: new Uint32Array(nOff[chosen.length]!), pFt: new Uint16Array(nOff[chosen.length]!) };
      for (const [j, i] of chosen.entries()) {
        postings(tOff[i]!, tOff[i + 1]! - tOff[i]!, base.pDoc.subarray(nOff[j]));
        postings(2 * h.postings + tOff[i]!, tOff[i + 1]! - tOff[i]!, base.pFt.subarray(nOff[j]));
      }
    }
    if (!checkPostings(base, n, h.fields)) return null;
    return { header: h, docs: { keys, lens: h.lens, avg: h.avg }, stamps, base, inSync, pos: inSync ? h.pos : undefined };
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

export function writeSnapshot(file: string, docs: DocTables, stamps: string[], base: BaseTier, fields: number, catalog?: CatalogMark): void {
  const head: Head = {
    v: SNAPSHOT_VERSION,
    optionsHash: OPTIONS_HASH,
    le: LE,
    fields,
    postings: base.pDoc.length,
    avg: docs.avg,
    terms: base.terms.join('\n'),
    keys: docs.keys.join('\n'),
    stamps: stamps.join('\n'),
    lens: docs.lens,
    tOff: base.tOff,
    ...(catalog ? { catalog: catalog.id, pos: Uint32Array.from(docs.keys, (k) => catalog.posOf(k) ?? NO_POS) } : {}),
  };
  const bytes = serialize(head);
  writeFileAtomicWith(
    file,
    (fd) => {
      let pos = 0;
      const put = (b: Uint8Array): void => {
        let off = 0;
        while (off < b.length) off += writeSync(fd, b, off, b.length - off, pos + off);
        pos += b.length;
      };
      const raw = (a: Uint16Array | Uint32Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
      put(Buffer.from(`${MAGIC}${String(bytes.length).padStart(12, '0')}\n`, 'latin1'));
      put(bytes);
      if (pos % 8) put(new Uint8Array(8 - (pos % 8)));
      put(raw(base.pDoc));
      put(raw(base.pFt));
    },
    { fsync: false },
  );
}

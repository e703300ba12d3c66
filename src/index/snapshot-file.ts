/**
 * The index snapshot's file format, `cache/index.bin`: the in-memory layout of
 * PostingIndex written as it is, so loading it is reading it.
 *
 *   MAGIC, then sections each starting at a multiple of 8 bytes:
 *     terms   the sorted vocabulary, UTF-8, one term per line
 *     keys    each document's key, one per line, in document-number order
 *     stamps  each document's file stamp, one per line, in the same order
 *     lens    Uint16 per document and field: unique tokens (MiniSearch's field length)
 *     tOff    Uint32 per term + 1: where its postings start in pDoc/pFt
 *     pDoc    Uint32 per posting: the document number
 *     pFt     Uint16 per posting: field (top 3 bits) and term frequency
 *   then a JSON header (version, options hash, counts, MiniSearch's running averages, each
 *   section's offset and length), then `\n`, the header's byte length in 12 digits, `\n`.
 *
 * Typed arrays are little-endian as written (a big-endian machine rebuilds instead). A one-shot
 * query reads the header, the vocabulary and the document tables, and only the postings of the
 * terms its text can reach (positional reads). Anything inconsistent (a cut or foreign file,
 * another version, numbers out of range) reads as no snapshot: it is rebuilt, never trusted.
 */
import { closeSync, constants, fstatSync, writeSync } from 'node:fs';
import { endianness } from 'node:os';
import { readAt, readInto, writeFileAtomicWith } from '../store/fsutil.js';
import { openNoFollow } from '../store/state-dir.js';
import { OPTIONS_HASH, SNAPSHOT_VERSION } from './options.js';
import { FIELD_SHIFT, type BaseTier, type DocTables } from './postings.js';

/** The last bytes of a snapshot: `\n`, the header's byte length in 12 digits, `\n`. */
export const TRAILER = 14;
export const MAGIC = 'BASS-AGENTS-INDEX\n';

const SECTIONS = ['terms', 'keys', 'stamps', 'lens', 'tOff', 'pDoc', 'pFt'] as const;
type Section = (typeof SECTIONS)[number];

export interface Header {
  v: number;
  optionsHash: string;
  fields: number;
  docs: number;
  terms: number;
  postings: number;
  avg: number[];
  /** [byte offset, byte length] of each section. */
  at: Record<Section, [number, number]>;
  /**
   * The catalog content the documents are exactly (CatalogSnapshot.contentId), when the index
   * was saved from a snapshot that had one; `pos`: each document's place among that snapshot's
   * entries (a Uint32Array in base64, NO_POS for none), so that a reader holding the same
   * content finds a hit's entry without a map of every key.
   */
  catalog?: string;
  pos?: string;
}

function checkHeader(h: Header, headerAt: number): Header | null {
  if (!h || h.v !== SNAPSHOT_VERSION || h.optionsHash !== OPTIONS_HASH) return null;
  if (![h.fields, h.docs, h.terms, h.postings].every((n) => Number.isInteger(n) && n >= 0)) return null;
  if (!Array.isArray(h.avg) || h.avg.length !== h.fields || !h.avg.every((x) => typeof x === 'number')) return null;
  const expect: Partial<Record<Section, number>> = { lens: h.docs * h.fields * 2, tOff: (h.terms + 1) * 4, pDoc: h.postings * 4, pFt: h.postings * 2 };
  for (const s of SECTIONS) {
    const r = h.at?.[s];
    if (!Array.isArray(r) || !Number.isInteger(r[0]) || !Number.isInteger(r[1]) || r[0] % 8 !== 0 || r[0] < MAGIC.length || r[0] + r[1] > headerAt) return null;
    if (expect[s] !== undefined && r[1] !== expect[s]) return null;
  }
  return h;
}

/** The header of an open snapshot file, or null when it is not one of ours (or another version). */
export function readHeader(fd: number): Header | null {
  if (endianness() !== 'LE') return null;
  const size = fstatSync(fd).size;
  if (size < MAGIC.length + TRAILER) return null;
  if (readAt(fd, 0, MAGIC.length).toString('latin1') !== MAGIC) return null;
  const trailer = readAt(fd, size - TRAILER, TRAILER).toString('latin1');
  const len = Number(trailer.slice(1, -1));
  if (trailer[0] !== '\n' || !/^\d{12}$/.test(trailer.slice(1, -1)) || len <= 0 || MAGIC.length + len + TRAILER > size) return null;
  const headerAt = size - TRAILER - len;
  return checkHeader(JSON.parse(readAt(fd, headerAt, len).toString('utf8')) as Header, headerAt);
}

const lines = (buf: Buffer, n: number): string[] | null => {
  if (n === 0) return buf.length === 0 ? [] : null;
  const out = buf.toString('utf8').split('\n');
  return out.length === n ? out : null;
};

/** A typed-array view of `len` bytes of `buf` at `pos` (copied when not aligned). */
function view<T extends Uint16Array | Uint32Array>(
  buf: Buffer,
  pos: number,
  len: number,
  C: { new (b: ArrayBufferLike, o: number, l: number): T; BYTES_PER_ELEMENT: number },
): T {
  const at = buf.byteOffset + pos;
  if (at % C.BYTES_PER_ELEMENT === 0) return new C(buf.buffer, at, len / C.BYTES_PER_ELEMENT);
  const copy = new Uint8Array(len); // its own buffer, at offset 0
  copy.set(buf.subarray(pos, pos + len));
  return new C(copy.buffer, 0, len / C.BYTES_PER_ELEMENT);
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
  header: Header;
  docs: DocTables;
  /** Empty when `inSync`. */
  stamps: string[];
  base: BaseTier;
  /** The snapshot holds exactly the documents of the caller's catalog (see readSnapshotFor): their stamps were not read. */
  inSync?: boolean;
  /** When `inSync`: each document's place among the caller's catalog entries (see Header.pos). */
  pos?: Uint32Array;
}

function loadTables(h: Header, read: (s: Section) => Buffer, withStamps = true): { docs: DocTables; stamps: string[]; terms: string[] } | null {
  const keys = lines(read('keys'), h.docs);
  const stamps = withStamps ? lines(read('stamps'), h.docs) : [];
  const terms = lines(read('terms'), h.terms);
  if (!keys || !stamps || !terms) return null;
  const lensBuf = read('lens');
  const lens = view(lensBuf, 0, lensBuf.length, Uint16Array);
  return { docs: { keys, lens, avg: h.avg }, stamps, terms };
}

/**
 * Reads a snapshot; null when there is no usable one. Whole: one read, the sections views of it.
 * With `pick` (it gets the sorted vocabulary and names the terms to keep), the document tables
 * whole and the postings of those terms only, by positional reads. `catalog`: the content ids of
 * catalogs that hold the caller's entries (its own, and one known to hold the same, see
 * ReadModel.load); when the snapshot was saved from one of them, the stamps are not read (`inSync`).
 */
export function readSnapshot(file: string, pick?: (terms: string[]) => Iterable<number>, catalog: readonly string[] = []): Loaded | null {
  let fd: number | undefined;
  try {
    fd = openNoFollow(file, constants.O_RDONLY);
    const h = readHeader(fd);
    if (!h) return null;
    const f = fd;
    const all = pick ? undefined : readAt(fd, 0, Math.max(...SECTIONS.map((s) => h.at[s][0] + h.at[s][1])));
    const read = (s: Section): Buffer => (all ? all.subarray(h.at[s][0], h.at[s][0] + h.at[s][1]) : readAt(f, h.at[s][0], h.at[s][1]));
    const inSync = typeof h.catalog === 'string' && catalog.includes(h.catalog);
    const t = loadTables(h, read, !inSync);
    if (!t) return null;
    const offBuf = read('tOff');
    const tOff = view(offBuf, 0, offBuf.length, Uint32Array);
    if (tOff.length !== h.terms + 1 || tOff[0] !== 0 || tOff[h.terms] !== h.postings) return null;
    const base = pick
      ? pickPostings(fd, h, tOff, t.terms, pick)
      : { terms: t.terms, tOff, pDoc: view(read('pDoc'), 0, h.at.pDoc[1], Uint32Array), pFt: view(read('pFt'), 0, h.at.pFt[1], Uint16Array) };
    if (!base || !checkPostings(base, h.docs, h.fields)) return null;
    let pos: Uint32Array | undefined;
    if (inSync && typeof h.pos === 'string') {
      const bytes = Buffer.from(h.pos, 'base64');
      if (bytes.length === 4 * h.docs) new Uint8Array((pos = new Uint32Array(h.docs)).buffer).set(bytes);
    }
    return { header: h, docs: t.docs, stamps: t.stamps, base, inSync, pos };
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The postings of the terms `pick` names, read straight into their place in the arrays (no buffer per term). */
function pickPostings(fd: number, h: Header, tOff: Uint32Array, terms: string[], pick: (terms: string[]) => Iterable<number>): BaseTier | null {
  // `!`: every chosen term i < h.terms, so i + 1 < tOff.length (checked by the caller); j < nOff.length - 1.
  const chosen = [...new Set(pick(terms))].filter((i) => i >= 0 && i < h.terms).sort((a, b) => a - b);
  const nOff = new Uint32Array(chosen.length + 1);
  for (const [j, i] of chosen.entries()) {
    if (tOff[i]! > tOff[i + 1]!) return null;
    nOff[j + 1] = nOff[j]! + (tOff[i + 1]! - tOff[i]!);
  }
  const pDoc = new Uint32Array(nOff[chosen.length]!);
  const pFt = new Uint16Array(nOff[chosen.length]!);
  for (const [j, i] of chosen.entries()) {
    const n = tOff[i + 1]! - tOff[i]!;
    if (!n) continue;
    readInto(fd, h.at.pDoc[0] + tOff[i]! * 4, new Uint8Array(pDoc.buffer, nOff[j]! * 4, n * 4));
    readInto(fd, h.at.pFt[0] + tOff[i]! * 2, new Uint8Array(pFt.buffer, nOff[j]! * 2, n * 2));
  }
  return { terms: chosen.map((i) => terms[i] ?? ''), tOff: nOff, pDoc, pFt };
}

/** A document without a place among the catalog's entries (see Header.pos). */
export const NO_POS = 0xffffffff;

/** What a snapshot records of the catalog snapshot it was saved from (see Header.catalog). */
export interface CatalogMark {
  id: string;
  posOf: (key: string) => number | undefined;
}

export function writeSnapshot(file: string, docs: DocTables, stamps: string[], base: BaseTier, fields: number, catalog?: CatalogMark): void {
  writeFileAtomicWith(
    file,
    (fd) => {
      let pos = 0;
      const put = (b: Uint8Array): void => {
        let off = 0;
        while (off < b.length) off += writeSync(fd, b, off, b.length - off, pos + off);
        pos += b.length;
      };
      const pad = (): void => {
        if (pos % 8) put(new Uint8Array(8 - (pos % 8)));
      };
      const bytes = (a: Uint16Array | Uint32Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
      put(Buffer.from(MAGIC, 'latin1'));
      const at = {} as Header['at'];
      const content: Record<Section, Uint8Array> = {
        terms: Buffer.from(base.terms.join('\n'), 'utf8'),
        keys: Buffer.from(docs.keys.join('\n'), 'utf8'),
        stamps: Buffer.from(stamps.join('\n'), 'utf8'),
        lens: bytes(docs.lens),
        tOff: bytes(base.tOff),
        pDoc: bytes(base.pDoc),
        pFt: bytes(base.pFt),
      };
      for (const s of SECTIONS) {
        pad();
        at[s] = [pos, content[s].length];
        put(content[s]);
      }
      const header: Header = {
        v: SNAPSHOT_VERSION,
        optionsHash: OPTIONS_HASH,
        fields,
        docs: docs.keys.length,
        terms: base.terms.length,
        postings: base.pDoc.length,
        avg: docs.avg,
        at,
        ...(catalog ? { catalog: catalog.id, pos: Buffer.from(Uint32Array.from(docs.keys, (k) => catalog.posOf(k) ?? NO_POS).buffer).toString('base64') } : {}),
      };
      const json = Buffer.from(JSON.stringify(header), 'utf8');
      put(json);
      put(Buffer.from(`\n${String(json.length).padStart(12, '0')}\n`, 'latin1'));
    },
    { fsync: false },
  );
}

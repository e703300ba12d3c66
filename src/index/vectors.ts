/**
 * The sentence vectors of entries for semantic search, one row per entry, kept in one
 * Float32Array and cached in `cache/vectors.bin` of the local state folder (never committed).
 *
 * File: `MAGIC`, the header's byte length (12 digits) and `\n`, a JSON header (model, dims, and
 * per row the entry key, the catalog stamp of its file and the hash of the text embedded), zero
 * padding to a multiple of 4 bytes, then the rows as little-endian float32. A row is current
 * while its entry's file stamp is unchanged, or, after a change, while the embedded text (the
 * summary) hashes the same: editing tags or confidence never costs a new embedding.
 *
 * Every read is checked: a file of another model, another dimension or a broken one is ignored
 * (the vectors are computed again), never fatal.
 */
import { nodeCrypto } from '../node-crypto.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicWith } from '../store/fsutil.js';

const MAGIC = 'BASS-AGENTS-VECTORS-1\n';
const LEN_DIGITS = 12;

interface Row {
  row: number;
  stamp: string;
  hash: string;
}

interface Header {
  model: string;
  dims: number;
  keys: string[];
  stamps: string[];
  hashes: string[];
}

/** The hash of a text as embedded (the row is reused while it is the same). */
export function textHash(text: string): string {
  return nodeCrypto().createHash('sha1').update(text).digest('base64url').slice(0, 16);
}

export class VectorStore {
  readonly model: string;
  readonly dims: number;
  private rows = new Map<string, Row>();
  private data: Float32Array;
  private free: number[] = [];
  private used = 0;
  private changed = false;

  constructor(model: string, dims: number) {
    this.model = model;
    this.dims = dims;
    this.data = new Float32Array(dims * 64);
  }

  static path(localDir: string): string {
    return join(localDir, 'cache', 'vectors.bin');
  }

  /** The vectors saved for `model`; an empty store when the file is missing, broken or of another model. */
  static load(file: string, model: string, dims: number): VectorStore {
    const store = new VectorStore(model, dims);
    let buf: Buffer;
    try {
      buf = readFileSync(file);
    } catch {
      return store;
    }
    try {
      if (buf.toString('latin1', 0, MAGIC.length) !== MAGIC) return store;
      const len = Number(buf.toString('latin1', MAGIC.length, MAGIC.length + LEN_DIGITS));
      const start = MAGIC.length + LEN_DIGITS + 1;
      if (!Number.isInteger(len) || len <= 0 || start + len > buf.length) return store;
      const h = JSON.parse(buf.toString('utf8', start, start + len)) as Header;
      if (h.model !== model || h.dims !== dims || !Array.isArray(h.keys) || h.keys.length !== h.stamps?.length || h.keys.length !== h.hashes?.length)
        return store;
      const body = Math.ceil((start + len) / 4) * 4;
      const n = h.keys.length;
      if (buf.length !== body + n * dims * 4) return store;
      store.data = new Float32Array(Math.max(n, 64) * dims);
      // Copied out of the file's buffer: its offset need not be aligned for a Float32Array view.
      store.data.set(new Float32Array(buf.buffer.slice(buf.byteOffset + body, buf.byteOffset + body + n * dims * 4)));
      for (let i = 0; i < n; i++) store.rows.set(h.keys[i], { row: i, stamp: String(h.stamps[i]), hash: String(h.hashes[i]) });
      store.used = n;
      return store;
    } catch {
      return new VectorStore(model, dims);
    }
  }

  /** The model and dimension a saved file holds (without its rows), or null. */
  static peek(file: string): { model: string; dims: number } | null {
    const s = VectorStore.loadAny(file);
    return s ? { model: s.model, dims: s.dims } : null;
  }

  /** The saved store, whatever its model; null when there is none or it is broken. */
  static loadAny(file: string): VectorStore | null {
    let head: Buffer;
    try {
      head = readFileSync(file);
    } catch {
      return null;
    }
    try {
      const len = Number(head.toString('latin1', MAGIC.length, MAGIC.length + LEN_DIGITS));
      const start = MAGIC.length + LEN_DIGITS + 1;
      const h = JSON.parse(head.toString('utf8', start, start + len)) as Header;
      if (typeof h.model !== 'string' || !Number.isInteger(h.dims)) return null;
      const s = VectorStore.load(file, h.model, h.dims);
      return s.size || h.keys.length === 0 ? s : null;
    } catch {
      return null;
    }
  }

  get size(): number {
    return this.rows.size;
  }

  /** Whether anything changed since it was loaded or saved. */
  get dirty(): boolean {
    return this.changed;
  }

  /** The bytes the rows take in memory. */
  get bytes(): number {
    return this.data.byteLength;
  }

  /** Whether the row of `key` holds the vector of this file stamp; `hash` is asked only when the stamp moved. */
  isCurrent(key: string, stamp: string, hash: () => string): boolean {
    const r = this.rows.get(key);
    if (!r) return false;
    if (r.stamp === stamp) return true;
    if (r.hash !== hash()) return false;
    r.stamp = stamp; // the same text under a new stamp: still current
    this.changed = true;
    return true;
  }

  has(key: string): boolean {
    return this.rows.has(key);
  }

  put(key: string, stamp: string, hash: string, vector: ArrayLike<number>): void {
    if (vector.length !== this.dims) throw new Error(`vector of ${vector.length} dimensions for a ${this.dims}-dimension store`);
    let r = this.rows.get(key);
    if (!r) {
      const row = this.free.pop() ?? this.used++;
      if ((row + 1) * this.dims > this.data.length) {
        const grown = new Float32Array(Math.max((row + 1) * this.dims, this.data.length * 2));
        grown.set(this.data);
        this.data = grown;
      }
      r = { row, stamp, hash };
      this.rows.set(key, r);
    } else {
      r.stamp = stamp;
      r.hash = hash;
    }
    this.data.set(vector, r.row * this.dims);
    this.changed = true;
  }

  /** Drops the rows of keys not in `keep`. */
  retain(keep: (key: string) => boolean): number {
    let dropped = 0;
    for (const [key, r] of this.rows) {
      if (keep(key)) continue;
      this.rows.delete(key);
      this.free.push(r.row);
      dropped++;
    }
    if (dropped) this.changed = true;
    return dropped;
  }

  /** A similarity function for one query vector: the dot product (vectors are unit length), undefined without a row. */
  similarity(query: ArrayLike<number>): (key: string) => number | undefined {
    const d = this.dims;
    const q = Float32Array.from(query);
    const data = this.data;
    return (key) => {
      const r = this.rows.get(key);
      if (!r) return undefined;
      let s = 0;
      const o = r.row * d;
      for (let k = 0; k < d; k++) s += q[k] * data[o + k];
      return s;
    };
  }

  /** Writes the store (atomically) when anything changed; rows are written compacted. */
  save(file: string): boolean {
    if (!this.changed) return false;
    const keys: string[] = [];
    const stamps: string[] = [];
    const hashes: string[] = [];
    const order: number[] = [];
    for (const [key, r] of this.rows) {
      keys.push(key);
      stamps.push(r.stamp);
      hashes.push(r.hash);
      order.push(r.row);
    }
    const header = Buffer.from(JSON.stringify({ model: this.model, dims: this.dims, keys, stamps, hashes } satisfies Header), 'utf8');
    const head = Buffer.from(`${MAGIC}${String(header.length).padStart(LEN_DIGITS, '0')}\n`, 'latin1');
    const pad = (4 - ((head.length + header.length) % 4)) % 4;
    const body = new Float32Array(order.length * this.dims);
    order.forEach((row, i) => body.set(this.data.subarray(row * this.dims, (row + 1) * this.dims), i * this.dims));
    writeFileAtomicWith(file, (fd) => {
      writeFileSync(fd, head);
      writeFileSync(fd, header);
      if (pad) writeFileSync(fd, Buffer.alloc(pad));
      writeFileSync(fd, new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
    });
    this.changed = false;
    return true;
  }
}

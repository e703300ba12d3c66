/**
 * The sentence vectors of entries, cached in local state (`cache/vectors.bin`) once per embedded
 * text (its hash), each entry naming the text hash it had at its file's stamp. An entry whose
 * stamp moved (a checkout, a rebase, a fresh clone) is current again as soon as its text hashes
 * to a stored vector, and a text that comes back (switching back to a branch) finds the vector it
 * left: vectors no entry uses are kept too, the most recently used first, up to as many as there
 * are entries. A file of another model, another dimension or a broken one is ignored (the
 * vectors are computed again), never fatal.
 */
import { nodeCrypto } from '../node-crypto.js';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { writeFileAtomic } from '../store/fsutil.js';
import { readNoFollow } from '../store/state-dir.js';

const VERSION = 3;
/** At least this many vectors no entry uses are kept (texts of other branches, edits undone). */
const SPARE_MIN = 1024;

/** The file: `v8.serialize` of this; per entry (keys, stamps) its row among `hashes`, the rows' vectors in `data`. */
interface Saved {
  v: number;
  model: string;
  dims: number;
  hashes: string[];
  keys: string[];
  stamps: string[];
  rows: number[];
  data: Float32Array;
}

/** The hash of a text as embedded (its vector is reused while it is the same). */
export function textHash(text: string): string {
  return nodeCrypto().createHash('sha1').update(text).digest('base64url').slice(0, 16);
}

export class VectorStore {
  /** Row of each text hash, least recently used first. */
  private byHash = new Map<string, number>();
  /** Each entry's stamp, the hash of its text at that stamp and the row of that text's vector (a row stays its text's while the text has an entry). */
  private entries = new Map<string, { stamp: string; hash: string; row: number }>();
  private data: Float32Array;
  private free: number[] = [];
  private used = 0;
  /** Whether anything changed since it was loaded or saved. */
  dirty = false;

  constructor(
    readonly model: string,
    readonly dims: number,
  ) {
    this.data = new Float32Array(dims * 64);
  }

  static path(localDir: string): string {
    return join(localDir, 'cache', 'vectors.bin');
  }

  /** The vectors saved for `model` (any model when not given); an empty store (model '' when not given) when the file is missing, broken or of another model. */
  static load(file: string, model?: string, dims?: number): VectorStore {
    const store = new VectorStore(model ?? '', dims ?? 0);
    try {
      const h = deserialize(readNoFollow(file)) as Saved;
      const n = h.hashes?.length;
      if (h.v !== VERSION || typeof h.model !== 'string' || !Number.isInteger(h.dims) || (model !== undefined && (h.model !== model || h.dims !== dims)))
        return store;
      if (!Array.isArray(h.hashes) || h.keys?.length !== h.stamps?.length || h.keys.length !== h.rows?.length || h.rows.some((r) => !(r >= 0 && r < n)))
        return store;
      if (!(h.data instanceof Float32Array) || h.data.length !== n * h.dims) return store;
      const loaded = new VectorStore(h.model, h.dims);
      loaded.data = new Float32Array(Math.max(n, 64) * h.dims);
      loaded.data.set(h.data);
      h.hashes.forEach((hash, r) => loaded.byHash.set(hash, r));
      h.keys.forEach((key, i) => {
        const hash = h.hashes[h.rows[i]!]!; // rows checked above
        loaded.entries.set(key, { stamp: h.stamps[i]!, hash, row: loaded.byHash.get(hash) ?? -1 });
      });
      loaded.used = n;
      return loaded;
    } catch {
      return store;
    }
  }

  /** Entries with a vector. */
  get size(): number {
    return this.entries.size;
  }

  /** Vectors held (one per distinct text, including those no entry uses now). */
  get vectors(): number {
    return this.byHash.size;
  }

  /** The bytes the rows take in memory. */
  get bytes(): number {
    return this.data.byteLength;
  }

  /** Whether entry `key` has a vector stored at this file stamp (its text need not be read). */
  isStamped(key: string, stamp: string): boolean {
    const e = this.entries.get(key);
    return e !== undefined && e.stamp === stamp && this.byHash.has(e.hash);
  }

  /**
   * Whether entry `key` has the vector of its text at this file stamp; `hash` (of the text) is
   * asked only when the stamp moved, and a stored vector of that text makes the entry current.
   */
  isCurrent(key: string, stamp: string, hash: () => string): boolean {
    if (this.isStamped(key, stamp)) return true;
    const h = hash();
    const row = this.byHash.get(h);
    if (row === undefined) return false;
    this.entries.set(key, { stamp, hash: h, row });
    this.byHash.delete(h); // now the most recently used
    this.byHash.set(h, row);
    this.dirty = true;
    return true;
  }

  /** Stores the vector of a text (hash `hash`) as entry `key`'s at this stamp. */
  put(key: string, stamp: string, hash: string, vector: ArrayLike<number>): void {
    if (vector.length !== this.dims) throw new Error(`vector of ${vector.length} dimensions for a ${this.dims}-dimension store`);
    let row = this.byHash.get(hash);
    if (row === undefined) {
      row = this.free.pop() ?? this.used++;
      if ((row + 1) * this.dims > this.data.length) {
        const grown = new Float32Array(Math.max((row + 1) * this.dims, this.data.length * 2));
        grown.set(this.data);
        this.data = grown;
      }
      this.data.set(vector, row * this.dims);
    }
    this.byHash.delete(hash);
    this.byHash.set(hash, row);
    this.entries.set(key, { stamp, hash, row });
    this.dirty = true;
  }

  /** Forgets the entries whose key is not kept (their vectors stay, as spares). */
  retain(keep: (key: string) => boolean): number {
    let dropped = 0;
    for (const key of this.entries.keys()) {
      if (keep(key)) continue;
      this.entries.delete(key);
      dropped++;
    }
    if (dropped) this.dirty = true;
    return dropped;
  }

  /**
   * A similarity function for one query vector: the dot product (vectors are unit length),
   * undefined without a vector. A query asks it for every entry: each row's product is computed
   * once, on first use (entries of one text share a row), and an entry finds its row in one lookup.
   */
  similarity(query: ArrayLike<number>): (key: string) => number | undefined {
    const d = this.dims;
    const q = Float32Array.from(query);
    const data = this.data;
    // NaN: not computed yet. Rows added after this call (a vector computed meanwhile) have none.
    const dots = new Float64Array(this.used).fill(NaN);
    return (key) => {
      const r = this.entries.get(key)?.row;
      if (r === undefined || r < 0 || r >= dots.length) return undefined;
      let s = dots[r]!; // r < dots.length
      if (s !== s) {
        s = 0;
        const o = r * d;
        for (let k = 0; k < d; k++) s += q[k]! * data[o + k]!; // `!`: k < d, q's length and a row's
        dots[r] = s;
      }
      return s;
    };
  }

  /** Writes the store (atomically) when anything changed: the vectors entries use, then the most recently used spares. */
  save(file: string): boolean {
    if (!this.dirty) return false;
    const inUse = new Set<string>();
    for (const e of this.entries.values()) inUse.add(e.hash);
    let spares = Math.max(SPARE_MIN, this.entries.size);
    const kept: string[] = [];
    for (const hash of [...this.byHash.keys()].reverse()) {
      if (inUse.has(hash)) kept.push(hash);
      else if (spares-- > 0) kept.push(hash);
      else {
        this.free.push(this.byHash.get(hash)!);
        this.byHash.delete(hash);
      }
    }
    kept.reverse(); // least recently used first, as they are held
    const place = new Map(kept.map((h, i) => [h, i]));
    const keys: string[] = [];
    const stamps: string[] = [];
    const rows: number[] = [];
    for (const [key, e] of this.entries) {
      keys.push(key);
      stamps.push(e.stamp);
      rows.push(place.get(e.hash)!);
    }
    const data = new Float32Array(kept.length * this.dims);
    kept.forEach((h, i) => {
      const r = this.byHash.get(h)!;
      data.set(this.data.subarray(r * this.dims, (r + 1) * this.dims), i * this.dims);
    });
    writeFileAtomic(file, serialize({ v: VERSION, model: this.model, dims: this.dims, hashes: kept, keys, stamps, rows, data } satisfies Saved));
    this.dirty = false;
    return true;
  }
}

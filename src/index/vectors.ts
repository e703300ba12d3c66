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

/** The file's layout and what is embedded (4: summaries without the names they address, `embeddedText`): another is embedded anew. */
const VERSION = 4;
/** At least this many vectors no entry uses are kept (texts of other branches, edits undone). */
const SPARE_MIN = 1024;

/** The file: `v8.serialize` of this; per entry (keys, stamps) its vector's place among `hashes`, the vectors one after the other in `data`. */
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
  /** The vector of each text hash, least recently used first. */
  private byHash = new Map<string, Float32Array>();
  /** Each entry's stamp, the hash of its text at that stamp and that text's vector. */
  private entries = new Map<string, { stamp: string; hash: string; vec: Float32Array }>();
  /** Whether anything changed since it was loaded or saved. */
  dirty = false;
  /** The vectors of the last list of entries asked about (dropped at any change): a daemon asks with one list query after query. */
  private table: { list: readonly { key: string }[]; vecs: (Float32Array | undefined)[] } | undefined;

  constructor(
    readonly model: string,
    readonly dims: number,
  ) {}

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
      const vecs = h.hashes.map((_, r) => h.data.subarray(r * h.dims, (r + 1) * h.dims));
      h.hashes.forEach((hash, r) => loaded.byHash.set(hash, vecs[r]!));
      h.keys.forEach((key, i) => loaded.entries.set(key, { stamp: h.stamps[i]!, hash: h.hashes[h.rows[i]!]!, vec: vecs[h.rows[i]!]! })); // rows checked above
      return loaded;
    } catch {
      return store;
    }
  }

  /** Entries with a vector. */
  get size(): number {
    return this.entries.size;
  }

  /** The bytes the vectors take in memory (one vector per distinct text, including those no entry uses now). */
  get bytes(): number {
    return this.byHash.size * this.dims * 4;
  }

  /** Whether entry `key` has a vector stored at this file stamp (its text need not be read). */
  isStamped(key: string, stamp: string): boolean {
    return this.entries.get(key)?.stamp === stamp;
  }

  /**
   * Whether entry `key` has the vector of its text at this file stamp; `hash` (of the text) is
   * asked only when the stamp moved, and a stored vector of that text makes the entry current.
   */
  isCurrent(key: string, stamp: string, hash: () => string): boolean {
    if (this.isStamped(key, stamp)) return true;
    const h = hash();
    const vec = this.byHash.get(h);
    if (vec) this.use(key, stamp, h, vec);
    return vec !== undefined;
  }

  /** Stores the vector of a text (hash `hash`) as entry `key`'s at this stamp. */
  put(key: string, stamp: string, hash: string, vector: ArrayLike<number>): void {
    if (vector.length !== this.dims) throw new Error(`vector of ${vector.length} dimensions for a ${this.dims}-dimension store`);
    this.use(key, stamp, hash, this.byHash.get(hash) ?? Float32Array.from(vector));
  }

  /** Makes `vec` entry `key`'s at this stamp, and its text's vector the most recently used. */
  private use(key: string, stamp: string, hash: string, vec: Float32Array): void {
    this.byHash.delete(hash);
    this.byHash.set(hash, vec);
    this.entries.set(key, { stamp, hash, vec });
    this.dirty = true;
    this.table = undefined;
  }

  /** Forgets the entries whose key is not kept (their vectors stay, as spares). */
  retain(keep: (key: string) => boolean): number {
    let dropped = 0;
    for (const key of this.entries.keys()) {
      if (keep(key)) continue;
      this.entries.delete(key);
      dropped++;
    }
    if (dropped) [this.dirty, this.table] = [true, undefined];
    return dropped;
  }

  /** For one query vector, the dot product (vectors are unit length) with each entry of a list, NaN without a vector; four sums at once, each in its own order (the same numbers, not waiting on one sum). */
  similarity(query: ArrayLike<number>): (list: readonly { key: string }[]) => Float64Array {
    const q = Float32Array.from(query);
    const none = new Float32Array(q.length);
    return (list) => {
      const { vecs } = this.table?.list === list ? this.table : (this.table = { list, vecs: list.map((e) => this.entries.get(e.key)?.vec) });
      const out = new Float64Array(list.length); // (writes past its end are dropped)
      for (let i = 0; i < vecs.length; i += 4) {
        const a = vecs[i] ?? none;
        const b = vecs[i + 1] ?? none;
        const c = vecs[i + 2] ?? none;
        const d = vecs[i + 3] ?? none;
        let sa = 0;
        let sb = 0;
        let sc = 0;
        let sd = 0;
        for (let k = 0; k < q.length; k++) {
          const x = q[k]!; // k < dims, every vector's length
          sa += x * a[k]!;
          sb += x * b[k]!;
          sc += x * c[k]!;
          sd += x * d[k]!;
        }
        out[i] = vecs[i] ? sa : NaN;
        out[i + 1] = vecs[i + 1] ? sb : NaN;
        out[i + 2] = vecs[i + 2] ? sc : NaN;
        out[i + 3] = vecs[i + 3] ? sd : NaN;
      }
      return out;
    };
  }

  /** Writes the store (atomically) when anything changed: the vectors entries use, then the most recently used spares. */
  save(file: string): boolean {
    if (!this.dirty) return false;
    const inUse = new Set<string>();
    for (const e of this.entries.values()) inUse.add(e.hash);
    let spares = Math.max(SPARE_MIN, this.entries.size);
    for (const hash of [...this.byHash.keys()].reverse()) if (!inUse.has(hash) && spares-- <= 0) this.byHash.delete(hash);
    const hashes = [...this.byHash.keys()]; // least recently used first, as they are held
    const place = new Map(hashes.map((h, i) => [h, i]));
    const data = new Float32Array(hashes.length * this.dims);
    hashes.forEach((h, i) => data.set(this.byHash.get(h)!, i * this.dims));
    const saved = [...this.entries];
    const keys = saved.map(([key]) => key);
    const stamps = saved.map(([, e]) => e.stamp);
    const rows = saved.map(([, e]) => place.get(e.hash)!);
    writeFileAtomic(file, serialize({ v: VERSION, model: this.model, dims: this.dims, hashes, keys, stamps, rows, data } satisfies Saved));
    this.dirty = false;
    return true;
  }
}

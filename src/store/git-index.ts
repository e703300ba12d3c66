/**
 * git's index file changed at a few paths by this process, as `git update-index --index-info`
 * changes it: for the plain case only (version 2, no extension but the cache tree, a checksum
 * that holds, no conflict at those paths), else null and the caller runs git.
 *
 * What git does on such a write is done here too: entries set with zero stat data (git looks at
 * the file again before trusting it), the cache tree invalidated along each path, and every entry
 * that is racily clean against the old index (changed in the same second it was written) smudged,
 * so that rewriting the index never makes a changed file look clean.
 */
import { nodeCrypto } from '../node-crypto.js';
import type { HashAlgo, PathChange } from './git-objects.js';

/** An index entry's fixed part before its flags: ten 32-bit stat fields, then the object id. */
const STAT_BYTES = 40;
const MODE_AT = 24;
const SIZE_AT = 36;
const MTIME_AT = 8;

/** One node of the cache tree (the TREE extension), its children in the order git wrote them. */
interface CacheTree {
  name: Buffer;
  count: number;
  oid: Buffer | null;
  children: CacheTree[];
}

function readCacheTree(buf: Buffer, at: number, hashLen: number): { node: CacheTree; next: number } {
  const nul = buf.indexOf(0, at);
  const nl = buf.indexOf(10, nul + 1);
  if (nul < 0 || nl < 0) throw new Error('cache tree');
  const m = /^(-?\d+) (\d+)$/.exec(buf.toString('latin1', nul + 1, nl));
  if (!m) throw new Error('cache tree');
  const count = Number(m[1]);
  let next = nl + 1;
  let oid: Buffer | null = null;
  if (count >= 0) {
    oid = buf.subarray(next, next + hashLen);
    next += hashLen;
  }
  const node: CacheTree = { name: buf.subarray(at, nul), count, oid, children: [] };
  for (let i = 0; i < Number(m[2]); i++) {
    const child = readCacheTree(buf, next, hashLen);
    node.children.push(child.node);
    next = child.next;
  }
  if (next > buf.length) throw new Error('cache tree');
  return { node, next };
}

function writeCacheTree(node: CacheTree, out: Buffer[]): void {
  out.push(node.name, Buffer.from(`\0${node.count} ${node.children.length}\n`, 'latin1'));
  if (node.count >= 0 && node.oid) out.push(node.oid);
  for (const c of node.children) writeCacheTree(c, out);
}

/** As git's cache_tree_invalidate_path: every tree along `path` is marked unknown, and a tree named as the path itself dropped. */
function invalidate(node: CacheTree, path: Buffer): void {
  node.count = -1;
  node.oid = null;
  const slash = path.indexOf(0x2f);
  const name = slash < 0 ? path : path.subarray(0, slash);
  const i = node.children.findIndex((c) => c.name.equals(name));
  if (i < 0) return;
  if (slash < 0) node.children.splice(i, 1);
  else invalidate(node.children[i], path.subarray(slash + 1));
}

/**
 * The index `bytes` (read under git's index lock; `mtimeSec` its modification time, in seconds)
 * with each change's path set to its blob (mode 100644, stage 0) or removed. Null when this index
 * is not the plain kind handled here. The new index comes as the parts to write one after the
 * other, most of them views of `bytes` (no copy of the whole file is made).
 */
export function editIndex(bytes: Buffer, changes: PathChange[], algo: HashAlgo, mtimeSec: number): Buffer[] | null {
  const hashLen = algo === 'sha1' ? 20 : 32;
  if (bytes.length < 12 + hashLen || bytes.toString('latin1', 0, 4) !== 'DIRC' || bytes.readUInt32BE(4) !== 2) return null;
  const body = bytes.length - hashLen;
  const trailer = bytes.subarray(body);
  if (trailer.every((b) => b === 0)) return null; // index.skipHash: left to git
  const count = bytes.readUInt32BE(8);
  const flagsAt = STAT_BYTES + hashLen;
  const nameAt = flagsAt + 2;
  // Entry offsets (one past the last: where the extensions start), and the racily clean entries:
  // recorded with a modification time at or after the index's own (git's rule without
  // nanoseconds, which smudges a few more than git may; git then reads those files once more).
  // Bytes are read inline: this loop runs over every entry, often in code not yet optimized.
  const starts = new Float64Array(count + 1);
  const racy: number[] = [];
  let at = 12;
  for (let i = 0; i < count; i++) {
    if (at + nameAt > body) return null;
    starts[i] = at;
    const flags = (bytes[at + flagsAt] << 8) | bytes[at + flagsAt + 1];
    if (flags & 0x4000) return null; // extended flags (not in version 2)
    let len = flags & 0xfff;
    if (len === 0xfff) {
      len = bytes.indexOf(0, at + nameAt) - (at + nameAt);
      if (len < 0) return null;
    }
    const m = at + MTIME_AT;
    if (mtimeSec > 0 && bytes[m] * 16777216 + ((bytes[m + 1] << 16) | (bytes[m + 2] << 8) | bytes[m + 3]) >= mtimeSec) racy.push(i);
    at += (nameAt + len + 8) & ~7;
  }
  starts[count] = at;
  if (at > body) return null;
  // Extensions: only the cache tree is understood; any other (split index, untracked cache,
  // fsmonitor, resolve-undo, sparse folders, offset tables) means git does the change.
  let tree: CacheTree | null = null;
  for (let x = at; x < body;) {
    if (x + 8 > body) return null;
    const sig = bytes.toString('latin1', x, x + 4);
    const size = bytes.readUInt32BE(x + 4);
    if (sig !== 'TREE' || x + 8 + size > body) return null;
    try {
      const read = readCacheTree(bytes, x + 8, hashLen);
      if (read.next !== x + 8 + size) return null;
      tree = read.node;
    } catch {
      return null;
    }
    x += 8 + size;
  }
  const nameOf = (i: number): Buffer => {
    const s = starts[i] + nameAt;
    const flags = bytes.readUInt16BE(starts[i] + flagsAt);
    const len = (flags & 0xfff) === 0xfff ? bytes.indexOf(0, s) - s : flags & 0xfff;
    return bytes.subarray(s, s + len);
  };
  const stageOf = (i: number): number => (bytes.readUInt16BE(starts[i] + flagsAt) >> 12) & 3;
  // The first entry whose name is >= `key` (git's order: bytes, then stage).
  const lowerBound = (key: Buffer): number => {
    let lo = 0;
    let hi = count;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (Buffer.compare(nameOf(mid), key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const sorted = changes.map((c) => ({ ...c, key: Buffer.from(c.path, 'utf8') })).sort((a, b) => Buffer.compare(a.key, b.key));
  const edits: { from: number; to: number; entry: Buffer | null }[] = [];
  for (const c of sorted) {
    const i = lowerBound(c.key);
    let j = i;
    while (j < count && nameOf(j).equals(c.key)) {
      if (stageOf(j) !== 0) return null; // a conflict at this path: git's own rules apply
      j++;
    }
    // A file where a folder of it is, or a folder where the file goes: git's own rules apply.
    const under = Buffer.concat([c.key, Buffer.from('/')]);
    const u = lowerBound(under);
    if (u < count && nameOf(u).subarray(0, under.length).equals(under)) return null;
    for (let s = c.key.indexOf(0x2f); s >= 0; s = c.key.indexOf(0x2f, s + 1)) {
      const p = lowerBound(c.key.subarray(0, s));
      if (p < count && nameOf(p).equals(c.key.subarray(0, s))) return null;
    }
    let entry: Buffer | null = null;
    if (c.blob) {
      entry = Buffer.alloc((nameAt + c.key.length + 8) & ~7);
      entry.writeUInt32BE(0o100644, MODE_AT);
      entry.write(c.blob, STAT_BYTES, hashLen, 'hex');
      entry.writeUInt16BE(Math.min(c.key.length, 0xfff), flagsAt);
      c.key.copy(entry, nameAt);
    }
    edits.push({ from: i, to: j, entry });
  }
  // git refuses an index whose checksum fails; so does this (git then says why).
  const crypto = nodeCrypto();
  if (!crypto.createHash(algo).update(bytes.subarray(0, body)).digest().equals(trailer)) return null;
  const parts: Buffer[] = [Buffer.from(bytes.subarray(0, 12))];
  let kept = 0;
  let last = 0;
  let r = 0;
  const copyEntries = (from: number, to: number): void => {
    if (from >= to) return;
    let chunk = bytes.subarray(starts[from], starts[to]);
    while (r < racy.length && racy[r] < from) r++;
    if (r < racy.length && racy[r] < to) chunk = Buffer.from(chunk); // smudged in a copy: the bytes read stay as they were
    for (; r < racy.length && racy[r] < to; r++) chunk.writeUInt32BE(0, starts[racy[r]] - starts[from] + SIZE_AT);
    parts.push(chunk);
    kept += to - from;
  };
  for (const e of edits) {
    copyEntries(last, e.from);
    if (e.entry) {
      parts.push(e.entry);
      kept++;
    }
    last = e.to;
  }
  copyEntries(last, count);
  if (tree) {
    for (const c of sorted) invalidate(tree, c.key);
    const ext: Buffer[] = [];
    writeCacheTree(tree, ext);
    const data = Buffer.concat(ext);
    const sig = Buffer.alloc(8);
    sig.write('TREE', 0, 'latin1');
    sig.writeUInt32BE(data.length, 4);
    parts.push(sig, data);
  }
  parts[0].writeUInt32BE(kept, 8);
  const hash = crypto.createHash(algo);
  for (const p of parts) hash.update(p);
  parts.push(hash.digest());
  return parts;
}

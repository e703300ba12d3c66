/**
 * The objects of a small memory commit, written by this process as git writes loose objects:
 * `<type> <size>\0<body>`, deflated, at `objects/<2 hex>/<rest>`, through a temporary file and a
 * link (an object already there is kept). `fast-import` would write them as a pack and then, below
 * `fastimport.unpackLimit` (100 objects unless configured), start `unpack-objects` to loosen them
 * into exactly these files; doing it here saves both processes.
 *
 * Trees are edited along the changed paths only: each directory's tree is read once (from a
 * `cat-file --batch`, or remembered from this process's last commit) and rewritten with its
 * entries merged in git's order, the rest of its bytes copied as they are.
 */
import { closeSync, existsSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { nodeCrypto } from '../node-crypto.js';

export type HashAlgo = 'sha1' | 'sha256';

/** The change cannot be written this way (a file where a folder must go, an odd identity...): the caller uses fast-import. */
export class NotPlainError extends Error {}

/** A path's new content: a blob id, or null to remove it. */
export interface PathChange {
  path: string;
  blob: string | null;
}

/** The id git gives an object of `type` with `body`. */
export function objectId(type: string, body: Uint8Array, algo: HashAlgo): string {
  return nodeCrypto().createHash(algo).update(`${type} ${body.length}\0`).update(body).digest('hex');
}

/** Where a repository's objects are (a worktree's are in the common dir). */
export function objectsDir(gitDir: string): string {
  const commondir = join(gitDir, 'commondir');
  const common = existsSync(commondir) ? join(gitDir, readFileSync(commondir, 'utf8').trim()) : gitDir;
  return join(common, 'objects');
}

/**
 * Writes one loose object (unless git has it loose already) and returns its id. Level 1 is git's
 * default for loose objects (`core.looseCompression`); any level reads the same.
 */
export function writeLooseObject(objects: string, type: string, body: Uint8Array, algo: HashAlgo): string {
  const id = objectId(type, body, algo);
  const dir = join(objects, id.slice(0, 2));
  const file = join(dir, id.slice(2));
  if (existsSync(file)) return id;
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `tmp_obj_bass_${process.pid}_${nodeCrypto().randomBytes(4).toString('hex')}`);
  const fd = openSync(tmp, 'wx', 0o444);
  try {
    const data = deflateSync(Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]), { level: 1 });
    for (let at = 0; at < data.length;) at += writeSync(fd, data, at);
  } finally {
    closeSync(fd);
  }
  try {
    try {
      linkSync(tmp, file); // as git does: an object that appeared meanwhile is left alone
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') renameSync(tmp, file); // a file system without hard links
    }
  } finally {
    rmSync(tmp, { force: true });
  }
  return id;
}

/** One entry to set in a tree (`oid` null: remove it). */
interface TreeEdit {
  name: Buffer;
  tree: boolean;
  mode: string;
  oid: Buffer | null;
}

/**
 * git's order of tree entries (base_name_compare): by name bytes, a folder's name compared as if
 * it ended in "/". `a` is the name at `buf[aStart, aEnd)`.
 */
function compareNames(buf: Buffer, aStart: number, aEnd: number, aTree: boolean, b: Buffer, bTree: boolean): number {
  const aLen = aEnd - aStart;
  const len = Math.min(aLen, b.length);
  const c = buf.compare(b, 0, len, aStart, aStart + len);
  if (c) return c;
  const ca = aLen > len ? buf[aStart + len] : aTree ? 0x2f : 0;
  const cb = b.length > len ? b[len] : bTree ? 0x2f : 0;
  return ca - cb;
}

/**
 * The entries of a tree object's body ("<mode> <name>\0<id>" each: the first NUL ends the name),
 * found with one native call per entry: where each starts (and, last, the body's end), and entry
 * `i` compared with a name in git's order (negative: the entry sorts first).
 */
function treeEntries(body: Buffer, hashLen: number): { n: number; starts: number[]; compare: (i: number, name: Buffer, tree: boolean) => number } {
  const starts: number[] = [];
  for (let at = 0; at < body.length;) {
    starts.push(at);
    const nul = body.indexOf(0, at);
    if (nul < 0 || nul + 1 + hashLen > body.length) throw new NotPlainError('a tree git wrote could not be read');
    at = nul + 1 + hashLen;
  }
  starts.push(body.length);
  const compare = (i: number, name: Buffer, tree: boolean): number => {
    const at = starts[i];
    const sp = body.indexOf(0x20, at);
    const isTree = sp - at === 5 && body[at] === 0x34 && body[at + 1] === 0x30; // "40000"
    return compareNames(body, sp + 1, starts[i + 1] - hashLen - 1, isTree, name, tree);
  };
  return { n: starts.length - 1, starts, compare };
}

/**
 * `tree` (a tree object's body, or null for none) with `edits` applied, in git's order; null when
 * nothing is left. A file set where a folder is (or the other way round) is not plain. Each edit's
 * place is found by binary search; unchanged runs of entries are copied as they are.
 */
export function editTree(tree: Buffer | null, edits: TreeEdit[], hashLen: number): Buffer | null {
  // Each edit, and a probe for the same name as the other kind: meeting a probe is a conflict.
  const keys = [...edits.map((e) => ({ e, probe: false, tree: e.tree })), ...edits.map((e) => ({ e, probe: true, tree: !e.tree }))];
  keys.sort((a, b) => compareNames(a.e.name, 0, a.e.name.length, a.tree, b.e.name, b.tree));
  for (let k = 1; k < keys.length; k++) {
    if (
      !keys[k].probe &&
      !keys[k - 1].probe &&
      compareNames(keys[k].e.name, 0, keys[k].e.name.length, keys[k].tree, keys[k - 1].e.name, keys[k - 1].tree) === 0
    ) {
      throw new NotPlainError('one name changed twice in a folder');
    }
  }
  const body = tree ?? Buffer.alloc(0);
  const { n, starts, compare } = treeEntries(body, hashLen);
  const parts: Buffer[] = [];
  let copyFrom = 0;
  let lo = 0;
  for (const key of keys) {
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compare(mid, key.e.name, key.tree) < 0) lo = mid + 1;
      else hi = mid;
    }
    const same = lo < n && compare(lo, key.e.name, key.tree) === 0;
    if (key.probe) {
      if (same) throw new NotPlainError(`${key.e.name.toString()} is a ${key.tree ? 'folder' : 'file'} in HEAD`);
      continue;
    }
    parts.push(body.subarray(copyFrom, starts[lo]));
    if (key.e.oid) parts.push(Buffer.from(`${key.e.mode} `, 'latin1'), key.e.name, Buffer.from([0]), key.e.oid);
    copyFrom = starts[same ? ++lo : lo];
  }
  parts.push(body.subarray(copyFrom));
  const out = Buffer.concat(parts);
  return out.length ? out : null;
}

/** The folders holding `path` from the top: "" (the root), "a", "a/b", ... */
function foldersOf(path: string): string[] {
  const out = [''];
  for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) out.push(path.slice(0, i));
  return out;
}

/** Tree bodies by folder ("" the root; null: no such folder in HEAD). */
export type Trees = Map<string, Buffer | null>;

/** Every folder whose tree a commit of `paths` reads and rewrites. */
export function foldersToRead(paths: string[]): string[] {
  return [...new Set(paths.flatMap(foldersOf))];
}

/** The blob HEAD holds at `path`, from the tree of its folder; null when none. */
export function blobIn(trees: Trees, path: string, hashLen: number): string | null {
  const slash = path.lastIndexOf('/');
  const tree = trees.get(slash < 0 ? '' : path.slice(0, slash));
  if (!tree) return null;
  const name = Buffer.from(path.slice(slash + 1), 'utf8');
  const { n, starts, compare } = treeEntries(tree, hashLen);
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compare(mid, name, false) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && compare(lo, name, false) === 0 ? tree.toString('hex', starts[lo + 1] - hashLen, starts[lo + 1]) : null;
}

/**
 * Writes the trees of HEAD's root tree with `changes` made (their blobs already written), given
 * the trees of every folder along them; returns the root tree's id and every rewritten folder's
 * new body (null: the folder is gone).
 */
export function writeTrees(objects: string, trees: Trees, changes: PathChange[], algo: HashAlgo): { root: string; written: Trees } {
  if (!changes.length) throw new NotPlainError('nothing to change');
  const hashLen = algo === 'sha1' ? 20 : 32;
  const edits = new Map<string, TreeEdit[]>();
  const add = (folder: string, e: TreeEdit): void => {
    const list = edits.get(folder);
    if (list) list.push(e);
    else edits.set(folder, [e]);
  };
  for (const c of changes) {
    const slash = c.path.lastIndexOf('/');
    const name = Buffer.from(c.path.slice(slash + 1), 'utf8');
    add(slash < 0 ? '' : c.path.slice(0, slash), { name, tree: false, mode: '100644', oid: c.blob ? Buffer.from(c.blob, 'hex') : null });
  }
  // Deepest folders first: each one's new id is an edit of its parent.
  const folders = foldersToRead(changes.map((c) => c.path)).sort((a, b) => depth(b) - depth(a) || (a < b ? -1 : 1));
  const written: Trees = new Map();
  let root = '';
  for (const folder of folders) {
    const before = trees.get(folder);
    if (before === undefined) throw new NotPlainError(`the tree of ${folder || 'the root'} was not read`);
    const body = editTree(before, edits.get(folder) ?? [], hashLen);
    written.set(folder, body);
    const id = body || folder === '' ? writeLooseObject(objects, 'tree', body ?? Buffer.alloc(0), algo) : null;
    if (folder === '') {
      root = id!;
      break;
    }
    const slash = folder.lastIndexOf('/');
    const name = Buffer.from(folder.slice(slash + 1), 'utf8');
    add(slash < 0 ? '' : folder.slice(0, slash), { name, tree: true, mode: '40000', oid: id ? Buffer.from(id, 'hex') : null });
  }
  return { root, written };
}

function depth(folder: string): number {
  return folder ? folder.split('/').length : 0;
}

/**
 * Reads the trees of `folders` in `commit` from one `cat-file --batch` output (`<commit>^{tree}`
 * for the root, `<commit>:<folder>` for the others, in that order).
 */
export function catFileNames(commit: string, folders: string[]): string {
  return folders.map((f) => (f ? `${commit}:${f}` : `${commit}^{tree}`)).join('\n') + '\n';
}

/** Parses what `cat-file --batch` printed for catFileNames(folders): a tree body or null (missing) per folder. */
export function parseCatFileTrees(out: Buffer, folders: string[]): Trees {
  const trees: Trees = new Map();
  let at = 0;
  for (const folder of folders) {
    const nl = out.indexOf(10, at);
    if (nl < 0) throw new NotPlainError('git cat-file stopped early');
    const header = out.toString('utf8', at, nl);
    const m = /^[0-9a-f]+ (\S+) (\d+)$/.exec(header);
    if (!m) {
      if (!/ missing$/.test(header)) throw new NotPlainError(`git cat-file: ${header}`);
      trees.set(folder, null);
      at = nl + 1;
      continue;
    }
    if (m[1] !== 'tree') throw new NotPlainError(`${folder} is a ${m[1]} in HEAD, not a folder`);
    const size = Number(m[2]);
    trees.set(folder, out.subarray(nl + 1, nl + 1 + size));
    at = nl + 1 + size + 1;
  }
  return trees;
}

/** A commit object's body as fast-import writes it for `committer <ident> now` (the author the same). */
export function commitBody(tree: string, parent: string, name: string, email: string, message: string, now: Date): Buffer {
  if (/[<>\n\0]/.test(name) || /[<>\n\0]/.test(email)) throw new NotPlainError('the identity has characters fast-import must judge');
  const offset = -now.getTimezoneOffset();
  const abs = Math.abs(offset);
  const tz = `${offset < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
  const ident = `${name} <${email}> ${Math.floor(now.getTime() / 1000)} ${tz}`;
  return Buffer.from(`tree ${tree}\nparent ${parent}\nauthor ${ident}\ncommitter ${ident}\n\n${message}`, 'utf8');
}

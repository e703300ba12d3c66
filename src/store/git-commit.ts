/**
 * A memory commit: exactly our paths on top of HEAD, never the user's staged work, with HEAD and
 * the user's index moving together under git's own `index.lock`, as `git commit` does.
 *
 * The objects first, with nothing moved: for a few files, written here as loose objects on the
 * trees HEAD holds along our paths (git-objects.ts: one `cat-file --batch` reads those trees, or
 * none when this process made HEAD); for more, by `fast-import` onto a private ref. Nothing to do
 * when HEAD already holds our files. Then, holding `index.lock`, the user's index with our paths
 * set is written beside it (changed here when it is the plain kind, git-index.ts, else by
 * `update-index --index-info`), `update-ref` moves HEAD from the old commit to the new one (a
 * compare-and-swap; it drops the private ref too), and the new index is renamed onto the lock and
 * the lock onto the index. A `git commit` racing ours waits or fails on the lock, and never
 * records our new files as deleted. No index of the whole tree is built.
 */
import { nodeCrypto } from '../node-crypto.js';
import { closeSync, existsSync, fchmodSync, fstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { BusyError, GitError } from '../core/errors.js';
import type { GitRepo } from './git.js';
import { editIndex } from './git-index.js';
import {
  NotPlainError,
  blobIn,
  commitBody,
  foldersToRead,
  objectId,
  objectsDir,
  writeLooseObject,
  writeTrees,
  type HashAlgo,
  type PathChange,
} from './git-objects.js';
import { configValue, headFromFiles } from './git-state.js';
import { indexFileChecksum } from './git-view.js';
import { writeAll } from './fsutil.js';

/** A file's bytes, or null when it does not exist. */
function readOrNull(abs: string): Buffer | null {
  try {
    return readFileSync(abs);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** A path as fast-import reads it: as is to the end of the line, or C-quoted when it has a quote, backslash or newline. */
function fiPath(path: string): string {
  return /["\\\n]/.test(path) ? `"${path.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"` : path;
}

/**
 * Up to how many files a commit writes its objects itself (each file's blob, plus the trees and
 * the commit): below git's own `fastimport.unpackLimit` (100 objects), under which fast-import
 * would have loosened its pack into the same loose objects anyway.
 */
const LOOSE_LIMIT = 48;

/**
 * Up to how many paths the index is changed here (git-index.ts searches for each one: for a
 * batch of thousands, one `git update-index` pass is faster).
 */
const INDEX_EDIT_LIMIT = 256;

/** The user's index as read under git's lock, and where the changed copy goes. */
interface IndexCopy {
  file: string;
  original: Buffer | null;
  /** The index file's modification time (seconds): entries changed since are racily clean. */
  mtimeSec: number;
  mode: number;
}

/** What one attempt commits: the files' bytes (null: removed), the message and identity. */
interface Attempt {
  files: { path: string; data: Buffer | null }[];
  message: string;
  name: string;
  email: string;
  hooks: CommitHooks;
}

/** Whether HEAD already holds each file as it is (`held`: the blob HEAD has at a path, or null). */
function holdsAll(files: Attempt['files'], held: (path: string) => string | null, algo: HashAlgo): boolean {
  return files.every((f) => {
    const blob = held(f.path);
    return f.data === null ? blob === null : blob === objectId('blob', f.data, algo);
  });
}

/** A commit's objects, written and not yet on HEAD. */
interface Made {
  commit: string;
  head: string | null;
  entries: PathChange[];
  /** The private ref fast-import committed onto (HEAD's move deletes it). */
  ref?: string;
  /** Called once HEAD points at the commit. */
  onMoved?: () => void;
}

/** Journal hooks of a commit: what it is about to hold, and the moment HEAD moved. */
export interface CommitHooks {
  /** git's index lock is ours; `inodes` identify the lock file while we hold it (for recovery). */
  onIndexLock?: (note: { inodes: number[] }) => void;
  /** HEAD now points at `commit` (the user's index is installed right after). */
  onCommitted?: (commit: string, parent: string | null) => void;
  /** Every path is new (entries under ids this write made): HEAD is read from git's files, and nothing is compared. */
  newPathsOnly?: boolean;
  /**
   * The bytes the caller just wrote at these paths (null: removed), by absolute path: committed
   * as given instead of read back. Paths not in it are read from the working tree.
   */
  contents?: ReadonlyMap<string, Buffer | null>;
  /**
   * The user's index was replaced, under git's lock, by one that differs from it only at
   * `entries` (mode 100644 and stage 0; a null blob: removed): the checksums git keeps at the
   * end of the index before and after (null when there is none).
   */
  onIndexInstalled?: (change: IndexChange) => void;
}

/** See CommitHooks.onIndexInstalled. */
export interface IndexChange {
  before: string | null;
  after: string | null;
  entries: { path: string; blob: string | null }[];
}

/** How long a memory commit waits for another git process to release the index lock. */
const INDEX_LOCK_WAIT_MS = 10_000;

export class MemoryCommit {
  constructor(private readonly repo: GitRepo) {}

  /**
   * Commits exactly `absPaths` (files present are added, missing ones removed) on top of HEAD.
   * Returns the new commit, or null when nothing changed. Retries when HEAD moved underneath.
   * To the user HEAD and index move as one step (see the top of this file).
   */
  async commit(absPaths: string[], message: string, agent: string, hooks: CommitHooks = {}): Promise<string | null> {
    const byPath = new Map(absPaths.map((p) => [this.repo.repoPath(p), p]));
    const paths = [...byPath.keys()].sort();
    if (paths.length === 0) return null;
    const identity = await this.repo.configIdentity();
    const name = identity.name || agent.replace(/[<>\n]/g, '') || 'bass-agents';
    const email = identity.email || 'bass-agents@localhost';
    // The first attempt holds git's index lock only around the index update and the HEAD move.
    // If someone committed in between, later attempts take the lock first, so that no commit of
    // the user's can move HEAD under them (with commits every 50 ms, optimistic retries lost).
    for (let attempt = 0; attempt < 5; attempt++) {
      let out: { status: 'unchanged' | 'raced' } | { status: 'moved'; commit: string } = { status: 'raced' };
      if (attempt === 0) out = await this.commitOnce(paths, byPath, message, name, email, hooks, null);
      else {
        await this.withIndexLock(hooks, async (next) => {
          out = await this.commitOnce(paths, byPath, message, name, email, hooks, next, attempt === 4);
          return out.status === 'moved';
        });
      }
      if (out.status === 'unchanged') return null;
      if (out.status === 'moved') return out.commit;
    }
    throw new GitError('git commit of memory failed: HEAD kept moving while committing');
  }

  /**
   * One attempt: the commit's objects (nothing to do when HEAD already holds our files), then,
   * holding git's index lock, the index copy and the compare-and-swap of HEAD. `lockedIndex`:
   * the index copy when the caller already holds git's index lock; null to take it here, around
   * just the index update and the HEAD move.
   */
  private async commitOnce(
    paths: string[],
    byPath: Map<string, string>,
    message: string,
    name: string,
    email: string,
    hooks: CommitHooks,
    lockedIndex: IndexCopy | null,
    last = false,
  ): Promise<{ status: 'unchanged' | 'raced' } | { status: 'moved'; commit: string }> {
    const files = paths.map((p) => {
      const abs = byPath.get(p)!;
      return { path: p, data: hooks.contents?.has(abs) ? hooks.contents.get(abs)! : readOrNull(abs) };
    });
    const attempt: Attempt = { files, message, name, email, hooks };
    let made: Made | 'unchanged' | undefined;
    let refGone = false;
    try {
      if (files.length <= LOOSE_LIMIT) {
        made = await this.looseObjects(attempt).catch((err: unknown) => {
          if (err instanceof NotPlainError) return undefined; // fast-import decides
          throw err;
        });
      }
      made ??= await this.fastImport(attempt);
      if (made === 'unchanged') return { status: 'unchanged' };
      const { commit, head, entries, ref, onMoved } = made;
      const algo: HashAlgo = commit.length === 64 ? 'sha256' : 'sha1';
      const move = async (index: IndexCopy): Promise<boolean> => {
        await this.writeIndexCopy(index, entries, algo);
        try {
          await this.repo.gitStdin(
            ['update-ref', '-m', `bass-agents: ${message.split('\n')[0]}`, '--stdin'],
            `${head ? `update HEAD ${commit} ${head}` : `create HEAD ${commit}`}\n${ref ? `delete ${ref} ${commit}\n` : ''}`,
          );
        } catch (err) {
          if (!last && /cannot lock ref|but expected|is at|unable to resolve/i.test(String((err as Error).message ?? err))) return false; // HEAD moved: redo on the new HEAD.
          throw err;
        }
        refGone = true; // the private ref went with HEAD's move
        hooks.onCommitted?.(commit, head);
        onMoved?.();
        return true;
      };
      const moved =
        lockedIndex !== null
          ? await move(lockedIndex)
          : await this.withIndexLock(hooks, move, (before, after) => hooks.onIndexInstalled?.({ before, after, entries }));
      return moved ? { status: 'moved', commit } : { status: 'raced' };
    } catch (err) {
      if (err instanceof GitError || err instanceof BusyError) throw err;
      throw new GitError(`git commit of memory failed: ${String((err as Error).message ?? err).trim()}`);
    } finally {
      // A private ref outlives a failed attempt only: drop it.
      const ref = made && made !== 'unchanged' && !refGone ? made.ref : undefined;
      if (ref) await this.repo.gitStdin(['update-ref', '--stdin'], `delete ${ref}\n`).catch(() => undefined);
    }
  }

  /**
   * The objects of a commit of a few files, written here as loose objects (see git-objects.ts),
   * on the trees HEAD holds along their paths. NotPlainError when this repository or change is
   * not the plain kind (no HEAD yet, shared permissions, a file where a folder goes...).
   */
  private async looseObjects({ files, message, name, email, hooks }: Attempt): Promise<Made | 'unchanged'> {
    const head = headFromFiles(this.repo.gitDir);
    if (!head) throw new NotPlainError('no HEAD commit read from the files of git');
    if (!/^(|false|umask|0|no|off)$/i.test(configValue(this.repo.gitDir, 'core', '', 'sharedrepository') ?? ''))
      throw new NotPlainError('shared repository permissions');
    const algo: HashAlgo = head.length === 64 ? 'sha256' : 'sha1';
    const hashLen = algo === 'sha1' ? 20 : 32;
    const trees = await this.repo.treesAt(head, foldersToRead(files.map((f) => f.path)));
    if (!hooks.newPathsOnly && holdsAll(files, (p) => blobIn(trees, p, hashLen), algo)) return 'unchanged';
    const objects = objectsDir(this.repo.gitDir);
    const entries = files.map((f) => ({ path: f.path, blob: f.data === null ? null : writeLooseObject(objects, 'blob', f.data, algo) }));
    const { root, written } = writeTrees(objects, trees, entries, algo);
    const commit = writeLooseObject(objects, 'commit', commitBody(root, head, name, email, message.trimEnd(), new Date()), algo);
    return { commit, head, entries, onMoved: () => this.repo.rememberTrees(head, trees, commit, written) };
  }

  /**
   * The objects of a commit by `fast-import` (blobs, the trees along our paths and the commit, as
   * one pack), onto a private ref that HEAD's move drops. First `cat-file --batch-check` says
   * what HEAD holds at our paths: nothing to do when it matches.
   */
  private async fastImport({ files, message, name, email, hooks }: Attempt): Promise<Made | 'unchanged'> {
    const paths = files.map((f) => f.path);
    // HEAD, and the blob HEAD holds at each path (or "missing").
    const held = hooks.newPathsOnly ? { head: headFromFiles(this.repo.gitDir), blobs: new Map<string, string>() } : await this.repo.blobsAt('HEAD', paths);
    const head = held.head;
    if (head && !hooks.newPathsOnly && holdsAll(files, (p) => held.blobs.get(p) ?? null, head.length === 64 ? 'sha256' : 'sha1')) return 'unchanged';
    const tag = `${process.pid}-${nodeCrypto().randomBytes(4).toString('hex')}`;
    const ref = `refs/bass-agents/commit-${tag}`;
    mkdirSync(this.repo.stateDir, { recursive: true });
    const marks = join(this.repo.stateDir, `marks-${tag}`);
    try {
      const chunks: Buffer[] = [];
      files.forEach((f, i) => {
        if (f.data !== null) chunks.push(Buffer.from(`blob\nmark :${i + 1}\ndata ${f.data.length}\n`), f.data, Buffer.from('\n'));
      });
      const msg = Buffer.from(message.trimEnd());
      chunks.push(Buffer.from(`commit ${ref}\nmark :${files.length + 1}\ncommitter ${name} <${email}> now\ndata ${msg.length}\n`), msg, Buffer.from('\n'));
      if (head) chunks.push(Buffer.from(`from ${head}\n`));
      files.forEach((f, i) => chunks.push(Buffer.from(f.data === null ? `D ${fiPath(f.path)}\n` : `M 100644 :${i + 1} ${fiPath(f.path)}\n`)));
      chunks.push(Buffer.from('\ndone\n'));
      await this.repo.gitStdin(['fast-import', '--quiet', '--done', '--date-format=now', `--export-marks=${marks}`], Buffer.concat(chunks));
      const marked = new Map<string, string>();
      for (const line of readFileSync(marks, 'utf8').split('\n')) {
        const m = /^:(\d+) ([0-9a-f]+)$/.exec(line);
        if (m) marked.set(m[1], m[2]);
      }
      const commit = marked.get(String(files.length + 1));
      if (!commit) throw new GitError('git commit of memory failed: fast-import reported no commit');
      return { commit, head, ref, entries: files.map((f, i) => ({ path: f.path, blob: f.data !== null ? (marked.get(String(i + 1)) ?? null) : null })) };
    } catch (err) {
      // The private ref, if fast-import made it, goes with the attempt.
      await this.repo.gitStdin(['update-ref', '--stdin'], `delete ${ref}\n`).catch(() => undefined);
      throw err;
    } finally {
      rmSync(marks, { force: true });
    }
  }

  private get indexFile(): string {
    return join(this.repo.gitDir, 'index');
  }

  /**
   * Runs `fn` holding git's `index.lock`, the way git itself does: the lock file is created
   * exclusively, `fn` gets a copy of the index to change (null when the repository has no index
   * yet), and when `fn` returns true the copy is renamed onto the lock and the lock onto the
   * index, which releases it. Otherwise the lock is simply removed. Waits while another git
   * process holds the lock; gives up with BusyError.
   */
  private async withIndexLock(
    hooks: CommitHooks,
    fn: (index: IndexCopy) => Promise<boolean>,
    installed?: (before: string | null, after: string | null) => void,
  ): Promise<boolean> {
    const lock = `${this.indexFile}.lock`;
    const started = Date.now();
    let fd: number | undefined;
    for (let attempt = 0; fd === undefined; attempt++) {
      try {
        fd = openSync(lock, 'wx', 0o644);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        if (Date.now() - started > INDEX_LOCK_WAIT_MS) {
          throw new BusyError(
            `another git process holds ${this.repoPathOfGitFile(lock)} (git's index lock) and did not release it within ${INDEX_LOCK_WAIT_MS / 1000} s; if no git command is running, remove that file and try again`,
          );
        }
        await new Promise((r) => setTimeout(r, Math.min(50, 5 * (attempt + 1))));
      }
    }
    const inodes = [fstatSync(fd).ino];
    closeSync(fd);
    hooks.onIndexLock?.({ inodes });
    // Where the changed index goes (a repository without an index yet gets a new one with just our paths).
    const next = join(this.repo.stateDir, `index-${process.pid}-${nodeCrypto().randomBytes(4).toString('hex')}`);
    let done = false;
    try {
      mkdirSync(this.repo.stateDir, { recursive: true });
      // Read under the lock: no other git process changes the index until we let go.
      const original = this.repo.readIndex();
      const st = original ? statSync(this.indexFile) : null;
      const before = indexFileChecksum(this.indexFile); // null without an index
      const ok = await fn({ file: next, original, mtimeSec: st ? Math.floor(st.mtimeMs / 1000) : 0, mode: st ? st.mode & 0o7777 : 0o644 });
      if (ok) {
        inodes.push(statSync(next).ino);
        hooks.onIndexLock?.({ inodes });
        const after = indexFileChecksum(next);
        renameSync(next, lock); // still locked: the lock file is now the new index...
        renameSync(lock, this.indexFile); // ...and renaming it into place releases the lock, as git does
        done = true;
        installed?.(before, after);
      }
      return ok;
    } finally {
      if (!done) rmSync(lock, { force: true });
      rmSync(next, { force: true });
    }
  }

  private repoPathOfGitFile(abs: string): string {
    const r = relative(this.repo.toplevel, abs).split(sep).join('/');
    return r.startsWith('..') ? abs : r;
  }

  /**
   * Writes `index.file`: the user's index with our paths set (a path with a null blob is removed),
   * changed here when it is the plain kind (git-index.ts), else by `git update-index`.
   */
  private async writeIndexCopy(index: IndexCopy, entries: { path: string; blob: string | null }[], algo: HashAlgo): Promise<void> {
    const edited = index.original && entries.length <= INDEX_EDIT_LIMIT ? editIndex(index.original, entries, algo, index.mtimeSec) : null;
    if (edited || index.original) {
      const fd = openSync(index.file, 'w', index.mode);
      try {
        writeAll(fd, edited ?? [index.original!]);
        fchmodSync(fd, index.mode);
      } finally {
        closeSync(fd);
      }
    }
    if (!edited) await this.updateIndexFile(index.file, entries);
  }

  /** Sets our paths in the index file `indexFile` (the user's when null; a path with a null blob is removed), in one git process. */
  private async updateIndexFile(indexFile: string | null, entries: { path: string; blob: string | null }[]): Promise<void> {
    // (a removal names the all-zero id, as long as this repository's ids)
    const zero = '0'.repeat(entries.find((e) => e.blob)?.blob?.length ?? headFromFiles(this.repo.gitDir)?.length ?? 40);
    const input = entries.map((e) => (e.blob ? `100644 ${e.blob}\t${e.path}\0` : `0 ${zero}\t${e.path}\0`)).join('');
    await this.repo.gitStdin(['update-index', '-z', '--index-info'], input, indexFile ? { GIT_INDEX_FILE: indexFile } : {});
  }

  /**
   * Points the user's index at `blob` for each path (removing those with null), through git's own
   * lock, retrying while another git process holds it. Used by recovery.
   */
  async setIndexEntries(entries: { path: string; blob: string | null }[]): Promise<void> {
    if (!entries.length || !existsSync(this.indexFile)) return;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.updateIndexFile(null, entries);
        return;
      } catch (err) {
        if (attempt >= 40 || !/index\.lock/.test(String(err))) throw err;
        await new Promise((r) => setTimeout(r, 25 * (attempt + 1)));
      }
    }
  }
}

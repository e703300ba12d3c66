/**
 * A memory commit, made by git's own plumbing: exactly our paths on top of HEAD, never the user's
 * staged work, with HEAD and the user's index moving together under git's `index.lock`, as `git
 * commit` does. git writes every object and index file, so clean filters, core.sharedRepository
 * (from any config file), object freshening, signing and identities follow git's rules.
 *
 * Holding git's index lock (so that no commit of the user's moves HEAD meanwhile):
 *  1. the commit index (`<state dir>/commit-index`, ours alone) mirrors HEAD's tree: it is read
 *     again (`read-tree`) only when HEAD is not the commit it was last synced to;
 *  2. `update-index --add --remove` of our paths, from the working tree, onto it: git hashes the
 *     files through their filters and writes or freshens the blobs;
 *  3. `write-tree`: nothing to commit when it is HEAD's tree;
 *  4. `commit-tree` (with -S when `commit.gpgsign` says so): git's identity (user.useConfigOnly,
 *     GIT_AUTHOR_*...) and signing; a failure refuses the write with git's reason;
 *  5. meanwhile, a copy of the user's index (or of the one GIT_INDEX_FILE names) gets our paths
 *     from the working tree by `update-index` (real stat data, git's racy-entry rules);
 *  6. `update-ref` moves HEAD by compare-and-swap, and the copy is renamed onto the lock and the
 *     lock onto the index. A `git commit` racing ours waits or fails on the lock, and never
 *     records our files as deleted.
 * With `commit.hooks: run`, steps 1-4 come before the lock is taken, with the pre-commit hook
 * (GIT_INDEX_FILE = the commit index, which holds exactly what is committed) and commit-msg
 * between 2 and 3 (a hook may run git commands that take the lock), and post-commit after 6.
 *
 * A batch of any size is one pass of each step. Nothing here waits for the user's index lock
 * longer than `indexLockWaitMs`, and it says once what it waits for.
 */
import { nodeCrypto } from '../node-crypto.js';
import { closeSync, copyFileSync, existsSync, fstatSync, mkdirSync, openSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { BusyError, GitError, InterruptedError, ValidationError } from '../core/errors.js';
import type { GitRepo } from './git.js';
import { headFromFiles } from './git-state.js';
import { indexFileChecksum } from './git-view.js';
import { writeFileAtomic } from './fsutil.js';
import { readNoFollow } from './state-dir.js';

/** How the commit index is kept, whatever the repository asks of the user's index: one plain file of every path. */
const OWN_INDEX = ['core.splitIndex=false', 'core.untrackedCache=false', 'core.fsmonitor=false', 'core.sparseCheckout=false', 'index.sparse=false'].flatMap(
  (c) => ['-c', c],
);

/** What `update-index` gets for a set of paths: added or updated from the working tree, or removed when gone. */
const UPDATE = ['update-index', '--add', '--remove', '--replace', '-z', '--stdin'];

/** Up to how many paths the user's index copy is updated while the commit's objects are made (see commit). */
const TOGETHER = 64;

/** How long a memory commit waits, by default, for another git process to release the index lock. */
export const INDEX_LOCK_WAIT_MS = 10_000;

/** HEAD (null: unborn) and its tree, as the commit index mirrors it. */
interface Base {
  head: string | null;
  tree: string | null;
}

/** Journal hooks of a commit and the commit's settings. */
export interface CommitHooks {
  /** git's index lock is ours; `inodes` identify the lock file while we hold it (for recovery). */
  onIndexLock?: (note: { inodes: number[] }) => void;
  /** HEAD now points at `commit` (the user's index is installed right after). */
  onCommitted?: (commit: string, parent: string | null) => void;
  /** The user's index was replaced, under git's lock, by one that differs from it only at our paths. */
  onIndexInstalled?: (change: IndexChange) => void;
  /** Run the repository's pre-commit, commit-msg and post-commit hooks (`commit.hooks: run`). */
  runHooks?: boolean;
  /** Says something to the user (a wait for git's index lock, a post-commit hook's output). */
  warn?: (message: string) => void;
  /** How long to wait for another git process to release the user's index lock (default 10 s). */
  indexLockWaitMs?: number;
}

/**
 * See CommitHooks.onIndexInstalled: git set these paths (from the top folder) from the files as
 * the caller wrote them (or removed them); the checksums git keeps at the end of the index
 * before and after (null when there is none).
 */
export interface IndexChange {
  before: string | null;
  after: string | null;
  paths: string[];
}

export class MemoryCommit {
  private readonly index: string;
  private readonly marker: string;
  /** Whether the user was told that this commit waits for git's index lock. */
  private waited = false;

  constructor(private readonly repo: GitRepo) {
    this.index = join(repo.stateDir, 'commit-index');
    this.marker = `${this.index}.head`;
  }

  /**
   * Commits exactly `absPaths` (files present are added, missing ones removed) on top of HEAD.
   * Returns the new commit, or null when nothing changed. Retries when HEAD moved underneath.
   */
  async commit(absPaths: string[], message: string, hooks: CommitHooks = {}): Promise<string | null> {
    const paths = [...new Set(absPaths.map((p) => this.repo.repoPath(p)))].sort();
    if (paths.length === 0) return null;
    if (message.includes('\0')) throw new ValidationError([{ path: 'commit message', message: 'must not contain a NUL byte' }], 'write');
    mkdirSync(this.repo.stateDir, { recursive: true });
    const sign = this.repo.signsCommits();
    sign.catch(() => undefined);
    // (A writer that moves HEAD without git's index lock makes the next attempt redo the commit.)
    let msg = message;
    for (let attempt = 0; attempt < 5; attempt++) {
      let out = { status: 'raced' } as Outcome;
      const early = hooks.runHooks && attempt === 0 ? await this.objects(paths, msg, sign, hooks, true) : undefined;
      if (early?.status === 'unchanged') return null;
      await this.withIndexLock(
        hooks,
        async (index) => {
          const making = early ? Promise.resolve(early) : this.objects(paths, msg, sign, hooks, false);
          const userIndex = (): Promise<string> => this.writing(UPDATE, paths.join('\0') + '\0', { GIT_INDEX_FILE: index });
          // A few paths: the user's index copy is updated while git makes the commit. Many: after,
          // when git finds their blobs written and only hashes the files (both at once would
          // write every blob twice).
          const [made] = paths.length <= TOGETHER ? await settled(making, userIndex()) : [await making];
          if (made.status === 'unchanged') return ((out = made), false);
          if (paths.length > TOGETHER) await userIndex();
          msg = made.message;
          const moved = await this.move(made, msg, hooks, attempt === 4);
          out = moved ? { status: 'moved', commit: made.commit } : { status: 'raced' };
          return moved;
        },
        (before, after) => hooks.onIndexInstalled?.({ before, after, paths }),
      );
      if (out.status === 'unchanged') return null;
      if (out.status === 'moved') {
        if (hooks.runHooks) await this.hook('post-commit', [], {}, false).then((o) => o && hooks.warn?.(`post-commit hook: ${o}`));
        return out.commit;
      }
    }
    throw new GitError('git commit of memory failed: HEAD kept moving while committing');
  }

  /** Runs git on the commit index. */
  private own(args: string[], input = ''): Promise<string> {
    return this.writing([...OWN_INDEX, ...args], input, { GIT_INDEX_FILE: this.index });
  }

  /**
   * Runs a git command that writes objects, again (up to three times) when git could not create
   * an object's temporary file: a `git repack -d` / `gc` running beside us removes object folders
   * it emptied, and git re-creates a folder only once.
   */
  private async writing(args: string[], input: string, env: Record<string, string> = {}): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.repo.gitStdin(args, input, env);
      } catch (err) {
        if (attempt >= 3 || !/unable to create temporary file|unable to write (new |loose )?(sha1 )?(object|file)/i.test((err as Error).message)) throw err;
      }
    }
  }

  /**
   * HEAD and its tree, with the commit index mirroring that tree: kept from the last commit made
   * here when HEAD is still that commit, else read again.
   */
  private async base(): Promise<Base> {
    const head = headFromFiles(this.repo.gitDir) ?? (await this.repo.head());
    let mark: string[] = [];
    try {
      mark = readNoFollow(this.marker, 'utf8').trim().split(' ');
    } catch {
      /* never synced, or changed since */
    }
    rmSync(this.marker, { force: true }); // the commit index is about to change: not a mirror until HEAD moves
    if (head && mark[0] === head && mark[1] && existsSync(this.index)) return { head, tree: mark[1] };
    if (!head) {
      await this.own(['read-tree', '--empty']);
      return { head, tree: null };
    }
    const [, tree] = await Promise.all([this.own(['read-tree', head]), this.repo.run(['rev-parse', `${head}^{tree}`])]);
    return { head, tree: tree.trim() };
  }

  /** The commit's objects, with nothing moved: the tree of HEAD with our paths set, and the commit. */
  private async objects(paths: string[], message: string, sign: Promise<boolean>, hooks: CommitHooks, first: boolean): Promise<Made | { status: 'unchanged' }> {
    const base = await this.base();
    await this.own(UPDATE, paths.join('\0') + '\0');
    let msg = message;
    if (hooks.runHooks && first) msg = await this.preCommit(msg);
    const tree = (await this.own(['write-tree'])).trim();
    if (tree === base.tree) {
      this.mirror(base.head!, tree);
      return { status: 'unchanged' };
    }
    if (hooks.runHooks && first) await this.onlyOurs(paths, base, tree);
    const args = ['commit-tree', tree, ...(base.head ? ['-p', base.head] : []), ...((await sign) ? ['-S'] : [])];
    const commit = (await this.writing(args, msg.trimEnd() + '\n').catch((err: unknown) => refused('git could not make the commit', err))).trim();
    return { status: 'made', commit, head: base.head, tree, message: msg };
  }

  /** Records that the commit index mirrors `commit`'s tree. */
  private mirror(commit: string, tree: string): void {
    try {
      writeFileAtomic(this.marker, `${commit} ${tree}\n`, { fsync: false, dirExists: true });
    } catch {
      /* the next commit reads HEAD's tree again */
    }
  }

  /** Under git's index lock: HEAD moved from the commit's parent to it (false: HEAD moved first, redo on the new HEAD). */
  private async move(made: Made, message: string, hooks: CommitHooks, last: boolean): Promise<boolean> {
    const { commit, head } = made;
    try {
      await this.repo.gitStdin(
        ['update-ref', '-m', `bass-agents: ${message.split('\n')[0]}`, '--stdin'],
        head ? `update HEAD ${commit} ${head}\n` : `create HEAD ${commit}\n`,
      );
    } catch (err) {
      // git may have moved HEAD and then been stopped (a Ctrl-C to the process group).
      if (headFromFiles(this.repo.gitDir) !== commit) {
        if (!last && !(err instanceof InterruptedError) && /cannot lock ref|but expected|is at|unable to resolve|already exists/i.test((err as Error).message))
          return false;
        throw err;
      }
    }
    hooks.onCommitted?.(commit, head);
    this.mirror(commit, made.tree);
    return true;
  }

  /** Runs a hook through git (`git hook run`); its output. A failure refuses the write with that output, unless `strict` is false. */
  private async hook(name: string, args: string[], env: Record<string, string>, strict = true): Promise<string> {
    try {
      return (await this.repo.gitStdin(['hook', 'run', '--ignore-missing', name, ...(args.length ? ['--', ...args] : [])], '', env)).trim();
    } catch (err) {
      if (!strict && !(err instanceof InterruptedError)) return (err as Error).message;
      return refused(`the ${name} hook refused the memory commit (commit.hooks: run in config.yaml)`, err);
    }
  }

  /** pre-commit, on the commit index, then commit-msg on the message (which it may change): the message. */
  private async preCommit(message: string): Promise<string> {
    const env = { GIT_INDEX_FILE: this.index };
    await this.hook('pre-commit', [], env);
    const file = join(this.repo.stateDir, `COMMIT_MSG-${process.pid}-${nodeCrypto().randomBytes(4).toString('hex')}`);
    writeFileSync(file, message, { flag: 'wx', mode: 0o600 }); // a new file, never through a link
    try {
      await this.hook('commit-msg', [file], env);
      return readNoFollow(file, 'utf8');
    } finally {
      rmSync(file, { force: true });
    }
  }

  /** After the hooks: the commit changes nothing but our paths (a hook may stage more). */
  private async onlyOurs(paths: string[], base: Base, tree: string): Promise<void> {
    const out = base.tree
      ? await this.repo.run(['diff-tree', '-r', '--name-only', '-z', base.tree, tree])
      : await this.repo.run(['ls-tree', '-r', '--name-only', '-z', tree]);
    const ours = new Set(paths);
    const other = out.split('\0').filter((p) => p && !ours.has(p));
    if (other.length)
      throw new GitError(`a pre-commit hook staged files that are not memory (${other.slice(0, 3).join(', ')}): the memory commit was not made`);
  }

  /**
   * Runs `fn` holding git's `index.lock`, the way git itself does: the lock file is created
   * exclusively, `fn` gets a copy of the index to change (the copy keeps the index's own time,
   * so that git still checks the entries that were racily clean), and when `fn` returns true the
   * copy is renamed onto the lock and the lock onto the index, which releases it. Otherwise the
   * lock is simply removed. Waits (saying so once) while another git process holds the lock;
   * gives up with BusyError.
   */
  private async withIndexLock(
    hooks: CommitHooks,
    fn: (index: string) => Promise<boolean>,
    installed?: (before: string | null, after: string | null) => void,
  ): Promise<boolean> {
    const indexFile = this.repo.indexFile;
    const lock = `${indexFile}.lock`;
    const waitMs = hooks.indexLockWaitMs ?? INDEX_LOCK_WAIT_MS;
    const started = Date.now();
    let fd: number | undefined;
    for (let attempt = 0; fd === undefined; attempt++) {
      try {
        fd = openSync(lock, 'wx', 0o644);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const shown = this.shown(lock);
        if (!this.waited) {
          this.waited = true;
          hooks.warn?.(`waiting up to ${waitMs / 1000} s for ${shown}: another git process holds git's index (an open commit editor, a running git command)`);
        }
        if (Date.now() - started >= waitMs) {
          throw new BusyError(
            `another git process held ${shown} (git's index lock) for ${waitMs / 1000} s, so memory was not committed and nothing was kept; finish that git command (or, if none is running, remove ${shown}) and try again`,
          );
        }
        await new Promise((r) => setTimeout(r, Math.min(50, 5 * (attempt + 1))));
      }
    }
    const inodes = [fstatSync(fd).ino];
    closeSync(fd);
    hooks.onIndexLock?.({ inodes });
    // The copy goes where it can be renamed onto the lock: our state folder, or beside the index
    // when that is on another file system (GIT_INDEX_FILE can name one).
    const tag = `${process.pid}-${nodeCrypto().randomBytes(4).toString('hex')}`;
    const dir = dirname(indexFile);
    const next =
      statSync(this.repo.stateDir).dev === statSync(dir).dev
        ? join(this.repo.stateDir, `index-${tag}`)
        : join(dir, `${basename(indexFile)}.bass-agents-${tag}`);
    let done = false;
    try {
      // Read under the lock: no other git process changes the index until we let go.
      const st = statSync(indexFile, { throwIfNoEntry: false });
      if (st) {
        copyFileSync(indexFile, next);
        utimesSync(next, st.atime, Math.floor(st.mtimeMs / 1000));
      }
      const before = indexFileChecksum(indexFile); // null without an index
      const ok = await fn(next);
      if (ok) {
        inodes.push(statSync(next).ino);
        hooks.onIndexLock?.({ inodes });
        const after = indexFileChecksum(next);
        renameSync(next, lock); // still locked: the lock file is now the new index...
        renameSync(lock, indexFile); // ...and renaming it into place releases the lock, as git does
        done = true;
        installed?.(before, after);
      }
      return ok;
    } finally {
      if (!done) rmSync(lock, { force: true });
      rmSync(next, { force: true });
    }
  }

  /** A path of git's to show: from the top folder when it is inside it. */
  private shown(abs: string): string {
    const r = relative(this.repo.toplevel, abs).split(sep).join('/');
    return r.startsWith('..') ? abs : r;
  }

  /**
   * Sets the user's index at `paths` to the files as they are, under git's index lock (waiting up
   * to `waitMs` for another git process to release it). Used by recovery.
   */
  async syncIndexPaths(paths: string[], waitMs: number): Promise<void> {
    if (!paths.length || !existsSync(this.repo.indexFile)) return;
    await this.withIndexLock({ indexLockWaitMs: waitMs }, async (index) => {
      await this.writing(UPDATE, paths.join('\0') + '\0', { GIT_INDEX_FILE: index });
      return true;
    });
  }
}

type Outcome = { status: 'unchanged' | 'raced' } | { status: 'moved'; commit: string };

/** A commit made and not yet on HEAD. */
interface Made {
  status: 'made';
  commit: string;
  head: string | null;
  tree: string;
  message: string;
}

/** Both results once both are done (neither left running when the other fails): the first failure is thrown. */
async function settled<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [x, y] = await Promise.allSettled([a, b]);
  if (x.status === 'rejected') throw x.reason;
  if (y.status === 'rejected') throw y.reason;
  return [x.value, y.value];
}

/** Throws the refusal of a write by git (signing, identity, a hook), with git's own words. */
function refused(what: string, err: unknown): never {
  if (err instanceof InterruptedError || err instanceof BusyError) throw err;
  throw new GitError(`${what}: ${(err as Error).message.trim()}`);
}

/**
 * A memory commit by git's own plumbing (docs/ARCHITECTURE.md "Commits are git's"): a racing `git
 * commit` waits or fails on git's `index.lock` and never records our files as deleted. The commit
 * index is read from HEAD again only when HEAD is not the commit it last mirrored. With hooks, the
 * objects are made before the lock is taken (a hook may run git commands that take it), pre-commit
 * on the commit index (exactly what is committed). A batch of any size is one pass of each step.
 */
import { nodeCrypto } from '../node-crypto.js';
import { closeSync, copyFileSync, existsSync, fstatSync, mkdirSync, openSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { BusyError, GitError, InterruptedError, ValidationError } from '../core/errors.js';
import type { GitRepo } from './git.js';
import { headFromFiles } from './git-state.js';
import { indexFileChecksum } from './git-view.js';
import { tryOr, writeFileAtomic } from './fsutil.js';
import { readNoFollow } from './state-dir.js';

/** The commit index is one plain file of every path, whatever the repository asks of the user's. */
const OWN_INDEX = ['core.splitIndex=false', 'core.untrackedCache=false', 'core.fsmonitor=false', 'core.sparseCheckout=false', 'index.sparse=false'].flatMap(
  (c) => ['-c', c],
);

const UPDATE = ['update-index', '--add', '--remove', '--replace', '-z', '--stdin'];

/** Up to this many paths, the user's index copy is updated while git makes the commit. */
export const TOGETHER = 64;

export const INDEX_LOCK_WAIT_MS = 10_000;

export interface CommitHooks {
  /** git's index lock is ours; `inodes` identify the lock file while we hold it (for recovery). */
  onIndexLock?: (note: { inodes: number[] }) => void;
  /** HEAD now points at `commit` (the user's index is installed right after). */
  onCommitted?: (commit: string, parent: string | null) => void;
  /** The user's index was replaced, under git's lock, by one that differs from it only at our paths. */
  onIndexInstalled?: (change: IndexChange) => void;
  /** Run the repository's pre-commit, commit-msg and post-commit hooks (`commit.hooks: run`). */
  runHooks?: boolean;
  warn?: (message: string) => void;
  indexLockWaitMs?: number;
}

/** Our paths (from the top folder), and the index's trailing checksums before and after (null: none). */
export interface IndexChange {
  before: string | null;
  after: string | null;
  paths: string[];
}

export class MemoryCommit {
  private readonly index: string;
  private readonly marker: string;
  /** Told the user once that this commit waits for git's index lock. */
  private waited = false;

  constructor(private readonly repo: GitRepo) {
    this.index = join(repo.stateDir, 'commit-index');
    this.marker = `${this.index}.head`;
  }

  /** The new commit of exactly `absPaths` (missing ones removed), or null when nothing changed; redone when HEAD moved underneath. */
  async commit(absPaths: string[], message: string, hooks: CommitHooks = {}): Promise<string | null> {
    const paths = [...new Set(absPaths.map((p) => this.repo.repoPath(p)))].sort();
    if (paths.length === 0) return null;
    if (message.includes('\0')) throw new ValidationError([{ path: 'commit message', message: 'must not contain a NUL byte' }], 'write');
    mkdirSync(this.repo.stateDir, { recursive: true });
    const sign = this.repo.signsCommits();
    sign.catch(() => undefined);
    let msg = message;
    for (let attempt = 0; attempt < 5; attempt++) {
      const early = hooks.runHooks && attempt === 0 ? await this.objects(paths, msg, sign, hooks, true) : undefined;
      if (early === null) return null;
      let made = early as Made | null | undefined;
      const moved = await this.withIndexLock(hooks, paths, async (index) => {
        const making = early ? Promise.resolve(early) : this.objects(paths, msg, sign, hooks, false);
        const userIndex = (): Promise<string> => this.writing(UPDATE, paths.join('\0') + '\0', { GIT_INDEX_FILE: index });
        // More: after it, when git finds their blobs written (both at once would write every blob twice).
        [made] = paths.length <= TOGETHER ? await settled(making, userIndex()) : [await making];
        if (!made) return false;
        if (paths.length > TOGETHER) await userIndex();
        msg = made.message;
        return this.move(made, hooks, attempt === 4);
      });
      if (!made) return null; // nothing changed
      if (moved) {
        if (hooks.runHooks) await this.hook('post-commit', [], {}, false).then((o) => o && hooks.warn?.(`post-commit hook: ${o}`));
        return made.commit;
      }
    }
    throw new GitError('git commit of memory failed: HEAD kept moving while committing');
  }

  private own(args: string[], input = ''): Promise<string> {
    return this.writing([...OWN_INDEX, ...args], input, { GIT_INDEX_FILE: this.index });
  }

  /** A git command that writes objects, run up to three times: a `gc` beside us removes object folders it emptied, and git re-creates one only once. */
  private async writing(args: string[], input: string, env: Record<string, string> = {}): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.repo.run(args, input, env);
      } catch (err) {
        if (attempt >= 3 || !/unable to create temporary file|unable to write (new |loose )?(sha1 )?(object|file)/i.test((err as Error).message)) throw err;
      }
    }
  }

  /** HEAD (null: unborn) and its tree, with the commit index made to mirror it. */
  private async base() {
    const head = headFromFiles(this.repo.gitDir) ?? (await this.repo.head());
    const mark = tryOr(() => readNoFollow(this.marker, 'utf8').trim().split(' '), []); // none: never synced, or changed since
    rmSync(this.marker, { force: true }); // the commit index is about to change: not a mirror until HEAD moves
    if (head && mark[0] === head && mark[1] && existsSync(this.index)) return { head, tree: mark[1] };
    if (!head) {
      await this.own(['read-tree', '--empty']);
      return { head, tree: null };
    }
    const [, tree] = await Promise.all([this.own(['read-tree', head]), this.repo.run(['rev-parse', `${head}^{tree}`])]);
    return { head, tree: tree.trim() };
  }

  /** The tree of HEAD with our paths set, and the commit, with nothing moved; null when the tree is HEAD's. */
  private async objects(paths: string[], message: string, sign: Promise<boolean>, hooks: CommitHooks, first: boolean) {
    const base = await this.base();
    await this.own(UPDATE, paths.join('\0') + '\0');
    let msg = message;
    if (hooks.runHooks && first) msg = await this.preCommit(msg);
    const tree = (await this.own(['write-tree'])).trim();
    if (tree === base.tree) {
      this.mirror(base.head, tree);
      return null;
    }
    if (hooks.runHooks && first) await this.onlyOurs(paths, base.tree, tree);
    const args = ['commit-tree', tree, ...(base.head ? ['-p', base.head] : []), ...((await sign) ? ['-S'] : [])];
    const commit = (await this.writing(args, msg.trimEnd() + '\n').catch((err: unknown) => refused('git could not make the commit', err))).trim();
    return { commit, head: base.head, tree, message: msg };
  }

  private mirror(commit: string, tree: string): void {
    tryOr(() => writeFileAtomic(this.marker, `${commit} ${tree}\n`, { fsync: false, dirExists: true }), undefined); // else the next commit reads HEAD's tree
  }

  /** Under git's index lock: HEAD moved from the parent to the commit (false: HEAD moved first). */
  private async move(made: Made, hooks: CommitHooks, last: boolean): Promise<boolean> {
    const { commit, head, message } = made;
    try {
      await this.repo.run(
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

  /** A hook's output (`git hook run`); its failure refuses the write unless `strict` is false. */
  private async hook(name: string, args: string[], env: Record<string, string>, strict = true): Promise<string> {
    try {
      return (await this.repo.run(['hook', 'run', '--ignore-missing', name, ...(args.length ? ['--', ...args] : [])], '', env)).trim();
    } catch (err) {
      if (!strict && !(err instanceof InterruptedError)) return (err as Error).message;
      return refused(`the ${name} hook refused the memory commit (commit.hooks: run in config.yaml)`, err);
    }
  }

  /** pre-commit on the commit index, then commit-msg, which may change the message. */
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
  private async onlyOurs(paths: string[], baseTree: string | null, tree: string): Promise<void> {
    const out = baseTree
      ? await this.repo.run(['diff-tree', '-r', '--name-only', '-z', baseTree, tree])
      : await this.repo.run(['ls-tree', '-r', '--name-only', '-z', tree]);
    const ours = new Set(paths);
    const other = out.split('\0').filter((p) => p && !ours.has(p));
    if (other.length)
      throw new GitError(`a pre-commit hook staged files that are not memory (${other.slice(0, 3).join(', ')}): the memory commit was not made`);
  }

  /**
   * Runs `fn` on a copy of the index holding git's `index.lock` as git does: when `fn` returns
   * true the copy is renamed onto the lock and the lock onto the index, which releases it. The
   * copy keeps the index's time, so that git still checks the entries that were racily clean.
   */
  private async withIndexLock(hooks: CommitHooks, paths: string[], fn: (index: string) => Promise<boolean>): Promise<boolean> {
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
        const rel = this.repo.repoPath(lock);
        const shown = rel.startsWith('..') ? lock : rel;
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
    // Where it can be renamed onto the lock: beside the index when GIT_INDEX_FILE names another file system.
    const tag = `${process.pid}-${nodeCrypto().randomBytes(4).toString('hex')}`;
    const dir = dirname(indexFile);
    const next =
      statSync(this.repo.stateDir).dev === statSync(dir).dev
        ? join(this.repo.stateDir, `index-${tag}`)
        : join(dir, `${basename(indexFile)}.bass-agents-${tag}`);
    let done = false;
    try {
      const st = statSync(indexFile, { throwIfNoEntry: false });
      if (st) {
        copyFileSync(indexFile, next);
        utimesSync(next, st.atime, Math.floor(st.mtimeMs / 1000));
      }
      const before = indexFileChecksum(indexFile);
      const ok = await fn(next);
      if (ok) {
        inodes.push(statSync(next).ino);
        hooks.onIndexLock?.({ inodes });
        const after = indexFileChecksum(next);
        renameSync(next, lock); // still locked: the lock file is now the new index...
        renameSync(lock, indexFile); // ...and renaming it into place releases the lock, as git does
        done = true;
        hooks.onIndexInstalled?.({ before, after, paths });
      }
      return ok;
    } finally {
      if (!done) rmSync(lock, { force: true });
      rmSync(next, { force: true });
    }
  }

  /** Recovery: the user's index at `paths` set to the files as they are, under git's index lock. */
  async syncIndexPaths(paths: string[], waitMs: number): Promise<void> {
    if (!paths.length || !existsSync(this.repo.indexFile)) return;
    await this.withIndexLock({ indexLockWaitMs: waitMs }, paths, async (index) => {
      await this.writing(UPDATE, paths.join('\0') + '\0', { GIT_INDEX_FILE: index });
      return true;
    });
  }
}

/** A commit made and not yet moved to. */
type Made = NonNullable<Awaited<ReturnType<MemoryCommit['objects']>>>;

/** Both results once both are done (neither left running when the other fails). */
async function settled<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [x, y] = await Promise.allSettled([a, b]);
  if (x.status === 'rejected') throw x.reason;
  if (y.status === 'rejected') throw y.reason;
  return [x.value, y.value];
}

/** A refusal by git (signing, identity, a hook), in git's words. */
function refused(what: string, err: unknown): never {
  if (err instanceof InterruptedError || err instanceof BusyError) throw err;
  throw new GitError(`${what}: ${(err as Error).message.trim()}`);
}

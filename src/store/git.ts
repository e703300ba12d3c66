/**
 * Git, through simple-git (and `child_process` where git reads stdin, which simple-git cannot
 * feed). Memory commits are made with plumbing: `fast-import` builds the commit from our files on
 * top of HEAD, `update-ref` moves HEAD with the old commit as a compare-and-swap (see
 * commitPaths). The user's own index, staged changes and working tree are never part of the
 * commit; afterwards the real index is updated for exactly our paths (to the committed blobs), so
 * `git status` shows them clean and nothing else moves.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import type { SimpleGit, simpleGit as SimpleGitFactory } from 'simple-git';
import { BusyError, GitError } from '../core/errors.js';
import { configValue, findGitDir, writeBlocker } from './git-state.js';

export { findGitDir } from './git-state.js';

/** The process environment without GIT_* keys (simple-git's environment guard refuses them). */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^git_/i.test(k) && !/^(EDITOR|PAGER|SSH_ASKPASS|PREFIX)$/i.test(k)) out[k] = v;
  }
  return { ...out, ...extra };
}

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

/** The id git gives a blob with these bytes (no filters: fast-import stores bytes as given). */
function blobId(data: Buffer, algo: 'sha1' | 'sha256'): string {
  return createHash(algo).update(`blob ${data.length}\0`).update(data).digest('hex');
}

/** Journal hooks of a commit: what it is about to hold, and the moment HEAD moved. */
export interface CommitHooks {
  /** git's index lock is ours; `inodes` identify the lock file while we hold it (for recovery). */
  onIndexLock?: (note: { inodes: number[] }) => void;
  /** HEAD now points at `commit` (the user's index is installed right after). */
  onCommitted?: (commit: string) => void;
}

/** How long a memory commit waits for another git process to release the index lock. */
const INDEX_LOCK_WAIT_MS = 10_000;

/** Whether the repository's config names another work tree (`core.worktree`): then git must say where. */
function hasCoreWorktree(gitDir: string): boolean {
  try {
    return /^\s*worktree\s*=/im.test(readFileSync(join(gitDir, 'config'), 'utf8'));
  } catch {
    return false;
  }
}

export class GitRepo {
  readonly toplevel: string;
  readonly gitDir: string;
  private git: SimpleGit;
  private simpleGit: typeof SimpleGitFactory;
  private ident: { name: string; email: string } | undefined;

  private constructor(toplevel: string, gitDir: string, factory: typeof SimpleGitFactory) {
    this.toplevel = toplevel;
    this.gitDir = gitDir;
    this.simpleGit = factory;
    this.git = factory({ baseDir: toplevel });
  }

  /** The repository holding `dir`, or null when `dir` is not inside a git work tree. */
  static async open(dir: string): Promise<GitRepo | null> {
    // Loaded on first use: read-only commands never pay for it at start-up.
    const { simpleGit } = await import('simple-git');
    // The common case without a git process: a `.git` folder in an ancestor, no GIT_DIR or
    // GIT_WORK_TREE in the environment, and a work tree that is the folder holding `.git`.
    const found = process.env.GIT_DIR || process.env.GIT_WORK_TREE ? null : findGitDir(dir);
    if (found && basename(found) === '.git' && statSync(found, { throwIfNoEntry: false })?.isDirectory() && !hasCoreWorktree(found)) {
      return new GitRepo(realpathSync(dirname(found)), realpathSync(found), simpleGit);
    }
    try {
      const out = await simpleGit({ baseDir: dir }).raw(['rev-parse', '--show-toplevel', '--absolute-git-dir']);
      const [top, gitDir] = out.trim().split('\n');
      if (!top || !gitDir) return null;
      return new GitRepo(top, gitDir, simpleGit);
    } catch {
      return null;
    }
  }

  /** Path relative to the repository top level, "/"-separated. */
  repoPath(abs: string): string {
    return relative(this.toplevel, abs).split(sep).join('/');
  }

  async head(): Promise<string | null> {
    try {
      return (await this.git.raw(['rev-parse', '-q', '--verify', 'HEAD^{commit}'])).trim() || null;
    } catch {
      return null;
    }
  }

  /** `user.name` and `user.email` from git config (one git call, remembered). */
  private async configIdentity(): Promise<{ name: string; email: string }> {
    if (this.ident) return this.ident;
    let out = '';
    try {
      out = await this.git.raw(['config', '--get-regexp', '^user\\.(name|email)$']);
    } catch {
      /* neither is set: git exits 1 */
    }
    const ident = { name: '', email: '' };
    for (const line of out.split('\n')) {
      const m = /^user\.(name|email) (.*)$/.exec(line);
      if (m) ident[m[1] as 'name' | 'email'] = m[2].trim(); // the last one wins, as in git
    }
    this.ident = ident;
    return ident;
  }

  /** `user.name` from git config, or null. */
  async userName(): Promise<string | null> {
    return (await this.configIdentity()).name || null;
  }

  /**
   * Commits exactly `absPaths` (files present are added, missing ones removed) on top of HEAD.
   * Returns the new commit, or null when nothing changed. Retries when HEAD moved underneath.
   *
   * `cat-file --batch-check` says what HEAD holds at those paths; `fast-import` writes the blobs,
   * the trees along those paths and the commit, onto a private ref. Then, holding git's own
   * `index.lock` as `git commit` does, a copy of the user's index gets our paths
   * (`update-index --index-info`), `update-ref` moves HEAD from the old commit to the new one (a
   * compare-and-swap) and drops the private ref, and the copy is renamed into place. To the user
   * HEAD and index move as one step: a `git commit` racing ours waits or fails on the lock, and
   * never records our new files as deleted. No index of the whole tree is built.
   */
  async commitPaths(absPaths: string[], message: string, agent: string, hooks: CommitHooks = {}): Promise<string | null> {
    const byPath = new Map(absPaths.map((p) => [this.repoPath(p), p]));
    const paths = [...byPath.keys()].sort();
    if (paths.length === 0) return null;
    const identity = await this.configIdentity();
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
   * One attempt: HEAD and the blobs it holds at our paths; nothing to do when they match; else
   * the commit by fast-import, the index copy, and the compare-and-swap of HEAD. `lockedIndex`:
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
    lockedIndex: string | null,
    last = false,
  ): Promise<{ status: 'unchanged' | 'raced' } | { status: 'moved'; commit: string }> {
    const files = paths.map((p) => ({ path: p, data: readOrNull(byPath.get(p)!) }));
    // HEAD, and the blob HEAD holds at each path (or "missing").
    const held = await this.blobsAt('HEAD', paths);
    const head = held.head;
    if (head) {
      const algo = head.length === 64 ? 'sha256' : 'sha1';
      const unchanged = files.every((f) => {
        const blob = held.blobs.get(f.path) ?? null;
        return f.data === null ? blob === null : blob === blobId(f.data, algo);
      });
      if (unchanged) return { status: 'unchanged' };
    }
    const tag = `${process.pid}-${randomBytes(4).toString('hex')}`;
    const ref = `refs/bass-agents/commit-${tag}`;
    mkdirSync(this.stateDir, { recursive: true });
    const marks = join(this.stateDir, `marks-${tag}`);
    let refGone = false;
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
      await this.gitStdin(['fast-import', '--quiet', '--done', '--date-format=now', `--export-marks=${marks}`], Buffer.concat(chunks));
      const marked = new Map<string, string>();
      for (const line of readFileSync(marks, 'utf8').split('\n')) {
        const m = /^:(\d+) ([0-9a-f]+)$/.exec(line);
        if (m) marked.set(m[1], m[2]);
      }
      const commit = marked.get(String(files.length + 1));
      if (!commit) throw new GitError('git commit of memory failed: fast-import reported no commit');
      const entries = files.map((f, i) => ({ path: f.path, blob: f.data !== null ? (marked.get(String(i + 1)) ?? null) : null }));
      const move = async (indexNext: string): Promise<boolean> => {
        await this.updateIndexFile(indexNext, entries);
        try {
          await this.gitStdin(
            ['update-ref', '-m', `bass-agents: ${message.split('\n')[0]}`, '--stdin'],
            `${head ? `update HEAD ${commit} ${head}` : `create HEAD ${commit}`}\ndelete ${ref} ${commit}\n`,
          );
        } catch (err) {
          if (!last && /cannot lock ref|but expected|is at|unable to resolve/i.test(String((err as Error).message ?? err))) return false; // HEAD moved: redo on the new HEAD.
          throw err;
        }
        refGone = true;
        hooks.onCommitted?.(commit);
        return true;
      };
      const moved = lockedIndex !== null ? await move(lockedIndex) : await this.withIndexLock(hooks, move);
      return moved ? { status: 'moved', commit } : { status: 'raced' };
    } catch (err) {
      if (err instanceof GitError || err instanceof BusyError) throw err;
      throw new GitError(`git commit of memory failed: ${String((err as Error).message ?? err).trim()}`);
    } finally {
      rmSync(marks, { force: true });
      // The private ref outlives a failed attempt only: drop it (a no-op when fast-import never made it).
      if (!refGone) await this.gitStdin(['update-ref', '--stdin'], `delete ${ref}\n`).catch(() => undefined);
    }
  }

  /** Where our own state lives inside the git dir (write lock, journal, the next index). */
  get stateDir(): string {
    return join(this.gitDir, 'bass-agents');
  }

  private get indexFile(): string {
    return join(this.gitDir, 'index');
  }

  /**
   * Runs `fn` holding git's `index.lock`, the way git itself does: the lock file is created
   * exclusively, `fn` gets a copy of the index to change (null when the repository has no index
   * yet), and when `fn` returns true the copy is renamed onto the lock and the lock onto the
   * index, which releases it. Otherwise the lock is simply removed. Waits while another git
   * process holds the lock; gives up with BusyError.
   */
  private async withIndexLock(hooks: CommitHooks, fn: (indexNext: string) => Promise<boolean>): Promise<boolean> {
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
    // The copy to change (a repository without an index yet gets a new one with just our paths).
    const next = join(this.stateDir, `index-${process.pid}-${randomBytes(4).toString('hex')}`);
    let installed = false;
    try {
      if (existsSync(this.indexFile)) copyFileSync(this.indexFile, next);
      const ok = await fn(next);
      if (ok) {
        inodes.push(statSync(next).ino);
        hooks.onIndexLock?.({ inodes });
        renameSync(next, lock); // still locked: the lock file is now the new index...
        renameSync(lock, this.indexFile); // ...and renaming it into place releases the lock, as git does
        installed = true;
      }
      return ok;
    } finally {
      if (!installed) rmSync(lock, { force: true });
      rmSync(next, { force: true });
    }
  }

  private repoPathOfGitFile(abs: string): string {
    const r = relative(this.toplevel, abs).split(sep).join('/');
    return r.startsWith('..') ? abs : r;
  }

  /** Sets our paths in the index file `indexFile` (a path with a null blob is removed), in one process. */
  private async updateIndexFile(indexFile: string | null, entries: { path: string; blob: string | null }[]): Promise<void> {
    const zero = '0'.repeat(40);
    const input = entries.map((e) => (e.blob ? `100644 ${e.blob}\t${e.path}\0` : `0 ${zero}\t${e.path}\0`)).join('');
    await this.gitStdin(['update-index', '-z', '--index-info'], input, indexFile ? { GIT_INDEX_FILE: indexFile } : {});
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

  /** HEAD (or `rev`) and the blob it holds at each path (absent: not in the map), in one process. */
  async blobsAt(rev: string, paths: string[]): Promise<{ head: string | null; blobs: Map<string, string> }> {
    const check = (await this.gitStdin(['cat-file', '--batch-check'], [rev, ...paths.map((p) => `${rev}:${p}`)].join('\n') + '\n')).split('\n');
    const headLine = /^([0-9a-f]{40,64}) commit /.exec(check[0] ?? '');
    const blobs = new Map<string, string>();
    paths.forEach((p, i) => {
      const m = /^([0-9a-f]{40,64}) blob /.exec(check[i + 1] ?? '');
      if (m) blobs.set(p, m[1]);
    });
    return { head: headLine ? headLine[1] : null, blobs };
  }

  /** The bytes of blobs, in one `cat-file --batch` process. */
  async readBlobs(ids: string[]): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    const want = [...new Set(ids)];
    if (!want.length) return out;
    const buf = await this.gitStdinBuffer(['cat-file', '--batch'], `${want.join('\n')}\n`);
    let at = 0;
    for (const id of want) {
      const nl = buf.indexOf(10, at);
      if (nl < 0) break;
      const header = buf.subarray(at, nl).toString('utf8');
      const m = /^([0-9a-f]+) \S+ (\d+)$/.exec(header);
      if (!m) {
        at = nl + 1; // "<id> missing"
        continue;
      }
      const size = Number(m[2]);
      out.set(id, buf.subarray(nl + 1, nl + 1 + size));
      at = nl + 1 + size + 1;
    }
    return out;
  }

  /**
   * Removes what killed writers of ours left in git: private refs under refs/bass-agents/ and
   * marks files. Called with the write lock held, when no writer of ours can be mid-commit.
   */
  async sweepLeftovers(): Promise<number> {
    let n = 0;
    const refs = (await this.git.raw(['for-each-ref', '--format=%(refname)', 'refs/bass-agents/']).catch(() => '')).split('\n').filter(Boolean);
    if (refs.length) {
      await this.gitStdin(['update-ref', '--stdin'], refs.map((r) => `delete ${r}\n`).join('')).catch(() => undefined);
      n += refs.length;
    }
    for (const dir of [this.stateDir, this.gitDir]) {
      let names: string[] = [];
      try {
        names = readdirSync(dir);
      } catch {
        continue;
      }
      for (const f of names) {
        if (/^(marks-|index-|bass-agents-marks-)\d+-[0-9a-f]+$/.test(f)) {
          rmSync(join(dir, f), { force: true });
          n++;
        }
      }
    }
    return n;
  }

  /** Why memory must not be committed on this checkout now, or null (see writeBlocker in git-state.ts). */
  writeBlocker(): string | null {
    return writeBlocker(this.gitDir);
  }

  /** Runs git with `input` on stdin (simple-git cannot feed stdin); resolves with stdout, rejects with stderr. */
  private async gitStdin(args: string[], input: string | Buffer, env: Record<string, string> = {}): Promise<string> {
    return (await this.gitStdinBuffer(args, input, env)).toString('utf8');
  }

  private async gitStdinBuffer(args: string[], input: string | Buffer, env: Record<string, string> = {}): Promise<Buffer> {
    const { spawn } = await import('node:child_process'); // not at start-up: read-only commands never spawn
    return new Promise((resolve, reject) => {
      const child = spawn('git', args, { cwd: this.toplevel, env: cleanEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.on('data', (d: Buffer) => err.push(d));
      child.on('error', reject);
      child.on('close', (code) => {
        if (code === 0) resolve(Buffer.concat(out));
        else reject(new Error(Buffer.concat(err).toString('utf8').trim() || `git ${args[0]} exited with ${code}`));
      });
      child.stdin.on('error', () => undefined); // git exiting early is reported through close
      child.stdin.end(input);
    });
  }

  /** The repository-local git config value of `key`, or null. */
  async config(key: string): Promise<string | null> {
    try {
      return (await this.git.raw(['config', '--local', '--get', key])).trim() || null;
    } catch {
      return null;
    }
  }

  /**
   * Sets a repository-local config value. simple-git refuses to write merge-driver commands unless
   * asked: only this one call gets that permission (the value is our own command line).
   */
  async setConfig(key: string, value: string): Promise<void> {
    const g = key.startsWith('merge.')
      ? this.simpleGit({ baseDir: this.toplevel, unsafe: { allowUnsafeMergeDriver: true } } as Parameters<typeof SimpleGitFactory>[0])
      : this.git;
    await g.raw(['config', '--local', key, value]);
  }

  /** Registers `command` as our merge driver in the repository's local config, unless it already is. */
  async ensureMergeDriver(driver: string, command: string): Promise<void> {
    // Read from the config file first: a write need not start git to learn it is registered.
    if (configValue(this.gitDir, 'merge', driver, 'driver') === command) return;
    if ((await this.config(`merge.${driver}.driver`)) === command) return;
    await this.setConfig(`merge.${driver}.name`, 'bass-agents memory: field-level merge of one entry');
    await this.setConfig(`merge.${driver}.driver`, command);
  }

  /** Runs a git command in the repository; resolves with stdout, rejects with git's message. */
  async run(args: string[]): Promise<string> {
    return this.git.raw(args);
  }
}

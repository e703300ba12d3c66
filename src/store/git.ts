/**
 * Git, through simple-git (and `child_process` where git reads stdin, which simple-git cannot
 * feed): the repository, its identity and config, the blobs HEAD holds, and the leftovers of
 * killed writers. Memory commits themselves are made by git-commit.ts (`commitPaths`).
 */
import { closeSync, fstatSync, openSync, readFileSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { readInto } from './fsutil.js';
import { basename, dirname, join, relative, sep } from 'node:path';
import type { SimpleGit, simpleGit as SimpleGitFactory } from 'simple-git';
import { configValue, findGitDir, writeBlocker } from './git-state.js';
import { MemoryCommit, type CommitHooks } from './git-commit.js';
import { cleanEnv } from './git-env.js';
import { catFileNames, parseCatFileTrees, type Trees } from './git-objects.js';

/** At most this many bytes of trees are remembered between commits. */
const TREE_MEMORY_BYTES = 64 << 20;

export type { CommitHooks } from './git-commit.js';

export { findGitDir } from './git-state.js';

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
  private ident: Promise<{ name: string; email: string }> | undefined;
  /** Trees of the last commit this process made (git-objects.ts). */
  private trees: { commit: string; bodies: Trees } | undefined;
  private indexBuffer: Buffer | undefined;

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

  /** `user.name` and `user.email` from git config (one git call, remembered; see prefetchIdentity). */
  configIdentity(): Promise<{ name: string; email: string }> {
    this.ident ??= this.git.raw(['config', '--get-regexp', '^user\\.(name|email)$']).then(
      (out) => {
        const ident = { name: '', email: '' };
        for (const line of out.split('\n')) {
          const m = /^user\.(name|email) (.*)$/.exec(line);
          if (m) ident[m[1] as 'name' | 'email'] = m[2].trim(); // the last one wins, as in git
        }
        return ident;
      },
      () => ({ name: '', email: '' }), // neither is set: git exits 1
    );
    return this.ident;
  }

  /** Starts reading the identity a commit needs, so that git runs while the write does its own work. */
  prefetchIdentity(): void {
    void this.configIdentity();
  }

  /** `user.name` from git config, or null. */
  async userName(): Promise<string | null> {
    return (await this.configIdentity()).name || null;
  }

  /**
   * Commits exactly `absPaths` (files present are added, missing ones removed) on top of HEAD,
   * moving HEAD and the user's index together (see git-commit.ts). The commit, or null when
   * nothing changed.
   */
  async commitPaths(absPaths: string[], message: string, agent: string, hooks: CommitHooks = {}): Promise<string | null> {
    return new MemoryCommit(this).commit(absPaths, message, agent, hooks);
  }

  /** Points the user's index at `blob` for each path (null: removed), through git's own lock. Used by recovery. */
  async setIndexEntries(entries: { path: string; blob: string | null }[]): Promise<void> {
    return new MemoryCommit(this).setIndexEntries(entries);
  }

  /** Where our own state lives inside the git dir (write lock, journal, the next index). */
  get stateDir(): string {
    return join(this.gitDir, 'bass-agents');
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

  /**
   * The trees of `folders` ("" the root) in `commit` (null: no such folder), from the trees this
   * process remembers of the commit it last made, else one `cat-file --batch`.
   */
  async treesAt(commit: string, folders: string[]): Promise<Trees> {
    const known = this.trees?.commit === commit ? this.trees.bodies : undefined;
    const missing = folders.filter((f) => !known?.has(f));
    const read = missing.length ? parseCatFileTrees(await this.gitStdinBuffer(['cat-file', '--batch'], catFileNames(commit, missing)), missing) : undefined;
    return new Map(folders.map((f) => [f, known?.has(f) ? known.get(f)! : read!.get(f)!]));
  }

  /**
   * Remembers the trees of `commit`, which this process just made on `parent`: those it rewrote,
   * and those it read of `parent` (or remembered of it) that it did not touch. Up to 64 MB.
   */
  rememberTrees(parent: string, read: Trees, commit: string, written: Trees): void {
    const bodies: Trees = new Map(this.trees?.commit === parent ? this.trees.bodies : []);
    for (const [f, b] of read) bodies.set(f, b);
    for (const [f, b] of written) bodies.set(f, b);
    let bytes = 0;
    for (const b of bodies.values()) bytes += b?.length ?? 0;
    this.trees = bytes <= TREE_MEMORY_BYTES ? { commit, bodies } : undefined;
  }

  /**
   * The bytes of git's index (null when there is none), read into a buffer this repository keeps
   * for the next read: a daemon committing often does not make and drop an index-sized buffer
   * each time. Valid until the next call.
   */
  readIndex(): Buffer | null {
    let fd: number;
    try {
      fd = openSync(join(this.gitDir, 'index'), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    try {
      const size = fstatSync(fd).size;
      if (!this.indexBuffer || this.indexBuffer.length < size) this.indexBuffer = Buffer.allocUnsafe(Math.ceil(size * 1.25));
      return readInto(fd, 0, this.indexBuffer.subarray(0, size));
    } finally {
      closeSync(fd);
    }
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

  /** Runs git with `input` on stdin (and `env` added; simple-git cannot feed stdin); resolves with stdout, rejects with stderr. */
  async gitStdin(args: string[], input: string | Buffer, env: Record<string, string> = {}): Promise<string> {
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

  /** Registers the textconv of a diff driver in the repository's local config (idempotent). */
  async ensureDiffDriver(driver: string, command: string): Promise<void> {
    if (configValue(this.gitDir, 'diff', driver, 'textconv') === command) return;
    // (Through git itself: simple-git refuses to set a textconv at all, as a guard for callers
    // that pass untrusted input; this command is ours.)
    await this.gitStdin(['config', '--local', `diff.${driver}.textconv`, command], '');
  }

  /** Runs a git command in the repository; resolves with stdout, rejects with git's message. */
  async run(args: string[]): Promise<string> {
    return this.git.raw(args);
  }
}

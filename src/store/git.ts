/**
 * Git, run as child processes in the user's environment (git-env.ts), so that GIT_* variables,
 * identities and extra config apply as to the user's own commands. Memory commits: git-commit.ts.
 */
import { mkdirSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { GitError, InterruptedError } from '../core/errors.js';
import { nodeCrypto } from '../node-crypto.js';
import { configBool, configFiles, configLast, configValue, filesStamp } from './git-state.js';
import { gitDirOf } from './state-dir.js';
import { MemoryCommit, type CommitHooks } from './git-commit.js';
import { gitEnv, hasGitLocation } from './git-env.js';
import { gitHelper, spawnGit, type GitOutcome } from './git-helper.js';
import { tryOr } from './fsutil.js';

/**
 * git's stdout, or a GitError with git's message; InterruptedError when git was stopped by SIGINT
 * or SIGTERM (a Ctrl-C reaches the whole process group: git stops first, and the write must end
 * as interrupted, not failed).
 */
function stdoutOf(r: GitOutcome, command: string | undefined): Buffer {
  if (r.error !== undefined) throw new GitError(`cannot run git: ${r.error}`);
  if (r.code === 0) return r.out;
  if (r.signal === 'SIGINT' || r.signal === 'SIGTERM') throw new InterruptedError(r.signal);
  const text = r.err.toString('utf8').trim();
  throw new GitError(text || `git ${command} ${r.signal ? `was stopped by ${r.signal}` : `exited with ${r.code}`}`);
}

/** A reader of `cat-file --batch` output for objects `want`, in chunks of any size: each object found goes to `onBlob`. */
function blobReader(want: string[], onBlob: (name: string, bytes: Buffer) => void): (chunk: Buffer) => void {
  let next = 0;
  let size = -1; // the object being read, or -1 between objects
  let held: Buffer[] = [];
  let heldBytes = 0;
  return (chunk) => {
    held.push(chunk);
    heldBytes += chunk.length;
    if (size >= 0 && heldBytes < size + 1) return;
    const buf = held.length === 1 ? chunk : Buffer.concat(held);
    let at = 0;
    for (;;) {
      if (size < 0) {
        const nl = buf.indexOf(10, at);
        if (nl < 0) break;
        const m = /^[0-9a-f]+ \S+ (\d+)$/.exec(buf.toString('latin1', at, nl));
        at = nl + 1;
        if (!m) {
          next++; // "<name> missing"
          continue;
        }
        size = Number(m[1]);
      }
      if (buf.length - at < size + 1) break;
      onBlob(want[next++]!, buf.subarray(at, at + size));
      at += size + 1;
      size = -1;
    }
    held = at < buf.length ? [Buffer.from(buf.subarray(at))] : [];
    heldBytes = buf.length - at;
  };
}

export class GitRepo {
  private name: Promise<string | null> | undefined;
  /** commit.gpgsign as git last read it, and the stamp of the config files it came from. */
  private signing: { files: string[]; stamp: string; value: boolean } | undefined;

  private constructor(
    readonly toplevel: string,
    readonly gitDir: string,
    /** The user's index: `<git dir>/index`, or the file GIT_INDEX_FILE names (made absolute for git). */
    readonly indexFile: string,
    private readonly indexEnv: Record<string, string>,
    /** git started from the helper process (git-helper.ts): for long-lived processes. */
    private readonly helper: boolean,
  ) {}

  /** The repository holding `dir`, or null outside a work tree; git's reason when the environment names one (GIT_DIR...) git cannot use. */
  static async open(dir: string, { helper = false }: { helper?: boolean } = {}): Promise<GitRepo | null> {
    // Without a git process in the common case: a `.git` folder above, no GIT_* location, no core.worktree (git must say where).
    const found = hasGitLocation() ? null : gitDirOf(dir)?.gitDir;
    if (
      found &&
      basename(found) === '.git' &&
      statSync(found, { throwIfNoEntry: false })?.isDirectory() &&
      configValue(found, 'core', '', 'worktree') === undefined
    ) {
      const gitDir = realpathSync(found);
      return new GitRepo(realpathSync(dirname(found)), gitDir, join(gitDir, 'index'), {}, helper);
    }
    let out: string;
    try {
      out = stdoutOf(await spawnGit(dir, ['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-path', 'index'], gitEnv()), 'rev-parse').toString(
        'utf8',
      );
    } catch (err) {
      if (!hasGitLocation()) return null;
      throw new GitError(`git cannot use the repository its environment names (GIT_DIR, GIT_WORK_TREE): ${(err as Error).message}`);
    }
    const [top, gitDir, index] = out.trim().split('\n');
    if (!top || !gitDir || !index) return null;
    const indexFile = resolve(dir, index);
    return new GitRepo(top, gitDir, indexFile, process.env.GIT_INDEX_FILE ? { GIT_INDEX_FILE: indexFile } : {}, helper);
  }

  repoPath(abs: string): string {
    return relative(this.toplevel, abs).split(sep).join('/');
  }

  /** Runs git in the top folder (stdout as bytes, or to `onOut` as it comes); `env` is added to the user's. */
  async exec(args: string[], input: string | Buffer = '', env: Record<string, string> = {}, onOut?: (d: Buffer) => void): Promise<Buffer> {
    const e = gitEnv({ ...this.indexEnv, ...env });
    return stdoutOf(
      this.helper && !onOut ? await gitHelper.run(this.toplevel, args, input, e) : await spawnGit(this.toplevel, args, e, { input, onOut }),
      args[0],
    );
  }

  /** The same, as text. */
  async run(args: string[], input: string | Buffer = '', env: Record<string, string> = {}): Promise<string> {
    return (await this.exec(args, input, env)).toString('utf8');
  }

  async head(): Promise<string | null> {
    return (await this.run(['rev-parse', '-q', '--verify', 'HEAD^{commit}']).catch(() => '')).trim() || null;
  }

  /** `user.name` from git config (remembered), or null: the writer's name when none is given. From the listing a write reads its signing from. */
  userName(): Promise<string | null> {
    this.name ??= this.readConfig().then(({ list }) => (list === null ? null : configLast(list, 'user.name')?.trim() || null));
    return this.name;
  }

  /** `commit.gpgsign` (which `commit-tree` leaves to its caller), asked again only when a config file git may read changed. */
  async signsCommits(): Promise<boolean> {
    const known = this.signing;
    if (known && filesStamp(known.files) === known.stamp) return known.value;
    return (await this.readConfig()).signs;
  }

  /** git's whole config as it reads it now (null: it cannot), and its signing, kept while no file it came from changes. */
  private async readConfig(): Promise<{ list: string | null; signs: boolean }> {
    const asked = Date.now();
    const list = await this.run(['config', '-z', '--show-origin', '--list']).catch(() => null);
    if (list === null) return { list, signs: false }; // as git reads it, a config git cannot read signs nothing (commit-tree then fails on it)
    let value = configBool(list, 'commit.gpgsign');
    if (value === undefined) value = (await this.run(['config', '--type=bool', 'commit.gpgsign']).catch(() => '')).trim() === 'true'; // git's reading of an unusual value
    const files = configFiles(list, this.gitDir, this.toplevel);
    // A file changed just before git read it may change again unseen within its time's tick: not kept.
    const stamp = filesStamp(files, asked - 2000);
    this.signing = stamp === null ? undefined : { files, stamp, value };
    return { list, signs: value };
  }

  async commitPaths(absPaths: string[], message: string, hooks: CommitHooks = {}): Promise<string | null> {
    return new MemoryCommit(this).commit(absPaths, message, hooks);
  }

  /** Where our own state lives inside the git dir (write lock, journal, the commit index). */
  get stateDir(): string {
    return join(this.gitDir, 'bass-agents');
  }

  /** The blob id of each of `paths` (repository paths) at `rev`, by `ls-tree` (absent: none there, or an unborn HEAD). */
  async blobsAt(rev: string, paths: string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (let i = 0; i < paths.length; i += 1000) {
      const listing = await this.run(['ls-tree', '-z', '--full-tree', rev, '--', ...paths.slice(i, i + 1000)], '', { GIT_LITERAL_PATHSPECS: '1' }).catch(
        async (err: unknown) => {
          if (rev === 'HEAD' && !(await this.head())) return '';
          throw err;
        },
      );
      for (const rec of listing.split('\0')) {
        const tab = rec.indexOf('\t');
        const [, blob] = /^\d+ blob ([0-9a-f]+)$/.exec(rec.slice(0, tab)) ?? [];
        if (blob) out.set(rec.slice(tab + 1), blob);
      }
    }
    return out;
  }

  /** The blob ids git gives these files (paths from the top folder; clean filters applied, nothing written), in one process. */
  async hashFiles(paths: string[]): Promise<string[]> {
    if (!paths.length) return [];
    return (await this.run(['hash-object', '--stdin-paths'], paths.join('\n') + '\n')).trim().split('\n');
  }

  /** Writes these files (from the top folder) as git checks them out of HEAD, through a temporary index (the user's is not touched). */
  async checkoutFromHead(paths: string[]): Promise<void> {
    if (!paths.length) return;
    mkdirSync(this.stateDir, { recursive: true });
    const env = { GIT_INDEX_FILE: join(this.stateDir, `index-${process.pid}-${nodeCrypto().randomBytes(4).toString('hex')}`) };
    try {
      await this.exec(['read-tree', 'HEAD'], '', env);
      await this.exec(['checkout-index', '-f', '-z', '--stdin'], paths.join('\0') + '\0', env);
    } finally {
      rmSync(env.GIT_INDEX_FILE, { force: true });
    }
  }

  /** The bytes of objects by name (ids, or `<rev>:<path>`), in one `cat-file --batch` (through the helper in a long-lived process). */
  async readBlobs(names: string[]): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    const want = [...new Set(names)];
    if (want.length) blobReader(want, (name, bytes) => out.set(name, bytes))(await this.exec(['cat-file', '--batch'], `${want.join('\n')}\n`));
    return out;
  }

  /**
   * Each of `names` that git has, to `onBlob` as `cat-file --batch` streams it: nothing of git's
   * output outlives the object it holds, so reading thousands of objects holds one at a time.
   */
  async streamBlobs(names: string[], onBlob: (name: string, bytes: Buffer) => void): Promise<void> {
    const want = [...new Set(names)];
    if (want.length) await this.exec(['cat-file', '--batch'], `${want.join('\n')}\n`, {}, blobReader(want, onBlob));
  }

  /** Removes the temporary index files killed writers of ours left (with the write lock held: no writer of ours is mid-commit). */
  sweepLeftovers(): void {
    for (const dir of new Set([this.stateDir, dirname(this.indexFile)])) {
      for (const f of tryOr(() => readdirSync(dir), []))
        if (/^index-\d+-[0-9a-f]+$|\.bass-agents-\d+-[0-9a-f]+$/.test(f)) rmSync(join(dir, f), { force: true });
    }
  }

  /** Registers our merge driver and its diff driver's textconv in the repository's local config, unless they already are (read from the file first: no git process). */
  async ensureDrivers(driver: string, merge: string, textconv: string): Promise<void> {
    const set = (key: string, value: string): Promise<string> => this.run(['config', '--local', key, value]);
    const registered =
      configValue(this.gitDir, 'merge', driver, 'driver') === merge ||
      (await this.run(['config', '--local', '--get', `merge.${driver}.driver`]).catch(() => '')).trim() === merge;
    if (!registered) {
      await set(`merge.${driver}.name`, 'bass-agents memory: field-level merge of one entry');
      await set(`merge.${driver}.driver`, merge);
    }
    if (configValue(this.gitDir, 'diff', driver, 'textconv') !== textconv) await set(`diff.${driver}.textconv`, textconv);
  }
}

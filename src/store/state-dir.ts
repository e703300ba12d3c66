/**
 * Where a workspace's local state lives (docs/ARCHITECTURE.md "Local state"), found with the file
 * system alone (the thin client spawns nothing), and the checks that keep it from being read or
 * written through a link: every folder of ours is checked when a process first uses or makes it,
 * a real folder owned by this user (in a git dir, or the repository's owner), holding no link. And
 * whether the process a pid file or a lock's owner file names still runs.
 */
import { closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UnsafePathError } from '../core/errors.js';
import { tryOr } from './fsutil.js';

/** The git dir holding `root` and its work tree's top, from `GIT_DIR` or the nearest `.git` up; null outside git. */
export function gitDirOf(root: string, env: NodeJS.ProcessEnv = process.env): { gitDir: string; top: string } | null {
  if (env.GIT_DIR) {
    const gitDir = resolve(env.GIT_DIR);
    return isGitDir(gitDir) ? { gitDir, top: env.GIT_WORK_TREE ? resolve(env.GIT_WORK_TREE) : root } : null;
  }
  for (let dir = root; ;) {
    const dotGit = join(dir, '.git');
    const st = statSync(dotGit, { throwIfNoEntry: false });
    let gitDir: string | undefined;
    if (st?.isDirectory()) gitDir = dotGit;
    else if (st?.isFile()) {
      const [, to] = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, 'utf8')) ?? [];
      gitDir = to ? resolve(dir, to.trim()) : undefined;
    }
    if (st) return gitDir && isGitDir(gitDir) ? { gitDir, top: dir } : null;
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

const isGitDir = (dir: string): boolean => statSync(join(dir, 'HEAD'), { throwIfNoEntry: false })?.isFile() === true;

/** A folder name for a path: a readable part and a short hash of the whole. */
function keyOf(path: string): string {
  const name =
    basename(path)
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .replace(/^\.+/, '')
      .slice(0, 40) || 'root';
  return `${name}-${process.getBuiltinModule('node:crypto').createHash('sha256').update(path).digest('hex').slice(0, 12)}`;
}

/**
 * Where the local state of the workspace at `root` lives (nothing made or checked): `dir`, the git
 * dir holding it (null outside git: `dir` is in the user's state folder), and `base`, the folder
 * above our own (the git dir or the user's state folder), trusted as given.
 */
export function stateDirOf(root: string, env: NodeJS.ProcessEnv = process.env) {
  const found = gitDirOf(root, env);
  if (found) {
    const { gitDir, top } = found;
    // A workspace below the work tree's top gets a folder of its own.
    const rel = relative(top, root);
    const dir =
      rel === '' || rel.startsWith('..') || isAbsolute(rel)
        ? join(gitDir, 'bass-agents')
        : join(gitDir, 'bass-agents', 'nested', keyOf(rel.split(sep).join('/')));
    return { dir, gitDir, base: gitDir };
  }
  const real = tryOr(() => realpathSync.native(root), root);
  const xdg = env.XDG_STATE_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir(), '.local', 'state');
  const dir = join(base, 'bass-agents', keyOf(real));
  return { dir, gitDir: null, base };
}

const checked = new Set<string>();

function refuseLink(at: string): never {
  throw new UnsafePathError(`${at} is a symbolic link; bass-agents never reads or writes its local state through a link: remove it`, 'local state');
}

/**
 * Checks the folders from below `base` down to `dir` (made with `mode` when `make`), each once per
 * process; with `deep`, everything below `dir` too (but other workspaces' `nested/` state).
 * Whether `dir` exists.
 */
export function checkStateFolder(base: string, dir: string, opts: { make?: boolean; mode?: number; deep?: boolean } = {}): boolean {
  // (Making trusts the memo only while the folder is there: it may have been removed since.)
  const known = (at: string): boolean => checked.has(at) && (!opts.make || lstatSync(at, { throwIfNoEntry: false }) !== undefined);
  if (known(dir)) return true;
  const rel = relative(base, dir);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) throw new UnsafePathError(`${dir} is not below ${base}`, 'local state');
  const uid = process.getuid?.();
  let owners: number[] | undefined;
  const check = (at: string, deep: boolean): void => {
    // (A folder that goes while it is looked at, a lock another process releases, is simply gone.)
    const st = lstatSync(at, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isSymbolicLink()) refuseLink(at);
    if (!st.isDirectory()) throw new UnsafePathError(`${at} is not a folder; bass-agents keeps its local state there: remove it`, 'local state');
    if (uid !== undefined) {
      owners ??= [uid, lstatSync(base, { throwIfNoEntry: false })?.uid ?? uid]; // a git dir's owner is trusted as the repository is
      if (!owners.includes(st.uid))
        throw new UnsafePathError(`${at} belongs to another user (uid ${st.uid}); bass-agents will not use it for its local state`, 'local state');
    }
    let entries;
    try {
      entries = readdirSync(at, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const d of entries) {
      if (d.isSymbolicLink()) refuseLink(join(at, d.name));
      if (deep && d.isDirectory() && d.name !== 'nested') check(join(at, d.name), true);
    }
    checked.add(at);
  };
  if (opts.make) mkdirSync(base, { recursive: true, mode: 0o700 }); // the user's state folder may not exist yet
  let at = base;
  for (const part of rel.split(sep)) {
    at = join(at, part);
    if (known(at)) continue;
    checked.delete(at);
    if (!lstatSync(at, { throwIfNoEntry: false })) {
      if (!opts.make) return false;
      try {
        mkdirSync(at, { mode: opts.mode ?? 0o700 });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    check(at, at === dir && opts.deep === true);
  }
  return true;
}

/** Opens a file of local state without following a link at its last step. */
export function openNoFollow(file: string, flags: number, mode = 0o600): number {
  try {
    return openSync(file, flags | (constants.O_NOFOLLOW ?? 0), mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') refuseLink(file);
    throw err;
  }
}

/** `fn` on a file of local state opened without following a link, closed after. */
function withNoFollow<T>(file: string, flags: number, fn: (fd: number) => T): T {
  const fd = openNoFollow(file, flags);
  try {
    return fn(fd);
  } finally {
    closeSync(fd);
  }
}

/** Appends to a file of local state (made 0600), never through a link (every byte, at the end: O_APPEND). */
export function appendNoFollow(file: string, data: string | Uint8Array): void {
  withNoFollow(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, (fd) => writeFileSync(fd, data));
}

/** Reads a file of local state, never through a link (ENOENT as usual). */
export function readNoFollow(file: string): Buffer;
export function readNoFollow(file: string, encoding: 'utf8'): string;
export function readNoFollow(file: string, encoding?: 'utf8'): Buffer | string {
  return withNoFollow(file, constants.O_RDONLY, (fd) => readFileSync(fd, encoding));
}

/** Whether a signal reaches the process (a zombie's pid too: see isAlive). */
export function signalReaches(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether a process runs: a signal still reaches a zombie (a killed daemon some inits are slow to reap), so on Linux /proc decides. */
export function isAlive(pid: number): boolean {
  if (!signalReaches(pid)) return false;
  try {
    // The state follows the command name in parentheses, which may itself hold any character.
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch (err) {
    // Gone between the two checks, unless there is no /proc at all (not Linux).
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? !existsSync('/proc/self/stat') : true;
  }
}

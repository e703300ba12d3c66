/**
 * Git's view of the entry files, for a one-shot command's catalog check: which tracked files
 * still hold the blob git's index names for them. Checking 10K entry files ourselves is an
 * lstat each, ~50 ms of a cold `list` on the main thread; `git diff-files` does the same
 * comparison (the index's stat data against each file, with git's own care for racily clean
 * entries) in its own process, on parallel threads, while this process is still loading. It is
 * started before the CLI loads (bin/bass-agents.cjs, through the thin client) and used once, by
 * the first full catalog refresh, only for files whose cached metadata was read from that very
 * blob (the catalog keeps each file's blob id): anything git is unsure of, or any failure, falls
 * back to the lstat check.
 *
 * Taken as clean: an index entry at stage 0 for a regular file, with no assume-unchanged or
 * skip-worktree flag (`ls-files -v` tags those), that `diff-files` does not name. git is told to
 * compare the full stat data and to ignore a file system monitor, whatever the repository's
 * config says. As with the stat check, a file changed after the check is seen by the next
 * command, not this one.
 */
import type { ChildProcess } from 'node:child_process';
import { nodeCrypto } from '../node-crypto.js';

export interface GitView {
  /** The workspace root git ran in. */
  root: string;
  /**
   * Which of `files` (paths relative to the root, sorted) git found holding exactly the blob
   * `blobs` names for them: 1 at their position. One pass over git's output beside the list,
   * both in path order, without a map of either.
   */
  matching(files: readonly string[], blobs: readonly string[]): Uint8Array;
}

/** git is left this long; a view that takes longer is dropped (the lstat check is the fallback). */
const GIT_VIEW_TIMEOUT_MS = 5_000;

/** Settings that make git compare stat data the way the catalog would, whatever the repository says. */
const GIT_SETTINGS = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.checkStat=default',
  '-c',
  'core.trustctime=true',
  '-c',
  'core.ignoreStat=false',
  '-c',
  'core.preloadIndex=true',
];

/** The environment for git: ours without GIT_* variables, which could point it at another repository or index. */
function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^git_/i.test(k)) env[k] = v;
  env.GIT_OPTIONAL_LOCKS = '0'; // a read never takes git's index lock
  return env;
}

/** Runs git in `cwd`: its standard output, or null when it fails, is killed, or takes too long. */
function gitOutput(cwd: string, args: string[]): Promise<string | null> {
  let child: ChildProcess;
  try {
    const { spawn } = process.getBuiltinModule('node:child_process');
    child = spawn('git', [...GIT_SETTINGS, ...args], { cwd, env: gitEnv(), stdio: ['ignore', 'pipe', 'ignore'], windowsHide: true });
  } catch {
    return Promise.resolve(null);
  }
  return new Promise<string | null>((done) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => child.kill(), GIT_VIEW_TIMEOUT_MS);
    timer.unref();
    child.stdout!.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', () => done(null));
    child.on('close', (code) => {
      clearTimeout(timer);
      done(code === 0 ? Buffer.concat(chunks).toString('utf8') : null);
    });
  });
}

/** `H 100644 <40-digit blob> 0\t`: a clean cached regular file's record up to its path. */
const HEAD = 52;

/**
 * The view from `ls-files -v -s -z` (`listed`: records `<tag> <mode> <blob> <stage>\t<path>` in
 * git's path order) and `diff-files --name-only -z` (`dirty`). Only tag `H` (cached, no
 * assume-unchanged or skip-worktree flag), a regular file's mode, a SHA-1 blob and stage 0
 * count. git orders paths by bytes, the list by UTF-16 units: the two agree but for characters
 * past U+D7FF, where a mismatch only means a file is not vouched for (and gets an lstat).
 */
export function parseGitView(root: string, listed: string, dirty: string): GitView {
  return {
    root,
    matching(files, blobs) {
      const out = new Uint8Array(files.length);
      const skip = dirty ? new Set(dirty.split('\0')) : undefined;
      let k = 0;
      let at = 0;
      while (at < listed.length && k < files.length) {
        let end = listed.indexOf('\0', at);
        if (end < 0) end = listed.length;
        const tab = listed.indexOf('\t', at);
        if (tab < 0 || tab > end) {
          at = end + 1;
          continue;
        }
        const f = files[k];
        if (end - tab - 1 === f.length && listed.startsWith(f, tab + 1)) {
          if (
            tab + 1 === at + HEAD &&
            listed.charCodeAt(at) === 72 /* H */ &&
            (listed.startsWith(' 100644 ', at + 1) || listed.startsWith(' 100755 ', at + 1)) &&
            listed.startsWith(' 0', at + 49) &&
            blobs[k].length === 40 &&
            listed.startsWith(blobs[k], at + 9) &&
            !skip?.has(f)
          )
            out[k] = 1;
          k++;
          at = end + 1;
        } else if (listed.slice(tab + 1, end) < f) at = end + 1;
        else k++;
      }
      return out;
    },
  };
}

/**
 * Starts git on the entry files under `root` (`ai-memory/`); resolves to its view, or null when
 * git cannot give one (no repository, no git, an error). Never rejects.
 */
export function startGitView(root: string): Promise<GitView | null> {
  const listed = gitOutput(root, ['ls-files', '-v', '-s', '-z', '--', 'ai-memory']);
  const dirty = gitOutput(root, ['diff-files', '--relative', '--name-only', '-z', '--', 'ai-memory']);
  return Promise.all([listed, dirty]).then(([l, d]) => (l === null || d === null ? null : parseGitView(root, l, d)));
}

/** The id git gives a blob of these bytes (SHA-1 repositories; a SHA-256 one never matches, so never trusts the view). */
export function gitBlobId(bytes: Uint8Array): string {
  return nodeCrypto().createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/** The view offered to this process (at most one, used once). */
let offered: { root: string; promise: Promise<GitView | null>; settled?: GitView | null } | undefined;

/** Offers a view started earlier (bin/bass-agents.cjs hands the thin client's over). */
export function offerGitView(root: string, promise: Promise<GitView | null>): void {
  offered = { root, promise };
}

/**
 * Waits for the offered view (if any) so that the synchronous catalog refresh can use it. A
 * command that wrote entry files since the view was started (a journal recovery) drops it first.
 */
export async function settleGitView(): Promise<void> {
  const o = offered;
  if (!o || 'settled' in o) return;
  o.settled = await o.promise;
}

/** Forgets the offered view: files were written after git looked. */
export function dropGitView(): void {
  offered = undefined;
}

/** The settled view for `root`, once: later refreshes check every file again. */
export function takeGitView(root: string): GitView | null {
  const o = offered;
  if (!o || !o.settled || o.root !== root) return null;
  offered = undefined;
  return o.settled;
}

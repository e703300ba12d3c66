/**
 * Git's view of the entry files, for a one-shot command's catalog check: which tracked files
 * still hold the blob git's index names for them. Checking 10K entry files ourselves is an
 * lstat each on the main thread; `git diff-files` does the same
 * comparison (the index's stat data against each file, with git's own care for racily clean
 * entries) in its own process, on the other core, while this process is still loading. It is
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
 *
 * Most of the time git's index has not changed since the last command looked: then the listing
 * is not asked for at all. When every cached file matched the listing (`complete`), the catalog
 * records the index's checksum (the last bytes of `.git/index`, a hash of all of it) with the
 * catalog content that matched it, in `git-view.json` beside the cache. A later command whose
 * index still has that checksum, before and after git ran, has only `diff-files` run, and
 * vouches for every file of that content but the ones git names and the ones the catalog's delta
 * changed since (matching's `changedSince`).
 */
import type { ChildProcess } from 'node:child_process';
import { nodeCrypto } from '../node-crypto.js';
import { lowerBoundText, type Texts } from './texts.js';
import { gitEnv, readLocalText } from './git-env.js';

/** What a view says about the cached files. */
export interface ViewMatch {
  /** 1 at the position of each file git vouches for. */
  clean: Uint8Array;
  /** Every file had an index entry holding its cached blob (dirty or not): the listing vouches for the content as a whole. */
  complete: boolean;
}

export interface GitView {
  /** The workspace root git ran in. */
  root: string;
  /** For a view from a listing: the checksum of the index it was read from (unchanged while git ran), if known. */
  index?: string;
  /** For a view without a listing: the catalog content the recorded listing matched (see the top of this file). */
  vouchedFor?: string;
  /**
   * Which of `files` (paths relative to the root, sorted) git found holding exactly the blob
   * `blobs()` names for them (40 hex digits per file, one after another; asked for only by a
   * view from a listing). A view from a listing
   * makes one pass over git's output beside the list, both in path order, without a map of
   * either; a view without one asks `changedSince` for the files that may differ from the content
   * it vouches for, and is of no use (null) when the catalog cannot say.
   */
  matching(files: Texts, blobs: () => string, changedSince?: (content: string) => readonly string[] | undefined): ViewMatch | null;
}

/** The file (in the catalog cache's folder) that records which catalog content matched which index. */
export const VIEW_RECORD = 'git-view.json';

/**
 * The checksum at the end of git's index (hex), for a workspace whose `.git` is a folder; null
 * when there is none to read (a worktree's `.git` file, no index) or git does not keep one
 * (`index.skipHash` writes zeros).
 */
export function indexChecksum(root: string): string | null {
  return indexFileChecksum(`${root}/.git/index`);
}

/** The checksum at the end of the index file `file` (see indexChecksum). */
export function indexFileChecksum(file: string): string | null {
  const fs = process.getBuiltinModule('node:fs');
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const size = fs.fstatSync(fd).size;
    if (size < 32) return null;
    const tail = Buffer.alloc(20);
    if (fs.readSync(fd, tail, 0, 20, size - 20) !== 20) return null;
    const hex = tail.toString('hex');
    return /^0+$/.test(hex) ? null : hex;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The recorded listing match in `cacheDir`, if any. */
export function readViewRecord(cacheDir: string): { index: string; content: string } | undefined {
  try {
    const r = JSON.parse(readLocalText(`${cacheDir}/${VIEW_RECORD}`)) as { index?: unknown; content?: unknown };
    return typeof r.index === 'string' && typeof r.content === 'string' ? { index: r.index, content: r.content } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How long a command that needs the view waits for git once it gets there: past this, git is
 * stopped and the files are stat'ed (a huge repository's index can take git longer to read than
 * the entry files take to check).
 */
const SETTLE_WAIT_MS = 500;

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
  // One thread: git's check is done long before this process needs it, and threads checking
  // files in parallel took the core the CLI was loading on.
  '-c',
  'core.preloadIndex=false',
];

let scratchFiles = 0;

/**
 * Runs git in `cwd`: its standard output, or null when it fails or is stopped (`stop`). With
 * `scratch` (an existing folder), git writes into a file there, removed at once (or, where an
 * open file cannot be removed, once read), instead of into a pipe: a pipe holds 64 KB, and a
 * listing of 10K files is 1 MB, so git would wait at the first 64 KB until this process, busy
 * loading the CLI, got round to reading it.
 */
function gitOutput(cwd: string, args: string[], scratch?: string): { output: Promise<string | null>; stop: () => void } {
  const fs = process.getBuiltinModule('node:fs');
  let fd: number | undefined;
  let path: string | undefined;
  if (scratch) {
    try {
      path = `${scratch}/.git-view-${process.pid}-${++scratchFiles}.tmp`;
      fd = fs.openSync(path, 'wx+', 0o600); // a new file, never a link planted at the name
      fs.unlinkSync(path);
      path = undefined;
    } catch {
      if (fd === undefined) path = undefined; // no file: a pipe
    }
  }
  const done = (): void => {
    if (fd !== undefined) fs.closeSync(fd);
    if (path) fs.rmSync(path, { force: true });
    fd = path = undefined;
  };
  let child: ChildProcess;
  try {
    const { spawn } = process.getBuiltinModule('node:child_process');
    child = spawn('git', [...GIT_SETTINGS, ...args], {
      cwd,
      env: gitEnv({ GIT_OPTIONAL_LOCKS: '0' }) /* a read never takes git's index lock */,
      stdio: ['ignore', fd ?? 'pipe', 'ignore'],
      windowsHide: true,
    });
  } catch {
    done();
    return { output: Promise.resolve(null), stop: () => undefined };
  }
  const output = new Promise<string | null>((resolve) => {
    const chunks: Buffer[] = [];
    child.stdout?.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', () => {
      done();
      resolve(null);
    });
    child.on('close', (code) => {
      try {
        if (code !== 0) resolve(null);
        else if (fd === undefined) resolve(Buffer.concat(chunks).toString('utf8'));
        else {
          const bytes = Buffer.allocUnsafe(fs.fstatSync(fd).size);
          resolve(bytes.toString('utf8', 0, fs.readSync(fd, bytes, 0, bytes.length, 0)));
        }
      } catch {
        resolve(null);
      } finally {
        done();
      }
    });
  });
  return { output, stop: () => void child.kill() };
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
export function parseGitView(root: string, listed: string, dirty: string, index?: string): GitView {
  return {
    root,
    ...(index ? { index } : {}),
    matching(files, blobsOf) {
      const blobs = blobsOf();
      const out = new Uint8Array(files.length);
      const skip = dirty ? new Set(dirty.split('\0')) : undefined;
      let matched = 0;
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
        if (files.equals(k, listed, tab + 1, end)) {
          if (
            tab + 1 === at + HEAD &&
            listed.charCodeAt(at) === 72 /* H */ &&
            (listed.startsWith(' 100644 ', at + 1) || listed.startsWith(' 100755 ', at + 1)) &&
            listed.startsWith(' 0', at + 49) &&
            listed.startsWith(blobs.slice(40 * k, 40 * k + 40), at + 9)
          ) {
            matched++;
            if (!skip?.has(listed.slice(tab + 1, end))) out[k] = 1;
          }
          k++;
          at = end + 1;
        } else if (listed.slice(tab + 1, end) < files.get(k)) at = end + 1;
        else k++;
      }
      return { clean: out, complete: matched === files.length };
    },
  };
}

/**
 * The view when the index is the one a listing matched catalog content `content`: every file
 * but those `diff-files` named (`dirty`) and those changed since that content.
 */
export function recordedGitView(root: string, content: string, dirty: string): GitView {
  return {
    root,
    vouchedFor: content,
    matching(files, _blobs, changedSince) {
      const since = changedSince?.(content);
      if (!since) return null;
      const out = new Uint8Array(files.length).fill(1);
      for (const list of [dirty ? dirty.split('\0') : [], since])
        for (const f of list) {
          const i = lowerBoundText(files, f);
          if (i < files.length && files.equals(i, f, 0, f.length)) out[i] = 0;
        }
      return { clean: out, complete: false };
    },
  };
}

/**
 * Starts git on the entry files under `root` (`ai-memory/`); resolves to its view, or null when
 * git cannot give one (no repository, no git, an error). Never rejects. `scratch`: a folder for
 * git's output files (see gitOutput); without it, pipes.
 */
export function startGitView(root: string, scratch?: string): GitViewRun {
  const index = indexChecksum(root);
  const record = scratch && index ? readViewRecord(scratch) : undefined;
  const recorded = record?.index === index ? record.content : undefined;
  const listed = recorded === undefined ? gitOutput(root, ['ls-files', '-v', '-s', '-z', '--', 'ai-memory'], scratch) : undefined;
  const dirty = gitOutput(root, ['diff-files', '--relative', '--name-only', '-z', '--', 'ai-memory'], scratch);
  return {
    root,
    view: Promise.all([listed ? listed.output : '', dirty.output]).then(([l, d]) => {
      if (l === null || d === null) return null;
      // The index git read is the one whose checksum was read before it started only if it still has it.
      const same = index !== null && indexChecksum(root) === index;
      if (recorded !== undefined) return same ? recordedGitView(root, recorded, d) : null;
      return parseGitView(root, l, d, same ? index : undefined);
    }),
    stop: () => {
      listed?.stop();
      dirty.stop();
    },
  };
}

/** git at work on a view: what it will give, and how to stop it (a process waits for its children). */
export interface GitViewRun {
  root: string;
  view: Promise<GitView | null>;
  stop: () => void;
}

/** The id git gives a blob of these bytes (SHA-1 repositories; a SHA-256 one never matches, so never trusts the view). */
export function gitBlobId(bytes: Uint8Array): string {
  return nodeCrypto().createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/** The view offered to this process (at most one, used once). */
let offered: (GitViewRun & { settled?: GitView | null }) | undefined;

/** Offers a view started earlier (bin/bass-agents.cjs hands the thin client's over). */
export function offerGitView(run: GitViewRun): void {
  offered = run;
}

/**
 * Waits for the offered view (if any), at most `maxWaitMs`, so that the synchronous catalog
 * refresh can use it; git still at work after that is stopped. A command that wrote entry files
 * since the view was started (a journal recovery) drops it instead.
 */
export async function settleGitView(maxWaitMs = SETTLE_WAIT_MS): Promise<void> {
  const o = offered;
  if (!o || 'settled' in o) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((res) => (timer = setTimeout(() => res('late'), maxWaitMs)));
  const got = await Promise.race([o.view, late]);
  clearTimeout(timer);
  if (got === 'late') {
    o.stop();
    o.settled = null;
  } else o.settled = got;
}

/** Forgets the offered view (files were written after git looked), stopping git if it is still at work. */
export function dropGitView(): void {
  offered?.stop();
  offered = undefined;
}

/** The settled view for `root`, once: later refreshes check every file again. */
export function takeGitView(root: string): GitView | null {
  const o = offered;
  if (!o || !o.settled || o.root !== root) return null;
  offered = undefined;
  return o.settled;
}

/**
 * git's view of the entry files for a one-shot command's catalog check (docs/benchmarks.md "Why
 * git checks the entry files"): used once, only for files whose cached row was read from the very
 * blob git's index names; anything git is unsure of, or any failure, falls back to lstat. Clean: a
 * stage-0 regular file without assume-unchanged or skip-worktree that git does not name as modified
 * (`ls-files -m`: one git process lists the index and the modified files). While the index keeps
 * the checksum recorded in `git-view.json`, only `ls-files -m` runs.
 */
import { nodeCrypto } from '../node-crypto.js';
import { lowerBoundText, type Texts } from './texts.js';
import { gitEnv } from './git-env.js';
import { spawnGit } from './git-helper.js';
import { readNoFollow } from './state-dir.js';
import { readAt, tryOr } from './fsutil.js';

interface ViewMatch {
  /** 1 at the position of each file git vouches for. */
  clean: Uint8Array;
  /** Every file had an index entry holding its cached blob (dirty or not). */
  complete: boolean;
}

export interface GitView {
  root: string;
  /** From a listing: the checksum of the index it was read from (unchanged while git ran), if known. */
  index?: string;
  /** Without a listing: the catalog content the recorded listing matched. */
  vouchedFor?: string;
  /** Which of `files` (sorted) hold exactly the blob `blobs()` names (40 hex digits each); a recorded view asks `changedSince`. */
  matching(files: Texts, blobs: () => string, changedSince?: (content: string) => readonly string[] | undefined): ViewMatch | null;
}

export const VIEW_RECORD = 'git-view.json';

/** The checksum at the end of git's index; null without one (a worktree's `.git` file, `index.skipHash`). */
export const indexChecksum = (root: string): string | null => indexFileChecksum(`${root}/.git/index`);

export function indexFileChecksum(file: string): string | null {
  const fs = process.getBuiltinModule('node:fs');
  return tryOr(() => {
    const fd = fs.openSync(file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const hex = size < 32 ? '' : readAt(fd, size - 20, 20).toString('hex');
      return /^0*$/.test(hex) ? null : hex;
    } finally {
      fs.closeSync(fd);
    }
  }, null);
}

export function readViewRecord(cacheDir: string): { index: string; content: string } | undefined {
  const r = tryOr(() => JSON.parse(readNoFollow(`${cacheDir}/${VIEW_RECORD}`, 'utf8')) as { index?: unknown; content?: unknown }, {});
  return typeof r.index === 'string' && typeof r.content === 'string' ? { index: r.index, content: r.content } : undefined;
}

/** How long a command waits for git's view: a huge repository's index can take git longer than the lstats. */
const SETTLE_WAIT_MS = 500;

/** git compares full stat data, ignores a file system monitor, and runs one thread (more took the core the CLI loads on). */
const GIT_SETTINGS = ['core.fsmonitor=false', 'core.checkStat=default', 'core.trustctime=true', 'core.ignoreStat=false', 'core.preloadIndex=false'].flatMap(
  (c) => ['-c', c],
);

let scratchFiles = 0;

/** git's stdout, or null when it fails or is stopped; into an unlinked file in `scratch` rather than a pipe, which git fills while the CLI loads. */
function gitOutput(cwd: string, args: string[], scratch?: string): { output: Promise<string | null>; stop: () => void } {
  const fs = process.getBuiltinModule('node:fs');
  const path = `${scratch}/.git-view-${process.pid}-${++scratchFiles}.tmp`;
  const fd = scratch ? tryOr(() => fs.openSync(path, 'wx+', 0o600), undefined) : undefined; // a new file, never a link planted at the name (none: a pipe)
  if (fd !== undefined) tryOr(() => fs.unlinkSync(path), undefined);
  const stop = new AbortController();
  // A read never takes git's index lock.
  const output = spawnGit(cwd, [...GIT_SETTINGS, ...args], gitEnv({ GIT_OPTIONAL_LOCKS: '0' }), { stdout: fd, signal: stop.signal })
    .then((r) => {
      if (r.code !== 0) return null;
      if (fd === undefined) return r.out.toString('utf8');
      const bytes = Buffer.allocUnsafe(fs.fstatSync(fd).size);
      return bytes.toString('utf8', 0, fs.readSync(fd, bytes, 0, bytes.length, 0));
    })
    .catch(() => null)
    .finally(() => fd !== undefined && fs.closeSync(fd));
  return { output, stop: () => stop.abort() };
}

/** `H 100644 <40-digit blob> 0\t`: a clean cached regular file's record up to its path. */
const HEAD = 52;

/**
 * The view from `ls-files -v -s -m -z` (a modified file's `C` record follows its own) and the names
 * in `dirty`, walked beside the files in path order. git orders by bytes, the list by UTF-16 units; where they differ (past
 * U+D7FF) a file is only not vouched for.
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
            const modified = listed.startsWith('C ', end + 1) || listed.startsWith('c ', end + 1);
            if (!modified && !skip?.has(listed.slice(tab + 1, end))) out[k] = 1;
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

/** The view when the index is the one a listing matched `content` with: all but `dirty` and the files changed since. */
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

/** Starts git on `ai-memory/` under `root`; resolves to its view, or null (no repository, no git, an error); never rejects. */
export function startGitView(root: string, scratch?: string): GitViewRun {
  const index = indexChecksum(root);
  const record = scratch && index ? readViewRecord(scratch) : undefined;
  const recorded = record?.index === index ? record.content : undefined;
  const git = gitOutput(root, ['ls-files', ...(recorded === undefined ? ['-v', '-s'] : []), '-m', '-z', '--', 'ai-memory'], scratch);
  return {
    root,
    index,
    view: git.output.then((out) => {
      if (out === null) return null;
      // The index git read is the one whose checksum was read first only if it still has it.
      const same = index !== null && indexChecksum(root) === index;
      if (recorded !== undefined) return same ? recordedGitView(root, recorded, out) : null;
      return parseGitView(root, out, '', same ? index : undefined);
    }),
    stop: git.stop,
  };
}

/** git at work on a view, and how to stop it (a process waits for its children). */
export interface GitViewRun {
  root: string;
  /** The checksum of git's index before git looked (null: none). */
  index: string | null;
  view: Promise<GitView | null>;
  stop: () => void;
}

/** git's id of a blob of these bytes (SHA-1: a SHA-256 repository never matches, so never trusts the view). */
export const gitBlobId = (bytes: Uint8Array): string => nodeCrypto().createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');

/** The view offered to this process (bin/bass-agents.cjs hands the thin client's over), used once. */
let offered: (GitViewRun & { settled?: GitView | null }) | undefined;

/** Offers `run`; none forgets the offered view (unused, or files were written after git looked), stopping its git. */
export function offerGitView(run?: GitViewRun): void {
  if (!run) offered?.stop();
  offered = run;
}

/** Waits for the offered view (if any) at most `maxWaitMs`, for the synchronous refresh; git still at work is stopped. */
export async function settleGitView(maxWaitMs = SETTLE_WAIT_MS): Promise<void> {
  const o = offered;
  if (!o || 'settled' in o) return;
  const got = await Promise.race([o.view, new Promise<'late'>((res) => setTimeout(res, maxWaitMs, 'late').unref())]);
  if (got === 'late') o.stop();
  o.settled = got === 'late' ? null : got;
}

/** A writer, under its lock, keeps the offered view only when nothing was recovered and git's index is still the one git looked at. */
export function keepGitViewIf(ok: boolean, root: string): void {
  if (offered && (!ok || offered.index === null || indexChecksum(root) !== offered.index)) offerGitView();
}

/** The settled view for `root`, once: later refreshes check every file again. */
export function takeGitView(root: string): GitView | null {
  const o = offered;
  if (!o || !o.settled || o.root !== root) return null;
  offered = undefined;
  return o.settled;
}

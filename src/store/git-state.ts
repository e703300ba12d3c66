/**
 * What git's own files say, read with the file system alone (no git process): where the git dir
 * is, whether a write may commit on this checkout now, and which commit HEAD names; and whether
 * a sparse checkout keeps memory out of the work tree (a git process only in a sparse checkout).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { gitEnv } from './git-env.js';

/**
 * The git dir of the repository holding `start`, found with the file system alone (no git
 * process): the one GIT_DIR names, else the nearest `.git` folder up, or the folder a `.git` file
 * (worktree, submodule) names. Null outside git.
 */
export function findGitDir(start: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.GIT_DIR) return resolve(env.GIT_DIR);
  for (let dir = start; ;) {
    const dotGit = join(dir, '.git');
    const st = statSync(dotGit, { throwIfNoEntry: false });
    if (st?.isDirectory()) return dotGit;
    if (st?.isFile()) {
      const [, to] = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, 'utf8')) ?? [];
      return to ? resolve(dir, to.trim()) : null;
    }
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/**
 * Why memory must not be committed on this checkout now, or null when it may: a detached HEAD
 * (the commit would be lost on the next checkout), or a rebase, cherry-pick, revert, bisect or
 * merge of the user's in progress (the commit would be spliced into their work).
 */
export function writeBlocker(gitDir: string): string | null {
  let head = '';
  try {
    head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
  } catch {
    return null;
  }
  const has = (f: string): boolean => existsSync(join(gitDir, f));
  if (has('rebase-merge') || has('rebase-apply')) return 'a rebase is in progress (finish it with git rebase --continue or --abort)';
  if (has('CHERRY_PICK_HEAD')) return 'a cherry-pick is in progress (finish or abort it first)';
  if (has('REVERT_HEAD')) return 'a revert is in progress (finish or abort it first)';
  if (has('MERGE_HEAD')) return 'a merge is in progress (commit or abort it first)';
  if (has('BISECT_LOG')) return 'a bisect is in progress (git bisect reset ends it)';
  if (!head.startsWith('ref: ')) return `HEAD is detached at ${head.slice(0, 12)} (a commit made here is lost on the next checkout; switch to a branch)`;
  return null;
}

/** HEAD's commit read from the git dir's files alone (no git process); null when unborn or unreadable. */
export function headFromFiles(gitDir: string): string | null {
  try {
    const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
    if (!head.startsWith('ref: ')) return /^[0-9a-f]{40,64}$/.test(head) ? head : null;
    const ref = head.slice(5).trim();
    const common = existsSync(join(gitDir, 'commondir')) ? join(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim()) : gitDir;
    for (const dir of [gitDir, common]) {
      try {
        const sha = readFileSync(join(dir, ref), 'utf8').trim();
        if (/^[0-9a-f]{40,64}$/.test(sha)) return sha;
      } catch {
        /* packed, or in the common dir */
      }
    }
    const packed = readFileSync(join(common, 'packed-refs'), 'utf8');
    const [, sha] = new RegExp(`^([0-9a-f]{40,64}) ${ref.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm').exec(packed) ?? [];
    return sha ?? null;
  } catch {
    return null;
  }
}

/**
 * A value from the repository's own config file (`<git dir>/config`, or the common dir's for a
 * worktree), read as git writes it: `[section "sub"]` then `key = value`, with `\"` and `\\`
 * escaped. Undefined when absent or not plainly there; callers then ask git.
 */
export function configValue(gitDir: string, section: string, subsection: string, key: string): string | undefined {
  let text: string;
  try {
    const common = existsSync(join(gitDir, 'commondir')) ? join(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim()) : gitDir;
    text = readFileSync(join(common, 'config'), 'utf8');
  } catch {
    return undefined;
  }
  let inside = false;
  let value: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const [head, name = '', sub = ''] = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]$/.exec(line) ?? [];
    if (head) {
      inside = name.toLowerCase() === section.toLowerCase() && sub.replace(/\\(.)/g, '$1') === subsection;
      continue;
    }
    if (!inside) continue;
    const [, k, val] = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$/.exec(line) ?? [];
    if (k !== undefined && val !== undefined && k.toLowerCase() === key.toLowerCase()) {
      let v = val;
      // A value git quoted as a whole (it does so for some characters), then its escapes.
      if (v.length >= 2 && v.startsWith('"') && v.endsWith('"') && !v.endsWith('\\"')) v = v.slice(1, -1);
      value = v.replace(/\\(.)/g, '$1'); // the last one wins, as in git
    }
  }
  return value;
}

/**
 * Why memory cannot be read or written on this checkout's sparse setup, or null: files under
 * `ai-memory/` of the workspace at `root` that git keeps out of the work tree (skip-worktree),
 * which a read would miss and a write would replace blind. Asks git (one `ls-files`) only when
 * the repository has a sparse-checkout file.
 */
export function sparseProblem(gitDir: string, root: string): string | null {
  if (!existsSync(join(gitDir, 'info', 'sparse-checkout'))) return null;
  const r = process.getBuiltinModule('node:child_process').spawnSync('git', ['ls-files', '-t', '-z', '--', 'ai-memory'], {
    cwd: root,
    env: gitEnv({ GIT_OPTIONAL_LOCKS: '0' }),
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  if (r.status !== 0 || !r.stdout.split('\0').some((l) => l.startsWith('S '))) return null;
  return 'ai-memory/ is outside this sparse checkout: git keeps its files out of the work tree, so memory would be read and written blind; run `git sparse-checkout add ai-memory` (or `git sparse-checkout disable`) and try again';
}

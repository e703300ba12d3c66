/** What git's own files say, read without a git process (but in a sparse checkout). */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { gitEnv } from './git-env.js';
import { tryOr } from './fsutil.js';

/**
 * Why memory must not be committed on this checkout now, or null when it may: a detached HEAD
 * (the commit would be lost on the next checkout), or a rebase, cherry-pick, revert, bisect or
 * merge of the user's in progress (the commit would be spliced into their work).
 */
export function writeBlocker(gitDir: string): string | null {
  const head = tryOr(() => readFileSync(join(gitDir, 'HEAD'), 'utf8').trim(), null);
  if (head === null) return null;
  const has = (f: string): boolean => existsSync(join(gitDir, f));
  if (has('rebase-merge') || has('rebase-apply')) return 'a rebase is in progress (finish it with git rebase --continue or --abort)';
  if (has('CHERRY_PICK_HEAD')) return 'a cherry-pick is in progress (finish or abort it first)';
  if (has('REVERT_HEAD')) return 'a revert is in progress (finish or abort it first)';
  if (has('MERGE_HEAD')) return 'a merge is in progress (commit or abort it first)';
  if (has('BISECT_LOG')) return 'a bisect is in progress (git bisect reset ends it)';
  if (!head.startsWith('ref: ')) return `HEAD is detached at ${head.slice(0, 12)} (a commit made here is lost on the next checkout; switch to a branch)`;
  return null;
}

/** HEAD's commit; null when unborn or unreadable. */
export function headFromFiles(gitDir: string): string | null {
  try {
    const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
    if (!head.startsWith('ref: ')) return /^[0-9a-f]{40,64}$/.test(head) ? head : null;
    const ref = head.slice(5).trim();
    const common = commonDir(gitDir);
    for (const dir of [gitDir, common]) {
      const sha = tryOr(() => readFileSync(join(dir, ref), 'utf8').trim(), ''); // '': packed, or in the common dir
      if (/^[0-9a-f]{40,64}$/.test(sha)) return sha;
    }
    const packed = readFileSync(join(common, 'packed-refs'), 'utf8');
    const [, sha] = new RegExp(`^([0-9a-f]{40,64}) ${ref.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm').exec(packed) ?? [];
    return sha ?? null;
  } catch {
    return null;
  }
}

/** The common dir of `gitDir` (a linked worktree's names the main one's; else itself). */
const commonDir = (gitDir: string): string =>
  existsSync(join(gitDir, 'commondir')) ? resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim()) : gitDir;

/**
 * Every file whose change can change git's config here: those `git config -z --show-origin --list`
 * (`list`, run in `top`) read; the files include paths name, found or not; the places git reads
 * when they exist (they may appear later); and HEAD, which an `includeIf "onbranch:"` reads.
 */
export function configFiles(list: string, gitDir: string, top: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const home = env.HOME ?? '';
  const files = new Set([join(gitDir, 'HEAD'), join(commonDir(gitDir), 'config'), join(gitDir, 'config.worktree')]);
  if (!env.GIT_CONFIG_NOSYSTEM) for (const f of env.GIT_CONFIG_SYSTEM ? [env.GIT_CONFIG_SYSTEM] : ['/etc/gitconfig', '/usr/local/etc/gitconfig']) files.add(f);
  for (const f of env.GIT_CONFIG_GLOBAL
    ? [env.GIT_CONFIG_GLOBAL]
    : [join(home, '.gitconfig'), join(env.XDG_CONFIG_HOME || join(home, '.config'), 'git', 'config')])
    files.add(f);
  if (env.GIT_CONFIG) files.add(env.GIT_CONFIG);
  const items = list.split('\0');
  for (let i = 0; i + 1 < items.length; i += 2) {
    if (!items[i]!.startsWith('file:')) continue; // the command line, a blob
    const origin = resolve(top, items[i]!.slice(5));
    files.add(origin);
    const [key = '', value] = items[i + 1]!.split('\n');
    if (value && /^include(if\..*)?\.path$/i.test(key)) files.add(value.startsWith('~/') ? join(home, value.slice(2)) : resolve(dirname(origin), value));
  }
  return [...files].map((f) => resolve(top, f));
}

/** `key`'s last value in `git config -z --list` output (as `git config <key>` reads it): null when absent, undefined when set without a value. */
export function configLast(list: string, key: string): string | undefined | null {
  let value: string | undefined | null = null;
  for (const item of list.split('\0')) {
    const nl = item.indexOf('\n');
    if ((nl < 0 ? item : item.slice(0, nl)) === key) value = nl < 0 ? undefined : item.slice(nl + 1);
  }
  return value;
}

/** `key`'s last value in `git config -z --list` output, in git's plain boolean forms; undefined for any other form. */
export function configBool(list: string, key: string): boolean | undefined {
  const last = configLast(list, key);
  const value = typeof last === 'string' ? last.toLowerCase() : last;
  if (value === null || value === '' || value === 'false' || value === 'no' || value === 'off' || value === '0') return false;
  if (value === undefined || value === 'true' || value === 'yes' || value === 'on' || value === '1') return true;
  return undefined;
}

/** A stamp of `files` (absent ones too); null when one changed at or after `since` (ms): its time cannot tell a later change in the same tick. */
export function filesStamp(files: string[], since = Infinity): string | null {
  let stamp = '';
  for (const f of files) {
    const st = statSync(f, { throwIfNoEntry: false, bigint: true });
    if (st && Number(st.ctimeMs > st.mtimeMs ? st.ctimeMs : st.mtimeMs) >= since) return null;
    stamp += st ? `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}\n` : '-\n';
  }
  return stamp;
}

/** A value of the repository's own config file as git writes it; undefined when not plainly there (callers then ask git). */
export function configValue(gitDir: string, section: string, subsection: string, key: string): string | undefined {
  const text = tryOr(() => readFileSync(join(commonDir(gitDir), 'config'), 'utf8'), '');
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
      // A value git quoted as a whole, then its escapes.
      if (v.length >= 2 && v.startsWith('"') && v.endsWith('"') && !v.endsWith('\\"')) v = v.slice(1, -1);
      value = v.replace(/\\(.)/g, '$1'); // the last one wins, as in git
    }
  }
  return value;
}

/** Why memory cannot be used on this sparse checkout, or null: files under `ai-memory/` git keeps out of the work tree would be missed or replaced blind. */
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

/** The root discovery every front end shares (the thin client too, which loads only this). */
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from '../core/errors.js';

export const MEMORY_DIR = 'ai-memory';

/** `--root`, `BASS_AGENTS_ROOT`, the work tree GIT_DIR / GIT_WORK_TREE name, else the nearest folder up with `.git` or `ai-memory/` (else `start`). */
export const findRoot = (start: string, override?: string, env: NodeJS.ProcessEnv = process.env): string =>
  discoverRoot(start, override, env) ?? resolve(start);

/** Whether a root is named or found. */
export const workspaceFound = (start: string, override?: string, env: NodeJS.ProcessEnv = process.env): boolean =>
  Boolean(override ?? env.BASS_AGENTS_ROOT) || discoverRoot(start, undefined, { ...env, BASS_AGENTS_ROOT: undefined }) !== null;

function discoverRoot(start: string, override: string | undefined, env: NodeJS.ProcessEnv): string | null {
  const explicit = override ?? env.BASS_AGENTS_ROOT;
  if (explicit) {
    const r = resolve(start, explicit);
    if (!existsSync(r) || !statSync(r).isDirectory()) throw new UsageError(`workspace root ${r} is not a directory`);
    return r;
  }
  if (env.GIT_DIR || env.GIT_WORK_TREE) {
    // git's own answer (core.worktree, or where GIT_DIR was given without one): a git process only here.
    const r = process.getBuiltinModule('node:child_process').spawnSync('git', ['rev-parse', '--show-toplevel'], { cwd: start, env, encoding: 'utf8' });
    const top = r.status === 0 ? r.stdout.trim() : '';
    if (top) return top;
  }
  let dir = resolve(start);
  for (;;) {
    if (existsSync(join(dir, '.git')) || existsSync(join(dir, MEMORY_DIR))) return dir;
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

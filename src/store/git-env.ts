/** The environment bass-agents runs git with (its own module for the thin client). */
import { tryOr } from './fsutil.js';
import { readNoFollow } from './state-dir.js';

const LOCATION = /^GIT_(DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|COMMON_DIR|NAMESPACE)$/;

const WRITER = /^GIT_(AUTHOR_\w+|COMMITTER_\w+|CONFIG\w*)$/;

/** A digest of the variables that change the commits git makes (identities, config), or '': a caller whose digest differs from the daemon's writes directly. */
export function gitWriterEnv(env: NodeJS.ProcessEnv = process.env): string {
  const vars = Object.entries(env)
    .filter(([k, v]) => v !== undefined && WRITER.test(k))
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return vars.length ? process.getBuiltinModule('node:crypto').createHash('sha256').update(JSON.stringify(vars)).digest('hex') : '';
}

export const GIT_ENV_FILE = 'git-env';

/** Not when the caller's git points elsewhere or writes other commits. */
export const daemonMayWrite = (env: NodeJS.ProcessEnv, daemonDir: string): boolean =>
  !hasGitLocation(env) && tryOr(() => readNoFollow(`${daemonDir}/${GIT_ENV_FILE}`, 'utf8').trim(), '') === gitWriterEnv(env);

export function hasGitLocation(env: NodeJS.ProcessEnv = process.env): boolean {
  for (const [k, v] of Object.entries(env)) if (v && LOCATION.test(k)) return true;
  return false;
}

/** The user's environment, GIT_* paths made absolute (git runs in the top folder), no editor or pager; `extra` last. */
export function gitEnv(extra: Record<string, string> = {}): Record<string, string> {
  const path = process.getBuiltinModule('node:path');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^(EDITOR|VISUAL|PAGER|GIT_EDITOR|GIT_PAGER|GIT_SEQUENCE_EDITOR)$/i.test(k)) continue;
    // (GIT_INDEX_FILE is left: GitRepo passes the absolute path git reported for it.)
    out[k] = /^GIT_(DIR|WORK_TREE|OBJECT_DIRECTORY|COMMON_DIR)$/.test(k) && v ? path.resolve(v) : v;
  }
  // (No editor: git's own default would be vi, waiting on a terminal nobody sees.)
  return { ...out, GIT_EDITOR: ':', ...extra };
}

/**
 * The environment bass-agents runs git with: the user's own, GIT_* variables included, their
 * paths made absolute (git runs in the top folder), and no editor or pager. Its own module so the
 * thin client can use it without the rest of the git code.
 */
import { readNoFollow } from './state-dir.js';

/** Variables that point git at another repository, work tree, index or object store. */
const LOCATION = /^GIT_(DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|COMMON_DIR|NAMESPACE)$/;

/** Variables that make git write a different commit: identities, extra config. */
const WRITER = /^GIT_(AUTHOR_\w+|COMMITTER_\w+|CONFIG\w*)$/;

/**
 * A digest of the variables that change the commits git makes, or '': a daemon records its own
 * (`GIT_ENV_FILE`), and a caller whose digest differs writes directly (values never written down).
 */
export function gitWriterEnv(env: NodeJS.ProcessEnv = process.env): string {
  const vars = Object.entries(env)
    .filter(([k, v]) => v !== undefined && WRITER.test(k))
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return vars.length ? process.getBuiltinModule('node:crypto').createHash('sha256').update(JSON.stringify(vars)).digest('hex') : '';
}

/** The file in a daemon's folder that holds its gitWriterEnv (absent: none). */
export const GIT_ENV_FILE = 'git-env';

/** Whether a caller may hand a write to the daemon in `daemonDir`: not when its git points elsewhere or writes other commits. */
export function daemonMayWrite(env: NodeJS.ProcessEnv, daemonDir: string): boolean {
  if (hasGitLocation(env)) return false;
  let theirs = '';
  try {
    theirs = readNoFollow(`${daemonDir}/${GIT_ENV_FILE}`, 'utf8').trim();
  } catch {
    /* the daemon has none */
  }
  return theirs === gitWriterEnv(env);
}

/** Whether `env` has a variable that moves git's repository, work tree or index away from the defaults. */
export function hasGitLocation(env: NodeJS.ProcessEnv = process.env): boolean {
  for (const [k, v] of Object.entries(env)) if (v && LOCATION.test(k)) return true;
  return false;
}

/** The environment for git: see the top of this file. `extra` is added last. */
export function gitEnv(extra: Record<string, string> = {}): Record<string, string> {
  const path = process.getBuiltinModule('node:path');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^(EDITOR|VISUAL|PAGER|GIT_EDITOR|GIT_PAGER|GIT_SEQUENCE_EDITOR)$/i.test(k)) continue;
    // (GIT_INDEX_FILE is left as it is: git takes it from the top folder, and GitRepo passes the
    // absolute path git reported for it.)
    out[k] = /^GIT_(DIR|WORK_TREE|OBJECT_DIRECTORY|COMMON_DIR)$/.test(k) && v ? path.resolve(v) : v;
  }
  // (No editor: git's own default would be vi, waiting on a terminal nobody sees.)
  return { ...out, GIT_EDITOR: ':', ...extra };
}

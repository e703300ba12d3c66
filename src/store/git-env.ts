/**
 * The environment bass-agents runs git with: the process's own without GIT_* variables (they
 * could point git at another repository, index or object store, and simple-git's guard refuses
 * them) and without an editor or pager git could start, plus `extra`. Its own module so that
 * the thin client can use it without loading the rest of the git code.
 */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^git_/i.test(k) && !/^(EDITOR|PAGER|SSH_ASKPASS|PREFIX)$/i.test(k)) out[k] = v;
  }
  return { ...out, ...extra };
}

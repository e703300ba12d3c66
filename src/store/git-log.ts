/** Reading memory's history back from git. */
import { parseCommitTrailers } from '../core/entry.js';
import type { GitRepo } from './git.js';

/**
 * Every commit that changed one file, newest first, with the file then (`content`, null where the
 * commit removed it) and in the first parent (`before`), and whether it is a merge (its changes
 * came from the other side). Full history: git's default simplification would drop the other side
 * of a merge that took one side whole.
 */
export async function history(repo: GitRepo, absPath: string) {
  const p = repo.repoPath(absPath);
  const log = await repo.run(['log', '--full-history', '--topo-order', '--format=%H%x1f%P%x1f%aI%x1f%an%x1f%s%x1e', '--', p]).catch(() => '');
  const at = (rev: string): Promise<string | null> => repo.run(['show', `${rev}:${p}`]).catch(() => null);
  const versions = [];
  for (const rec of log.split('\x1e')) {
    const [commit, parents, date, author, subject] = rec.trim().split('\x1f');
    if (!commit || !date) continue;
    const [first, ...others] = (parents ?? '').split(' ').filter(Boolean);
    const [content, before] = await Promise.all([at(commit), first ? at(first) : Promise.resolve(null)]);
    // A merge whose result is its first parent's version changed nothing here.
    if (others.length && content === before) continue;
    versions.push({ commit, date, author: author ?? '', subject: subject ?? '', content, before, merge: others.length > 0 });
  }
  return versions;
}

/** The last committed content of a deleted file matching `pathspec`, from the parent of the commit that deleted it. */
export async function lastDeleted(repo: GitRepo, pathspec: string): Promise<{ path: string; content: string } | null> {
  const out = await repo.run(['log', '--diff-filter=D', '--format=%x1e%H', '--name-only', '--', pathspec]).catch(() => '');
  for (const rec of out.split('\x1e')) {
    const [commit, path] = rec.trim().split('\n').filter(Boolean);
    const content = commit && path ? await repo.run(['show', `${commit}^:${path}`]).catch(() => null) : null;
    if (path && content !== null) return { path, content };
  }
  return null;
}

/** Memory commits touching `paths`, newest first, with their Memory-Op trailers (optionally one op). */
export async function memoryLog(repo: GitRepo, paths: string[], limit: number, op?: string) {
  const out = await repo.run(['log', '--format=%x1e%H%x1f%aI%x1f%s%x1f%b', '--', ...paths]).catch(() => '');
  const rows = [];
  for (const rec of out.split('\x1e')) {
    const [commit, date, subject, body] = rec.split('\x1f');
    if (!commit?.trim() || !date) continue;
    const t = parseCommitTrailers(body ?? '');
    const changes = op ? t.changes.filter((c) => c.op === op) : t.changes;
    if (op && changes.length === 0) continue;
    rows.push({ commit: commit.trim(), date, agent: t.agent ?? null, subject: subject ?? '', changes });
    if (rows.length >= limit) break;
  }
  return rows;
}

export async function remoteUrls(repo: GitRepo): Promise<string[]> {
  const out = await repo.run(['remote', '-v']).catch(() => '');
  return [...new Set(out.split('\n').map((line) => line.split(/\s+/)[1] ?? ''))].filter(Boolean);
}

/** Whether `<commit>:<path>` exists; null when the commit itself is unknown (not fetched). */
export async function hasPathAt(repo: GitRepo, commit: string, path: string): Promise<boolean | null> {
  const has = (name: string): Promise<boolean> =>
    repo.run(['cat-file', '-e', name]).then(
      () => true,
      () => false,
    );
  return (await has(`${commit}^{commit}`)) ? has(`${commit}:${path}`) : null;
}

/** Recovery of a write cut off before HEAD moved: called by the write transaction with the write lock held, never otherwise. */
import { readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { GitRepo } from '../store/git.js';
import { INDEX_LOCK_WAIT_MS, MemoryCommit } from '../store/git-commit.js';
import { clearJournal, readJournal } from '../store/journal.js';
import { appendLogs } from '../store/local-log.js';
import { Workspace } from '../store/workspace.js';
import { tryOr } from '../store/fsutil.js';
import type { Engine } from './engine.js';
import type { Caller } from './caller.js';

/**
 * Finishes or undoes a killed writer's journal in a few git processes: a journaled file git hashes
 * to HEAD's blob is kept, any other put back as HEAD has it (or removed). A writer that held git's
 * index lock may have moved HEAD without installing the index: the index is set from those files
 * and the lock removed if still its. A journal without this repository's token, or naming anything
 * but memory paths, is never acted on. `indexWaitMs` 0 (a read) leaves the journal for later.
 */
export async function recoverWrite(engine: Engine, caller: Caller, git: GitRepo | null, stateDir: string, indexWaitMs = INDEX_LOCK_WAIT_MS) {
  const found = readJournal(stateDir);
  if (found === null) return null;
  const time = caller.now().toISOString();
  if ('untrusted' in found) {
    const aside = join(stateDir, `journal.untrusted-${Date.now()}`);
    try {
      renameSync(join(stateDir, 'journal'), aside);
    } catch {
      clearJournal(stateDir);
    }
    caller.warn(`ignored a write journal that this repository did not write (${found.untrusted}); it was moved to ${aside}`);
    appendLogs(engine.ws, 'events', [{ time, level: 'warn', event: 'journal_untrusted', reason: found.untrusted }]);
    return { kept: 0, undone: 0, ignored: 0 };
  }
  const st = found.state;
  if (!git) {
    clearJournal(stateDir);
    return { kept: 0, undone: 0, ignored: 0 };
  }
  // The dead writer's workspace (normally this one) decides what its memory paths are.
  const ws = st.root && st.root !== engine.ws.root ? tryOr(() => new Workspace(st.root), engine.ws) : engine.ws; // gone: this one's
  const paths: { abs: string; repo: string }[] = [];
  let ignored = 0;
  for (const rel of new Set(st.paths)) {
    try {
      if (rel.startsWith('/') || rel.split('/').includes('..')) throw new Error('not relative');
      const abs = ws.assertMemoryPath(join(ws.root, rel));
      const repo = git.repoPath(abs);
      if (repo.startsWith('..')) throw new Error('outside the repository');
      paths.push({ abs, repo });
    } catch {
      ignored++;
    }
  }
  // Still the dead writer's index lock: the same inode.
  if (st.indexLock) {
    const lock = `${git.indexFile}.lock`;
    const ino = statSync(lock, { throwIfNoEntry: false })?.ino;
    if (ino !== undefined && st.indexLock.inodes.includes(ino)) rmSync(lock, { force: true });
  }
  let kept = 0;
  let undone = 0;
  if (paths.length) {
    const repoPaths = paths.map((p) => p.repo);
    const blobs = await git.blobsAt('HEAD', repoPaths);
    const present = paths.filter((p) => statSync(p.abs, { throwIfNoEntry: false })?.isFile());
    const ids = new Map((await git.hashFiles(present.map((p) => p.repo))).map((id, i) => [present[i]!.repo, id])); // one hash per path
    const restore: string[] = [];
    for (const p of paths) {
      const at = blobs.get(p.repo) ?? null;
      if ((ids.get(p.repo) ?? null) === at) kept++;
      else {
        undone++;
        if (at) restore.push(p.repo);
        else rmSync(p.abs, { force: true });
      }
    }
    await git.checkoutFromHead(restore);
    // The killed writer's temporary files (fsutil's writeFileAtomic).
    for (const dir of new Set(paths.map((p) => dirname(p.abs)))) {
      const names = statSync(dir, { throwIfNoEntry: false })?.isDirectory() ? readdirSync(dir) : [];
      for (const n of names) if (/^\.[0-9a-f]{12}\.tmp$/.test(n)) rmSync(join(dir, n), { force: true });
    }
    if (st.indexLock) await new MemoryCommit(git).syncIndexPaths(repoPaths, indexWaitMs);
  }
  git.sweepLeftovers();
  if (kept + undone + ignored) appendLogs(engine.ws, 'events', [{ time, level: 'warn', event: 'journal_recovered', kept, undone, ignored, commit: st.commit }]);
  clearJournal(stateDir);
  return { kept, undone, ignored };
}

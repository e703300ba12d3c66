/**
 * Recovery of a write that was cut off (a kill, a crash, a failure before HEAD moved): what its
 * journal names is finished or undone, in one pass whatever its size. Called by the write
 * transaction with the write lock held, and never otherwise.
 */
import { readFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { nodeCrypto } from '../node-crypto.js';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../store/fsutil.js';
import type { GitRepo } from '../store/git.js';
import { clearJournal, readJournal } from '../store/journal.js';
import { appendLog } from '../store/local-log.js';
import { Workspace } from '../store/workspace.js';
import type { ServiceContext } from './context.js';

/** The blob id git gives these bytes (no filters: memory files are written as committed). */
function blobId(data: Buffer, algo: 'sha1' | 'sha256'): string {
  return nodeCrypto().createHash(algo).update(`blob ${data.length}\0`).update(data).digest('hex');
}

/**
 * Finishes or undoes what a killed writer left (its journal is still there), in one pass of
 * three git processes whatever its size: a journaled file whose bytes are HEAD's was committed
 * and is kept; any other is put back as HEAD has it, or removed when HEAD has none. The user's
 * index is pointed at HEAD for those paths, git's index lock is removed if the dead writer held
 * it, and private refs, marks and temp files are swept. A journal without this repository's
 * token, or naming anything but memory paths, is never acted on.
 */
export async function recoverWrite(
  ctx: ServiceContext,
  git: GitRepo | null,
  stateDir: string,
): Promise<{ kept: number; undone: number; ignored: number } | null> {
  const found = readJournal(stateDir);
  if (found === null) return null;
  const time = ctx.now().toISOString();
  if ('untrusted' in found) {
    const aside = join(stateDir, `journal.untrusted-${Date.now()}`);
    try {
      renameSync(join(stateDir, 'journal'), aside);
    } catch {
      clearJournal(stateDir);
    }
    ctx.warn(`ignored a write journal that this repository did not write (${found.untrusted}); it was moved to ${aside}`);
    appendLog(ctx.ws, 'events', { time, level: 'warn', event: 'journal_untrusted', reason: found.untrusted });
    return { kept: 0, undone: 0, ignored: 0 };
  }
  const st = found.state;
  if (!git) {
    clearJournal(stateDir);
    return { kept: 0, undone: 0, ignored: 0 };
  }
  // The dead writer's workspace (normally this one) decides what its memory paths are.
  let ws = ctx.ws;
  if (st.root && st.root !== ws.root) {
    try {
      ws = new Workspace(st.root);
    } catch {
      ws = ctx.ws;
    }
  }
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
  // A writer killed while holding git's index lock: that lock file is still ours (same inode).
  if (st.indexLock) {
    const lock = join(git.gitDir, 'index.lock');
    const ino = statSync(lock, { throwIfNoEntry: false })?.ino;
    if (ino !== undefined && st.indexLock.inodes.includes(ino)) rmSync(lock, { force: true });
  }
  let kept = 0;
  let undone = 0;
  if (paths.length) {
    const { head, blobs } = await git.blobsAt(
      'HEAD',
      paths.map((p) => p.repo),
    );
    const algo = head && head.length === 64 ? 'sha256' : 'sha1';
    const restore: { abs: string; blob: string | null }[] = [];
    for (const p of paths) {
      let work: Buffer | null = null;
      try {
        work = readFileSync(p.abs);
      } catch {
        work = null;
      }
      const at = blobs.get(p.repo) ?? null;
      if ((work === null && at === null) || (work !== null && at !== null && blobId(work, algo) === at)) kept++;
      else {
        undone++;
        restore.push({ abs: p.abs, blob: at });
      }
    }
    const contents = await git.readBlobs(restore.flatMap((r) => (r.blob ? [r.blob] : [])));
    for (const r of restore) {
      const data = r.blob ? contents.get(r.blob) : undefined;
      if (data) writeFileAtomic(r.abs, data);
      else rmSync(r.abs, { force: true });
    }
    await git.setIndexEntries(paths.map((p) => ({ path: p.repo, blob: blobs.get(p.repo) ?? null })));
    sweepTempFiles(new Set(paths.map((p) => dirname(p.abs))));
  }
  await git.sweepLeftovers();
  if (kept + undone + ignored) {
    appendLog(ctx.ws, 'events', { time, level: 'warn', event: 'journal_recovered', kept, undone, ignored, commit: st.commit });
  }
  clearJournal(stateDir);
  return { kept, undone, ignored };
}

/** Removes our temp files (`.<hex>.tmp`) that a killed writer left in these folders. */
function sweepTempFiles(dirs: Set<string>): void {
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const n of names) if (/^\.[0-9a-f]{12}\.tmp$/.test(n)) rmSync(join(dir, n), { force: true });
  }
}

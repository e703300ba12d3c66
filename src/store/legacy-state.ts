/**
 * The local state of earlier versions, `<root>/.bass-agents/` in the work tree. When it is the
 * user's own (not tracked by git), a real folder holding only folders and regular files, what is
 * worth keeping (sessions, plans, usage, logs) moves to the local state folder once, caches are
 * dropped (they are rebuilt) and the folder goes. Anything else (a committed folder, a link, a
 * folder holding a link) is never read nor written: it is left as it is, and said once on stderr.
 * Loaded only when the folder is there.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from './fsutil.js';
import { alive } from './lock.js';
import { sanitizeQueryLine } from './query-log.js';
import { appendNoFollow, LEGACY_LOCAL_DIR, readNoFollow } from './state-dir.js';
import type { Workspace } from './workspace.js';

/** The note that says this folder was looked at and left alone (so it is said once). */
const NOTE = 'legacy-note.json';

/** What moves, by path in the old folder: appended to the new file (logs), or taken when there is none yet. */
function planOf(rel: string, inGit: boolean): 'append' | 'take' | null {
  if (/^logs\/[^/]+\.(jsonl|log)$/.test(rel) || rel === 'state/retrievals.jsonl') return 'append';
  if (/^(sessions|plans)\/[^/]+\.json$/.test(rel) || rel === 'state/usage.json' || rel === 'state/decay.json') return 'take';
  // Outside git the journal of a killed writer lived here, with the token that vouches for it.
  if (!inGit && (rel === 'state/journal' || rel === 'state/token')) return 'take';
  return null;
}

/** Why the old folder must be left alone, or its files (relative, "/"-separated) when it can move. */
function survey(ws: Workspace, old: string): { why: string; retry?: boolean } | { files: string[] } {
  const top = lstatSync(old);
  if (top.isSymbolicLink()) return { why: 'is a symbolic link' };
  if (!top.isDirectory()) return { why: 'is not a folder' };
  if (ws.state.gitDir) {
    const r = spawnSync('git', ['ls-files', '-z', '--', LEGACY_LOCAL_DIR], { cwd: ws.root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    if (r.status !== 0) return { why: 'could not be checked with git (is it tracked?)', retry: true };
    if (r.stdout) return { why: 'is tracked by git (a committed folder is never read or written)' };
  }
  const files: string[] = [];
  const walk = (dir: string, rel: string): string | null => {
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      const r = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory()) {
        const why = walk(join(dir, d.name), r);
        if (why) return why;
      } else if (d.isFile()) files.push(r);
      // A socket a killed daemon left is never opened, only removed with the folder.
      else if (!d.isSocket()) return `holds ${LEGACY_LOCAL_DIR}/${r}, which is not a regular file`;
    }
    return null;
  };
  const why = walk(old, '');
  if (why) return { why };
  if (files.includes('daemon/daemon.pid')) {
    const pid = Number(readNoFollow(join(old, 'daemon/daemon.pid'), 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0 && alive(pid))
      return { why: `is in use by the daemon of an earlier version (pid ${pid}): stop it first`, retry: true };
  }
  return { files };
}

/** Moves the old folder's state out (or leaves it alone, saying why once). Never throws for the folder's sake. */
export function settleLegacyState(ws: Workspace): void {
  // (Outside git, a folder that holds no memory gets no state folder of ours for it.)
  if ((!ws.state.gitDir && !existsSync(ws.memoryDir)) || existsSync(join(ws.localDir, NOTE))) return;
  const old = join(ws.root, LEGACY_LOCAL_DIR);
  const s = survey(ws, old);
  ws.ensureLocal({ force: true });
  if ('why' in s) {
    if (!s.retry) writeFileAtomic(join(ws.localDir, NOTE), `${JSON.stringify({ left: s.why })}\n`, { fsync: false });
    process.stderr.write(`note: ${LEGACY_LOCAL_DIR}/ ${s.why}; bass-agents leaves it alone and keeps its local state in ${ws.localDir}\n`);
    return;
  }
  for (const rel of s.files) {
    const plan = planOf(rel, ws.state.gitDir !== null);
    if (!plan) continue;
    const [sub, name] = [rel.slice(0, rel.lastIndexOf('/')), rel.slice(rel.lastIndexOf('/') + 1)];
    const to = join(ws.local(sub, true), name);
    let data = readNoFollow(join(old, rel));
    // The query log keeps no query text unless a project asks (query-log.ts): old lines lose it.
    if (rel === 'logs/queries.jsonl') data = Buffer.from(sanitizeQueryLine(ws, data.toString('utf8')));
    if (plan === 'append') appendNoFollow(to, data);
    else if (!existsSync(to)) writeFileAtomic(to, data, { fsync: false, mode: 0o600 });
  }
  rmSync(old, { recursive: true, force: true });
  process.stderr.write(`note: moved the local state of an earlier version from ${LEGACY_LOCAL_DIR}/ to ${ws.localDir} (caches are rebuilt there)\n`);
}

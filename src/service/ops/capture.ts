/**
 * `memory hook stop --client <client>`: when the session changed code and recorded nothing in
 * memory, asks the agent once per session to record what it learned; any problem is silence.
 * The session starts at the transcript's first timestamp, else at the last memory commit.
 */
import { closeSync, existsSync, mkdirSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { tryOr } from '../../store/fsutil.js';
import type { Engine } from '../engine.js';
import type { Caller } from '../caller.js';

const CAPTURE_REMINDER =
  'This session changed code and recorded nothing in project memory. If you learned something the next agent needs ' +
  '(a decision and why, a fix, a pitfall), record it now with the memory_create tool (MCP server bass-agents-memory): ' +
  'one fact per entry, with evidence. If not, just stop.';

function transcriptStart(path: unknown): number | null {
  if (typeof path !== 'string' || !path) return null;
  return tryOr(() => {
    const fd = openSync(path, 'r');
    try {
      const buf = Buffer.alloc(65_536);
      const n = readSync(fd, buf, 0, buf.length, 0);
      const m = /"timestamp"\s*:\s*"([^"]{10,40})"/.exec(buf.toString('utf8', 0, n));
      const t = Date.parse(m?.[1] ?? '');
      return Number.isFinite(t) ? t : statSync(path).birthtimeMs || null;
    } finally {
      closeSync(fd);
    }
  }, null);
}

export async function stopReminder(engine: Engine, _caller: Caller, raw: string): Promise<string | null> {
  // What the client hands its Stop hook (session_id, conversation_id, transcript_path, stop_hook_active, loop_count: of any of the three).
  const input = tryOr(() => JSON.parse(raw || '{}') as Record<string, unknown> | null, null);
  if (!input) return null;
  // A Stop that follows a hook's continuation is let through.
  if (input.stop_hook_active === true || (typeof input.loop_count === 'number' && input.loop_count > 0)) return null;
  const git = await engine.git();
  if (!git) return null;
  const session = String(input.session_id ?? input.conversation_id ?? '')
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 100);
  const marker = session ? join(git.stateDir, 'reminded', session) : null;
  if (marker && existsSync(marker)) return null;
  const memoryPaths = [engine.ws.memoryDir, engine.ws.contextDir].map((d) => relative(git.toplevel, d).split(sep).join('/'));
  const lastMemory = Number((await git.run(['log', '-1', '--format=%ct', '--', ...memoryPaths]).catch(() => '')).trim()) * 1000 || 0;
  const start = transcriptStart(input.transcript_path);
  if (start !== null && lastMemory >= start) return null; // recorded something this session
  const since = start ?? lastMemory;
  const isMemory = (p: string): boolean => memoryPaths.some((m) => p === m || p.startsWith(`${m}/`));
  const status = await git.run(['status', '--porcelain=v1', '-z', '--no-renames', '--untracked-files=all']).catch(() => '');
  let changed = status
    .split('\0')
    .filter((l) => l.length > 3)
    .map((l) => l.slice(3))
    .filter((p) => !isMemory(p))
    .some((p) => tryOr(() => statSync(join(git.toplevel, p)).mtimeMs >= since, true)); // true: deleted in the work tree
  if (!changed && since > 0) {
    const committed = await git.run(['log', `--since=@${Math.floor(since / 1000)}`, '--name-only', '--format=']).catch(() => '');
    changed = committed.split('\n').some((p) => p && !isMemory(p));
  }
  if (!changed) return null;
  if (marker) {
    mkdirSync(join(git.stateDir, 'reminded'), { recursive: true });
    writeFileSync(marker, `${new Date().toISOString()}\n`);
  }
  return CAPTURE_REMINDER;
}

/** The reminder as the client's Stop hook answers (Claude Code and Codex: a block with a reason; Cursor: a follow-up message). */
export function stopAnswer(client: string, reminder: string | null): string {
  if (client === 'cursor') return JSON.stringify(reminder ? { followup_message: reminder } : {});
  return reminder ? JSON.stringify({ decision: 'block', reason: reminder }) : '';
}

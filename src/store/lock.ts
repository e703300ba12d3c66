/**
 * The workspace write lock (proper-lockfile). Every process that writes memory takes it around
 * validate-against-the-store → write files → commit, so duplicate checks see a stable store and
 * two of our commits never race for git's `index.lock`. Readers never take it: entry files are
 * replaced atomically, so a reader sees the old or the new file.
 *
 * NOTE: `stale` and `update` must be the same in every process (proper-lockfile compares mtimes);
 * a lock left by a killed process is taken over once it is older than `stale`.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { BusyError } from '../core/errors.js';
import { lazy } from '../lazy.js';
import { appendLog } from './local-log.js';
import type { Workspace } from './workspace.js';

const properLockfile = lazy<typeof import('proper-lockfile')>('proper-lockfile');

export const LOCK_STALE_MS = 10_000;
export const LOCK_UPDATE_MS = 2_000;
const DEFAULT_TIMEOUT_MS = 30_000;

/** Makes `.bass-agents/` with a `.gitignore` of `*`, so it ignores itself without touching the user's .gitignore. */
export function ensureLocalDir(ws: Workspace): string {
  ws.ensureLocal({ force: true });
  mkdirSync(join(ws.localDir, 'locks'), { recursive: true });
  return ws.localDir;
}

function lockTimeout(env: NodeJS.ProcessEnv): number {
  const raw = env.BASS_AGENTS_LOCK_TIMEOUT_MS;
  const n = raw ? Number(raw) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : DEFAULT_TIMEOUT_MS;
}

/**
 * Runs `fn` holding the named lock; gives up with BusyError (exit 4) after the timeout. The lock
 * lives in `dir` (the write lock: under the git dir, see service/transaction.ts), by default in
 * `.bass-agents/locks/`.
 */
export async function withLock<T>(
  ws: Workspace,
  name: string,
  fn: () => Promise<T>,
  opts: { env?: NodeJS.ProcessEnv; dir?: string; timeoutMs?: number } = {},
): Promise<T> {
  const dir = opts.dir;
  if (dir) mkdirSync(dir, { recursive: true });
  else ensureLocalDir(ws);
  const timeout = opts.timeoutMs ?? lockTimeout(opts.env ?? process.env);
  const lockfilePath = join(dir ?? join(ws.localDir, 'locks'), `${name}.lock`);
  const started = Date.now();
  let release: (() => Promise<void>) | undefined;
  let compromised: Error | undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      release = await properLockfile().lock(ws.root, {
        lockfilePath,
        realpath: false,
        stale: LOCK_STALE_MS,
        update: LOCK_UPDATE_MS,
        retries: 0,
        onCompromised: (err) => {
          compromised = err;
        },
      });
      if (attempt > 0) {
        // Req 12.4: concurrent writes are logged for debugging (who waited, how long).
        appendLog(ws, 'events', {
          time: new Date().toISOString(),
          level: 'info',
          event: 'lock_waited',
          lock: name,
          pid: process.pid,
          attempts: attempt,
          waited_ms: Date.now() - started,
        });
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
      if (Date.now() - started >= timeout) {
        appendLog(ws, 'events', {
          time: new Date().toISOString(),
          level: 'warn',
          event: 'lock_timeout',
          lock: name,
          pid: process.pid,
          waited_ms: Date.now() - started,
        });
        throw new BusyError(`another bass-agents process holds the ${name} lock (${lockfilePath}) and did not release it within ${timeout} ms; try again`);
      }
      // Short polls: a writer holds the lock for tens of milliseconds, and a waiter that sleeps
      // longer than that leaves the lock idle (eight writers polling at up to 250 ms made 1 write/s).
      const wait = Math.min(40, 4 * 1.5 ** Math.min(attempt, 12)) * (0.5 + Math.random());
      await new Promise((r) => setTimeout(r, wait));
    }
  }
  try {
    const out = await fn();
    if (compromised) throw compromised;
    return out;
  } finally {
    await release().catch(() => undefined);
  }
}

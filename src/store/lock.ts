/**
 * The write lock (docs/ARCHITECTURE.md "The write path"), so duplicate checks see a stable store;
 * readers never take it. NOTE: `stale` and `update` must be the same in every process
 * (proper-lockfile compares mtimes). A killed holder on this host is taken over at once (its owner
 * file names it); `stale` is for the rest, and long: a lock taken from a live writer stalled by a
 * loaded machine lets two write at once.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { tryOr, writeFileAtomic } from './fsutil.js';
import { isAlive } from './state-dir.js';
import { join } from 'node:path';
import { BusyError } from '../core/errors.js';
import { lazy } from '../lazy.js';
import type { Workspace } from './workspace.js';

const properLockfile = lazy<typeof import('proper-lockfile')>('proper-lockfile');

const LOCK_STALE_MS = 60_000;
const LOCK_UPDATE_MS = 2_000;

/** How long a writer waits for a lock: `BASS_AGENTS_LOCK_TIMEOUT_MS` when set, else `fallback`. */
export function lockTimeout(env: NodeJS.ProcessEnv, fallback = 30_000): number {
  const raw = env.BASS_AGENTS_LOCK_TIMEOUT_MS;
  const n = raw ? Number(raw) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : fallback;
}

/** Runs `fn` holding the lock `<dir>/<name>.lock`; gives up with BusyError (exit 4) after the timeout. */
export async function withLock<T>(
  ws: Workspace,
  name: string,
  fn: () => Promise<T>,
  opts: { env?: NodeJS.ProcessEnv; dir: string; timeoutMs?: number },
): Promise<T> {
  mkdirSync(opts.dir, { recursive: true });
  const timeout = opts.timeoutMs ?? lockTimeout(opts.env ?? process.env);
  const lockfilePath = join(opts.dir, `${name}.lock`);
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
      writeOwner(lockfilePath);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
      // The holder was killed: the next command after a kill -9 finishes or undoes its work at once, not in a minute.
      if (takeOverFromDeadOwner(lockfilePath)) continue;
      if (Date.now() - started >= timeout)
        throw new BusyError(`another bass-agents process holds the ${name} lock (${lockfilePath}) and did not release it within ${timeout} ms; try again`);
      // Short polls: a writer holds the lock for tens of milliseconds, and a waiter that sleeps longer leaves it idle.
      const wait = Math.min(40, 4 * 1.5 ** Math.min(attempt, 12)) * (0.5 + Math.random());
      await new Promise((r) => setTimeout(r, wait));
    }
  }
  try {
    const out = await fn();
    // proper-lockfile also calls a lock compromised when this process itself was too slow to
    // refresh it: that matters only if another process took it meanwhile.
    const owner = compromised ? readOwner(lockfilePath) : null;
    if (compromised && !(owner?.pid === process.pid && owner.ino === statSync(lockfilePath, { throwIfNoEntry: false })?.ino))
      throw new BusyError(
        `another process took the ${name} lock (${lockfilePath}) while this write ran, after it went ${LOCK_STALE_MS / 1000} s without a refresh (${compromised.message}); check the result with \`bass-agents memory doctor\``,
      );
    return out;
  } finally {
    if (readOwner(lockfilePath)?.pid === process.pid) rmSync(`${lockfilePath}.owner`, { force: true });
    await release().catch(() => undefined);
  }
}

/**
 * Who holds a lock: `<lock>.owner` beside the lock folder (proper-lockfile removes the folder with
 * rmdir), naming the process, the host and the folder's inode (this holder's lock, not a later one).
 */
interface Owner {
  pid: number;
  host: string;
  ino: number;
}

const readOwner = (lock: string): Owner | null => tryOr(() => JSON.parse(readFileSync(`${lock}.owner`, 'utf8')) as Owner, null);

/** Without it, a killed holder's lock goes stale by age. */
function writeOwner(lock: string): void {
  tryOr(
    () => writeFileAtomic(`${lock}.owner`, JSON.stringify({ pid: process.pid, host: hostname(), ino: statSync(lock).ino } satisfies Owner), { fsync: false }),
    undefined,
  );
}

/** Takes a dead holder's lock: renamed away (of two processes doing this, one succeeds), put back when not the dead holder's. */
function takeOverFromDeadOwner(lock: string): boolean {
  const owner = readOwner(lock);
  const ino = statSync(lock, { throwIfNoEntry: false })?.ino;
  if (!owner || owner.host !== hostname() || owner.ino !== ino || owner.pid === process.pid || isAlive(owner.pid)) return false;
  const aside = `${lock}.dead-${process.pid}-${Date.now()}`;
  try {
    renameSync(lock, aside);
  } catch {
    return false; // someone else took it over first
  }
  if (statSync(aside, { throwIfNoEntry: false })?.ino !== owner.ino) {
    // Not the dead holder's lock after all: given back (unless the path was taken meanwhile: that holder's checks report it).
    tryOr(() => renameSync(aside, lock), undefined);
    return false;
  }
  rmSync(aside, { recursive: true, force: true });
  rmSync(`${lock}.owner`, { force: true });
  return true;
}

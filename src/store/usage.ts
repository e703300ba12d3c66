/**
 * Local usage of entries (DESIGN.md "local = usage"): retrieval count and last access per
 * `project/id`, never committed. A query appends one line per result set to
 * `state/retrievals.jsonl` of the local state folder (O_APPEND: concurrent readers and writers are safe);
 * reading folds that log over the `usage.json` snapshot. `compact` (run by `memory decay --apply`,
 * and by any reader that finds the log past LOG_FOLD_BYTES) folds the log into the snapshot,
 * renaming the log first so appends made meanwhile are kept; one process at a time
 * (`usage.lock`, O_EXCL), so that two folds never start from the same old snapshot.
 */
import { closeSync, constants, existsSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Usage } from '../core/lifecycle.js';
import { readAt, writeFileAtomic } from './fsutil.js';
import { appendNoFollow, openNoFollow, readNoFollow } from './state-dir.js';
import type { Workspace } from './workspace.js';

/**
 * A reader folds the log into the snapshot once it is this large: without a daemon (which folds
 * it with decay) every query appends a line, and every later one would parse them all.
 */
const LOG_FOLD_BYTES = 256 * 1024;
/** A fold lock older than this was left by a process that died while folding. */
const STALE_LOCK_MS = 60_000;

interface LogLine {
  t: string;
  k: string[];
}

export class UsageStore {
  private dir: string;
  /** What `load` last returned, and how far into which files it had read (a long-lived process reads only new lines). */
  private cache: { snapshot: string; logIno: number; logSize: number; usage: Map<string, Usage> } | undefined;

  private readonly ws: Workspace;

  constructor(ws: Workspace) {
    this.ws = ws;
    this.dir = join(ws.localDir, 'state');
  }

  private get snapshotFile(): string {
    return join(this.dir, 'usage.json');
  }

  private get logFile(): string {
    return join(this.dir, 'retrievals.jsonl');
  }

  /** Records that `keys` were returned by a query at `time`. */
  recordRetrievals(keys: string[], time: string): void {
    if (keys.length === 0 || !this.ws.ensureLocal()) return;
    this.ws.local('state', true);
    try {
      appendNoFollow(this.logFile, `${JSON.stringify({ t: time, k: keys } satisfies LogLine)}\n`);
    } catch {
      /* usage is advisory: never fail a read for it */
    }
  }

  private readSnapshot(): Map<string, Usage> {
    try {
      return new Map(Object.entries(JSON.parse(readNoFollow(this.snapshotFile, 'utf8')) as Record<string, Usage>));
    } catch {
      return new Map();
    }
  }

  private static fold(into: Map<string, Usage>, text: string): void {
    for (const line of text.split('\n')) {
      if (!line) continue;
      let l: LogLine;
      try {
        l = JSON.parse(line) as LogLine;
      } catch {
        continue; // a torn last line
      }
      for (const k of l.k) {
        const u = into.get(k) ?? { retrievals: 0, last_accessed_at: null };
        u.retrievals++;
        if (!u.last_accessed_at || l.t > u.last_accessed_at) u.last_accessed_at = l.t;
        into.set(k, u);
      }
    }
  }

  /** Usage by `project/id` (shared: callers must not modify it). */
  load(): Map<string, Usage> {
    this.ws.local('state'); // checked before anything in it is read
    let log = statSync(this.logFile, { throwIfNoEntry: false });
    if (log && log.size > LOG_FOLD_BYTES && this.compact()) log = statSync(this.logFile, { throwIfNoEntry: false });
    const snap = statSync(this.snapshotFile, { throwIfNoEntry: false });
    const snapStamp = snap ? `${snap.size}:${snap.mtimeMs}` : '-';
    const c = this.cache;
    if (c && c.snapshot === snapStamp && log && log.ino === c.logIno && log.size >= c.logSize) {
      // Same snapshot, same log file grown by appends: fold just the new bytes.
      if (log.size > c.logSize) {
        const tail = this.readFrom(c.logSize, log.size);
        const complete = tail.lastIndexOf('\n') + 1;
        UsageStore.fold(c.usage, tail.slice(0, complete));
        c.logSize += Buffer.byteLength(tail.slice(0, complete));
      }
      return c.usage;
    }
    const usage = this.readSnapshot();
    let size = 0;
    if (log) {
      const text = this.readFrom(0, log.size);
      const complete = text.lastIndexOf('\n') + 1;
      UsageStore.fold(usage, text.slice(0, complete));
      size = Buffer.byteLength(text.slice(0, complete));
    }
    this.cache = { snapshot: snapStamp, logIno: log?.ino ?? -1, logSize: size, usage };
    return usage;
  }

  private readFrom(start: number, end: number): string {
    if (end <= start) return '';
    let fd: number;
    try {
      fd = openNoFollow(this.logFile, constants.O_RDONLY);
    } catch {
      return '';
    }
    try {
      return readAt(fd, start, end - start).toString('utf8');
    } catch {
      return '';
    } finally {
      closeSync(fd);
    }
  }

  /** Folds the log into the snapshot; false when there was nothing to fold or another process is folding. */
  compact(): boolean {
    if (!existsSync(this.logFile)) return false;
    const lock = join(this.dir, 'usage.lock');
    try {
      closeSync(openSync(lock, 'wx', 0o600));
    } catch {
      // Another process is folding (its result includes these lines), or died doing it.
      const st = statSync(lock, { throwIfNoEntry: false });
      if (st && Date.now() - st.mtimeMs > STALE_LOCK_MS) rmSync(lock, { force: true });
      return false;
    }
    const folding = join(this.dir, `retrievals.${process.pid}.folding`);
    let moved = false;
    try {
      renameSync(this.logFile, folding);
      moved = true;
      const usage = this.readSnapshot();
      UsageStore.fold(usage, readNoFollow(folding, 'utf8'));
      writeFileAtomic(this.snapshotFile, JSON.stringify(Object.fromEntries(usage)), { fsync: false });
      moved = false;
      rmSync(folding, { force: true });
      this.cache = undefined;
      return true;
    } catch {
      // The lines go back to the log for the next fold (usage is advisory: never fail a read for it).
      if (moved) {
        try {
          appendNoFollow(this.logFile, readNoFollow(folding));
          rmSync(folding, { force: true });
        } catch {
          /* left in the folding file */
        }
      }
      return false;
    } finally {
      rmSync(lock, { force: true });
    }
  }
}

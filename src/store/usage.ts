/**
 * Local usage (DESIGN.md "local = usage", docs/local-state.md): the query log folded over the
 * snapshot. `compact` renames the log before folding it, so appends made meanwhile are kept, and
 * takes `usage.lock` (O_EXCL), so two folds never start from the same old snapshot.
 */
import { closeSync, existsSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Usage } from '../core/lifecycle.js';
import { tryOr, writeFileAtomic } from './fsutil.js';
import { readAppended } from './local-log.js';
import { appendNoFollow, readNoFollow } from './state-dir.js';
import type { Workspace } from './workspace.js';

/** A reader folds the log once it is this large: without a daemon every query appends a line, and every later one would parse them all. */
const LOG_FOLD_BYTES = 256 * 1024;
/** A fold lock older than this was left by a process that died while folding. */
const STALE_LOCK_MS = 60_000;

interface LogLine {
  t: string;
  k: string[];
}

export class UsageStore {
  private readonly dir: string;
  private readonly snapshotFile: string;
  private readonly logFile: string;
  /** What `load` last returned, and how far it had read (a long-lived process reads only new lines). */
  private cache: { snapshot: string; log?: { ino: number; size: number }; usage: Map<string, Usage> } | undefined;

  constructor(private readonly ws: Workspace) {
    this.dir = join(ws.localDir, 'state');
    this.snapshotFile = join(this.dir, 'usage.json');
    this.logFile = join(this.dir, 'retrievals.jsonl');
  }

  recordRetrievals(keys: string[], time: string): void {
    if (keys.length === 0 || !this.ws.ensureLocal()) return;
    this.ws.local('state', true);
    tryOr(() => appendNoFollow(this.logFile, `${JSON.stringify({ t: time, k: keys } satisfies LogLine)}\n`), undefined); // usage is advisory
  }

  private readSnapshot(): Map<string, Usage> {
    return new Map(Object.entries(tryOr(() => JSON.parse(readNoFollow(this.snapshotFile, 'utf8')) as Record<string, Usage>, {})));
  }

  private static fold(into: Map<string, Usage>, lines: string[]): void {
    for (const line of lines) {
      const l = tryOr(() => JSON.parse(line) as LogLine, undefined);
      if (!l) continue; // a torn last line
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
    this.ws.local('state'); // checked before it is read
    if ((statSync(this.logFile, { throwIfNoEntry: false })?.size ?? 0) > LOG_FOLD_BYTES) this.compact();
    const snap = statSync(this.snapshotFile, { throwIfNoEntry: false });
    const snapshot = snap ? `${snap.size}:${snap.mtimeMs}` : '-';
    let c = this.cache?.snapshot === snapshot ? this.cache : undefined;
    const r = tryOr(() => readAppended(this.logFile, c?.log), null); // usage is advisory: never fail a read for it
    if (!c || !r || r.restarted) c = { snapshot, usage: this.readSnapshot() };
    if (r) {
      UsageStore.fold(c.usage, r.lines);
      c.log = { ino: r.ino, size: r.size };
    }
    this.cache = c;
    return c.usage;
  }

  /** False when there was nothing to fold or another process is folding. */
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
      UsageStore.fold(usage, readNoFollow(folding, 'utf8').split('\n'));
      writeFileAtomic(this.snapshotFile, JSON.stringify(Object.fromEntries(usage)), { fsync: false });
      moved = false;
      rmSync(folding, { force: true });
      this.cache = undefined;
      return true;
    } catch {
      // The lines go back to the log for the next fold, or stay in the folding file (usage is advisory: never fail a read for it).
      if (moved)
        tryOr(() => {
          appendNoFollow(this.logFile, readNoFollow(folding));
          rmSync(folding, { force: true });
        }, undefined);
      return false;
    } finally {
      rmSync(lock, { force: true });
    }
  }
}

/**
 * Local usage of entries (DESIGN.md "local = usage"): retrieval count and last access per
 * `project/id`, never committed. A query appends one line per result set to
 * `.bass-agents/state/retrievals.jsonl` (O_APPEND: concurrent readers and writers are safe);
 * reading folds that log over the `usage.json` snapshot. `compact` (run by `memory decay --apply`
 * and the daemon, under the write lock) folds the log into the snapshot, renaming the log first
 * so appends made meanwhile are kept.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Usage } from '../core/lifecycle.js';
import { writeFileAtomic } from './fsutil.js';
import type { Workspace } from './workspace.js';

interface LogLine {
  t: string;
  k: string[];
}

export class UsageStore {
  private dir: string;

  constructor(ws: Workspace) {
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
    if (keys.length === 0) return;
    try {
      mkdirSync(this.dir, { recursive: true });
      appendFileSync(this.logFile, `${JSON.stringify({ t: time, k: keys } satisfies LogLine)}\n`);
    } catch {
      /* usage is advisory: never fail a read for it */
    }
  }

  private readSnapshot(): Map<string, Usage> {
    try {
      return new Map(Object.entries(JSON.parse(readFileSync(this.snapshotFile, 'utf8')) as Record<string, Usage>));
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

  /** Usage by `project/id`. */
  load(): Map<string, Usage> {
    const usage = this.readSnapshot();
    let text = '';
    try {
      text = readFileSync(this.logFile, 'utf8');
    } catch {
      return usage;
    }
    UsageStore.fold(usage, text);
    return usage;
  }

  /** Folds the log into the snapshot. */
  compact(): void {
    const folding = join(this.dir, `retrievals.${process.pid}.folding`);
    try {
      if (!existsSync(this.logFile)) return;
      renameSync(this.logFile, folding);
      const usage = this.readSnapshot();
      UsageStore.fold(usage, readFileSync(folding, 'utf8'));
      writeFileAtomic(this.snapshotFile, JSON.stringify(Object.fromEntries(usage)), { fsync: false });
      rmSync(folding, { force: true });
    } catch {
      /* another process is folding; its result includes ours */
    }
  }
}

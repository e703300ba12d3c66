/**
 * Group commit: every batch write of a process (create, apply, apply-result; from the CLI, the
 * daemon's callers, an MCP server or the API) is submitted here. A batch arriving while no commit
 * runs is committed at once; the batches that arrive while one runs join the next group, which
 * makes one commit per project, each batch keeping its own agent and getting its own result or
 * error (ops/apply.ts applyGroup: a failing group is retried batch by batch).
 */
import type { Caller } from './caller.js';
import type { Engine } from './engine.js';
import type { ApplyOptions, ApplyResult } from './ops/apply.js';

export interface Batch {
  caller: Caller;
  updates: unknown;
  opts: ApplyOptions;
}

interface Queued extends Batch {
  resolve: (r: ApplyResult) => void;
  reject: (err: unknown) => void;
}

export class WriteQueue {
  private readonly queue: Queued[] = [];
  private draining = false;
  /** Told each group committed, with its batches' results (the daemon's log and metrics). */
  onGroup: ((group: { batch: Batch; result: ApplyResult | Error }[]) => void) | undefined;

  constructor(private readonly engine: Engine) {}

  submit(caller: Caller, updates: unknown, opts: ApplyOptions): Promise<ApplyResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ caller, updates, opts, resolve, reject });
      if (!this.draining) void this.drain();
    });
  }

  /** Commits what is queued, a group per project, until the queue is empty. */
  private async drain(): Promise<void> {
    this.draining = true;
    const { applyGroup } = await import('./ops/apply.js');
    try {
      while (this.queue.length) {
        // Let the writes that are arriving right now join this group.
        await new Promise((r) => setImmediate(r));
        const groups = new Map<string, Queued[]>();
        for (const w of this.queue.splice(0, this.queue.length)) {
          try {
            // One commit per project (and per leave to write on a detached HEAD).
            const key = `${w.caller.project(this.engine, w.opts.project)}\u0000${w.caller.allowDetached}`;
            groups.set(key, [...(groups.get(key) ?? []), w]);
          } catch (err) {
            w.reject(err);
          }
        }
        for (const group of groups.values()) {
          const results = await applyGroup(this.engine, group).catch((err: Error) => group.map(() => err));
          // applyGroup answers each batch; one left unanswered is rejected rather than resolved empty.
          const done = group.map((batch, k) => ({ batch, result: results[k] ?? new Error('not applied') }));
          this.onGroup?.(done);
          for (const { batch, result } of done) {
            if (result instanceof Error) batch.reject(result);
            else batch.resolve(result);
          }
        }
      }
    } finally {
      this.draining = false;
    }
  }
}

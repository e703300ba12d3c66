/**
 * Group commit: every batch write of a process is submitted here; batches that arrive while a
 * commit runs join the next group, one commit per project (ops/apply.ts applyGroup).
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
  /** Told each group's results (the daemon's log and metrics). */
  onGroup: ((group: { batch: Batch; result: ApplyResult | Error }[]) => void) | undefined;

  constructor(private readonly engine: Engine) {}

  submit(caller: Caller, updates: unknown, opts: ApplyOptions): Promise<ApplyResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ caller, updates, opts, resolve, reject });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    const { applyGroup } = await import('./ops/apply.js');
    try {
      while (this.queue.length) {
        // Writes arriving right now join this group.
        await new Promise((r) => setImmediate(r));
        const groups = new Map<string, Queued[]>();
        for (const w of this.queue.splice(0, this.queue.length)) {
          try {
            // One commit per project and per leave to write on a detached HEAD.
            const key = `${w.caller.project(this.engine, w.opts.project)}\u0000${w.caller.allowDetached}`;
            groups.set(key, [...(groups.get(key) ?? []), w]);
          } catch (err) {
            w.reject(err);
          }
        }
        for (const group of groups.values()) {
          const results = await applyGroup(this.engine, group).catch((err: Error) => group.map(() => err));
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

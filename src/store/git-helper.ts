/**
 * git started from a small helper process, for long-lived processes (the daemon, an MCP server):
 * node's spawn forks the caller and waits on its main thread, which from a process of a few
 * hundred MiB stalls every other request it serves. git runs exactly as it would from here.
 */
import type { ChildProcess } from 'node:child_process';

export interface GitOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: Buffer;
  err: Buffer;
  /** git could not be started. */
  error?: string;
}

/** The helper's code: runs each git it is sent and sends back how it ended; exits with its parent. */
const HELPER = `'use strict';
const { spawn } = require('node:child_process');
process.on('disconnect', () => process.exit(0));
process.on('message', ({ id, cwd, args, input, env }) => {
  let sent = false;
  const send = (m) => { if (!sent) { sent = true; process.send({ id, ...m }); } };
  let child;
  try {
    child = spawn('git', args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
  } catch (e) {
    return send({ error: String(e && e.message) });
  }
  const out = [];
  const err = [];
  child.stdout.on('data', (d) => out.push(d));
  child.stderr.on('data', (d) => err.push(d));
  child.on('error', (e) => send({ error: e.message }));
  child.on('close', (code, signal) => send({ code, signal, out: Buffer.concat(out), err: Buffer.concat(err) }));
  child.stdin.on('error', () => undefined);
  child.stdin.end(input);
});
`;

const toBuffer = (u: Uint8Array | undefined): Buffer => (u ? Buffer.from(u.buffer, u.byteOffset, u.byteLength) : Buffer.alloc(0));

class GitHelper {
  private child: ChildProcess | undefined;
  private next = 0;
  private readonly pending = new Map<number, { done: (o: GitOutcome) => void; fail: (e: Error) => void }>();

  run(cwd: string, args: string[], input: string | Buffer, env: Record<string, string>): Promise<GitOutcome> {
    const child = this.start();
    const id = this.next++;
    return new Promise((done, fail) => {
      this.pending.set(id, { done, fail });
      if (this.pending.size === 1) child.channel?.ref();
      child.send({ id, cwd, args, input, env }, (e) => e && this.settle(id, undefined, e));
    });
  }

  private start(): ChildProcess {
    if (this.child) return this.child;
    const { spawn } = process.getBuiltinModule('node:child_process');
    const child = spawn(process.execPath, ['-e', HELPER], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'], serialization: 'advanced', windowsHide: true });
    child.on('message', (m: GitOutcome & { id: number; out?: Uint8Array; err?: Uint8Array }) =>
      this.settle(m.id, { code: m.code ?? null, signal: m.signal ?? null, out: toBuffer(m.out), err: toBuffer(m.err), error: m.error }),
    );
    const gone = (): void => {
      if (this.child !== child) return;
      this.child = undefined; // the next git starts a new helper
      for (const id of [...this.pending.keys()]) this.settle(id, undefined, new Error('its helper process ended while git ran'));
    };
    child.on('exit', gone);
    child.on('error', gone);
    child.unref(); // never keeps this process alive; the channel does while git runs
    child.channel?.unref();
    return (this.child = child);
  }

  private settle(id: number, outcome: GitOutcome | undefined, err?: Error): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    if (this.pending.size === 0) this.child?.channel?.unref();
    if (outcome) p.done(outcome);
    else p.fail(err!);
  }
}

let shared: GitHelper | undefined;

export function gitHelper(): GitHelper {
  return (shared ??= new GitHelper());
}

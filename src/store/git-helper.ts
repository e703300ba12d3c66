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

/**
 * Runs git to its end, never rejecting: how it ended and what it wrote (stdout to `onOut` as it
 * comes, or into the file `stdout`; `signal` stops it). Synchronous up to git's start. The helper
 * runs its source alone: it must use no import and nothing of this module.
 */
export function spawnGit(
  cwd: string,
  args: string[],
  env: Record<string, string>,
  o: { input?: string | Buffer; onOut?: (d: Buffer) => void; stdout?: number; signal?: AbortSignal } = {},
): Promise<GitOutcome> {
  return new Promise((done) => {
    const failed = (e: Error): void => done({ code: null, signal: null, out: Buffer.alloc(0), err: Buffer.alloc(0), error: e.message });
    let child: ChildProcess;
    try {
      child = process
        .getBuiltinModule('node:child_process')
        .spawn('git', args, { cwd, env, stdio: ['pipe', o.stdout ?? 'pipe', 'pipe'], signal: o.signal, windowsHide: true });
    } catch (e) {
      return failed(e as Error);
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', o.onOut ?? ((d: Buffer) => out.push(d)));
    child.stderr?.on('data', (d: Buffer) => err.push(d));
    child.on('error', failed);
    child.on('close', (code, signal) => done({ code, signal, out: Buffer.concat(out), err: Buffer.concat(err) }));
    child.stdin?.on('error', () => undefined); // git exiting early is reported through close
    child.stdin?.end(o.input ?? '');
  });
}

/** The helper's code: spawnGit's own source (it imports nothing), run for each git it is sent; exits with its parent. */
const HELPER = `'use strict';
const spawnGit = ${spawnGit.toString()};
process.on('disconnect', () => process.exit(0));
process.on('message', ({ id, cwd, args, input, env }) => spawnGit(cwd, args, env, { input }).then((o) => process.send({ id, ...o })));
`;

const toBuffer = (u: Uint8Array | undefined): Buffer => (u ? Buffer.from(u.buffer, u.byteOffset, u.byteLength) : Buffer.alloc(0));

/** Runs git as spawnGit does (never rejecting), from one helper process started on first use. */
class GitHelper {
  private child: ChildProcess | undefined;
  private next = 0;
  private readonly pending = new Map<number, (o: GitOutcome) => void>();

  run(cwd: string, args: string[], input: string | Buffer, env: Record<string, string>): Promise<GitOutcome> {
    const child = this.start();
    const id = this.next++;
    return new Promise((done) => {
      this.pending.set(id, done);
      if (this.pending.size === 1) child.channel?.ref();
      child.send({ id, cwd, args, input, env }, (e) => e && this.settle(id, { error: e.message }));
    });
  }

  private start(): ChildProcess {
    if (this.child) return this.child;
    const { spawn } = process.getBuiltinModule('node:child_process');
    const child = spawn(process.execPath, ['-e', HELPER], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'], serialization: 'advanced', windowsHide: true });
    child.on('message', (m: Partial<GitOutcome> & { id: number }) => this.settle(m.id, m));
    const gone = (): void => {
      if (this.child !== child) return;
      this.child = undefined; // the next git starts a new helper
      for (const id of [...this.pending.keys()]) this.settle(id, { error: 'its helper process ended while git ran' });
    };
    child.on('exit', gone);
    child.on('error', gone);
    child.unref(); // never keeps this process alive; the channel does while git runs
    child.channel?.unref();
    return (this.child = child);
  }

  private settle(id: number, m: Partial<GitOutcome>): void {
    const done = this.pending.get(id);
    if (!done) return;
    this.pending.delete(id);
    if (this.pending.size === 0) this.child?.channel?.unref();
    done({ code: m.code ?? null, signal: m.signal ?? null, out: toBuffer(m.out), err: toBuffer(m.err), error: m.error });
  }
}

export const gitHelper = new GitHelper();

/** The daemon's socket server: frames and checks requests, declines another workspace's or clock's command lines, answers with daemon.ts's handlers. */
import { once } from 'node:events';
import { chmodSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { UsageError } from '../core/errors.js';
import { tryOr } from '../store/fsutil.js';
import { LineReader, MAX_MESSAGE_BYTES, errorToWire, parseRequest, type Method, type Methods, type Reply, type Request } from './protocol.js';
import { checkSocketDir, type DaemonPaths } from './client.js';

export type Handlers = { [M in Method]: (params: Methods[M]['params']) => Promise<Methods[M]['result']> };

export interface ServerDeps {
  handlers: Handlers;
  log: Logger;
  root: string;
  /** BASS_AGENTS_NOW, if fixed. */
  clock: string | null;
}

export class DaemonServer {
  private server: Server | undefined;

  constructor(private readonly deps: ServerDeps) {}

  /** Listens on the socket, 0600 from the start (its private folder 0700); returns its path. */
  async listen(paths: DaemonPaths): Promise<string> {
    checkSocketDir(paths, true);
    rmSync(paths.socket, { force: true });
    const server = (this.server = createServer((sock: Socket) => this.connection(sock)));
    const oldMask = process.umask(0o177);
    try {
      await once(server.listen(paths.socket), 'listening'); // (rejects on 'error')
    } finally {
      process.umask(oldMask);
    }
    chmodSync(paths.socket, 0o600);
    return paths.socket;
  }

  close(): void {
    this.server?.close();
  }

  private connection(sock: Socket): void {
    const reader = new LineReader(
      MAX_MESSAGE_BYTES,
      (line) => void this.handle(line).then((reply) => sock.destroyed || sock.write(`${JSON.stringify(reply)}\n`)),
      (bytes) => {
        // Refused as soon as it passes the limit: an error reply, nothing more read, then closed.
        sock.pause();
        sock.removeAllListeners('data');
        const err = new UsageError(`request is over ${MAX_MESSAGE_BYTES} bytes; the CLI does larger writes itself`);
        sock.end(`${JSON.stringify({ id: 0, error: errorToWire(err) })}\n`);
        setTimeout(() => sock.destroy(), 1000).unref();
        this.deps.log.warn({ event: 'request_too_large', bytes }, 'refused a request over the size limit');
      },
    );
    sock.on('data', (chunk: Buffer) => reader.push(chunk));
    sock.on('close', () => reader.stop());
    sock.on('error', () => undefined);
  }

  private async handle(line: string): Promise<Reply> {
    let req: Request | undefined;
    try {
      req = parseRequest(line);
      const why = req.method === 'cli' ? this.declineCli(req.params as Request<'cli'>['params']) : null;
      if (why) return { id: req.id, declined: why };
      const handle = this.deps.handlers[req.method] as (p: unknown) => Promise<Methods[Method]['result']>;
      return { id: req.id, result: await handle(req.params) };
    } catch (err) {
      if (req && !(err instanceof Error && 'exitCode' in err))
        this.deps.log.error({ event: 'error', where: `request ${req.method}`, err: (err as Error)?.message });
      return { id: req?.id ?? 0, error: errorToWire(err) };
    }
  }

  /** Why a command line is not for this daemon (another clock or workspace, or not a command line); null when it is. */
  private declineCli(p: Request<'cli'>['params']): string | null {
    if ((p.clock ?? null) !== this.deps.clock) return 'the caller runs on another fixed clock (BASS_AGENTS_NOW)';
    if (!p || !Array.isArray(p.argv) || !p.argv.every((a) => typeof a === 'string') || typeof p.cwd !== 'string' || typeof p.root !== 'string')
      return 'not a command line';
    if (p.env === null || typeof p.env !== 'object' || Object.values(p.env).some((v) => typeof v !== 'string')) return 'not a command line';
    return tryOr(() => realpathSync(p.root) === realpathSync(this.deps.root), false) ? null : 'another workspace';
  }
}

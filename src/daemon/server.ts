/**
 * The daemon's socket server: one JSON request per line (see protocol.ts). Command lines of thin
 * clients are run by the runner the CLI handed the daemon, against the daemon's one engine, so
 * their writes meet in the engine's write queue (group commit) like any other writer's.
 */
import { chmodSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { UsageError } from '../core/errors.js';
import type { Engine } from '../service/engine.js';
import { MAX_MESSAGE_BYTES, errorToWire, parseRequest, type CliParams, type Methods, type Reply, type Request, type Runner } from './protocol.js';
import { checkSocketDir, type DaemonPaths } from './client.js';
import { LineReader } from './framing.js';
import type { DaemonMetrics } from './status.js';

export interface ServerDeps {
  engine: Engine;
  runner: Runner;
  log: Logger;
  metrics: DaemonMetrics;
  /** The daemon's own fixed clock (BASS_AGENTS_NOW), if any: callers on another are declined. */
  clock: string | null;
  /** Brings the catalog and index up to date with what the watcher saw and with HEAD. */
  settle(): Promise<void>;
  notify(files: string[]): void;
  status(): Promise<Record<string, unknown>>;
  stop(): void;
}

export class DaemonServer {
  private server: Server | undefined;

  constructor(private readonly deps: ServerDeps) {}

  /** Listens on the daemon's socket, made 0600 from the start (and its private folder 0700); returns its path. */
  async listen(paths: DaemonPaths): Promise<string> {
    checkSocketDir(paths, true);
    rmSync(paths.socket, { force: true });
    const server = (this.server = createServer((sock: Socket) => this.connection(sock)));
    const oldMask = process.umask(0o177);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(paths.socket, () => resolve());
      });
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
        // Refused as soon as it passes the limit: an error reply, and nothing more is read from
        // this caller (its connection closes shortly, once it could read the reply).
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
    let req: Request;
    try {
      req = parseRequest(line);
    } catch (err) {
      return { id: 0, error: errorToWire(err) };
    }
    if (req.method === 'cli') {
      // A caller with another fixed clock (BASS_AGENTS_NOW) must be answered as of its own "now".
      const why =
        (req.params.clock ?? null) !== this.deps.clock ? 'the caller runs on another fixed clock (BASS_AGENTS_NOW)' : this.declineCli(req.params as CliParams);
      if (why) return { id: req.id, declined: why };
    }
    try {
      // Background work waits while a caller's command is served (pings and status are not worth it).
      const serve = req.method === 'cli' || req.method === 'notify';
      return { id: req.id, result: serve ? await this.deps.engine.serve(() => this.dispatch(req)) : await this.dispatch(req) };
    } catch (err) {
      if (!(err instanceof Error && 'exitCode' in err)) this.deps.log.error({ event: 'error', where: `request ${req.method}`, err: (err as Error)?.message });
      return { id: req.id, error: errorToWire(err) };
    }
  }

  private async dispatch(req: Request): Promise<Methods[keyof Methods]['result']> {
    switch (req.method) {
      case 'ping':
        return { pid: process.pid };
      case 'status':
        return this.deps.status();
      case 'notify': {
        const p = req.params as Request<'notify'>['params'];
        await this.deps.settle();
        this.deps.notify(Array.isArray(p.files) ? p.files.map(String) : []);
        return { ok: true };
      }
      case 'cli': {
        const p = req.params as CliParams;
        await this.deps.settle(); // the command reads the catalog the watcher keeps: with every change seen so far
        const command = p.argv[1] ?? null;
        const end = command === 'query' ? this.deps.metrics.queryDuration.startTimer() : undefined;
        const t0 = performance.now();
        const r = await this.deps.runner(p, this.deps.engine);
        end?.();
        this.deps.log.info({ event: 'cli_run', command, exit: r.exitCode, ms: Math.round(performance.now() - t0) }, 'ran a command line for a caller');
        return r;
      }
      case 'stop':
        setImmediate(() => this.deps.stop());
        return { stopping: true };
    }
  }

  /** Why a command line is not for this daemon (another workspace, or not a command line); null when it is. */
  private declineCli(p: CliParams): string | null {
    if (!p || !Array.isArray(p.argv) || !p.argv.every((a) => typeof a === 'string') || typeof p.cwd !== 'string' || typeof p.root !== 'string') {
      return 'not a command line';
    }
    if (p.env === null || typeof p.env !== 'object' || Object.values(p.env).some((v) => typeof v !== 'string')) return 'not a command line';
    try {
      return realpathSync(p.root) === realpathSync(this.deps.engine.ws.root) ? null : 'another workspace';
    } catch {
      return 'another workspace';
    }
  }
}

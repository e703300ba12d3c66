/**
 * The daemon's socket server: one JSON request per line (see protocol.ts), each answered with
 * the same service code as the direct path. Writes handed over by CLI callers go through a
 * queue: the writes that arrive while one transaction runs are committed together in the next
 * (group commit), per project, each caller still getting its own result or error.
 */
import type { AsyncLocalStorage } from 'node:async_hooks';
import { realpathSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { MemoryError, UsageError } from '../core/errors.js';
import type { MemoryService } from '../service/memory-service.js';
import type { ApplyOptions, ApplyResult } from '../service/ops/apply.js';
import { parseAgentResult } from '../service/ops/apply.js';
import {
  CLOCKED,
  MAX_MESSAGE_BYTES,
  errorFromWire,
  errorToWire,
  parseRequest,
  type CliParams,
  type Method,
  type Methods,
  type Reply,
  type Request,
  type WriteMethod,
  type WriteParams,
} from './protocol.js';
import { LineReader } from './framing.js';
import type { DaemonMetrics } from './status.js';

export interface ServerDeps {
  svc: MemoryService;
  log: Logger;
  metrics: DaemonMetrics;
  /** The daemon's own fixed clock (BASS_AGENTS_NOW), if any: callers on another are declined. */
  clock: string | null;
  /** Warnings of a write done for a caller go back to that caller. */
  callerWarnings: AsyncLocalStorage<string[]>;
  /** Brings the catalog and index up to date with what the watcher saw and with HEAD. */
  settle(): Promise<void>;
  notify(files: string[]): void;
  status(): Promise<Record<string, unknown>>;
  stop(): void;
}

interface QueuedWrite {
  method: WriteMethod;
  params: WriteParams;
  resolve: (r: Methods[WriteMethod]['result']) => void;
  reject: (err: unknown) => void;
}

export class DaemonServer {
  private server: Server | undefined;
  private readonly queue: QueuedWrite[] = [];
  private draining = false;

  constructor(private readonly deps: ServerDeps) {}

  listen(socket: string): Promise<void> {
    this.server = createServer((sock: Socket) => this.connection(sock));
    return new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(socket, () => resolve());
    });
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
    // A caller with another fixed clock (BASS_AGENTS_NOW) must be answered as of its own "now".
    if (CLOCKED.has(req.method) && (req.params.clock ?? null) !== this.deps.clock)
      return { id: req.id, declined: 'the caller runs on another fixed clock (BASS_AGENTS_NOW)' };
    if (req.method === 'cli') {
      const why = this.declineCli(req.params as CliParams);
      if (why) return { id: req.id, declined: why };
    }
    try {
      return { id: req.id, result: await this.dispatch(req) };
    } catch (err) {
      if (!(err instanceof Error && 'exitCode' in err)) this.deps.log.error({ event: 'error', where: `request ${req.method}`, err: (err as Error)?.message });
      return { id: req.id, error: errorToWire(err) };
    }
  }

  private async dispatch(req: Request): Promise<Methods[keyof Methods]['result']> {
    const { svc } = this.deps;
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
      case 'query': {
        const p = req.params as Request<'query'>['params'];
        await this.deps.settle(); // answer with every change the watcher and HEAD have seen
        const end = this.deps.metrics.queryDuration.startTimer();
        const text = String(p.text ?? '');
        // The query's vector first (the model runs in a worker thread; lexical only while it loads).
        const semantic = await svc.semanticFor(text).catch(() => undefined);
        // The watcher and reconcile keep the catalog current: no per-query stat of every file.
        const r = svc.query(text, p.filters ?? {}, { ...(p.options ?? {}), refresh: false, semantic });
        end();
        return r;
      }
      case 'prepareTask': {
        const p = req.params as Request<'prepareTask'>['params'];
        await this.deps.settle();
        return svc.prepareTask(p.task, { ...(p.options ?? {}), refresh: false });
      }
      case 'create':
      case 'apply':
      case 'applyResult':
        return this.enqueue(req.method, req.params as WriteParams);
      case 'cli': {
        // Loaded on the first command line: the CLI's command tree is not needed before.
        const { runCaptured } = await import('../cli/remote.js');
        const p = req.params as CliParams;
        await this.deps.settle(); // the command reads the catalog the watcher keeps: with every change seen so far
        const t0 = performance.now();
        const r = await runCaptured(p, (method, params) => this.local(method, params));
        this.deps.log.info(
          { event: 'cli_run', command: p.argv[1] ?? null, exit: r.exitCode, ms: Math.round(performance.now() - t0) },
          'ran a command line for a caller',
        );
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
      return realpathSync(p.root) === realpathSync(this.deps.svc.ws.root) ? null : 'another workspace';
    } catch {
      return 'another workspace';
    }
  }

  /** A request of a command line this daemon runs itself: answered as over the socket, minus the socket. */
  private async local<M extends Method>(method: M, params: Request<M>['params']): Promise<{ result: Methods[M]['result'] } | { error: MemoryError }> {
    try {
      return { result: await this.dispatch({ id: 0, method, params }) };
    } catch (err) {
      if (!(err instanceof MemoryError)) this.deps.log.error({ event: 'error', where: `request ${method}`, err: (err as Error)?.message });
      return { error: err instanceof MemoryError ? err : errorFromWire(errorToWire(err)) };
    }
  }

  private enqueue(method: WriteMethod, params: WriteParams): Promise<Methods[WriteMethod]['result']> {
    return new Promise((resolve, reject) => {
      this.queue.push({ method, params, resolve, reject });
      if (!this.draining) void this.drain();
    });
  }

  /** Commits what is queued, a group per project and agent, until the queue is empty. */
  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length) {
        // Let the writes that are arriving right now join this group.
        await new Promise((r) => setImmediate(r));
        const batch = this.queue.splice(0, this.queue.length);
        await this.deps.settle();
        const groups = new Map<string, { w: QueuedWrite; batch: { updates: unknown; opts: ApplyOptions } }[]>();
        for (const w of batch) {
          try {
            const b = await this.toBatch(w);
            // One commit per project: each writer's changes keep their own agent inside it.
            const key = this.deps.svc.project(b.opts.project);
            groups.set(key, [...(groups.get(key) ?? []), { w, batch: b }]);
          } catch (err) {
            w.reject(err);
          }
        }
        for (const group of groups.values()) await this.commitGroup(group);
      }
    } finally {
      this.draining = false;
    }
  }

  private async commitGroup(group: { w: QueuedWrite; batch: { updates: unknown; opts: ApplyOptions } }[]): Promise<void> {
    const { svc, callerWarnings, log, metrics } = this.deps;
    const warnings: string[] = [];
    const results = await callerWarnings.run(warnings, () => svc.applyGroup(group.map((g) => g.batch))).catch((err: Error) => group.map(() => err));
    metrics.groupCommits.observe(group.length);
    group.forEach(({ w }, k) => {
      const r = results[k];
      if (r instanceof Error) return w.reject(r);
      log.info({ event: 'caller_write', method: w.method, project: r.project, applied: r.applied.length, group: group.length }, 'write done for a CLI caller');
      try {
        w.resolve({ value: w.method === 'create' ? this.created(r) : r, warnings } as Methods[WriteMethod]['result']);
      } catch (err) {
        w.reject(err);
      }
    });
  }

  /**
   * The updates a queued write stands for, with the caller's project and agent (never this
   * daemon's own --agent or environment; an AgentResult's own project and agent are honoured).
   */
  private async toBatch(w: QueuedWrite): Promise<{ updates: unknown; opts: ApplyOptions }> {
    const agent = typeof w.params.agent === 'string' ? w.params.agent : undefined;
    const opts: ApplyOptions = { project: w.params.project, ...(agent ? { agent } : { ignoreOwnAgent: true }) };
    if (w.method === 'create')
      return { updates: [{ operation: 'create', entry: unwrapCreate(w.params.input) }], opts: { ...opts, atomic: true, label: 'entry' } };
    if (w.method === 'apply') return { updates: w.params.input, opts };
    const r = parseAgentResult(w.params.input);
    const own = r.agent_id ?? r.agent ?? undefined;
    return {
      updates: r.memory_updates ?? [],
      opts: { ...opts, project: opts.project ?? r.project, ...(!agent && own ? { agent: own, ignoreOwnAgent: false } : {}) },
    };
  }

  private created(r: ApplyResult): Methods['create']['result']['value'] {
    const id = r.applied[0].id;
    return { entry: this.deps.svc.locate(id, r.project).entry, commit: r.commit, project: r.project };
  }
}

/** `memory create` takes an entry or a whole create update. */
function unwrapCreate(input: unknown): unknown {
  if (input && typeof input === 'object' && !Array.isArray(input) && 'operation' in input) {
    const op = input.operation;
    if (op !== 'create') throw new UsageError(`memory create takes an entry or a create update, not operation ${JSON.stringify(op)}; use memory apply`);
    return (input as { entry?: unknown }).entry;
  }
  return input;
}

/** The daemon, one per workspace: a warm catalog and index, clients' command lines on its one engine, jobs, status (docs/daemon.md). */
import { constants, linkSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { BusyError } from '../core/errors.js';
import { entryPath } from '../store/catalog.js';
import { writeFileAtomic } from '../store/fsutil.js';
import { GIT_ENV_FILE, gitWriterEnv } from '../store/git-env.js';
import { openNoFollow, readNoFollow } from '../store/state-dir.js';
import { Caller } from '../service/caller.js';
import { Engine } from '../service/engine.js';
import { semanticStatus } from '../service/semantic.js';
import { MAX_SOCKET_PATH, daemonPaths, isAlive, readPid, type DaemonPaths } from './client.js';
import { Jobs } from './jobs.js';
import type { Runner } from './protocol.js';
import { DaemonServer } from './server.js';
import { DaemonStatus, createMetrics, serveMetrics, type DaemonMetrics } from './status.js';
import { DaemonWatcher } from './watcher.js';

/** `daemon run`'s options: intervals in ms, by option name (heartbeat: status.json and the scheduler tick). */
export interface DaemonOptions {
  runner: Runner;
  root: string;
  metricsPort?: number;
  intervals: Partial<Record<'heartbeat' | 'reconcile' | 'freshness' | 'evidence', number>>;
}

/** Watcher events within this many ms make one batch. */
const DEBOUNCE_MS = 40;

/** Jobs wait at most this long for a first start's pass computing vectors. */
const SEMANTIC_FIRST_MS = 60_000;

/** Command-line queries a new daemon runs for itself once its socket is open and it has vectors (waited for at most 2 s), each after callers' requests: a process's first twenty-odd queries run cold code, at two to four times a warm query's cost. */
const WARM_QUERIES = 30;

/** The daemon's background commits wait until nobody has moved HEAD for this long. */
const GIT_QUIET_MS = 3000;

const alreadyRunning = (pid: number): BusyError => new BusyError(`a daemon is already running for this workspace (pid ${pid})`);

/** Takes the pid file, written whole and linked into place; a dead owner's goes under a small lock, re-read there (two starts never both remove it). */
function takePidFile(paths: DaemonPaths): void {
  const mine = `${paths.pid}.${process.pid}`;
  writeFileSync(mine, `${process.pid}\n`, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        linkSync(mine, paths.pid);
        recordGitEnv(paths);
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const pid = readPid(paths.pid);
      if (pid !== null && pid !== process.pid && isAlive(pid)) throw alreadyRunning(pid);
      const lock = `${paths.pid}.takeover`;
      try {
        mkdirSync(lock);
      } catch {
        // Another start is taking it over (or died doing so long ago): wait.
        if (Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 5000) rmSync(lock, { recursive: true, force: true });
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
        continue;
      }
      try {
        if (readPid(paths.pid) === pid) rmSync(paths.pid, { force: true }); // still the dead one's
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(mine, { force: true });
  }
  throw alreadyRunning(readPid(paths.pid) ?? -1);
}

/** What callers compare their git identities and extra config with (see daemonMayWrite): a digest, never the values. */
function recordGitEnv(paths: DaemonPaths): void {
  const file = join(paths.dir, GIT_ENV_FILE);
  const digest = gitWriterEnv();
  if (!digest) return rmSync(file, { force: true });
  writeFileAtomic(file, `${digest}\n`, { mode: 0o600, fsync: false, dirExists: true }); // a rename replaces a planted link, never writes through it
}

export async function runDaemon(opts: DaemonOptions): Promise<void> {
  const [{ pino }, prom] = await Promise.all([import('pino'), import('prom-client')]);
  const daemon = new Daemon(opts, pino, prom);
  await daemon.watch();
  daemon.start();
  await daemon.listen();
  void daemon.warm().catch(() => undefined); // warming only saves time: a failure costs none of the service
  await daemon.serve();
}

export class Daemon {
  readonly engine: Engine;
  /** The daemon's own jobs' caller (warnings to its log); each client's command line has its own. */
  readonly own: Caller;
  readonly paths: DaemonPaths;
  readonly log: Logger;
  readonly metrics: DaemonMetrics;
  readonly status: DaemonStatus;
  private watcher!: DaemonWatcher;
  private jobs!: Jobs;
  private server!: DaemonServer;
  private http: HttpServer | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private compactTimer: NodeJS.Timeout | undefined;
  private readonly seenBad = new Set<string>();
  private stopping = false;
  private exited: () => void = () => undefined;
  private readonly done = new Promise<void>((resolve) => (this.exited = resolve));

  constructor(
    private readonly opts: DaemonOptions,
    pino: typeof import('pino').pino,
    prom: typeof import('prom-client'),
  ) {
    this.engine = new Engine({
      root: opts.root,
      longLived: true,
      watched: true,
      onWrite: async (files, caller) => this.wrote(files, caller),
      onCommit: (commit, parent, files) => this.watcher.ownCommit(commit, parent, files),
    });
    const ws = this.engine.ws;
    this.paths = daemonPaths(ws.localDir);
    ws.ensureLocal({ force: true });
    ws.local('daemon', true);
    takePidFile(this.paths);
    ws.local('logs', true);
    const logFd = openNoFollow(this.paths.log, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT);
    this.log = pino({ base: { pid: process.pid } }, pino.destination({ dest: logFd, sync: true }));
    this.own = new Caller({ warn: (m) => this.log.warn({ event: 'warning' }, m) });
    this.metrics = createMetrics(prom);
    this.status = new DaemonStatus(this.paths, this.log, ws.root, opts.intervals.heartbeat ?? 2000);
  }

  /** Brings catalog and index up to date; `reported` names what the watcher saw (drift is the rest). */
  private refresh(reason: 'start' | 'batch' | 'reconcile' | 'notify', reported?: Set<string>): void {
    const { status, metrics, log } = this;
    const t0 = performance.now();
    // The index is saved at stop, and at a reconcile only when further behind than a query patches up (a save holds the daemon).
    // A batch re-reads its files, unless one is not an entry file (a folder came or went).
    const batch = reason === 'batch' || reason === 'notify';
    const only = batch && reported && [...reported].every((f) => entryPath(f) !== null) ? [...reported] : undefined;
    const r = this.engine.rm.refresh({ saveIndex: batch ? false : 'drifted', paths: only });
    if (!only) status.full_refreshes++;
    const changed = [...r.changed, ...r.removed];
    status.files_on_disk = r.files;
    status.entries_indexed = r.indexed;
    status.bad_files = r.snap.bad.length;
    metrics.indexEntries.set(r.indexed);
    for (const b of r.snap.bad) {
      const key = `${b.file}\u0000${b.problems.map((p) => p.message).join(';')}`;
      if (this.seenBad.has(key)) continue;
      this.seenBad.add(key);
      metrics.parseErrors.inc();
      log.warn({ event: 'bad_file', file: b.file, problems: b.problems }, `skipping ${b.file}`);
    }
    if (reason === 'reconcile' || reason === 'start') {
      status.last_reconcile_at = new Date().toISOString();
      status.reconciles++;
      const missed = reason === 'reconcile' ? changed.filter((f) => !reported?.has(f)) : [];
      if (missed.length) {
        status.drift_fixed += missed.length;
        metrics.driftFixed.inc(missed.length);
        log.warn({ event: 'drift_fixed', files: missed.slice(0, 20), count: missed.length }, 'reconcile found changes the watcher missed');
      }
    }
    if (changed.length) this.jobs.scheduleContext(changed, r.snap);
    if (changed.length || reason === 'start') void this.engine.indexSemantic(); // vectors, in the background
    if (batch) this.scheduleCompaction();
    status.last_batch_ms = Math.round((performance.now() - t0) * 100) / 100;
    log.debug({ event: 'refresh', reason, changed: changed.length, ms: status.last_batch_ms });
  }

  /** Index compaction, once writes have been quiet for a second. */
  private scheduleCompaction(): void {
    if (this.compactTimer) clearTimeout(this.compactTimer);
    this.compactTimer = setTimeout(() => {
      this.compactTimer = undefined;
      void this.status.attempt('index compaction', () => this.engine.rm.compactIndex());
    }, 1000);
    this.compactTimer.unref();
  }

  /** A caller's write is searchable before the reply (other files and the daemon's own writes come through the watcher). */
  private wrote(files: string[], caller: Caller): void {
    if (caller === this.own) return;
    const entryFiles = files.map((f) => this.engine.ws.rel(f)).filter((f) => entryPath(f) !== null);
    if (!entryFiles.length) return;
    this.watcher.flush();
    this.refresh('notify', new Set(entryFiles));
  }

  async watch(): Promise<void> {
    const { engine, status, metrics, log, opts } = this;
    this.watcher = new DaemonWatcher(engine.ws, await engine.git(), DEBOUNCE_MS, {
      onBatch: (batch) => {
        this.refresh('batch', batch);
        status.batches++;
        status.head_moves = this.watcher.headMoves;
      },
      onEvent: (kind, file) => {
        status.watch_events++;
        metrics.watchEvents.inc();
        log.trace({ event: 'watch', kind, file });
      },
      onError: (where, err) => {
        if (where === 'watcher') status.watcher_errors++;
        status.recordError(where, err);
      },
    });
    this.jobs = new Jobs(this, {
      freshnessMs: opts.intervals.freshness ?? 60 * 60_000,
      evidenceMs: opts.intervals.evidence ?? 24 * 60 * 60_000,
      gitBusy: () => performance.now() - this.watcher.lastHeadMoveAt < GIT_QUIET_MS,
      before: async () => engine.semantic?.settled(SEMANTIC_FIRST_MS),
      afterWrite: () => this.refresh('batch'),
    });
    await this.watcher.start();
  }

  async listen(): Promise<void> {
    const { engine, log, metrics, paths, status, opts } = this;
    engine.onGroup = (group) => {
      metrics.groupCommits.observe(group.length);
      for (const { batch, result: r } of group) {
        if (r instanceof Error || batch.caller === this.own) continue;
        log.info(
          { event: 'caller_write', label: batch.opts.label ?? 'apply', project: r.project, applied: r.applied.length, group: group.length },
          'write done for a caller',
        );
      }
    };
    const settle = async (): Promise<void> => {
      await this.watcher.checkHead();
      this.watcher.flush();
    };
    this.server = new DaemonServer({
      log,
      root: engine.ws.root,
      clock: engine.env.BASS_AGENTS_NOW || null,
      handlers: {
        ping: async () => ({ pid: process.pid }),
        status: async () => {
          const m = process.memoryUsage();
          return {
            ...(JSON.parse(readNoFollow(paths.status, 'utf8')) as Record<string, unknown>),
            semantic: semanticStatus(engine) ?? status.semantic,
            rss_bytes: m.rss,
            heap_used_bytes: m.heapUsed,
            heap_total_bytes: m.heapTotal,
            array_buffers_bytes: m.arrayBuffers,
            metrics: await metrics.registry.getMetricsAsJSON(),
          };
        },
        notify: (p) =>
          engine.serve(async () => {
            await settle();
            this.refresh('notify', new Set((Array.isArray(p.files) ? p.files.map(String) : []).map((f) => engine.ws.rel(f))));
            return { ok: true };
          }),
        cli: (p) =>
          engine.serve(async () => {
            await settle(); // every change seen so far
            const command = p.argv[1] ?? null;
            const end = command === 'query' ? metrics.queryDuration.startTimer() : undefined;
            const t0 = performance.now();
            const r = await opts.runner(p, engine);
            end?.();
            log.info({ event: 'cli_run', command, exit: r.exitCode, ms: Math.round(performance.now() - t0) }, 'ran a command line for a caller');
            return r;
          }),
      },
    });
    if (Buffer.byteLength(paths.socket) > MAX_SOCKET_PATH)
      log.warn({ event: 'no_socket', path: paths.socket }, 'socket path too long for this OS; command lines run in their own process');
    else status.socket = (await status.attempt('socket', () => this.server.listen(paths))) ?? null;
    if (opts.metricsPort !== undefined) {
      this.http = await serveMetrics(metrics.registry, opts.metricsPort);
      const addr = this.http.address();
      status.metricsPort = typeof addr === 'object' && addr ? addr.port : null;
    }
  }

  /** Reconciles and starts semantic search. */
  start(): void {
    const { engine, log, status } = this;
    this.refresh('start', new Set());
    engine.startSemantic(
      (model) => log.info({ event: 'semantic', model }, model ? 'semantic search on' : 'semantic search off: the model packages are not installed'),
      (err) => status.recordError('semantic', err),
    );
  }

  /** After the socket opens: warms the query code with queries of its own (recorded nowhere), each after callers' requests in flight. */
  async warm(): Promise<void> {
    const { engine } = this;
    const semantic = engine.semantic;
    const entries = engine.rm.current?.entries ?? [];
    const end = Date.now() + 2000;
    while (entries.length && semantic?.status().vector_bytes === 0 && ['loading', 'ready', 'indexing'].includes(semantic.state) && Date.now() < end)
      await new Promise((r) => setTimeout(r, 10));
    // The first words of entries spread over the catalog: texts with hits, as callers' have.
    for (let k = 1; k <= WARM_QUERIES && entries.length; k++) {
      await new Promise((r) => setImmediate(r)); // a request that came in meanwhile is read first
      await engine.quiet();
      try {
        const text = entries[Math.floor((entries.length * k) / (WARM_QUERIES + 1))]!.readOnce().summary.split(/\s+/).slice(0, 3).join(' ');
        // The callers' whole route (command line, query, output), recording nothing.
        const root = engine.ws.root;
        await this.opts.runner({ argv: ['memory', 'query', text, '--json'], cwd: root, root, env: {}, stdin: null, record: false }, engine);
      } catch {
        /* a file gone bad since: the next */
      }
    }
    this.log.info({ event: 'warmed' });
  }

  /** Catches up on missed jobs; then serves until a stop. */
  serve(): Promise<void> {
    const { engine, log, status, watcher, jobs } = this;
    const semantic = engine.semantic;
    status.semantic = semantic?.status() ?? { enabled: false, state: 'off', model: null, entries: 0, vectors_current: 0, vector_bytes: 0 };
    log.info({
      event: 'started',
      root: engine.ws.root,
      files: status.files_on_disk,
      indexed: status.entries_indexed,
      socket: Boolean(status.socket),
      metrics_port: status.metricsPort,
    });
    status.write();
    const heartbeat = (): void => {
      if (semantic) status.semantic = semantic.status();
      status.write();
      jobs.tick();
    };
    const reconcile = (): Promise<unknown> =>
      status.attempt('reconcile', () => {
        watcher.watchSections(); // a folder replaced or added without an event
        watcher.flush();
        this.refresh('reconcile', new Set());
      });
    this.timers.push(
      setInterval(() => this.stopping || heartbeat(), this.status.heartbeatMs),
      setInterval(() => this.stopping || void reconcile(), this.opts.intervals.reconcile ?? 5 * 60_000),
    );
    jobs.tick(); // catch up on jobs missed while the daemon was down
    // `on`, not `once`: proper-lockfile's signal-exit re-raises a signal no one else listens to, killing a graceful shutdown.
    process.on('SIGTERM', () => void this.shutdown('SIGTERM'));
    process.on('SIGINT', () => void this.shutdown('SIGINT'));
    return this.done;
  }

  /** The running job finishes its batch; vectors, index snapshot and job cursor are saved; socket and pid file go. */
  private async shutdown(why: string): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const { engine, log, status, paths } = this;
    log.info({ event: 'stopping', why });
    for (const t of this.timers) clearInterval(t);
    if (this.compactTimer) clearTimeout(this.compactTimer);
    this.server.close();
    this.http?.close();
    await this.jobs.stop();
    await status.attempt('semantic', () => engine.semantic?.close());
    // What one-shot commands load while no daemon runs (after a kill -9, the next start re-syncs from file stamps).
    await status.attempt('index save', () => engine.rm.flushIndex());
    await this.watcher.close();
    rmSync(paths.socket, { force: true });
    status.write({ stopped_at: new Date().toISOString() });
    rmSync(paths.pid, { force: true });
    log.info({ event: 'stopped', why });
    this.exited();
  }
}

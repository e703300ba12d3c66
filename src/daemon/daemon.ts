/**
 * The daemon (`memory daemon run`): one per workspace. It keeps the catalog and the whole text
 * index warm, follows `ai-memory/` and git's HEAD (watcher.ts), never trusts the watcher alone (a
 * full reconcile at start and on an interval, counting the drift it fixes), runs thin clients'
 * command lines over a 0600 Unix socket (server.ts, protocol.ts) with the runner the CLI hands
 * it, against its one engine (whose write queue group-commits their writes), runs scheduled jobs
 * (jobs.ts) with catch-up after downtime, reports its status (status.ts), and shuts down
 * gracefully: the current batch finishes, the job cursor is saved, and the next start resumes.
 *
 * Files under `daemon/` of the workspace's local state folder (store/state-dir.ts): `daemon.pid`
 * (taken with O_EXCL; a dead owner's file is taken over, so a kill -9 never blocks the next
 * start), `daemon.sock` (or a short path in a private folder, see daemonPaths), `status.json`
 * (heartbeat), `state.json` (job runs and cursors). Logs: `logs/daemon.log` (pino, JSON lines).
 */
import { chmodSync, closeSync, constants, linkSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { MemoryError } from '../core/errors.js';
import { entryPath } from '../store/catalog.js';
import { GIT_ENV_FILE, gitWriterEnv } from '../store/git-env.js';
import { Caller } from '../service/caller.js';
import { Engine } from '../service/engine.js';
import { semanticStatus } from '../service/semantic.js';
import { openNoFollow, readNoFollow } from '../store/state-dir.js';
import { MAX_SOCKET_PATH, checkSocketDir, daemonPaths, isAlive, type DaemonPaths } from './client.js';
import { Jobs } from './jobs.js';
import type { Runner } from './protocol.js';
import { DaemonServer } from './server.js';
import { DaemonStatus, createMetrics } from './status.js';
import { DaemonWatcher } from './watcher.js';

export interface DaemonOptions {
  /** Runs a client's command line (the CLI's own main: cli/run.ts). */
  runner: Runner;
  root?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  metricsPort?: number;
  /** Milliseconds between heartbeats (status.json) and scheduler ticks. */
  heartbeatMs?: number;
  /** Milliseconds between full reconciles of files against the index. */
  reconcileMs?: number;
  /** Milliseconds between freshness checks. */
  freshnessMs?: number;
  /** Milliseconds between evidence validations. */
  evidenceMs?: number;
  /** Debounce of watcher events into one batch. */
  debounceMs?: number;
}

/** The daemon's background commits wait until nobody has moved HEAD for this long. */
const GIT_QUIET_MS = 3000;

class AlreadyRunning extends MemoryError {
  constructor(pid: number) {
    super('E_BUSY', `a daemon is already running for this workspace (pid ${pid})`, 4);
  }
}

/** Resident memory, and what of it the JavaScript heap and the buffers (the index's arrays) hold. */
function memoryFigures(): { rss_bytes: number; heap_used_bytes: number; heap_total_bytes: number; array_buffers_bytes: number } {
  const m = process.memoryUsage();
  return { rss_bytes: m.rss, heap_used_bytes: m.heapUsed, heap_total_bytes: m.heapTotal, array_buffers_bytes: m.arrayBuffers };
}

/** The pid in a pid file, or null (no file, or not a pid). */
function readPid(file: string): number | null {
  try {
    const pid = Number(readNoFollow(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Takes the pid file: written whole to a file of our own, then linked into place (a link fails
 * when the file exists, so no one ever reads it half written). A file whose process is gone is
 * removed under a small lock (a folder), re-read there first: two starts at once never both
 * remove it, and never remove a live daemon's file.
 */
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
      if (pid !== null && pid !== process.pid && isAlive(pid)) throw new AlreadyRunning(pid);
      const lock = `${paths.pid}.takeover`;
      try {
        mkdirSync(lock);
      } catch {
        // Another start is taking it over (or died doing so, long ago): wait a little.
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
  throw new AlreadyRunning(readPid(paths.pid) ?? -1);
}

/** What callers compare their git identities and extra config with (see daemonMayWrite): a digest, never the values. */
function recordGitEnv(paths: DaemonPaths): void {
  const file = join(paths.dir, GIT_ENV_FILE);
  const digest = gitWriterEnv();
  if (!digest) return rmSync(file, { force: true });
  const fd = openNoFollow(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC);
  try {
    writeFileSync(fd, `${digest}\n`);
  } finally {
    closeSync(fd);
  }
}

export async function runDaemon(opts: DaemonOptions): Promise<void> {
  const env = opts.env ?? process.env;
  const heartbeatMs = opts.heartbeatMs ?? 2000;
  const reconcileMs = opts.reconcileMs ?? 5 * 60_000;
  const { pino } = await import('pino');
  const prom = await import('prom-client');

  let logger: import('pino').Logger | undefined;
  let wrote: ((files: string[], caller: Caller) => void) | undefined;
  let committed: ((commit: string, parent: string | null, files: string[]) => void) | undefined;
  const engine = new Engine({
    root: opts.root,
    cwd: opts.cwd,
    env,
    longLived: true,
    watched: true,
    onWrite: async (files, caller) => wrote?.(files, caller),
    onCommit: (c, p, f) => committed?.(c, p, f),
  });
  // The daemon's own jobs write and warn as the daemon (its log); each client's command line has a caller of its own.
  const own = new Caller({ env, warn: (m) => logger?.warn({ event: 'warning' }, m) });
  const paths = daemonPaths(engine.ws.localDir, env);
  engine.ws.ensureLocal({ force: true });
  engine.ws.local('daemon', true);
  takePidFile(paths);
  engine.ws.local('logs', true);
  const logFd = openNoFollow(paths.log, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT);
  logger = pino({ base: { pid: process.pid } }, pino.destination({ dest: logFd, sync: true }));
  const log = logger;
  const metrics = createMetrics(prom);
  const status = new DaemonStatus(paths, log, engine.ws.root, heartbeatMs);

  // ---------------------------------------------------------------- refresh
  // The index compaction batches deferred runs once they have been quiet for a second.
  let compactTimer: NodeJS.Timeout | undefined;
  const scheduleCompaction = (): void => {
    if (compactTimer) clearTimeout(compactTimer);
    compactTimer = setTimeout(() => {
      compactTimer = undefined;
      try {
        engine.rm.compactIndex();
      } catch (err) {
        status.recordError('index compaction', err);
      }
    }, 1000);
    compactTimer.unref();
  };
  const seenBad = new Set<string>();
  let jobs: Jobs | undefined;
  /** Brings catalog and index up to date; `reported` names what the watcher saw (drift is the rest). */
  const refresh = (reason: 'start' | 'batch' | 'reconcile' | 'notify', reported?: Set<string>): void => {
    const t0 = performance.now();
    // The index snapshot on disk is saved when the daemon stops, and at start or a reconcile only
    // when it is further behind than a one-shot query patches up itself (a save holds the
    // daemon for the whole write). Batches re-read just their files, unless one is not an entry
    // file (a folder came or went).
    const batch = reason === 'batch' || reason === 'notify';
    const only = batch && reported && [...reported].every((f) => entryPath(f) !== null) ? [...reported] : undefined;
    const r = engine.rm.refresh({ saveIndex: batch ? false : 'drifted', paths: only });
    if (!only) status.full_refreshes++;
    const changed = [...r.changed, ...r.removed];
    status.files_on_disk = r.files;
    status.entries_indexed = r.indexed;
    status.bad_files = r.snap.bad.length;
    metrics.indexEntries.set(r.indexed);
    for (const b of r.snap.bad) {
      const key = `${b.file}\u0000${b.problems.map((p) => p.message).join(';')}`;
      if (seenBad.has(key)) continue;
      seenBad.add(key);
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
    if (changed.length) jobs?.scheduleContext(changed, r.snap);
    if (changed.length || reason === 'start') void engine.indexSemantic(); // new and changed entries get vectors, in the background
    if (batch) scheduleCompaction();
    status.last_batch_ms = Math.round((performance.now() - t0) * 100) / 100;
    log.debug({ event: 'refresh', reason, changed: changed.length, ms: status.last_batch_ms });
  };

  // ---------------------------------------------------------------- watcher, jobs
  const watcher = new DaemonWatcher(engine.ws, await engine.git(), opts.debounceMs ?? 40, {
    onBatch: (batch) => {
      refresh('batch', batch);
      status.batches++;
      status.head_moves = watcher.headMoves;
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
  jobs = new Jobs(
    engine,
    own,
    paths,
    log,
    status,
    metrics,
    {
      freshnessMs: opts.freshnessMs ?? 60 * 60_000,
      evidenceMs: opts.evidenceMs ?? 24 * 60 * 60_000,
      gitBusy: () => performance.now() - watcher.lastHeadMoveAt < GIT_QUIET_MS,
    },
    () => refresh('batch'),
  );
  /** Everything seen so far is in the index: pending watcher events, and a HEAD move. */
  const settle = async (): Promise<void> => {
    await watcher.checkHead();
    watcher.flush();
  };
  // A caller's write is searchable before the reply: its entry files are refreshed now. Other
  // files and the daemon's own jobs' writes come through the watcher.
  wrote = (files, caller) => {
    if (caller === own) return;
    const entryFiles = files.map((f) => engine.ws.rel(f)).filter((f) => entryPath(f) !== null);
    if (!entryFiles.length) return;
    watcher.flush();
    refresh('notify', new Set(entryFiles));
  };
  committed = (commit, parent, files) => watcher.ownCommit(commit, parent, files);
  await watcher.start();

  // ---------------------------------------------------------------- socket
  let stopping = false;
  engine.writes.onGroup = (group) => {
    metrics.groupCommits.observe(group.length);
    for (const { batch, result: r } of group) {
      if (r instanceof Error || batch.caller === own) continue;
      log.info(
        { event: 'caller_write', label: batch.opts.label ?? 'apply', project: r.project, applied: r.applied.length, group: group.length },
        'write done for a caller',
      );
    }
  };
  const server = new DaemonServer({
    engine,
    runner: opts.runner,
    log,
    metrics,
    clock: env.BASS_AGENTS_NOW || null,
    settle,
    notify: (files) => refresh('notify', new Set(files.map((f) => engine.ws.rel(f)))),
    status: async () => ({
      ...(JSON.parse(readNoFollow(paths.status, 'utf8')) as Record<string, unknown>),
      semantic: semanticStatus(engine) ?? status.semantic,
      ...memoryFigures(),
      metrics: await metrics.registry.getMetricsAsJSON(),
    }),
    stop: () => void shutdown('stop request'),
  });
  if (Buffer.byteLength(paths.socket) <= MAX_SOCKET_PATH) {
    let oldMask: number | undefined;
    try {
      checkSocketDir(paths, true);
      rmSync(paths.socket, { force: true });
      oldMask = process.umask(0o177);
      await server.listen(paths.socket);
      chmodSync(paths.socket, 0o600);
      status.socket = paths.socket;
    } catch (err) {
      status.recordError('socket', err);
    } finally {
      if (oldMask !== undefined) process.umask(oldMask);
    }
  } else {
    log.warn({ event: 'no_socket', path: paths.socket }, 'socket path too long for this OS; command lines run in their own process');
  }

  // ---------------------------------------------------------------- metrics endpoint (127.0.0.1 only)
  let http: HttpServer | undefined;
  if (opts.metricsPort !== undefined) {
    http = createHttpServer((req, res) => {
      if (req.url !== '/metrics') {
        res.writeHead(404).end('not found\n');
        return;
      }
      void metrics.registry.metrics().then((text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text));
    });
    await new Promise<void>((resolve, reject) => {
      http!.once('error', reject);
      http!.listen(opts.metricsPort, '127.0.0.1', () => resolve());
    });
    const addr = http.address();
    status.metricsPort = typeof addr === 'object' && addr ? addr.port : null;
  }

  // ---------------------------------------------------------------- start: reconcile, catch up, serve
  refresh('start', new Set());
  // Semantic search: the model loads in a worker thread while queries are answered lexically.
  const semantic = engine.startSemantic(
    (model) => log.info({ event: 'semantic', model }, model ? 'semantic search on' : 'semantic search off: the model packages are not installed'),
    (err) => status.recordError('semantic', err),
  );
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
  const heartbeat = setInterval(() => {
    if (stopping) return;
    if (semantic) status.semantic = semantic.status();
    status.write();
    jobs.tick();
  }, heartbeatMs);
  const reconcile = setInterval(() => {
    if (stopping) return;
    try {
      watcher.watchSections(); // a folder replaced or added without an event is watched from now on
      watcher.flush();
      refresh('reconcile', new Set());
    } catch (err) {
      status.recordError('reconcile', err);
    }
  }, reconcileMs);
  jobs.tick(); // catch up on jobs missed while the daemon was down

  // ---------------------------------------------------------------- shutdown
  let exited: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (exited = resolve));
  const shutdown = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ event: 'stopping', why });
    clearInterval(heartbeat);
    clearInterval(reconcile);
    if (compactTimer) clearTimeout(compactTimer);
    server.close();
    http?.close();
    await jobs.stop(); // the current batch finishes; its cursor is saved
    try {
      await engine.closeSemantic(); // the vectors computed so far are saved
    } catch (err) {
      status.recordError('semantic', err);
    }
    // The index snapshot, up to date with the files: what one-shot commands load while no daemon
    // runs (a kill -9 skips it, and the next start re-syncs from file stamps).
    try {
      engine.rm.flushIndex();
    } catch (err) {
      status.recordError('index save', err);
    }
    await watcher.close();
    rmSync(paths.socket, { force: true });
    status.write({ stopped_at: new Date().toISOString() });
    rmSync(paths.pid, { force: true });
    log.info({ event: 'stopped', why });
    exited();
  };
  // `on`, not `once`: proper-lockfile's signal-exit re-raises a signal nobody else listens to any
  // more, which would kill the process in the middle of a graceful shutdown.
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  await done;
}

/**
 * The daemon (`memory daemon run`): one per workspace. It keeps the catalog and the whole text
 * index warm, follows `ai-memory/` with chokidar (events debounced into batches; the index is
 * updated by id), never trusts the watcher alone (a full reconcile at start and on an interval,
 * counting the drift it fixes), answers queries over a 0600 Unix socket with the same service
 * code as the direct path, runs scheduled jobs (decay and forgetting, freshness, ai-context
 * regeneration) in batches with catch-up after downtime, and shuts down gracefully: the current
 * batch finishes, the job cursor is saved, and the next start resumes.
 *
 * Files under `.bass-agents/daemon/`: `daemon.pid` (taken with O_EXCL; a dead owner's file is
 * taken over, so a kill -9 never blocks the next start), `daemon.sock`, `status.json` (heartbeat),
 * `state.json` (job runs and cursors). Logs: `.bass-agents/logs/daemon.log` (pino, JSON lines).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync, chmodSync, watch as fsWatch, type FSWatcher as NodeFsWatcher } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import type { FSWatcher } from 'chokidar';
import { join } from 'node:path';
import { isContextWorthy } from '../core/context.js';
import { SECTIONS } from '../core/constants.js';
import { MemoryError } from '../core/errors.js';
import { intervalMs } from '../core/lifecycle.js';
import { entryPath, keyOfFile, type StoredEntry } from '../store/catalog.js';
import { writeFileAtomic } from '../store/fsutil.js';
import { MemoryService } from '../service/memory-service.js';
import { GLOBAL_PROJECT } from '../store/workspace.js';
import { MAX_SOCKET_PATH, daemonPaths, isAlive, type DaemonPaths } from './client.js';

export interface DaemonOptions {
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

interface JobState {
  last_run_at: string | null;
  /** decay: the last id an interrupted run finished, per project. */
  cursor?: Record<string, string>;
  runs: number;
  last_error?: string | null;
}

interface State {
  jobs: Record<'decay' | 'freshness' | 'context' | 'evidence', JobState>;
  /** decay: last completed run per project (decay intervals are per project). */
  decay_projects: Record<string, string>;
}

const emptyJob = (): JobState => ({ last_run_at: null, runs: 0 });

class AlreadyRunning extends MemoryError {
  constructor(pid: number) {
    super('E_BUSY', `a daemon is already running for this workspace (pid ${pid})`, 4);
  }
}

/** Takes the pid file with O_EXCL; a file left by a dead process is taken over. */
function takePidFile(paths: DaemonPaths): void {
  mkdirSync(paths.dir, { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(paths.pid, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(paths.pid, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) throw new AlreadyRunning(pid);
      rmSync(paths.pid, { force: true }); // stale: its owner is gone
    }
  }
  throw new AlreadyRunning(-1);
}

export async function runDaemon(opts: DaemonOptions = {}): Promise<void> {
  const env = opts.env ?? process.env;
  const heartbeatMs = opts.heartbeatMs ?? 2000;
  const reconcileMs = opts.reconcileMs ?? 5 * 60_000;
  const freshnessMs = opts.freshnessMs ?? 60 * 60_000;
  const evidenceMs = opts.evidenceMs ?? 24 * 60 * 60_000;
  const debounceMs = opts.debounceMs ?? 40;
  const { pino } = await import('pino');
  const prom = await import('prom-client');
  const { watch } = await import('chokidar');

  let logger: import('pino').Logger | undefined;
  // Warnings of a write done for a CLI caller go back to that caller (and to the log).
  const callerWarnings = new AsyncLocalStorage<string[]>();
  let wrote: ((files: string[]) => void) | undefined;
  const svc = new MemoryService(
    { root: opts.root, cwd: opts.cwd, env, longLived: true, watched: true, onWrite: async (files) => wrote?.(files) },
    (m) => {
      callerWarnings.getStore()?.push(m);
      logger?.warn({ event: 'warning' }, m);
    },
  );
  const paths = daemonPaths(svc.ws.localDir);
  takePidFile(paths);
  mkdirSync(svc.ws.localDir, { recursive: true });
  mkdirSync(paths.dir, { recursive: true });
  mkdirSync(`${svc.ws.localDir}/logs`, { recursive: true });
  logger = pino({ base: { pid: process.pid } }, pino.destination({ dest: paths.log, sync: true, mkdir: true }));
  const log = logger;
  const startedAt = new Date();

  // ---------------------------------------------------------------- metrics (000 "Decay metrics")
  const registry = new prom.Registry();
  const metrics = {
    forgotten: new prom.Counter({ name: 'forgotten_entries_total', help: 'Entries forgotten by decay (archived or deleted)', registers: [registry] }),
    decayDuration: new prom.Histogram({ name: 'decay_processing_duration_seconds', help: 'Duration of decay passes', buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers: [registry] }),
    indexEntries: new prom.Gauge({ name: 'index_entries', help: 'Entries in the text index', registers: [registry] }),
    queryDuration: new prom.Histogram({ name: 'query_duration_seconds', help: 'Queries answered by the daemon', buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1], registers: [registry] }),
    watchEvents: new prom.Counter({ name: 'watch_events_total', help: 'File events from the watcher', registers: [registry] }),
    parseErrors: new prom.Counter({ name: 'parse_errors_total', help: 'Entry files that failed to parse or validate (each new bad version once)', registers: [registry] }),
    driftFixed: new prom.Counter({ name: 'reconcile_drift_fixed_total', help: 'Changes found by reconcile that the watcher had not reported', registers: [registry] }),
  };

  // ---------------------------------------------------------------- state
  let state: State = { jobs: { decay: emptyJob(), freshness: emptyJob(), context: emptyJob(), evidence: emptyJob() }, decay_projects: {} };
  try {
    const saved = JSON.parse(readFileSync(paths.state, 'utf8')) as Partial<State>;
    state = { jobs: { ...state.jobs, ...saved.jobs }, decay_projects: saved.decay_projects ?? {} };
  } catch {
    /* first start */
  }
  const saveState = (): void => writeFileAtomic(paths.state, `${JSON.stringify(state, null, 2)}\n`, { fsync: true });

  const status = {
    files_on_disk: 0,
    entries_indexed: 0,
    bad_files: 0,
    last_reconcile_at: null as string | null,
    reconciles: 0,
    /** Refreshes that stat'ed every entry file (start, reconcile, a batch with a folder in it). */
    full_refreshes: 0,
    drift_fixed: 0,
    watch_events: 0,
    batches: 0,
    watcher_errors: 0,
    last_batch_ms: null as number | null,
    expiring_entries: [] as { id: string; project: string; state: string; valid_to: string | null }[],
    stale_evidence_entries: 0,
    recent_errors: [] as { time: string; where: string; message: string }[],
  };
  const recordError = (where: string, err: unknown): void => {
    const message = err instanceof Error ? err.message : String(err);
    status.recent_errors = [{ time: new Date().toISOString(), where, message }, ...status.recent_errors].slice(0, 20);
    log.error({ event: 'error', where, err: message });
  };
  const seenBad = new Set<string>();
  const writeStatus = (extra: Record<string, unknown> = {}): void => {
    const doc = {
      pid: process.pid,
      root: svc.ws.root,
      started_at: startedAt.toISOString(),
      uptime_s: Math.round((Date.now() - startedAt.getTime()) / 1000),
      heartbeat_at: new Date().toISOString(),
      heartbeat_ms: heartbeatMs,
      socket: socketOk ? paths.socket : null,
      metrics_port: metricsPort,
      ...status,
      jobs: state.jobs,
      ...extra,
    };
    try {
      writeFileAtomic(paths.status, `${JSON.stringify(doc, null, 2)}\n`, { fsync: false });
    } catch (err) {
      log.error({ event: 'status_write_failed', err: (err as Error).message });
    }
  };

  // ---------------------------------------------------------------- index refresh
  let lastSnap: ReturnType<MemoryService['refresh']>['snap'] | undefined;
  // The index vacuum a batch deferred runs once batches have been quiet for a second.
  let vacuumTimer: NodeJS.Timeout | undefined;
  const scheduleVacuum = (): void => {
    if (vacuumTimer) clearTimeout(vacuumTimer);
    vacuumTimer = setTimeout(() => {
      vacuumTimer = undefined;
      try {
        svc.vacuumIndex();
      } catch (err) {
        recordError('vacuum', err);
      }
    }, 1000);
    vacuumTimer.unref();
  };
  /** Brings catalog and index up to date; `drift` marks changes the watcher did not report. */
  const refresh = (reason: 'start' | 'batch' | 'reconcile' | 'notify', reported?: Set<string>): string[] => {
    const t0 = performance.now();
    // The index snapshot on disk is saved when it stops, and at start or a reconcile only when it is
    // further behind than a one-shot query patches up itself: a save holds the daemon for the
    // whole write (~12 s at 100K entries), which every reconcile after an edit used to do.
    // Batches re-read just their files, unless one is not an entry file (a folder came or went).
    const paths = (reason === 'batch' || reason === 'notify') && reported && [...reported].every((f) => entryPath(f) !== null) ? [...reported] : undefined;
    const r = svc.refresh({ saveIndex: reason !== 'batch' && reason !== 'notify' ? 'drifted' : false, paths });
    if (!paths) status.full_refreshes++;
    lastSnap = r.snap;
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
    if (changed.length) scheduleContext(changed);
    if (reason === 'batch' || reason === 'notify') scheduleVacuum();
    status.last_batch_ms = Math.round((performance.now() - t0) * 100) / 100;
    log.debug({ event: 'refresh', reason, changed: changed.length, ms: status.last_batch_ms });
    return changed;
  };

  // ai-context regeneration when context-worthy entries change (debounced per project).
  const contextDue = new Set<string>();
  let contextTimer: NodeJS.Timeout | undefined;
  const scheduleContext = (changedFiles: string[]): void => {
    const now = svc.now().getTime();
    // A watcher batch's snapshot names the entries its files touched; a full refresh is looked up whole.
    const touched = lastSnap?.touched;
    let byFile: Map<string, StoredEntry> | undefined;
    const entryOf = (f: string): StoredEntry | undefined => {
      if (touched) {
        const se = touched.get(keyOfFile(f));
        return se && se.file === f ? se : undefined;
      }
      byFile ??= new Map((lastSnap?.entries ?? []).map((x) => [x.file, x]));
      return byFile.get(f);
    };
    for (const f of changedFiles) {
      const project = f.split('/')[1];
      if (!project || project === GLOBAL_PROJECT || contextDue.has(project)) continue;
      const se = entryOf(f);
      // A removed or demoted entry may have been in the context: regenerate unless it clearly never was.
      if (!se || isContextWorthy(se.entry, now) || existsSync(`${svc.ws.contextDir}/${project}.md`)) contextDue.add(project);
    }
    if (contextDue.size && !contextTimer) {
      // Not in the async context of the caller whose write scheduled it (its warnings, its notify).
      contextTimer = callerWarnings.exit(() => setTimeout(() => {
        contextTimer = undefined;
        void runJob('context', async () => {
          for (const p of [...contextDue]) {
            contextDue.delete(p);
            if (!svc.ws.isInitialized(p)) continue;
            const r = await svc.syncContext(p);
            if (r.changed) log.info({ event: 'context_regenerated', project: p, commit: r.commit });
          }
        });
      }, 2000));
    }
  };

  // ---------------------------------------------------------------- jobs
  let stopping = false;
  let jobChain: Promise<void> = Promise.resolve();
  const runJob = (name: keyof State['jobs'], fn: () => Promise<void>): Promise<void> => {
    jobChain = jobChain.then(async () => {
      if (stopping && name !== 'context') return;
      const job = state.jobs[name];
      try {
        await fn();
        job.last_error = null;
      } catch (err) {
        job.last_error = (err as Error).message;
        recordError(`job ${name}`, err);
      }
      job.runs++;
      job.last_run_at = new Date().toISOString();
      saveState();
    });
    return jobChain;
  };

  const decayDue = (project: string): boolean => {
    const every = intervalMs(svc.decayConfig(project).interval) ?? 86_400_000;
    const last = state.decay_projects[project];
    return !last || svc.now().getTime() - Date.parse(last) >= every || Boolean(state.jobs.decay.cursor?.[project]);
  };

  const decayJob = async (): Promise<void> => {
    for (const project of svc.ws.listProjects()) {
      if (stopping) return;
      if (!svc.ws.isInitialized(project) || !decayDue(project)) continue;
      const cursor = state.jobs.decay.cursor ?? (state.jobs.decay.cursor = {});
      const end = metrics.decayDuration.startTimer();
      const r = await svc.decay(project, { apply: true, resumeAfter: cursor[project], onBatch: () => !stopping });
      end();
      metrics.forgotten.inc(r.forgotten);
      if (r.resume_after !== null) {
        cursor[project] = r.resume_after;
        log.info({ event: 'decay_interrupted', project, resume_after: r.resume_after });
      } else {
        delete cursor[project];
        state.decay_projects[project] = svc.now().toISOString();
      }
      log.info({ event: 'decay', project, analyzed: r.analyzed, forgotten: r.forgotten, ms: r.duration_ms, commit: r.commit });
      refresh('batch');
    }
  };

  const freshnessJob = async (): Promise<void> => {
    const items = svc.checkFreshness({ days: 7 });
    status.expiring_entries = items.slice(0, 50).map((i) => ({ id: i.id, project: i.project, state: i.state, valid_to: i.valid_to }));
    for (const i of items) log.info({ event: 'freshness', id: i.id, project: i.project, state: i.state, valid_to: i.valid_to, days: i.days });
  };

  const evidenceJob = async (): Promise<void> => {
    const r = await svc.validateEvidence(undefined, { timeoutMs: 5000 });
    status.stale_evidence_entries = r.entries.filter((e) => e.stale).length;
    log.info({ event: 'evidence', checked: r.checked, ok: r.ok, stale: r.stale, unknown: r.unknown });
  };

  const due = (job: JobState, every: number): boolean => !job.last_run_at || Date.now() - Date.parse(job.last_run_at) >= every;
  const tick = (): void => {
    if (stopping) return;
    writeStatus();
    if (svc.ws.listProjects().some((p) => svc.ws.isInitialized(p) && decayDue(p))) void runJob('decay', decayJob);
    if (due(state.jobs.freshness, freshnessMs)) void runJob('freshness', freshnessJob);
    if (due(state.jobs.evidence, evidenceMs)) void runJob('evidence', evidenceJob);
  };

  // ---------------------------------------------------------------- watcher
  const pending = new Set<string>();
  let batchTimer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    if (batchTimer) clearTimeout(batchTimer);
    batchTimer = undefined;
    if (pending.size === 0) return;
    const reported = new Set(pending);
    pending.clear();
    try {
      refresh('batch', reported);
      status.batches++;
    } catch (err) {
      recordError('batch', err);
    }
  };
  const memRoot = svc.ws.memoryDir;
  mkdirSync(memRoot, { recursive: true });
  const ignored = (p: string): boolean => /(^|[/\\])\.bass-agents([/\\]|$)/.test(p) || /\.lock([/\\]|$)/.test(p) || /(^|[/\\])\.[^/\\]*\.tmp$/.test(p);
  // chokidar watches the structure: projects, their sections and config files (depth 1). It is
  // not asked to watch inside section folders: on every new file it re-reads the whole folder and
  // lstats each entry (throttled to once a second), ~100 ms for a 3,300-file folder and seconds at
  // 100K entries, which made edit -> searchable slow in proportion to the store. Each section
  // folder gets an fs.watch instead, whose events name the file, re-read alone. Anything either
  // one misses (an overflowing inotify queue, a folder replaced under it) the periodic reconcile
  // finds, and reports as drift.
  // atomic: false: chokidar would otherwise hold events ~100 ms to pair unlink/add of editors'
  // atomic saves; our batches already absorb that, and every change is re-read from disk.
  const watcher: FSWatcher = watch(memRoot, { ignored, ignoreInitial: true, persistent: true, atomic: false, depth: 1 });
  const rel = (abs: string): string => svc.ws.rel(abs).split('\\').join('/');
  const sectionWatchers = new Map<string, NodeFsWatcher>();
  const onWatchEvent = (kind: string, relPath: string): void => {
    status.watch_events++;
    metrics.watchEvents.inc();
    pending.add(relPath);
    log.trace({ event: 'watch', kind, file: relPath });
    if (!batchTimer) batchTimer = setTimeout(flush, debounceMs);
  };
  /** Watches every section folder there is (new ones too), and stops watching those gone. */
  const watchSections = (): void => {
    const want = new Set<string>();
    for (const project of svc.ws.listProjects()) {
      for (const section of SECTIONS) {
        const dir = join(memRoot, project, section);
        if (!existsSync(dir)) continue;
        want.add(dir);
        if (sectionWatchers.has(dir)) continue;
        try {
          const w = fsWatch(dir, { persistent: false }, (kind, name) => {
            const file = name ? String(name) : '';
            // No name (some platforms): something changed in this folder; a full refresh finds it.
            if (!file) onWatchEvent(kind, rel(dir));
            else if (file.endsWith('.json') && !file.startsWith('.')) onWatchEvent(kind, rel(join(dir, file)));
          });
          w.on('error', (err) => {
            w.close();
            sectionWatchers.delete(dir);
            status.watcher_errors++;
            recordError('watcher', err);
            onWatchEvent('error', rel(dir)); // not an entry file: the next batch refreshes everything
          });
          sectionWatchers.set(dir, w);
        } catch (err) {
          recordError('watcher', err);
        }
      }
    }
    for (const [dir, w] of sectionWatchers) {
      if (want.has(dir)) continue;
      w.close();
      sectionWatchers.delete(dir);
    }
  };
  watchSections();
  // A write done for a CLI caller is in the catalog before the reply (jobs' writes come through the watcher).
  wrote = (files) => {
    // A caller's write is searchable before the reply: refresh its entry files now. Other files
    // (ai-context, a new project's config) and the daemon's own jobs' writes come through the
    // watcher, never a full refresh here (at 100K entries that stalls everything for ~1 s).
    if (!callerWarnings.getStore()) return;
    const entryFiles = files.map(rel).filter((f) => entryPath(f) !== null);
    if (!entryFiles.length) return;
    flush();
    refresh('notify', new Set(entryFiles));
  };
  watcher.on('all', (event, file) => {
    // A project or section folder came or went: watch what is there now.
    if (event === 'addDir' || event === 'unlinkDir') watchSections();
    onWatchEvent(event, rel(file));
  });
  watcher.on('error', (err) => {
    status.watcher_errors++;
    recordError('watcher', err);
  });
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));

  // ---------------------------------------------------------------- socket
  const reconcileReported = new Set<string>();
  let socketOk = false;
  const server: Server = createServer((sock: Socket) => {
    sock.setEncoding('utf8');
    let buf = '';
    sock.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        void handle(line).then((reply) => sock.write(`${JSON.stringify(reply)}\n`));
      }
    });
    sock.on('error', () => undefined);
  });
  const handle = async (line: string): Promise<Record<string, unknown>> => {
    let req: { id?: unknown; method?: string; params?: Record<string, unknown> };
    try {
      req = JSON.parse(line) as typeof req;
    } catch {
      return { error: { name: 'UsageError', code: 'E_USAGE', message: 'request is not JSON', problems: [], exitCode: 2 } };
    }
    const p = req.params ?? {};
    // A caller with another fixed clock (BASS_AGENTS_NOW) must be answered as of its own "now".
    const clocked = ['query', 'prepareTask', 'create', 'apply', 'applyResult'];
    if (clocked.includes(String(req.method)) && (p.clock ?? null) !== (env.BASS_AGENTS_NOW || null)) return { id: req.id, declined: 'the caller runs on another fixed clock (BASS_AGENTS_NOW)' };
    try {
      switch (req.method) {
        case 'ping':
          return { id: req.id, result: { pid: process.pid } };
        case 'status':
          return { id: req.id, result: { ...JSON.parse(readFileSync(paths.status, 'utf8')), metrics: await registry.getMetricsAsJSON() } };
        case 'notify': {
          flush();
          const files = Array.isArray(p.files) ? p.files.map((f) => rel(String(f))) : [];
          refresh('notify', new Set(files));
          return { id: req.id, result: { ok: true } };
        }
        case 'query': {
          flush(); // answer with every change the watcher has already seen
          const end = metrics.queryDuration.startTimer();
          // The watcher and reconcile keep the catalog current: no per-query stat of every file.
          const r = svc.query(String(p.text ?? ''), (p.filters ?? {}) as never, { ...(p.options ?? {}), refresh: false } as never);
          end();
          return { id: req.id, result: r };
        }
        case 'create':
        case 'apply':
        case 'applyResult': {
          // Writes for a CLI caller: the same service call it would make, with its project and
          // agent (never this daemon's own --agent or environment).
          flush();
          const warnings: string[] = [];
          const o = { project: typeof p.project === 'string' ? p.project : undefined, ...(typeof p.agent === 'string' ? { agent: p.agent } : { ignoreOwnAgent: true }) };
          const value = await callerWarnings.run(warnings, () =>
            req.method === 'create' ? svc.create(p.input, o) : req.method === 'apply' ? svc.apply(p.input, o) : svc.applyResult(p.input, o),
          );
          const applied = (value as { applied?: unknown[] }).applied?.length ?? 1;
          log.info({ event: 'caller_write', method: req.method, project: o.project ?? null, applied }, 'write done for a CLI caller');
          return { id: req.id, result: { value, warnings } };
        }
        case 'prepareTask':
          flush();
          return { id: req.id, result: svc.prepareTask(p.task, { ...(p.options ?? {}), refresh: false } as never) };
        case 'stop':
          setImmediate(() => void shutdown('stop request'));
          return { id: req.id, result: { stopping: true } };
        default:
          return { id: req.id, error: { name: 'UsageError', code: 'E_USAGE', message: `unknown method ${String(req.method)}`, problems: [], exitCode: 2 } };
      }
    } catch (err) {
      if (err instanceof MemoryError) return { id: req.id, error: { name: err.name, code: err.code, message: err.message, problems: err.problems, exitCode: err.exitCode } };
      recordError(`request ${String(req.method)}`, err);
      return { id: req.id, error: { name: 'Error', code: 'E_INTERNAL', message: (err as Error).message, problems: [], exitCode: 1 } };
    }
  };
  if (paths.socket.length <= MAX_SOCKET_PATH) {
    rmSync(paths.socket, { force: true });
    const oldMask = process.umask(0o177);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(paths.socket, () => resolve());
      });
      chmodSync(paths.socket, 0o600);
      socketOk = true;
    } catch (err) {
      recordError('socket', err);
    } finally {
      process.umask(oldMask);
    }
  } else {
    log.warn({ event: 'no_socket', path: paths.socket }, 'socket path too long for this OS; queries use the direct path');
  }

  // ---------------------------------------------------------------- metrics endpoint (127.0.0.1 only)
  let metricsPort: number | null = null;
  let http: HttpServer | undefined;
  if (opts.metricsPort !== undefined) {
    http = createHttpServer((req, res) => {
      if (req.url !== '/metrics') {
        res.writeHead(404).end('not found\n');
        return;
      }
      void registry.metrics().then((text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text));
    });
    await new Promise<void>((resolve, reject) => {
      http!.once('error', reject);
      http!.listen(opts.metricsPort, '127.0.0.1', () => resolve());
    });
    const addr = http.address();
    metricsPort = typeof addr === 'object' && addr ? addr.port : null;
  }

  // ---------------------------------------------------------------- start: reconcile, catch up, serve
  refresh('start', reconcileReported);
  log.info({ event: 'started', root: svc.ws.root, files: status.files_on_disk, indexed: status.entries_indexed, socket: socketOk, metrics_port: metricsPort });
  writeStatus();
  const heartbeat = setInterval(tick, heartbeatMs);
  const reconcile = setInterval(() => {
    if (stopping) return;
    try {
      watchSections(); // a folder replaced or added without an event is watched from now on
      flush();
      refresh('reconcile', new Set());
    } catch (err) {
      recordError('reconcile', err);
    }
  }, reconcileMs);
  tick(); // catch up on jobs missed while the daemon was down (000 "Decay on system startup")

  // ---------------------------------------------------------------- shutdown
  let exited: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (exited = resolve));
  const shutdown = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ event: 'stopping', why });
    clearInterval(heartbeat);
    clearInterval(reconcile);
    if (batchTimer) clearTimeout(batchTimer);
    if (contextTimer) clearTimeout(contextTimer);
    if (vacuumTimer) clearTimeout(vacuumTimer);
    server.close();
    http?.close();
    await jobChain.catch(() => undefined); // the current batch finishes; its cursor is saved
    saveState();
    // The index snapshot, up to date with the files (a batch may have been pending): what
    // one-shot commands load while no daemon runs (~1 s at 10K entries, ~12 s at 100K; a kill -9
    // skips it, and the next start re-syncs from file stamps).
    try {
      svc.flushIndex();
    } catch (err) {
      recordError('index save', err);
    }
    await watcher.close();
    for (const w of sectionWatchers.values()) w.close();
    rmSync(paths.socket, { force: true });
    writeStatus({ stopped_at: new Date().toISOString() });
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

/**
 * What the daemon reports: `status.json` (its heartbeat), metrics, recent errors. Liveness is wall
 * time, never the service clock: a fixed BASS_AGENTS_NOW must not make a daemon look stale.
 */
import { once } from 'node:events';
import { createServer, type Server as HttpServer } from 'node:http';
import type { Logger } from 'pino';
import type { Counter, Histogram, Registry } from 'prom-client';
import { writeFileAtomic } from '../store/fsutil.js';
import type { DaemonPaths } from './client.js';

export type DaemonMetrics = ReturnType<typeof createMetrics>;

export function createMetrics(prom: typeof import('prom-client')) {
  const registry = new prom.Registry();
  const counter = (name: string, help: string): Counter => new prom.Counter({ name, help, registers: [registry] });
  const histogram = (name: string, help: string, buckets: number[]): Histogram => new prom.Histogram({ name, help, buckets, registers: [registry] });
  return {
    registry,
    forgotten: counter('forgotten_entries_total', 'Entries forgotten by decay (archived or deleted)'),
    decayDuration: histogram('decay_processing_duration_seconds', 'Duration of decay passes', [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
    indexEntries: new prom.Gauge({ name: 'index_entries', help: 'Entries in the text index', registers: [registry] }),
    queryDuration: histogram('query_duration_seconds', 'Queries answered by the daemon', [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]),
    watchEvents: counter('watch_events_total', 'File events from the watcher'),
    parseErrors: counter('parse_errors_total', 'Entry files that failed to parse or validate (each new bad version once)'),
    driftFixed: counter('reconcile_drift_fixed_total', 'Changes found by reconcile that the watcher had not reported'),
    groupCommits: histogram('write_group_size', 'Caller writes committed together in one group commit', [1, 2, 4, 8, 16, 32]),
  };
}

/** The Prometheus endpoint (`/metrics`), on 127.0.0.1 only. */
export async function serveMetrics(registry: Registry, port: number): Promise<HttpServer> {
  const http = createServer((req, res) => {
    if (req.url !== '/metrics') return void res.writeHead(404).end('not found\n');
    void registry.metrics().then((text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text));
  });
  await once(http.listen(port, '127.0.0.1'), 'listening');
  return http;
}

export class DaemonStatus {
  files_on_disk = 0;
  entries_indexed = 0;
  bad_files = 0;
  last_reconcile_at: string | null = null;
  reconciles = 0;
  /** Refreshes that stat'ed every entry file. */
  full_refreshes = 0;
  drift_fixed = 0;
  watch_events = 0;
  batches = 0;
  watcher_errors = 0;
  head_moves = 0;
  last_batch_ms: number | null = null;
  expiring_entries: { id: string; project: string; state: string; valid_to: string | null }[] = [];
  stale_evidence_entries = 0;
  recent_errors: { time: string; where: string; message: string }[] = [];
  semantic: unknown = null;

  private readonly startedAt = new Date();
  socket: string | null = null;
  metricsPort: number | null = null;
  jobs: unknown = {};

  constructor(
    private readonly paths: DaemonPaths,
    private readonly log: Logger,
    private readonly root: string,
    readonly heartbeatMs: number,
  ) {}

  recordError(where: string, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    this.recent_errors = [{ time: new Date().toISOString(), where, message }, ...this.recent_errors].slice(0, 20);
    this.log.error({ event: 'error', where, err: message });
  }

  /** Runs `fn`; what it throws is recorded as an error at `where`, never raised. */
  async attempt<T>(where: string, fn: () => T | Promise<T>): Promise<T | undefined> {
    try {
      return await fn();
    } catch (err) {
      this.recordError(where, err);
      return undefined;
    }
  }

  write(extra: Record<string, unknown> = {}): void {
    const { paths: _p, log: _l, startedAt, root, heartbeatMs, socket, metricsPort, jobs, ...counters } = this;
    const doc = {
      pid: process.pid,
      root,
      started_at: startedAt.toISOString(),
      uptime_s: Math.round((Date.now() - startedAt.getTime()) / 1000),
      heartbeat_at: new Date().toISOString(),
      heartbeat_ms: heartbeatMs,
      socket,
      metrics_port: metricsPort,
      ...counters,
      jobs,
      ...extra,
    };
    try {
      writeFileAtomic(this.paths.status, `${JSON.stringify(doc, null, 2)}\n`, { fsync: false });
    } catch (err) {
      this.log.error({ event: 'status_write_failed', err: (err as Error).message });
    }
  }
}

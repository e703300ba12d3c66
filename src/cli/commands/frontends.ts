/**
 * The long-lived front ends, each loaded only for its command: `daemon start|stop|status|run`
 * (`run` in the foreground, `start` detached), `mcp` (stdio) with `mcp-call` (how an MCP server has
 * a daemon run a tool call: the call as JSON on stdin, the CallToolResult on stdout), and `dashboard`.
 */
import { constants } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../../core/errors.js';
import { intervalMs } from '../../core/lifecycle.js';
import { DAEMON_NODE_FLAGS, daemonEnv, daemonPaths, isAlive, readStatus, request, runningPid } from '../../daemon/client.js';
import { openNoFollow } from '../../store/state-dir.js';
import type { ToolCall } from '../../mcp/calls.js';
import { JSON_FILE, type Command } from '../io.js';

const BIN = resolve(dirname(fileURLToPath(import.meta.url)), '../../../bin/bass-agents.cjs');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const INTERVALS = ['heartbeat', 'reconcile', 'freshness', 'evidence'] as const;

function ms(v: unknown, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = intervalMs(String(v)) ?? (/^\d+$/.test(String(v)) ? Number(v) : null);
  if (n === null || n <= 0) throw new UsageError(`--${name} must be a duration such as 500 (ms), 30m, 1h (got ${JSON.stringify(v)})`);
  return n;
}

export const frontEndCommands: Command[] = [
  {
    cmd: 'daemon <action>',
    describe: 'the background daemon: start (detached), stop, status, run (foreground)',
    options: {
      action: { choices: ['start', 'stop', 'status', 'run'] },
      'metrics-port': { type: 'number', describe: 'serve Prometheus metrics on 127.0.0.1:PORT/metrics (0 = any free port)' },
      heartbeat: { type: 'string', describe: 'status heartbeat and scheduler tick (default 2000 ms)' },
      reconcile: { type: 'string', describe: 'full reconcile of files against the index (default 5m)' },
      freshness: { type: 'string', describe: 'freshness check interval (default 1h)' },
      evidence: { type: 'string', describe: 'evidence validation interval (default 24h)' },
    },
    async run(k, a) {
      const [engine] = k.open(a);
      engine.ws.local('daemon'); // checked before anything in it is read
      const paths = daemonPaths(engine.ws.localDir);
      const action = String(a.action);
      // What `start` hands on to the daemon it runs.
      const flags = ['metrics-port', ...INTERVALS].flatMap((o) => (a[o] !== undefined ? [`--${o}`, String(a[o])] : []));
      if (action === 'run') {
        const { runDaemon } = await import('../../daemon/daemon.js');
        const { runForClient } = await import('../main.js');
        return runDaemon({
          runner: runForClient,
          root: engine.ws.root,
          metricsPort: a['metrics-port'] as number | undefined,
          intervals: Object.fromEntries(INTERVALS.map((o) => [o, ms(a[o], o)])),
        });
      }
      if (action === 'start') {
        const running = runningPid(paths);
        if (running) return k.print(a, { running: true, pid: running, started: false }, `already running (pid ${running})`);
        engine.ws.ensureLocal({ force: true });
        engine.ws.local('logs', true);
        const logFd = openNoFollow(`${paths.log}.stderr`, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT);
        const { spawn } = await import('node:child_process');
        const argv = [...DAEMON_NODE_FLAGS, BIN, 'memory', 'daemon', 'run', '--root', engine.ws.root, ...flags];
        const child = spawn(process.execPath, argv, { detached: true, stdio: ['ignore', logFd, logFd], env: daemonEnv() });
        child.unref();
        const deadline = Date.now() + 20_000;
        while (Date.now() < deadline) {
          const st = readStatus(paths);
          if (st && st.pid === child.pid && !st.stopped_at)
            return k.print(a, { running: true, pid: child.pid, started: true }, `daemon started (pid ${child.pid}); logs in ${paths.log}`);
          if (child.pid && !isAlive(child.pid)) {
            // Several starts at once: one daemon took the pid file and ours stood down.
            const other = runningPid(paths);
            if (other && other !== child.pid) return k.print(a, { running: true, pid: other, started: false }, `already running (pid ${other})`);
            break;
          }
          await sleep(50);
        }
        throw new UsageError(`the daemon did not start; see ${paths.log} and ${paths.log}.stderr`);
      }
      if (action === 'stop') {
        const pid = runningPid(paths);
        if (!pid) return k.print(a, { running: false, stopped: false }, 'not running');
        process.kill(pid, 'SIGTERM');
        const deadline = Date.now() + 30_000;
        while (Date.now() < deadline && isAlive(pid)) await sleep(50);
        if (isAlive(pid)) throw new UsageError(`the daemon (pid ${pid}) did not stop within 30 s`);
        return k.print(a, { running: false, stopped: true, pid }, `daemon stopped (pid ${pid})`);
      }
      const pid = runningPid(paths);
      const live = pid ? await request(paths, 'status', {}, 2000) : undefined;
      const st = live && 'result' in live ? live.result : readStatus(paths);
      const doc = { running: Boolean(pid), ...(st ?? {}) };
      if (a.json) return k.printJson(doc);
      if (!pid) return k.out(st ? `not running (last stopped ${String(st.stopped_at ?? 'without cleanup')})` : 'not running');
      const s = st as Record<string, unknown>;
      k.out([
        `pid               ${pid}, up ${String(s.uptime_s)} s, heartbeat ${String(s.heartbeat_at)}`,
        `files on disk     ${String(s.files_on_disk)} (${String(s.bad_files)} bad), entries indexed ${String(s.entries_indexed)}`,
        `last reconcile    ${String(s.last_reconcile_at)} (${String(s.reconciles)} runs, drift fixed ${String(s.drift_fixed)})`,
        `watcher           ${String(s.watch_events)} events in ${String(s.batches)} batches, ${String(s.watcher_errors)} errors`,
        `jobs              ${Object.entries((s.jobs ?? {}) as Record<string, { last_run_at: string | null; runs: number }>)
          .map(([k, v]) => `${k} ${v.runs}x (last ${v.last_run_at ?? 'never'})`)
          .join('; ')}`,
        `semantic search   ${semanticLine(s.semantic as Record<string, unknown> | null | undefined)}`,
        ...(typeof s.rss_bytes === 'number' ? [`memory            ${Math.round(s.rss_bytes / 2 ** 20)} MiB resident`] : []),
        `recent errors     ${((s.recent_errors as unknown[]) ?? []).length}`,
      ]);
    },
  },
  {
    cmd: 'mcp',
    describe: 'serve the memory to MCP clients (Claude Code, Cursor, ...) over stdio',
    async run(k, a) {
      const { serveStdio } = await import('../../mcp/server.js');
      await serveStdio({ root: a.root, project: a.project, agent: a.agent, cwd: k.caller.cwd, env: k.caller.env });
    },
  },
  {
    cmd: 'mcp-call',
    describe: false,
    options: { file: JSON_FILE },
    async run(k, a) {
      const call = k.readJsonInput(a.file as string | undefined) as ToolCall;
      const { runTool, guard } = await import('../../mcp/calls.js');
      k.printJson(await guard(() => runTool(...k.open(a), call))); // the tool's result, or its error as one
    },
  },
  {
    cmd: 'dashboard [project]',
    describe: 'the terminal dashboard: statistics, trends, quality, agents, queries, lifecycle (q quits)',
    options: { refresh: { type: 'number', describe: 'auto-refresh interval in seconds (default 30)' } },
    async run(k, a) {
      if (!process.stdout.isTTY) throw new UsageError('the dashboard needs a terminal; use `memory stats --json` for the numbers');
      const [engine, caller] = k.open(a);
      const project = a.project || undefined;
      if (project) caller.project(engine, project, true);
      const { runDashboard } = await import('../../dashboard/dashboard.js');
      await runDashboard(engine, caller, { project, refreshMs: a.refresh === undefined ? undefined : Number(a.refresh) * 1000 });
    },
  },
];

/** Semantic states in which search is lexical, and why. */
const LEXICAL: Record<string, string> = {
  off: 'off (BASS_AGENTS_SEMANTIC=off, or every project has query.semantic: off)',
  unavailable: 'off: the embedding table (with BASS_AGENTS_SEMANTIC=minilm: the optional model packages) could not be loaded (search is lexical)',
  loading: 'loading the model (queries are lexical until it is ready)',
};

function semanticLine(s: Record<string, unknown> | null | undefined): string {
  if (!s) return 'unknown';
  if (s.state === 'failed') return `failed: ${String(s.error ?? 'unknown error')} (search is lexical)`;
  return (
    LEXICAL[String(s.state)] ?? `${String(s.state)}, ${String(s.model)}: ${String(s.vectors_current)} of ${String(s.entries)} entries have a current vector`
  );
}

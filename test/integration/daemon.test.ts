/**
 * The real daemon process on a temp git repo: edits from outside, git checkout, status, metrics,
 * SIGTERM and SIGKILL, restart, fallback, one daemon per workspace, scheduled decay with catch-up.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { serializeEntry } from '../../src/core/entry.js';
import { BIN, cleanGitEnv, cli, cliAsync, entry, firstOf, git, gitdir, initdir, stateDir } from '../helpers/repo.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Waits for fn to give a value; the limit only bounds a failing run, so it is generous for a loaded machine. */
async function until<T>(what: string, fn: () => T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The daemon may be committing a regenerated ai-context: git refuses a checkout until that commit is done. */
async function checkoutBesideDaemon(dir: string, rev: string): Promise<void> {
  for (const end = Date.now() + 30_000; ;) {
    try {
      git(dir, 'checkout', '-q', rev);
      return;
    } catch (err) {
      if (Date.now() > end || !String((err as Error).message).includes('index.lock')) throw err;
      await sleep(100);
    }
  }
}

function startDaemon(dir: string, args: string[] = [], env: Record<string, string> = {}): { child: ChildProcess; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, 'memory', 'daemon', 'run', '--heartbeat', '300', ...args], {
    cwd: dir,
    env: { ...cleanGitEnv(dir), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exit;
    }
    if (stderr.trim()) console.log(`daemon stderr: ${stderr}`);
  });
  return { child, exit };
}

const status = (dir: string): Record<string, any> | undefined => {
  try {
    return JSON.parse(readFileSync(join(stateDir(dir), 'daemon/status.json'), 'utf8'));
  } catch {
    return undefined;
  }
};
const ready = (dir: string, pid: number): Promise<unknown> =>
  until('daemon ready', () => status(dir)?.pid === pid && !status(dir)?.stopped_at && existsSync(join(stateDir(dir), 'daemon/daemon.sock')));
const debugQuery = (dir: string, text: string): { via: boolean; ids: string[] } => {
  const r = cli(dir, ['query', text, '--json', '--debug']);
  expect(r.code, r.stderr).toBe(0);
  return { via: r.stderr.includes('answered by the daemon'), ids: r.json().map((h: { id: string }) => h.id) };
};

describe('memory daemon', () => {
  it('serves queries, follows outside edits and git checkout, reports status and metrics, stops on SIGTERM', async () => {
    const dir = gitdir();
    const id = cli(dir, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry({ summary: 'ledger exports run nightly' })) }).stdout.trim();
    const base = git(dir, 'rev-parse', 'HEAD').trim();
    const d = startDaemon(dir, ['--metrics-port', '0']);
    await ready(dir, d.child.pid!);
    // The queries the daemon ran for itself once its socket opened (its warm-up) are recorded nowhere.
    const log = join(stateDir(dir), 'logs/daemon.log');
    await until('warmed', () => existsSync(log) && readFileSync(log, 'utf8').includes('"event":"warmed"'));
    for (const f of ['state/retrievals.jsonl', 'logs/queries.jsonl']) expect(existsSync(join(stateDir(dir), f)), f).toBe(false);

    expect(debugQuery(dir, 'ledger')).toEqual({ via: true, ids: [id] });
    // A hand edit from outside (not through the CLI): searchable as soon as the watcher batch lands.
    const file = join(dir, git(dir, 'ls-files', `ai-memory/demo/*/${id}.json`).trim());
    const edited = { ...JSON.parse(readFileSync(file, 'utf8')), summary: 'ledger exports run hourly now' };
    writeFileSync(file, serializeEntry(edited));
    await until('edit indexed', () => debugQuery(dir, 'hourly').ids.includes(id));
    // A new entry written through the CLI is visible to the very next query (the CLI notifies the daemon).
    const id2 = cli(dir, ['create', 'demo', '--file', '-'], {
      input: JSON.stringify(entry({ summary: 'kafka offsets are committed after processing' })),
    }).stdout.trim();
    expect(debugQuery(dir, 'kafka offsets')).toEqual({ via: true, ids: [id2] });
    // git checkout of an older commit removes it; checking out main brings it back.
    await checkoutBesideDaemon(dir, base);
    await until('checkout indexed', () => debugQuery(dir, 'kafka offsets').ids.length === 0);
    await checkoutBesideDaemon(dir, 'main');
    await until('checkout back indexed', () => debugQuery(dir, 'kafka offsets').ids.length === 1);
    // A broken file is reported and skipped; the rest keeps working.
    writeFileSync(join(dirname(file), 'BROKEN.json'), '{ nope');
    await until('bad file reported', () => status(dir)?.bad_files === 1 && status(dir));
    expect(debugQuery(dir, 'ledger').ids).toContain(id);

    const st = cli(dir, ['daemon', 'status', '--json']).json();
    expect(st).toMatchObject({ running: true, pid: d.child.pid, files_on_disk: 3, entries_indexed: 2, bad_files: 1, watcher_errors: 0 });
    expect(st.watch_events).toBeGreaterThan(0);
    expect(st.last_reconcile_at).toBeTruthy();
    const metrics = await (await fetch(`http://127.0.0.1:${st.metrics_port}/metrics`)).text();
    for (const m of [
      'forgotten_entries_total',
      'decay_processing_duration_seconds',
      'index_entries 2',
      'query_duration_seconds',
      'watch_events_total',
      'parse_errors_total 1',
    ])
      expect(metrics).toContain(m);
    // A project and section made by hand while the daemon runs: its files are watched from then on.
    const base2 = JSON.parse(readFileSync(file, 'utf8'));
    const handMade = (n: number, summary: string): string => {
      const hid = `01M80T35B5Y71ZBT1RWE70MR${n}X`;
      mkdirSync(join(dir, 'ai-memory/other/learnings'), { recursive: true });
      writeFileSync(join(dir, `ai-memory/other/learnings/${hid}.json`), serializeEntry({ ...base2, id: hid, section: 'learnings', summary }));
      return hid;
    };
    const h1 = handMade(1, 'zebra crossings are painted weekly');
    await until('new section indexed', () => debugQuery(dir, 'zebra').ids.includes(h1));
    const h2 = handMade(2, 'yak shaving is tracked in tickets');
    await until('second file of the new section indexed', () => debugQuery(dir, 'yak shaving').ids.includes(h2));
    // One daemon per workspace.
    const second = cli(dir, ['daemon', 'run']);
    expect(second.code).toBe(4);
    expect(second.stderr).toMatch(/already running/);

    d.child.kill('SIGTERM');
    expect(await d.exit).toBe(0);
    expect(status(dir)?.stopped_at).toBeTruthy();
    expect(existsSync(join(stateDir(dir), 'daemon/daemon.pid'))).toBe(false);
    expect(existsSync(join(stateDir(dir), 'daemon/daemon.sock'))).toBe(false);
    const jobs = JSON.parse(readFileSync(join(stateDir(dir), 'daemon/state.json'), 'utf8')).jobs;
    expect(jobs.decay.runs).toBeGreaterThan(0);
    // Heartbeats came and went while the start-up jobs waited for git to be still: each ran once.
    expect([jobs.freshness.runs, jobs.evidence.runs]).toEqual([1, 1]);
    expect(readFileSync(join(stateDir(dir), 'logs/daemon.log'), 'utf8')).toContain('"event":"stopped"');
    // Without the daemon the CLI answers directly.
    expect(debugQuery(dir, 'ledger')).toMatchObject({ via: false });
  });

  it('a SIGKILLed daemon blocks nothing: the CLI falls back and a new daemon starts at once; decay catches up on start', async () => {
    const dir = gitdir();
    const updates = [
      entry({ section: 'observations', summary: 'a passing remark about the build' }),
      entry({ section: 'decisions', kind: 'decision', summary: 'we deploy on Tuesdays' }),
    ];
    const env = { BASS_AGENTS_NOW: '2026-01-01T00:00:00Z' };
    expect(cli(dir, ['apply', 'demo', '--file', '-'], { env, input: JSON.stringify(updates.map((e) => ({ operation: 'create', entry: e }))) }).code).toBe(0);
    appendFileSync(join(dir, 'ai-memory/demo/config.yaml'), 'decay:\n  curve: exponential\n  interval: 1h\n');
    git(dir, 'commit', '-qam', 'decay settings');
    const a = startDaemon(dir);
    await ready(dir, a.child.pid!);
    // Started long after the entries were written: the decay job runs at once and forgets the stale observation.
    await until('decay forgot the observation', () => git(dir, 'log', '-1', '--format=%B').includes('Memory-Op: forget'));
    expect(
      cli(dir, ['list', '--status', 'archived', '--json'])
        .json()
        .map((h: { summary: string }) => h.summary),
    ).toEqual(['a passing remark about the build']);
    const state = JSON.parse(readFileSync(join(stateDir(dir), 'daemon/state.json'), 'utf8'));
    expect(state.decay_projects.demo).toBeTruthy();

    a.child.kill('SIGKILL');
    await a.exit;
    expect(existsSync(join(stateDir(dir), 'daemon/daemon.pid'))).toBe(true); // left behind...
    expect(debugQuery(dir, 'Tuesdays').via).toBe(false); // ...but a dead daemon is ignored
    const b = startDaemon(dir);
    await ready(dir, b.child.pid!); // ...and does not block a new one
    expect(debugQuery(dir, 'Tuesdays')).toMatchObject({ via: true });
    // The job state survived: the finished decay run is not repeated within its interval.
    expect(JSON.parse(readFileSync(join(stateDir(dir), 'daemon/state.json'), 'utf8')).decay_projects.demo).toBe(state.decay_projects.demo);
    rmSync(join(stateDir(dir), 'daemon/daemon.sock'), { force: true });
    expect(debugQuery(dir, 'Tuesdays').via).toBe(false); // no socket: direct path
    b.child.kill('SIGINT');
    expect(await b.exit).toBe(0);
  });

  it('takes writes from the CLI: signed by the caller, errors and warnings back to it, searchable at once', async () => {
    const dir = initdir();
    const d = startDaemon(dir, [], { BASS_AGENTS_AGENT: 'the-daemon-itself' });
    await ready(dir, d.child.pid!);
    const writes = (): number =>
      readFileSync(join(stateDir(dir), 'logs/daemon.log'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('"caller_write"')).length;

    const a = cli(dir, ['create', 'demo', '--file', '-', '--json'], {
      input: JSON.stringify(entry({ summary: 'Nightly ledger export via the daemon' })),
      env: { BASS_AGENTS_AGENT: 'cli-agent' },
    });
    expect(a.code, a.stderr).toBe(0);
    expect(writes()).toBe(1);
    expect(a.json()).toMatchObject({ summary: 'Nightly ledger export via the daemon', created_by: 'cli-agent' });
    expect(git(dir, 'log', '-1', '--format=%s')).toContain(`create ${a.json().id}`);
    expect(git(dir, 'status', '--porcelain')).toBe('');
    // Without --agent or BASS_AGENTS_AGENT the caller's default (the git user) signs, not the daemon's environment.
    const b = cli(dir, ['create', 'demo', '--file', '-', '--json'], { input: JSON.stringify(entry({ summary: 'Second entry through the daemon' })) });
    expect(b.json().created_by).toBe('Test User');
    expect(writes()).toBe(2);
    // Searchable through the daemon right away (no wait for the watcher).
    const q = debugQuery(dir, 'Second entry through the daemon');
    expect(q.via).toBe(true);
    expect(q.ids[0]).toBe(b.json().id);

    // Errors come back exactly as the direct path gives them.
    const bad = JSON.stringify(entry({ summary: 'Nightly ledger export via the daemon' }));
    const viaDaemon = cli(dir, ['create', 'demo', '--file', '-', '--json'], { input: bad });
    const direct = cli(dir, ['create', 'demo', '--file', '-', '--json'], { input: bad, env: { BASS_AGENTS_NO_DAEMON: '1' } });
    expect(viaDaemon.code).toBe(1);
    expect(viaDaemon.stdout).toBe(direct.stdout);
    expect(viaDaemon.stdout).toContain('duplicates entry');
    expect(writes()).toBe(2);

    // A batch through apply, with the warning it causes printed by the caller.
    const updates = Array.from({ length: 101 }, (_, i) => ({
      operation: 'create',
      entry: entry({ summary: `Batch entry number ${i}`, subject: `batch.n${i}` }),
    }));
    const c = cli(dir, ['apply', 'demo', '--file', '-', '--json'], { input: JSON.stringify(updates) });
    expect(c.code, c.stderr).toBe(0);
    expect(c.json().applied).toHaveLength(101);
    expect(c.stderr).toContain('now holds 103 entries (over 100)');
    expect(writes()).toBe(3);
    // A caller on another fixed clock writes directly.
    const e = cli(dir, ['create', 'demo', '--file', '-', '--json'], {
      input: JSON.stringify(entry({ summary: 'Written on a fixed clock' })),
      env: { BASS_AGENTS_NOW: '2026-05-01T00:00:00Z' },
    });
    expect(e.json().created_at).toBe('2026-05-01T00:00:00.000Z');
    expect(writes()).toBe(3);
    // The writes above regenerate ai-context once quiet for 2 s, in a job of the daemon's own: its commit
    // neither re-reads every entry file (a full refresh stalls a 100K-entry daemon for a second)
    // nor is taken for a caller's write.
    const fullBefore = await until('a heartbeat after the writes', () => status(dir)?.full_refreshes);
    await until('ai-context regenerated', () => git(dir, 'log', '-1', '--format=%s').includes('sync-context'));
    await sleep(700); // two heartbeats
    expect(status(dir)!.full_refreshes).toBe(fullBefore);
    expect(writes()).toBe(3);
    d.child.kill('SIGTERM');
    expect(await d.exit).toBe(0);
  });

  it('saves the index snapshot when it stops, not at every reconcile after an edit', async () => {
    const dir = initdir();
    cli(dir, ['create', 'demo', '--file', '-'], {
      input: JSON.stringify(entry({ summary: 'Saved before the daemon starts' })),
      env: { BASS_AGENTS_NO_DAEMON: '1' },
    });
    expect(cli(dir, ['query', 'saved', '--json'], { env: { BASS_AGENTS_NO_DAEMON: '1' } }).code).toBe(0);
    const snapshot = join(stateDir(dir), 'cache/index.bin');
    const savedAt = (): number => statSync(snapshot).mtimeMs;
    const before = savedAt();
    const d = startDaemon(dir, ['--reconcile', '300']);
    await ready(dir, d.child.pid!);
    const made = cli(dir, ['create', 'demo', '--file', '-', '--json'], { input: JSON.stringify(entry({ summary: 'Written while the daemon runs' })) });
    expect(made.code, made.stderr).toBe(0);
    const runs = status(dir)!.reconciles as number;
    await until('two more reconciles', () => (status(dir)!.reconciles as number) >= runs + 2);
    // One entry behind is what a one-shot query patches up by itself: a 100K-entry save holds the daemon ~12 s.
    expect(savedAt()).toBe(before);
    d.child.kill('SIGTERM');
    expect(await d.exit).toBe(0);
    expect(savedAt()).toBeGreaterThan(before);
    const q = cli(dir, ['query', 'written while', '--json', '--debug'], { env: { BASS_AGENTS_NO_DAEMON: '1' } });
    expect(q.json()[0].id).toBe(made.json().id);
    expect(q.stderr).toContain('snapshot loaded (+0 ~0 -0)');
  });

  it('daemon start detaches and daemon stop stops it; of three starts at once one starts, the others find it running', async () => {
    const dir = initdir();
    const starts = await Promise.all([0, 1, 2].map(() => cliAsync(dir, ['daemon', 'start', '--json'])));
    const pids = new Set(starts.map((r) => (r.stdout ? r.json().pid : 0)));
    onTestFinished(() => {
      for (const p of pids) {
        try {
          if (p) process.kill(p, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    });
    for (const r of starts) expect(r.code, r.stderr).toBe(0);
    expect(starts.map((r) => r.json().started).sort()).toEqual([false, false, true]);
    expect(pids.size).toBe(1);
    const pid = firstOf(starts, 1)[0].json().pid;
    expect(cli(dir, ['daemon', 'start', '--json']).json()).toMatchObject({ running: true, started: false, pid });
    // Node runs it with a small young generation, and its jobs can ask for a full collection (DAEMON_NODE_FLAGS).
    if (existsSync(`/proc/${pid}/cmdline`)) {
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toEqual(expect.arrayContaining(['--max-semi-space-size=2', '--expose-gc']));
      // ...and two malloc arenas (daemonEnv) unless the user chose a number.
      expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toContain(
        process.env.MALLOC_ARENA_MAX ? `MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX}` : 'MALLOC_ARENA_MAX=2',
      );
    }
    const status = cli(dir, ['daemon', 'status', '--json']).json();
    expect(status).toMatchObject({ running: true, pid });
    expect(status.rss_bytes).toBeGreaterThan(status.heap_used_bytes);
    expect(status.array_buffers_bytes).toBeGreaterThan(0);
    expect(cli(dir, ['daemon', 'stop', '--json']).json()).toMatchObject({ stopped: true, pid });
    expect(cli(dir, ['daemon', 'status', '--json']).json()).toMatchObject({ running: false });
  });
});

describe('decay in batches (000 "Batch decay processing", "Graceful decay shutdown")', () => {
  it('stops between batches when asked, reports where, and a later run resumes there', async () => {
    // The built service: its lazily required modules are resolved next to it (npm test builds first).
    const { MemoryService } = await import('../../src/service/memory-service.js');
    const dir = gitdir();
    const updates = Array.from({ length: 5 }, (_, i) => ({ operation: 'create', entry: entry({ section: 'observations', summary: `note number ${i}` }) }));
    expect(cli(dir, ['apply', 'demo', '--file', '-'], { env: { BASS_AGENTS_NOW: '2026-01-01T00:00:00Z' }, input: JSON.stringify(updates) }).code).toBe(0);
    appendFileSync(join(dir, 'ai-memory/demo/config.yaml'), 'decay:\n  curve: exponential\n  batch_size: 2\n');
    git(dir, 'commit', '-qam', 'decay settings');
    const svc = new MemoryService({ cwd: dir, env: { ...cleanGitEnv(dir), BASS_AGENTS_NOW: '2026-02-01T00:00:00Z' } });
    const seen: number[] = [];
    const first = await svc.decay('demo', { apply: true, onBatch: (done) => (seen.push(done), false) });
    expect(seen).toEqual([2]);
    expect(first).toMatchObject({ forgotten: 2 });
    expect(first.resume_after).toMatch(/^[0-9A-Z]{26}$/);
    expect(svc.decayState().demo).toBeUndefined(); // not a completed run
    const rest = await svc.decay('demo', { apply: true, resumeAfter: first.resume_after! });
    expect(rest).toMatchObject({ resume_after: null, forgotten: 3, analyzed: 3 });
    expect(cli(dir, ['list', '--status', 'archived', '--json']).json()).toHaveLength(5);
    expect(svc.decayState().demo?.last_run_at).toBe('2026-02-01T00:00:00.000Z');
  });

  it('a checkout that removes and restores a whole section folder is seen at once (no answer from a stale index)', async () => {
    const dir = gitdir();
    cli(dir, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry({ summary: 'ledger exports run nightly' })) });
    const base = git(dir, 'rev-parse', 'HEAD').trim();
    const d = startDaemon(dir);
    await ready(dir, d.child.pid!);
    // A new section folder (learnings) that the base commit does not have.
    const id = cli(dir, ['create', 'demo', '--file', '-'], {
      input: JSON.stringify(entry({ section: 'learnings', kind: 'other', summary: 'kafka offsets reset weekly' })),
    }).stdout.trim();
    expect(debugQuery(dir, 'kafka offsets')).toEqual({ via: true, ids: [id] });
    const checkout = (rev: string): Promise<void> => checkoutBesideDaemon(dir, rev);
    for (let round = 0; round < 3; round++) {
      await checkout(base);
      // The very next query already reflects the checkout: the daemon checks HEAD before it answers.
      expect(debugQuery(dir, 'kafka offsets')).toEqual({ via: true, ids: [] });
      await checkout('main');
      expect(debugQuery(dir, 'kafka offsets')).toEqual({ via: true, ids: [id] });
    }
    // Writes see it too: a duplicate is refused, and deprecating the entry finds it.
    const dup = cli(dir, ['create', 'demo', '--file', '-'], {
      input: JSON.stringify(entry({ section: 'learnings', kind: 'other', summary: 'kafka offsets reset weekly' })),
    });
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/duplicates entry/);
    expect(cli(dir, ['deprecate', id]).code).toBe(0);
    expect(status(dir)?.head_moves).toBeGreaterThanOrEqual(6);
  });

  it('answers a malformed or too deeply nested request with an error and keeps serving', async () => {
    const dir = gitdir();
    cli(dir, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry()) });
    const d = startDaemon(dir);
    await ready(dir, d.child.pid!);
    const { connect } = await import('node:net');
    const ask = (line: string): Promise<Record<string, any>> =>
      new Promise((resolve, reject) => {
        const sock = connect(join(stateDir(dir), 'daemon/daemon.sock'));
        let buf = '';
        sock.setEncoding('utf8');
        sock.on('data', (c: string) => {
          buf += c;
          if (buf.includes('\n')) {
            sock.destroy();
            resolve(JSON.parse(buf.slice(0, buf.indexOf('\n'))));
          }
        });
        sock.on('error', reject);
        sock.on('connect', () => sock.write(`${line}\n`));
      });
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const r1 = await ask(`{"id":1,"method":"cli","params":{"stdin":${deep},"clock":null}}`);
    expect(r1.error).toMatchObject({ name: 'ValidationError', exitCode: 1 });
    expect(r1.error.message).toMatch(/nested more than 64 levels/);
    const r2 = await ask('not json');
    expect(r2.error).toMatchObject({ name: 'UsageError', exitCode: 2 });
    const r3 = await ask('{"id":3,"method":"nope"}');
    expect(r3.error.message).toMatch(/unknown method "nope"/);
    // One route per command: the methods that once answered queries and took writes beside the
    // command line are gone; a thin client hands over the command line (`cli`) whole.
    for (const method of ['query', 'prepareTask', 'create', 'apply', 'applyResult']) {
      const r = await ask(JSON.stringify({ id: 7, method, params: { text: 'x', filters: {}, options: {}, input: {}, agent: null, clock: null } }));
      expect(r.error, method).toMatchObject({ name: 'UsageError', exitCode: 2 });
      expect(r.error.message).toBe(`unknown method "${method}"`);
    }
    expect(await ask('{"id":4,"method":"ping","params":{}}')).toMatchObject({ id: 4, result: { pid: d.child.pid } });

    // 60 MB without a newline: refused once it passes the limit (long before the caller could send
    // it all), while another caller is answered; the daemon does not keep what it was sent.
    const before = cli(dir, ['daemon', 'status', '--json']).json().rss_bytes as number;
    const huge = new Promise<{ reply: Record<string, any>; written: number }>((resolve, reject) => {
      const sock = connect(join(stateDir(dir), 'daemon/daemon.sock'));
      const chunk = Buffer.alloc(1 << 20, 97);
      let written = 0;
      let buf = '';
      sock.on('data', (c: Buffer) => {
        buf += c.toString();
        if (buf.includes('\n')) {
          sock.destroy();
          resolve({ reply: JSON.parse(buf.slice(0, buf.indexOf('\n'))), written });
        }
      });
      sock.on('error', (e: NodeJS.ErrnoException) => (buf ? undefined : reject(e)));
      const pump = (): void => {
        while (written < 60 << 20) {
          written += chunk.length;
          if (!sock.write(chunk)) return void sock.once('drain', pump);
        }
      };
      sock.on('connect', pump);
    });
    const meanwhile = await ask('{"id":5,"method":"ping","params":{}}');
    const refused = await huge;
    expect(meanwhile).toMatchObject({ id: 5, result: { pid: d.child.pid } });
    expect(refused.reply.error).toMatchObject({ name: 'UsageError' });
    expect(refused.reply.error.message).toMatch(/request is over \d+ bytes/);
    expect(refused.written).toBeLessThan(60 << 20);
    expect(await ask('{"id":6,"method":"ping","params":{}}')).toMatchObject({ id: 6 });
    expect(cli(dir, ['daemon', 'status', '--json']).json().rss_bytes - before).toBeLessThan(40 << 20);
  });

  it('runs everyday command lines for a thin client: same output, exit codes, input and folder as the direct path', async () => {
    const dir = initdir();
    // No slow-query warning: whether a query takes 200 ms depends on the machine, not the path it took.
    const cfg = join(dir, 'ai-memory/demo/config.yaml');
    writeFileSync(cfg, readFileSync(cfg, 'utf8').replace('slow_ms: 200', 'slow_ms: 600000'));
    git(dir, 'commit', '-qam', 'no slow-query warnings');
    mkdirSync(join(dir, 'sub/deeper'), { recursive: true });
    writeFileSync(join(dir, 'sub/e.json'), JSON.stringify(entry({ summary: 'Read from a file named relative to the caller' })));
    const d = startDaemon(dir);
    await ready(dir, d.child.pid!);
    const ran = (): string[] =>
      readFileSync(join(stateDir(dir), 'logs/daemon.log'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('"cli_run"'))
        .map((l) => JSON.parse(l).command as string);
    const direct = { BASS_AGENTS_NO_DAEMON: '1' };

    // A file named relative to the caller's folder, and standard input.
    const a = cli(join(dir, 'sub'), ['create', 'demo', '--file', 'e.json']);
    expect(a.code, a.stderr).toBe(0);
    const b = cli(join(dir, 'sub/deeper'), ['create', 'demo', '--file', '-', '--json'], { input: JSON.stringify(entry({ summary: 'Piped in on stdin' })) });
    expect(b.code, b.stderr).toBe(0);
    expect(ran()).toEqual(['create', 'create']);
    expect(git(dir, 'status', '--porcelain', '--', 'ai-memory')).toBe('');

    // Reads print exactly what the direct path prints.
    for (const args of [['list', '--json'], ['list'], ['show', a.stdout.trim()], ['query', 'caller relative', '--json']]) {
      const viaDaemon = cli(dir, args);
      const own = cli(dir, args, { env: direct });
      expect(viaDaemon.code, viaDaemon.stderr).toBe(own.code);
      expect(viaDaemon.stdout).toBe(own.stdout);
    }
    expect(ran()).toHaveLength(6);

    // Errors: the same words and exit codes (usage 2, not found 3, rejected 1).
    for (const [args, code] of [
      [['create', 'demo', '--bogus'], 2],
      [['show', '01ZZZZZZZZZZZZZZZZZZZZZZZZ'], 3],
      [['create', 'demo', '--file', 'missing.json'], 3],
      [['apply', 'demo', '--file', '-'], 1],
    ] as const) {
      const viaDaemon = cli(dir, [...args], { input: '{"not": "an array"}' });
      const own = cli(dir, [...args], { input: '{"not": "an array"}', env: direct });
      expect(viaDaemon.code, viaDaemon.stderr).toBe(code);
      expect(viaDaemon.stderr).toBe(own.stderr);
    }
    expect(ran()).toHaveLength(10);

    // A reader that is gone before anything is printed (`| true`): the caller stops printing, quietly, with the command's exit code.
    const sh = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${BIN}" memory list --json | true`], {
      cwd: dir,
      env: cleanGitEnv(dir),
      encoding: 'utf8',
    });
    expect(sh.stderr).toBe('');
    expect(sh.status).toBe(0);
    const shDirect = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${BIN}" memory list --json | true`], {
      cwd: dir,
      env: { ...cleanGitEnv(dir), ...direct },
      encoding: 'utf8',
    });
    expect(shDirect.stderr).toBe('');
    expect(shDirect.status).toBe(0);
    expect(ran()).toHaveLength(11);

    // Help is printed by the caller itself; so is anything with settings only the direct path honours.
    expect(cli(dir, ['create', '--help']).stdout).toContain('--file');
    expect(cli(dir, ['list'], { env: { BASS_AGENTS_LOCK_TIMEOUT_MS: '5000' } }).code).toBe(0);
    expect(ran()).toHaveLength(11);

    // Writers at once, each with its own agent: each entry is signed by its own writer.
    const writers = await Promise.all(
      ['ana', 'ben', 'cy', 'dee'].map((agent) =>
        cliAsync(dir, ['create', 'demo', '--file', '-', '--json', '--agent', agent], {
          input: JSON.stringify(entry({ summary: `Written at once by ${agent}` })),
        }),
      ),
    );
    for (const [k, agent] of ['ana', 'ben', 'cy', 'dee'].entries()) {
      const w = writers[k]!; // one writer per agent, above
      expect(w.code, w.stderr).toBe(0);
      expect(w.json().created_by).toBe(agent);
    }
    const log = cli(dir, ['log', 'demo', '--json']).json() as { agent: string | null; changes: unknown[] }[];
    expect(
      log
        .flatMap((c) => (c.agent ?? '').split(', '))
        .filter((x) => ['ana', 'ben', 'cy', 'dee'].includes(x))
        .sort(),
    ).toEqual(['ana', 'ben', 'cy', 'dee']);
    expect(git(dir, 'status', '--porcelain', '--', 'ai-memory')).toBe('');
    d.child.kill('SIGTERM');
    expect(await d.exit).toBe(0);
  });

  it('a daemon that cannot run command lines (an older one) leaves them to the caller', async () => {
    const dir = gitdir();
    cli(dir, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry()), env: { BASS_AGENTS_NO_DAEMON: '1' } });
    // A stand-in for an older daemon: it knows no `cli` method (and declines the rest, so the
    // caller's own run answers them directly).
    const { createServer } = await import('node:net');
    const daemonDir = join(stateDir(dir), 'daemon');
    mkdirSync(daemonDir, { recursive: true });
    let asked = 0;
    const server = createServer((sock) => {
      sock.on('data', (d: Buffer) => {
        const req = JSON.parse(d.toString().split('\n')[0] ?? '') as { method: string };
        if (req.method !== 'cli') return void sock.write(`${JSON.stringify({ id: 1, declined: 'test' })}\n`);
        asked++;
        sock.write(
          `${JSON.stringify({ id: 1, error: { name: 'UsageError', code: 'E_USAGE', message: 'unknown method "cli"', problems: [], exitCode: 2 } })}\n`,
        );
      });
    });
    await new Promise<void>((r) => server.listen(join(daemonDir, 'daemon.sock'), () => r()));
    onTestFinished(() => void server.close());
    writeFileSync(
      join(daemonDir, 'status.json'),
      JSON.stringify({ pid: process.pid, started_at: new Date().toISOString(), heartbeat_at: new Date().toISOString(), heartbeat_ms: 60_000 }),
    );
    const r = await cliAsync(dir, ['list', '--json']);
    expect(asked).toBeGreaterThan(0);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toHaveLength(1);
  });
});

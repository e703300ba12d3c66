#!/usr/bin/env node
// `npm run bench [-- --quick | --full | --json | --sizes 1000,10000 | --no-semantic]`
//
// Measures what users feel on generated, realistic entries, and the machine's own floor in the
// same run (node start, reading+parsing all entry files, a plain substring scan, a bare git
// commit through plumbing), printing each figure beside its floor as a ratio.
import { execFileSync } from 'node:child_process';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { SearchIndex } from '../dist/index/search-index.js';
import { MemoryService } from '../dist/service/memory-service.js';
import { DAEMON_NODE_FLAGS, daemonEnv, daemonPaths, request } from '../dist/daemon/client.js';
import { stateDirOf } from '../dist/store/state-dir.js';
import { serializeEntry } from '../dist/core/entry.js';
import { staticEmbedder } from '../dist/service/embedder.js';
import { embeddedText } from '../dist/service/semantic.js';
import { VectorStore } from '../dist/index/vectors.js';
import { spawn } from 'node:child_process';

/** A CLI call without blocking the benchmark (concurrent writers). */
function runCliAsync(cwd, a, input) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'memory', ...a], { cwd, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.end(input);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
import { BIN, allFiles, env, makeEntry, runCli, setup } from './data.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const asJson = args.includes('--json');
const sizesArg = args.find((a) => a.startsWith('--sizes='))?.slice(8) ?? (args.includes('--sizes') ? args[args.indexOf('--sizes') + 1] : undefined);
const sizes = sizesArg ? sizesArg.split(',').map(Number) : quick ? [1000] : args.includes('--full') ? [1000, 10000, 100000] : [1000, 10000];

// ---------------------------------------------------------------- timing
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
function time(fn, reps = 1) {
  const xs = [];
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    fn(i);
    xs.push(performance.now() - t);
  }
  return xs;
}
/** Node's start, once (a floor sample to pair with a figure's sample). */
const nodeOnce = () => time(() => execFileSync(process.execPath, ['-e', '0']))[0];
/**
 * `reps` samples of `fn`, each right after a `node -e 0` sample: on a shared machine the load
 * moves by tens of percent within a minute, and a ratio must compare like with like.
 */
function paired(fn, reps) {
  const xs = [];
  const floors = [];
  for (let i = 0; i < reps; i++) {
    floors.push(nodeOnce());
    xs.push(time(() => fn(i))[0]);
  }
  return { xs, floor: pct(floors, 50) };
}
/** CPU time (ms) a process has used so far, from /proc (Linux); null elsewhere. */
function cpuMs(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in 100 Hz ticks
  } catch {
    return null;
  }
}
/** Waits until `pid` has used under 5 % of a core over two 500 ms windows in a row (its background work done), or `maxMs`. */
async function waitIdle(pid, maxMs) {
  const t0 = performance.now();
  let quiet = 0;
  let last = cpuMs(pid);
  while (last !== null && quiet < 2 && performance.now() - t0 < maxMs) {
    await new Promise((res) => setTimeout(res, 500));
    const now = cpuMs(pid);
    if (now === null) return;
    quiet = now - last <= 25 ? quiet + 1 : 0;
    last = now;
  }
}
const QUERIES = ['invoice retry', 'kafka offset', 'cache latency', 'deploy rollback canary', 'auth token session', 'flaky test', 'postgres migration schema', 'memory leak'];
const results = [];
const row = (size, figure, value, floorName, floorValue, unit = 'ms', target) => {
  results.push({ size, figure, value: round(value), unit, floor: floorName ?? null, floor_value: floorValue === undefined ? null : round(floorValue), ratio: floorValue ? round(value / floorValue) : null, target: target ?? null });
};
const round = (x) => Math.round(x * 100) / 100;

// Floor independent of size.
const nodeStart = pct(time(() => execFileSync(process.execPath, ['-e', '0']), 5), 50);
row('-', 'node -e 0', nodeStart);

// The secret scan of one create: warm (a daemon or a batch: the rules are compiled), and what a
// one-shot CLI create pays in its own process (loading and compiling the rules, then the scan;
// secretlint's preset loads beside them). The floor of the warm figure is a plain substring
// search of the same fields.
{
  const { scanText, secretFields } = await import('../dist/core/secrets.js');
  const createInput = (i) => {
    const e = makeEntry(i);
    return { section: e.section, kind: e.kind, subject: e.subject, scope: e.scope, summary: `scan ${i} ${e.summary}`, content: e.content, tags: e.tags, confidence: e.confidence, evidence: e.evidence };
  };
  scanText('warm-up', 'ghp_warm');
  const fieldsOf = Array.from({ length: 200 }, (_, i) => secretFields(createInput(i)));
  const warm = time((i) => { for (const f of fieldsOf[i]) scanText(f.path, f.text); }, 200);
  const plain = time((i) => { let c = 0; for (const f of fieldsOf[i]) if (f.text.toLowerCase().includes('ghp_')) c++; return c; }, 200);
  row('-', 'secret scan of one create, warm (p50)', pct(warm, 50), 'substring search of its fields', pct(plain, 50), 'ms', '<= 5 ms');
  const script = (withSecretlint) => `const t=performance.now();const {scanText,secretFields}=await import(${JSON.stringify(new URL('../dist/core/secrets.js', import.meta.url).href)});` +
    (withSecretlint ? `const {scanFields}=await import(${JSON.stringify(new URL('../dist/service/secret-scan.js', import.meta.url).href)});await scanFields(secretFields(JSON.parse(process.argv[1])));` : `for(const f of secretFields(JSON.parse(process.argv[1])))scanText(f.path,f.text);`) +
    `process.stdout.write(String(performance.now()-t));`;
  const inProcess = (withSecretlint) => Array.from({ length: quick ? 3 : 7 }, (_, i) => Number(execFileSync(process.execPath, ['--input-type=module', '-e', script(withSecretlint), JSON.stringify(createInput(i))], { encoding: 'utf8' })));
  row('-', 'secret scan of one create in its own process: load + scan, our rules (p50)', pct(inProcess(false), 50), 'node -e 0', nodeStart);
  row('-', 'secret scan of one create in its own process: load + scan, with secretlint (p50)', pct(inProcess(true), 50), 'node -e 0', nodeStart);
}

for (const n of sizes) {
  const dir = setup(n);
  const files = allFiles(dir);
  // Floors for this size.
  const readParse = pct(time(() => { for (const f of files) JSON.parse(readFileSync(f, 'utf8')); }, 3), 50);
  const texts = files.map((f) => readFileSync(f, 'utf8'));
  const scan = pct(time(() => { let c = 0; for (const t of texts) if (t.includes('ledger')) c++; return c; }, 5), 50);
  const bareCommit = pct(time((i) => {
    const p = 'floor.txt';
    writeFileSync(join(dir, p), `floor ${i}\n`);
    const idx = join(dir, '.git', 'bench-index');
    const e2 = { ...env, GIT_INDEX_FILE: idx };
    execFileSync('git', ['read-tree', 'HEAD'], { cwd: dir, env: e2 });
    execFileSync('git', ['update-index', '--add', '--', p], { cwd: dir, env: e2 });
    const tree = execFileSync('git', ['write-tree'], { cwd: dir, env: e2, encoding: 'utf8' }).trim();
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, env, encoding: 'utf8' }).trim();
    const c = execFileSync('git', ['commit-tree', tree, '-p', head, '-m', 'floor'], { cwd: dir, env, encoding: 'utf8' }).trim();
    execFileSync('git', ['update-ref', 'HEAD', c, head], { cwd: dir, env });
    rmSync(idx, { force: true });
  }, 3), 50);
  // The user's own commit of one file in this workspace (`git add` + `git commit`): the floor the
  // daemon's create is held to.
  const addCommit = pct(time((i) => {
    writeFileSync(join(dir, 'floor-add.txt'), `add ${i}\n`);
    execFileSync('git', ['add', 'floor-add.txt'], { cwd: dir, env });
    execFileSync('git', ['commit', '-q', '--no-verify', '-m', 'floor'], { cwd: dir, env });
  }, 5), 50);
  // The same work in a new process, end to end: what a one-shot command that read every file would cost.
  const readParseScript = `const fs=require('fs');for(const f of JSON.parse(process.argv[1]))JSON.parse(fs.readFileSync(f,'utf8'));`;
  const listFile = join(dir, '.git', 'bench-files.json');
  writeFileSync(listFile, JSON.stringify(files));
  const readParseOnce = () => execFileSync(process.execPath, ['-e', `${readParseScript.replace('JSON.parse(process.argv[1])', `JSON.parse(fs.readFileSync(${JSON.stringify(listFile)},'utf8'))`)}`]);
  const readParseProcess = pct(time(readParseOnce, 3), 50);
  row(n, 'floor: read+parse all entry files', readParse);
  row(n, 'floor: read+parse all entry files, new process end to end', readParseProcess);
  row(n, 'floor: substring scan of all files', scan);
  row(n, 'floor: bare git commit (plumbing)', bareCommit);
  row(n, 'floor: git add + git commit of one file', addCommit);

  // Every figure that starts a process is taken first, while this process is small: forking
  // from a parent holding a 10K-entry index in memory costs tens of ms more per child, which
  // would be charged to the figure and not to its floor.
  // Queries end to end (a new process each), with caches present (cold process, warm disk cache).
  runCli(dir, ['query', 'warmup']);
  // Each cold query is paired with a floor sample taken right before it: on a shared machine the
  // load moves by tens of percent within a minute, and the ratio must compare like with like.
  const cold = [];
  const coldFloor = [];
  for (let i = 0; i < (quick ? 3 : 7); i++) {
    coldFloor.push(time(readParseOnce)[0]);
    cold.push(time(() => runCli(dir, ['query', QUERIES[i % QUERIES.length], '--json']))[0]);
  }
  row(n, 'query end to end, cold process (p50)', pct(cold, 50), 'read+parse, new process (interleaved)', pct(coldFloor, 50), 'ms', n === 10000 ? '<= 1.5x read+parse' : undefined);
  const list = paired(() => runCli(dir, ['list', '--json']), quick ? 3 : 5);
  row(n, 'list end to end (p50)', pct(list.xs, 50), 'node start (interleaved)', list.floor, 'ms', n === 10000 ? '<= 1.5x node + 50 ms' : undefined);

  // Writes.
  const create = time((i) => {
    const e = { ...makeEntry(n + i), id: undefined, created_at: undefined, updated_at: undefined, status: undefined, superseded_by: undefined, created_by: undefined };
    for (const k of Object.keys(e)) if (e[k] === undefined) delete e[k];
    e.summary = `bench create ${i} ${e.summary}`.slice(0, 300);
    runCli(dir, ['create', 'bench', '--file', '-'], JSON.stringify(e));
  }, quick ? 3 : 5);
  row(n, 'create one entry end to end (p50)', pct(create, 50), 'node start + bare commit', nodeStart + bareCommit, 'ms', n === 10000 ? '<= 400' : undefined);
  const updates = Array.from({ length: 100 }, (_, i) => {
    const e = makeEntry(n + 1000 + i);
    return { operation: 'create', entry: { section: e.section, kind: e.kind, subject: e.subject, scope: e.scope, summary: `apply ${i} ${e.summary}`.slice(0, 300), content: e.content, tags: e.tags, confidence: e.confidence, evidence: e.evidence } };
  });
  const apply = time(() => runCli(dir, ['apply', 'bench', '--file', '-'], JSON.stringify(updates)))[0];
  row(n, 'apply 100 updates end to end', apply, 'node start + bare commit', nodeStart + bareCommit);
  // A batch of 5,000 creates (apply and import), beside the floor of writing that many small files
  // (temp file and rename, as every entry write does) plus a bare commit. The quick run (`npm
  // test`) checks the harness, not the figure: a tenth of it.
  if (n === sizes[0]) {
    const bigN = quick ? 500 : 5000;
    const big = Array.from({ length: bigN }, (_, i) => {
      const e = makeEntry(n + 5000 + i);
      return { operation: 'create', entry: { section: e.section, kind: e.kind, subject: e.subject, scope: e.scope, summary: `batch ${i} ${e.summary}`.slice(0, 300), content: e.content, tags: e.tags, confidence: e.confidence, evidence: e.evidence, ...(e.section === 'state' ? { valid_from: '2026-01-01T00:00:00Z', valid_to: '2030-01-01T00:00:00Z' } : {}) } };
    });
    // In a workspace of its own: 5,000 more entries would change every later figure of this size.
    const bdir = setup(0);
    const t0 = performance.now();
    const out = runCli(bdir, ['apply', 'bench', '--file', '-', '--json'], JSON.stringify(big));
    const applyBig = performance.now() - t0;
    const applied = JSON.parse(out.stdout).applied.length;
    const floorDir = join(stateDirOf(bdir).dir, 'bench-floor');
    const writeFloor = time(() => {
      rmSync(floorDir, { recursive: true, force: true });
      execFileSync('mkdir', ['-p', floorDir]);
      for (let i = 0; i < bigN; i++) {
        const tmp = join(floorDir, `.${i}.tmp`);
        writeFileSync(tmp, JSON.stringify(big[i]));
        renameSync(tmp, join(floorDir, `${i}.json`));
      }
    })[0];
    rmSync(bdir, { recursive: true, force: true });
    const count = bigN.toLocaleString('en-US');
    row(n, `apply ${count} creates end to end (${applied} applied)`, applyBig, `write ${count} files + bare commit`, writeFloor + bareCommit, 'ms', quick ? undefined : '<= 5000');
  }
  // The daemon's peak resident memory (VmHWM) as a user meets it, default settings: started where
  // the workspace has no local state (a fresh clone), through its start-up work (index build,
  // vectors, decay, freshness, the first evidence check) until idle; then started again with the
  // state that run left. On a copy of the workspace: the figures below keep theirs.
  {
    const fdir = `${dir}-fresh`;
    execFileSync('cp', ['-a', dir, fdir]);
    const stateDir = stateDirOf(fdir).dir;
    rmSync(stateDir, { recursive: true, force: true });
    const peakRun = async (label) => {
      const t0 = performance.now();
      const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, BIN, 'memory', 'daemon', 'run', '--heartbeat', '500'], { cwd: fdir, env: daemonEnv(env), stdio: 'ignore' });
      const paths = daemonPaths(stateDir);
      for (;;) {
        const res = await request(paths, 'status', {}, 1000);
        const st = res && 'result' in res ? res.result : undefined;
        const sem = st?.semantic;
        const jobsDone = st && ['decay', 'evidence', 'freshness'].every((j) => st.jobs?.[j]?.runs >= 1);
        if (jobsDone && (!sem?.enabled || (sem.state === 'ready' && sem.vectors_current >= sem.entries))) break;
        if (sem && ['failed'].includes(sem.state)) throw new Error(`bench: semantic search failed (${sem.error ?? ''})`);
        if (performance.now() - t0 > Math.max(300_000, n * 30)) throw new Error(`bench: daemon (${label}) never finished its start-up work`);
        await new Promise((res2) => setTimeout(res2, 100));
      }
      await waitIdle(child.pid, Math.max(60_000, n * 2));
      const ms = performance.now() - t0;
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kib = (k) => Number(status.match(new RegExp(`${k}:\\s+(\\d+)`))?.[1] ?? 0) / 1024;
      const cpu = cpuMs(child.pid);
      child.kill('SIGTERM');
      await new Promise((res2) => child.on('exit', res2));
      return { ms, peak: kib('VmHWM'), rss: kib('VmRSS'), cpu };
    };
    const fresh = await peakRun('no local state');
    row(n, 'daemon peak resident memory, first start with no local state (index build, vectors, start-up jobs)', fresh.peak, undefined, undefined, 'MiB', '<= 200');
    row(n, 'daemon first start with no local state to idle, wall', fresh.ms);
    if (fresh.cpu !== null) row(n, 'daemon first start with no local state to idle, its CPU time', fresh.cpu);
    const warm = await peakRun('local state present');
    row(n, 'daemon peak resident memory, start with local state', warm.peak, undefined, undefined, 'MiB', '<= 200');
    rmSync(fdir, { recursive: true, force: true });
  }
  // The daemon: start time, cold CLI queries through it, edit -> searchable latency, memory.
  {
    const paths = daemonPaths(stateDirOf(dir).dir);
    const t0 = performance.now();
    // Lexical figures: the model stays unloaded here (semantic search is measured on its own below).
    // Started as `daemon start` starts it (its Node flags), in the foreground.
    const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, BIN, 'memory', 'daemon', 'run', '--heartbeat', '500'], { cwd: dir, env: daemonEnv({ ...env, BASS_AGENTS_SEMANTIC: 'off' }), stdio: 'ignore' });
    for (;;) {
      const r = await request(paths, 'ping', {}, 500);
      if (r && 'result' in r) break;
      if (performance.now() - t0 > Math.max(120_000, n * 6)) throw new Error('bench: daemon did not start');
      await new Promise((res) => setTimeout(res, 10));
    }
    const startMs = performance.now() - t0;
    row(n, 'daemon start to first answer', startMs, 'read+parse', readParse);
    // Its start-up catch-up (decay, freshness, a first evidence validation of every entry) runs
    // in the background; the figures below are its steady state, so wait for that to finish.
    for (;;) {
      const st = JSON.parse(readFileSync(join(stateDirOf(dir).dir, 'daemon/status.json'), 'utf8'));
      if (st.jobs?.decay?.runs >= 1 && st.jobs?.evidence?.runs >= 1 && st.jobs?.freshness?.runs >= 1) break;
      if (performance.now() - t0 > Math.max(300_000, n * 10)) throw new Error('bench: daemon start-up jobs did not finish');
      await new Promise((res) => setTimeout(res, 50));
    }
    row(n, 'daemon start to start-up jobs done', performance.now() - t0, 'read+parse', readParse);
    // ...and for whatever they left running in the background (the evidence check of a large store goes on in chunks).
    await waitIdle(child.pid, Math.max(60_000, n * 2));
    // As for the creates below, the first queries a daemon answers run its query code for the
    // first time (compiling it): two are made and not counted, so the figure is a serving daemon's.
    for (let i = 0; i < 2; i++) runCli(dir, ['query', QUERIES[(i + 3) % QUERIES.length], '--json']);
    const viaDaemon = paired((i) => runCli(dir, ['query', QUERIES[i % QUERIES.length], '--json']), quick ? 3 : 11);
    row(n, 'query end to end through the daemon (p50)', pct(viaDaemon.xs, 50), 'node start (interleaved)', viaDaemon.floor, 'ms', n === 10000 ? '<= 1.5x' : '<= 2x');
    // Writes handed to the daemon (it has the catalog and the schemas loaded); the first one warms it.
    const daemonCreate = paired((i) => {
      const e = { ...makeEntry(n + 9000 + i), id: undefined, created_at: undefined, updated_at: undefined, status: undefined, superseded_by: undefined, created_by: undefined };
      for (const k of Object.keys(e)) if (e[k] === undefined) delete e[k];
      e.summary = `bench daemon create ${i} ${e.summary}`.slice(0, 300);
      runCli(dir, ['create', 'bench', '--file', '-'], JSON.stringify(e));
    }, quick ? 3 : 6);
    const createFloor = daemonCreate.floor + 1.5 * addCommit;
    row(n, 'create one entry through the daemon (p50)', pct(daemonCreate.xs.slice(1), 50), 'node start (interleaved) + 1.5x git add + commit', createFloor, 'ms', '<= 1.2x');
    // Eight writers at once, each a CLI process per create, through the daemon (group commit):
    // writes per second beside the rate at which every core could start node processes
    // and do nothing else, and every acknowledged id checked in the tree afterwards.
    {
      const writers = 8;
      const each = quick ? 4 : 100;
      const acked = [];
      const t1 = performance.now();
      await Promise.all(
        Array.from({ length: writers }, async (_, p) => {
          for (let i = 0; i < each; i++) {
            const e = { section: 'observations', kind: 'other', subject: `bench.writer${p}`, scope: 'repo', summary: `bench concurrent write ${i} of writer ${p} at ${n}`, content: `writer ${p}`, confidence: 0.8, evidence: [{ type: 'code', uri: 'src/bench.ts', note: '' }] };
            const r = await runCliAsync(dir, ['create', 'bench', '--file', '-', '--agent', `w${p}`], JSON.stringify(e));
            if (r.code !== 0) throw new Error(`bench: concurrent write failed: ${r.stderr}`);
            acked.push(r.stdout.trim());
          }
        }),
      );
      const seconds = (performance.now() - t1) / 1000;
      const inTree = new Set(execFileSync('git', ['ls-files', 'ai-memory/bench'], { cwd: dir, env, encoding: 'utf8', maxBuffer: 1 << 28 }).split('\n').map((f) => f.split('/').pop().replace(/\.json$/, '')));
      const lost = acked.filter((id) => !inTree.has(id)).length;
      const startsPerSecond = (cpus().length * 1000) / nodeStart;
      row(n, `writes/s, ${writers} writers through the daemon (${acked.length} writes, ${lost} lost)`, acked.length / seconds, 'node starts/s on all cores', startsPerSecond, 'writes/s', '>= 12, none lost');
    }
    const lat = [];
    const sectionDir = join(dir, 'ai-memory/bench/learnings');
    for (let i = 0; i < (quick ? 5 : 20); i++) {
      const token = `zqx${i}edit${n}`;
      const e = { ...makeEntry(n + 5000 + i), section: 'learnings', summary: `hand edit ${token}` };
      const t = performance.now();
      writeFileSync(join(sectionDir, `${e.id}.json`), serializeEntry(e));
      for (;;) {
        // A thin client's request: the command line, run by the daemon.
        const argv = ['memory', 'query', token, '--json', '--status', 'any', '--min-confidence', '0'];
        const r = await request(paths, 'cli', { argv, cwd: dir, root: dir, env: {}, stdin: null, clock: null }, 2000);
        const out = r && 'result' in r ? r.result.output.filter(([fd]) => fd === 1).map(([, t]) => t).join('') : '';
        if (out && JSON.parse(out).some((h) => h.id === e.id)) break;
        if (performance.now() - t > 10_000) throw new Error('bench: edit never became searchable');
        await new Promise((res) => setTimeout(res, 2));
      }
      lat.push(performance.now() - t);
    }
    row(n, 'edit -> searchable through the daemon (p50)', pct(lat, 50), 'debounce', 40, 'ms', '<= 300');
    row(n, 'edit -> searchable through the daemon (p99)', pct(lat, 99), 'debounce', 40, 'ms', '<= 300');
    const rss = Number(readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)?.[1] ?? 0) / 1024;
    row(n, 'daemon resident memory', rss, undefined, undefined, 'MiB');
    child.kill('SIGTERM');
    await new Promise((res) => child.on('exit', res));
  }
  // Semantic search with the default settings (the static table shipped in the package): how
  // fast entries are embedded in process, beside reading and parsing them; then a daemon started
  // with no vector cached: the time until every entry has a vector, CLI queries through it while
  // it computes them (the work yields to queries) and after, and its resident memory.
  if (!args.includes('--no-semantic')) {
    const engine = staticEmbedder();
    if (!engine) throw new Error('bench: the static embedding table is missing (models/)');
    const snap = new MemoryService({ cwd: dir, env }).engine.snapshot();
    const texts = snap.entries.map((se) => embeddedText(se.entry));
    const embedMs = time(() => engine.embed(texts))[0];
    row(n, 'embedding throughput, static table (in process)', (texts.length / embedMs) * 1000, 'read+parse rate', (n / readParse) * 1000, 'texts/s', '>= 10K in 60 s');
    const paths = daemonPaths(stateDirOf(dir).dir);
    // Each start's window of embedding is a few seconds, room for four or five queries, and what
    // those pay moves from start to start; the row pools the queries of several starts (the
    // last start stays up for the figures after it).
    const starts = quick ? 1 : 3;
    const during = [];
    const duringFloor = [];
    const untilAll = [];
    let child;
    let peak = 0;
    for (let s = 0; s < starts; s++) {
      rmSync(VectorStore.path(stateDirOf(dir).dir), { force: true });
      const t0 = performance.now();
      child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, BIN, 'memory', 'daemon', 'run', '--heartbeat', '200'], { cwd: dir, env: daemonEnv(env), stdio: 'ignore' });
      let warmed = false;
      for (;;) {
        const res = await request(paths, 'status', {}, 1000);
        const sem = res && 'result' in res ? res.result.semantic : undefined;
        if (sem && ['unavailable', 'failed', 'off'].includes(sem.state)) throw new Error(`bench: semantic search did not start (${sem.state}${sem.error ? `: ${sem.error}` : ''})`);
        if (sem?.state === 'ready' && sem.entries >= n && sem.vectors_current >= sem.entries) {
          untilAll.push(performance.now() - t0);
          break;
        }
        if (performance.now() - t0 > 600_000) throw new Error('bench: semantic search never had every vector');
        // A CLI query while the vectors are computed, beside a node start (the daemon's first
        // query compiles its query code, as in the lexical figures: made and not counted).
        if (res && 'result' in res && !warmed) {
          runCli(dir, ['query', 'warm up', '--json']);
          warmed = true;
        } else if (res && 'result' in res) {
          duringFloor.push(nodeOnce());
          during.push(time(() => runCli(dir, ['query', QUERIES[during.length % QUERIES.length], '--json']))[0]);
        } else await new Promise((res2) => setTimeout(res2, 50));
      }
      peak = Math.max(peak, Number(readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmHWM:\s+(\d+)/)?.[1] ?? 0) / 1024);
      if (s === starts - 1) break;
      child.kill('SIGTERM');
      await new Promise((res2) => child.on('exit', res2));
    }
    row(n, 'daemon start to a vector for every entry (default settings)', Math.max(...untilAll), 'read+parse', readParse, 'ms', '<= 60000');
    if (during.length)
      row(n, `query through the daemon while it embeds (p50 of ${during.length}, ${starts} starts)`, pct(during, 50), 'node start (interleaved)', pct(duringFloor, 50), 'ms', '<= 1.5x');
    await waitIdle(child.pid, Math.max(60_000, n * 2));
    runCli(dir, ['query', 'warm up', '--json']);
    const viaSemantic = paired((i) => runCli(dir, ['query', QUERIES[i % QUERIES.length], '--json']), quick ? 3 : 9);
    row(n, 'query end to end through the daemon, semantic on (p50)', pct(viaSemantic.xs, 50), 'node start (interleaved)', viaSemantic.floor, 'ms', '<= 1.5x');
    const rss = Number(readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)?.[1] ?? 0) / 1024;
    row(n, 'daemon resident memory, semantic on (every vector held; peak while embedding)', Math.max(rss, peak), undefined, undefined, 'MiB', '<= 200');
    child.kill('SIGTERM');
    await new Promise((res2) => child.on('exit', res2));
  }
  // Index build and snapshot load, in process, in a block of their own: what they hold
  // (a second index, every entry read in full) is garbage before the warm figures below, which
  // are a process holding one index, as the daemon does.
  const snapFile = join(stateDirOf(dir).dir, 'cache/index.bin');
  {
    const snap = new MemoryService({ cwd: dir, env, longLived: true }).engine.snapshot();
    const docs = snap.entries.map((se) => ({ key: `${se.project}/${se.meta.id}`, stamp: se.stamp, load: () => se.entry }));
    let built;
    const build = time(() => { built = SearchIndex.empty(); built.sync(docs); })[0];
    built.save(snapFile, true);
    const load = pct(time(() => SearchIndex.load(snapFile), 3), 50);
    row(n, 'index build (in process)', build, 'read+parse', readParse);
    row(n, 'index snapshot load (in process)', load, 'read+parse', readParse);
  }
  const svc = new MemoryService({ cwd: dir, env, longLived: true });

  // Warm queries in process (what the daemon and MCP server see).
  svc.query('warm', {}, {});
  const warm = time((i) => svc.query(QUERIES[i % QUERIES.length], {}, { refresh: false }), 200);
  row(n, 'query warm in process p50', pct(warm, 50), 'substring scan', scan, 'ms', n === 10000 ? '<= 5' : n === 100000 ? '<= 25' : undefined);
  row(n, 'query warm in process p99', pct(warm, 99), 'substring scan', scan);
  const warmRefresh = time((i) => svc.query(QUERIES[i % QUERIES.length], {}, {}), 20);
  row(n, 'query in process with stat refresh p50', pct(warmRefresh, 50), 'substring scan', scan);

  // Lifecycle: a decay pass over every entry (dry run; batches of 1K), in process.
  const decayRuns = [];
  for (let i = 0; i < 3; i++) decayRuns.push((await svc.decay('bench', { overrides: { curve: 'exponential', exponential: { stability_hours: 24 * 365 } } })).duration_ms);
  row(n, 'decay pass, all entries (in process, p50)', pct(decayRuns, 50), 'read+parse', readParse, 'ms', n === 10000 ? '<= 1000' : undefined);
  svc.getStatistics('bench');
  const stats = time(() => svc.getStatistics('bench', {}, { refresh: false }), 10);
  row(n, 'stats warm in process (incremental, p50)', pct(stats, 50), 'read+parse', readParse, 'ms', '<= 50 warm');
  const statsRefresh = time(() => svc.getStatistics('bench'), 3);
  row(n, 'stats in process with stat refresh (p50)', pct(statsRefresh, 50), 'read+parse', readParse);
  const statsRange = time(() => svc.getStatistics('bench', { start_date: '2026-01-02T00:00:00Z' }, { refresh: false }), 3);
  row(n, 'stats with a date range (scan, p50)', pct(statsRange, 50), 'read+parse', readParse);
  rmSync(dir, { recursive: true, force: true });
}

const machine = { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? 'unknown', memory_gib: Math.round(totalmem() / 2 ** 30), node: process.version, date: new Date().toISOString().slice(0, 10) };
if (asJson) {
  process.stdout.write(`${JSON.stringify({ machine, results }, null, 2)}\n`);
} else {
  console.log(`machine: ${machine.cpus} cores (${machine.cpu_model}), ${machine.memory_gib} GiB, node ${machine.node}`);
  const header = ['size', 'figure', 'value', 'floor', 'ratio', 'target'];
  const rows = results.map((r) => [String(r.size), r.figure, `${r.value} ${r.unit}`, r.floor ? `${r.floor} ${r.floor_value}${r.unit.endsWith("/s") ? "/s" : " ms"}` : '', r.ratio === null ? '' : `${r.ratio}x`, r.target ?? '']);
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const r of [header, ...rows]) console.log(r.map((c, i) => c.padEnd(w[i])).join('  '));
}

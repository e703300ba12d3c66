#!/usr/bin/env node
// `npm run bench [-- --quick | --full | --json | --sizes 1000,10000]`
//
// Measures what users feel on generated, realistic entries, and the machine's own floor in the
// same run (node start, reading+parsing all entry files, a plain substring scan, a bare git
// commit through plumbing), printing each figure beside its floor as a ratio.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serializeEntry } from '../dist/core/entry.js';
import { SearchIndex } from '../dist/index/search-index.js';
import { MemoryService } from '../dist/service/memory-service.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(HERE, '../bin/bass-agents.js');
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const asJson = args.includes('--json');
const sizesArg = args.find((a) => a.startsWith('--sizes='))?.slice(8) ?? (args.includes('--sizes') ? args[args.indexOf('--sizes') + 1] : undefined);
const sizes = sizesArg ? sizesArg.split(',').map(Number) : quick ? [1000] : args.includes('--full') ? [1000, 10000, 100000] : [1000, 10000];
const env = { ...process.env, BASS_AGENTS_AGENT: 'bench' };
for (const k of Object.keys(env)) if (k.startsWith('GIT_') || (k.startsWith('BASS_AGENTS_') && k !== 'BASS_AGENTS_AGENT')) delete env[k];

// ---------------------------------------------------------------- data
let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const pick = (a) => a[Math.floor(rand() * a.length)];
const SYL = ['ka', 'lo', 'mi', 'ver', 'tan', 'sel', 'dor', 'pri', 'que', 'nal', 'bis', 'tor', 'fen', 'rah', 'gul', 'om', 'zet', 'cra', 'dun', 'ple'];
const TECH = 'cache index ledger invoice billing retry queue worker deploy rollback schema migration tenant token session latency throughput shard replica lock timeout webhook consumer offset kafka postgres redis config feature flag canary release build pipeline test flaky memory leak cpu disk quota auth oauth saml audit log metric alert incident runbook'.split(' ');
const VOCAB = [...TECH, ...Array.from({ length: 4000 }, () => Array.from({ length: 2 + Math.floor(rand() * 2) }, () => pick(SYL)).join(''))];
const sentence = (n) => Array.from({ length: n }, () => pick(VOCAB)).join(' ');
const SECTIONS = ['decisions', 'observations', 'learnings'];
const SCOPES = ['repo', 'org', 'service:billing', 'service:search', 'service:auth', 'environment:prod'];

function makeEntry(i) {
  const t = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
  const summary = sentence(40).slice(0, 295);
  const content = sentence(60 + Math.floor(rand() * 220)).slice(0, 2000);
  const id = `B${String(i).padStart(10, '0')}`;
  return {
    id, section: pick(SECTIONS), kind: 'other', subject: `${pick(TECH)}.${pick(TECH)}`, scope: pick(SCOPES),
    summary, content, tags: [pick(TECH), pick(TECH)].filter((v, k, a) => a.indexOf(v) === k),
    confidence: Math.round((0.5 + rand() * 0.5) * 100) / 100,
    evidence: [{ type: pick(['code', 'artifact', 'doc', 'log']), uri: `src/${pick(TECH)}/${pick(TECH)}.ts`, note: '' }],
    status: 'active', superseded_by: null, related_entries: [], valid_from: null, valid_to: null,
    created_by: `agent-${i % 7}`, created_at: t, updated_at: t,
  };
}

function git(cwd, ...a) {
  return execFileSync('git', a, { cwd, env, encoding: 'utf8', maxBuffer: 1 << 28 });
}

function setup(n) {
  const dir = mkdtempSync(join(tmpdir(), `bass-agents-bench-${n}-`));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Bench');
  git(dir, 'config', 'user.email', 'bench@example.com');
  git(dir, 'config', 'gc.auto', '0');
  runCli(dir, ['init', 'bench']);
  for (const s of SECTIONS) mkdirSync(join(dir, 'ai-memory/bench', s), { recursive: true });
  for (let i = 0; i < n; i++) {
    const e = makeEntry(i);
    writeFileSync(join(dir, 'ai-memory/bench', e.section, `${e.id}.json`), serializeEntry(e));
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'bench data');
  return dir;
}

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
function runCli(cwd, a, input) {
  const r = spawnSync(process.execPath, [BIN, 'memory', ...a], { cwd, env, encoding: 'utf8', input });
  if (r.status !== 0 && r.status !== 1) throw new Error(`bench: ${a.join(' ')} failed: ${r.stderr}`);
  return r;
}
function allFiles(dir) {
  const out = [];
  for (const s of SECTIONS) for (const f of readdirSync(join(dir, 'ai-memory/bench', s))) out.push(join(dir, 'ai-memory/bench', s, f));
  return out;
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
  row(n, 'floor: read+parse all entry files', readParse);
  row(n, 'floor: substring scan of all files', scan);
  row(n, 'floor: bare git commit (plumbing)', bareCommit);

  // Index build and snapshot load, in process.
  const svc = new MemoryService({ cwd: dir, env });
  const snap = svc.snapshot();
  const docs = snap.entries.map((se) => ({ key: `${se.project}/${se.entry.id}`, stamp: se.stamp, entry: se.entry }));
  let built;
  const build = time(() => { built = SearchIndex.empty(); built.sync(docs); })[0];
  const snapFile = join(dir, '.bass-agents/cache/index.json');
  built.save(snapFile, true);
  const load = pct(time(() => SearchIndex.load(snapFile), 3), 50);
  row(n, 'index build (in process)', build, 'read+parse', readParse);
  row(n, 'index snapshot load (in process)', load, 'read+parse', readParse);

  // Queries end to end (a new process each), with caches present (cold process, warm disk cache).
  runCli(dir, ['query', 'warmup']);
  const cold = time((i) => runCli(dir, ['query', QUERIES[i % QUERIES.length], '--json']), quick ? 3 : 5);
  row(n, 'query end to end, cold process (p50)', pct(cold, 50), 'read+parse', readParse + nodeStart, 'ms', n === 10000 ? '<= 1.5x read+parse' : undefined);
  const list = time(() => runCli(dir, ['list', '--json']), 3);
  row(n, 'list end to end (p50)', pct(list, 50), 'node start', nodeStart);

  // Warm queries in process (what the daemon and MCP server see).
  svc.query('warm', {}, {});
  const warm = time((i) => svc.query(QUERIES[i % QUERIES.length], {}, { refresh: false }), 200);
  row(n, 'query warm in process p50', pct(warm, 50), 'substring scan', scan, 'ms', n === 10000 ? '<= 5' : n === 100000 ? '<= 25' : undefined);
  row(n, 'query warm in process p99', pct(warm, 99), 'substring scan', scan);
  const warmRefresh = time((i) => svc.query(QUERIES[i % QUERIES.length], {}, {}), 20);
  row(n, 'query in process with stat refresh p50', pct(warmRefresh, 50), 'substring scan', scan);

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
  const stats = time(() => svc.getStatistics('bench'), 3);
  row(n, 'stats (in process, p50)', pct(stats, 50), 'read+parse', readParse, 'ms', '<= 50 warm');
  rmSync(dir, { recursive: true, force: true });
}

const machine = { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? 'unknown', memory_gib: Math.round(totalmem() / 2 ** 30), node: process.version, date: new Date().toISOString().slice(0, 10) };
if (asJson) {
  process.stdout.write(`${JSON.stringify({ machine, results }, null, 2)}\n`);
} else {
  console.log(`machine: ${machine.cpus} cores (${machine.cpu_model}), ${machine.memory_gib} GiB, node ${machine.node}`);
  const header = ['size', 'figure', 'value', 'floor', 'ratio', 'target'];
  const rows = results.map((r) => [String(r.size), r.figure, `${r.value} ${r.unit}`, r.floor ? `${r.floor} ${r.floor_value} ms` : '', r.ratio === null ? '' : `${r.ratio}x`, r.target ?? '']);
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const r of [header, ...rows]) console.log(r.map((c, i) => c.padEnd(w[i])).join('  '));
}

#!/usr/bin/env node
// `npm run stress [-- --quick | --processes N --writes M | --json]`
//
// Many processes writing memory at once into one real git repository that also holds a user's
// staged change, then a kill -9 loop; afterwards it checks that every acknowledged entry is
// present, valid and in git history, that `git fsck` is clean, that the user's index still holds
// exactly their staged change, and that a lock left by a killed writer is recovered. Exits 1 on
// any violation. Bounded in time (kill loop: --kill-seconds, default 20).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = resolve(dirname(fileURLToPath(import.meta.url)), '../bin/bass-agents.js');
const args = process.argv.slice(2);
const num = (name, dflt) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : dflt);
const quick = args.includes('--quick');
const processes = num('processes', quick ? 4 : 8);
const writes = num('writes', quick ? 5 : 25);
const killSeconds = num('kill-seconds', quick ? 4 : 20);
const asJson = args.includes('--json');

const env = { ...process.env, BASS_AGENTS_LOCK_TIMEOUT_MS: '120000' };
for (const k of Object.keys(env)) if (k.startsWith('GIT_') || (k.startsWith('BASS_AGENTS_') && k !== 'BASS_AGENTS_LOCK_TIMEOUT_MS')) delete env[k];
const git = (dir, ...a) => execFileSync('git', a, { cwd: dir, env, encoding: 'utf8', maxBuffer: 1 << 26 });
const pct = (xs, p) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : 0);

function entry(p, i) {
  return {
    section: 'observations', kind: 'other', subject: `stress.p${p}`, scope: 'repo',
    summary: `stress write ${i} of process ${p}`, content: `written by process ${p}`, confidence: 0.8,
    evidence: [{ type: 'code', uri: 'src/stress.ts', note: '' }],
  };
}

function runCli(dir, a, input, extraEnv = {}) {
  return new Promise((res) => {
    const t = performance.now();
    const child = spawn(process.execPath, [BIN, 'memory', ...a], { cwd: dir, env: { ...env, ...extraEnv } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.end(input ?? '');
    child.on('close', (code, signal) => res({ code, signal, stdout, stderr, ms: performance.now() - t, child }));
  });
}

const dir = mkdtempSync(join(tmpdir(), 'bass-agents-stress-'));
const failures = [];
const fail = (m) => failures.push(m);
try {
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Stress');
  git(dir, 'config', 'user.email', 'stress@example.com');
  writeFileSync(join(dir, 'app.txt'), 'v1\n');
  git(dir, 'add', 'app.txt');
  git(dir, 'commit', '-qm', 'app');
  await runCli(dir, ['init', 'demo']);
  // The user's own work in progress: staged, must stay staged and uncommitted.
  writeFileSync(join(dir, 'app.txt'), 'v2 staged by the user\n');
  git(dir, 'add', 'app.txt');
  const stagedBefore = git(dir, 'diff', '--cached', '--name-only');

  // Phase 1: N processes x M writes, all at once.
  const t0 = performance.now();
  const lat = [];
  const ids = [];
  await Promise.all(
    Array.from({ length: processes }, async (_, p) => {
      for (let i = 0; i < writes; i++) {
        const r = await runCli(dir, ['create', 'demo', '--file', '-', '--agent', `p${p}`], JSON.stringify(entry(p, i)));
        lat.push(r.ms);
        if (r.code !== 0) fail(`process ${p} write ${i}: exit ${r.code}: ${r.stderr.trim()}`);
        else ids.push(r.stdout.trim());
      }
    }),
  );
  const phase1 = performance.now() - t0;

  // Phase 2: writers killed with SIGKILL at random moments, for a bounded time.
  let killed = 0;
  let survived = 0;
  const killEnd = Date.now() + killSeconds * 1000;
  // (Writes are fast enough that a round can finish before its kill: go on past the end, up to
  // twice as long, until at least one writer was killed mid-way.)
  const hardEnd = Date.now() + 2 * killSeconds * 1000;
  let k = 0;
  while (Date.now() < killEnd || (killed === 0 && Date.now() < hardEnd)) {
    const batch = Array.from({ length: 3 }, (_, j) => {
      const pr = runCli(dir, ['apply', 'demo', '--file', '-', '--agent', 'killer'], JSON.stringify(Array.from({ length: 5 }, (_, i) => ({ operation: 'create', entry: entry(100 + k, i * 10 + j) }))));
      return pr;
    });
    k++;
    await new Promise((r) => setTimeout(r, 50 + Math.random() * 900)); // some finish, some die mid-way
    // Kill whichever writers are still running.
    for (const line of execFileSync('ps', ['-ww', '-eo', 'pid,args'], { encoding: 'utf8' }).split('\n')) {
      if (line.includes(BIN) && line.includes('--agent killer')) {
        try {
          process.kill(Number(line.trim().split(/\s+/)[0]), 'SIGKILL');
          killed++;
        } catch {
          /* already done */
        }
      }
    }
    for (const r of await Promise.all(batch)) if (r.code === 0) survived++;
  }

  // A write after the kill loop must go through (a stale lock is taken over).
  const tr = performance.now();
  const after = await runCli(dir, ['create', 'demo', '--file', '-'], JSON.stringify(entry(999, 0)));
  const recoverMs = performance.now() - tr;
  if (after.code !== 0) fail(`write after the kill loop failed: ${after.stderr.trim()}`);

  // Checks.
  const inTree = new Set(git(dir, 'ls-files', 'ai-memory/demo').split('\n').filter((f) => f.endsWith('.json')).map((f) => f.split('/').pop().slice(0, -5)));
  const inHistory = new Set([...git(dir, 'log', '--format=%B').matchAll(/Memory-Id: (\S+)/g)].map((m) => m[1]));
  for (const id of ids) {
    if (!inTree.has(id)) fail(`acknowledged entry ${id} is missing from the tree`);
    if (!inHistory.has(id)) fail(`acknowledged entry ${id} is not in git history`);
  }
  if (new Set(ids).size !== ids.length) fail('duplicate ids were handed out');
  const doctor = await runCli(dir, ['doctor', '--json']);
  const doc = JSON.parse(doctor.stdout || '{"ok":false,"problems":[{"message":"doctor printed nothing"}]}');
  if (!doc.ok) fail(`doctor found problems: ${doc.problems.slice(0, 5).map((p) => `${p.file}: ${p.message}`).join('; ')}`);
  try {
    git(dir, 'fsck', '--no-progress', '--strict');
  } catch (err) {
    fail(`git fsck: ${String(err.stdout ?? err.message).trim()}`);
  }
  const stagedAfter = git(dir, 'diff', '--cached', '--name-only');
  if (stagedAfter !== stagedBefore) fail(`the user's staged changes changed: before ${JSON.stringify(stagedBefore)}, after ${JSON.stringify(stagedAfter)}`);
  if (git(dir, 'show', ':app.txt') !== 'v2 staged by the user\n') fail("the user's staged content changed");
  if (git(dir, 'show', 'HEAD:app.txt') !== 'v1\n') fail("the user's staged change was committed");
  const untracked = git(dir, 'status', '--porcelain').split('\n').filter((l) => l && !l.startsWith('M  app.txt'));
  if (untracked.length) fail(`unexpected working tree changes: ${untracked.slice(0, 5).join(', ')}`);
  const tmpLeft = git(dir, 'ls-files', '--others', '--exclude-standard').split('\n').filter((f) => f.endsWith('.tmp'));
  if (tmpLeft.length) fail(`temp files left visible to git: ${tmpLeft.join(', ')}`);

  const report = {
    processes,
    writes_per_process: writes,
    acknowledged_writes: ids.length,
    concurrent_phase_ms: Math.round(phase1),
    writes_per_second: Math.round((ids.length / phase1) * 1000 * 10) / 10,
    write_latency_ms: { p50: Math.round(pct(lat, 50)), p99: Math.round(pct(lat, 99)) },
    kill_loop: { seconds: killSeconds, writers_killed: killed, batches_completed: survived },
    write_after_kills_ms: Math.round(recoverMs),
    entries_in_tree: inTree.size,
    failures,
  };
  if (asJson) console.log(JSON.stringify(report, null, 2));
  else {
    console.log(`${processes} processes x ${writes} writes: ${ids.length} acknowledged in ${report.concurrent_phase_ms} ms (${report.writes_per_second}/s), latency p50 ${report.write_latency_ms.p50} ms, p99 ${report.write_latency_ms.p99} ms`);
    console.log(`kill -9 loop (${killSeconds} s): ${killed} writers killed, ${survived} batches completed; the next write took ${report.write_after_kills_ms} ms (a killed writer's lock goes stale after 10 s)`);
    console.log(`${inTree.size} entries in the tree; doctor ${doc.ok ? 'clean' : 'found problems'}; git fsck ${failures.some((f) => f.startsWith('git fsck')) ? 'FAILED' : 'clean'}; user's index untouched: ${failures.some((f) => f.includes('staged')) ? 'NO' : 'yes'}`);
    for (const f of failures) console.log(`FAIL: ${f}`);
  }
  process.exitCode = failures.length ? 1 : 0;
} finally {
  if (!args.includes('--keep')) rmSync(dir, { recursive: true, force: true });
  else console.error(`kept ${dir}`);
}

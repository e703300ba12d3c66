#!/usr/bin/env node
// `npm run stress [-- --quick | --processes N --writes M --kills K | --daemon | --phases a,b | --json | --keep]`
//
// The crash and race suite, on real git repositories and real CLI processes (not part of
// `npm test`, which runs only `--quick`). Phases:
//   writers     N processes x M creates at once (through a daemon with --daemon), into a repo
//               that also holds a user's staged change: every acknowledged entry committed.
//   kills       applies killed with SIGKILL at random moments, K times; after each kill the next
//               command (a `list`) must leave no uncommitted entry file and no stray lock.
//   git-steps   a writer killed at every git step of a commit (a wrapper `git` on PATH kills its
//               parent before or after the step): the next command finishes or undoes it.
//   user-race   the user commits every 50 ms while memory is written: no entry is ever deleted.
//   checkout    checkout round trips under the daemon: every query right after sees HEAD.
//   hostile     a cloned repository that ships a journal, `.bass-agents/` links (an earlier
//               version's state folder) and a config.yaml linked out of it; a link planted in
//               the state folder: nothing is written through a link or outside the workspace.
//   supersede   processes superseding one entry at once: exactly one wins, no cycle.
//   names       tokens as links, timestamps, imported ids, update targets, project names (init,
//               --project, BASS_AGENTS_PROJECT), writer names and ids to show/supersede/link; every
//               Windows device name: each refused, the tokens nowhere (files, objects, commits).
//   unreadable  remove-project and import --on-conflict overwrite beside entries that cannot be
//               read (conflict markers, a newer version's field, broken JSON, unknown files):
//               nothing removed or written over, doctor names each.
//   daemon-socket  huge requests without a newline (60 MB each, several at once) are refused while
//               another client pings: its worst wait, and the daemon's memory after.
//   daemon-start   several `daemon start` at once, also after a kill -9: one starts, the others
//               say "already running", none "did not start".
//   (The last four run in --quick only when named with --phases: their quick form is in `npm test`.)
//   index-lock  git's index lock held (an open commit editor): writes give up with exit 4 and
//               leave nothing, reads do not wait, writers waiting when it goes finish.
//   gc-race     repack -ad and gc --auto in a loop beside concurrent writers: nothing lost.
//   ctrl-c      SIGINT to the process group at random moments of an apply: 130 and nothing, or 0.
//   git-env     GIT_DIR / GIT_WORK_TREE; callers with their own index or author beside a daemon.
//   repo-policy SSH signing, a vetting pre-commit hook, a clean filter, shared objects through an
//               include, a split index v4, with concurrent writers.
//   (These five too: their quick form is in test/integration/git-commit.test.ts and git-plumbing.test.ts.)
// Each phase adds to `failures`; the script exits 1 if there are any. Bounded in time.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { daemonPaths } from '../dist/daemon/client.js';
import { stateDirOf } from '../dist/store/state-dir.js';

const BIN = resolve(dirname(fileURLToPath(import.meta.url)), '../bin/bass-agents.cjs');
const args = process.argv.slice(2);
const num = (name, dflt) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : dflt);
const quick = args.includes('--quick');
const processes = num('processes', quick ? 4 : 8);
const writes = num('writes', quick ? 5 : 100);
const kills = num('kills', quick ? 4 : 50);
const raceWrites = num('race-writes', quick ? 20 : 100);
const useDaemon = args.includes('--daemon');
const only = args.includes('--phases') ? new Set(args[args.indexOf('--phases') + 1].split(',')) : null;
const phase = (name) => !only || only.has(name);
/** Phases whose quick form is a test of `npm test` already: in a --quick run only when named. */
const fullPhase = (name) => (only ? only.has(name) : !quick);
const asJson = args.includes('--json');

const baseEnv = { ...process.env, BASS_AGENTS_LOCK_TIMEOUT_MS: '120000' };
for (const k of Object.keys(baseEnv)) if (k.startsWith('GIT_') || (k.startsWith('BASS_AGENTS_') && k !== 'BASS_AGENTS_LOCK_TIMEOUT_MS')) delete baseEnv[k];
const git = (dir, ...a) => execFileSync('git', a, { cwd: dir, env: baseEnv, encoding: 'utf8', maxBuffer: 1 << 26 });
const pct = (xs, p) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : 0);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function entry(p, i, extra = {}) {
  return {
    section: 'observations', kind: 'other', subject: `stress.p${p}`, scope: 'repo',
    summary: `stress write ${i} of process ${p}`, content: `written by process ${p}`, confidence: 0.8,
    evidence: [{ type: 'code', uri: 'src/stress.ts', note: '' }], ...extra,
  };
}

function runCli(dir, a, input, extraEnv = {}) {
  const t = performance.now();
  const child = spawn(process.execPath, [BIN, 'memory', ...a], { cwd: dir, env: { ...baseEnv, ...(useDaemon ? {} : { BASS_AGENTS_NO_DAEMON: '1' }), ...extraEnv } });
  const done = new Promise((res) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input ?? '');
    child.on('close', (code, signal) => res({ code, signal, stdout, stderr, ms: performance.now() - t, pid: child.pid }));
  });
  done.child = child;
  return done;
}

/**
 * A scratch repository with one commit, a project, and (optionally) the user's staged change:
 * a copy of one made for the run (git's local state for the copy is its own, none of the first's),
 * not five git commands and a `memory init` for every phase's repository.
 */
let template;
function repo(root, name, { staged = false } = {}) {
  if (!template) {
    template = join(root, 'template');
    mkdirSync(template, { recursive: true });
    git(template, 'init', '-q', '-b', 'main');
    git(template, 'config', 'user.name', 'Stress');
    git(template, 'config', 'user.email', 'stress@example.com');
    git(template, 'config', 'gc.auto', '0');
    // (Nor the maintenance run git starts after each of the user's commits: gc.auto=0 leaves it nothing to do.)
    git(template, 'config', 'maintenance.auto', 'false');
    writeFileSync(join(template, 'app.txt'), 'v1\n');
    git(template, 'add', 'app.txt');
    git(template, 'commit', '-qm', 'app');
    execFileSync(process.execPath, [BIN, 'memory', 'init', 'demo'], { cwd: template, env: { ...baseEnv, BASS_AGENTS_NO_DAEMON: '1' }, stdio: 'ignore' });
  }
  const dir = join(root, name);
  const state = stateDirOf(template).dir;
  cpSync(template, dir, { recursive: true, filter: (src) => src !== state });
  // The copies' files are new to the copied index: git looks at them again now, as it had after `init`.
  git(dir, 'update-index', '-q', '--refresh');
  if (staged) {
    writeFileSync(join(dir, 'app.txt'), 'v2 staged by the user\n');
    git(dir, 'add', 'app.txt');
  }
  return dir;
}

const root = mkdtempSync(join(tmpdir(), 'bass-agents-stress-'));
const failures = [];
const fail = (phase, m) => failures.push(`${phase}: ${m}`);
const report = { processes, writes_per_process: writes, daemon: useDaemon };

/** What must hold after any crash and the next command: nothing uncommitted, no stray lock or ref. */
function checkClean(phase, dir, what) {
  const dirty = git(dir, 'status', '--porcelain', '--untracked-files=all', '--', 'ai-memory').split('\n').filter(Boolean);
  if (dirty.length) fail(phase, `${what}: ${dirty.length} memory paths not as committed (${dirty.slice(0, 3).join(', ')})`);
  if (existsSync(join(dir, '.git', 'index.lock'))) fail(phase, `${what}: git's index.lock was left behind`);
  if (existsSync(join(dir, '.git', 'bass-agents', 'journal'))) fail(phase, `${what}: the journal was left behind`);
  const refs = git(dir, 'for-each-ref', 'refs/bass-agents/').trim();
  if (refs) fail(phase, `${what}: private refs left: ${refs.split('\n').length}`);
}

try {
  // ---------------------------------------------------------------- writers
  if (phase('writers')) {
    const dir = repo(root, 'writers', { staged: true });
    const stagedBefore = git(dir, 'diff', '--cached', '--name-only');
    let daemon;
    if (useDaemon) {
      daemon = spawn(process.execPath, [BIN, 'memory', 'daemon', 'run'], { cwd: dir, env: baseEnv, stdio: 'ignore' });
      for (let i = 0; i < 100 && !existsSync(daemonPaths(stateDirOf(dir).dir).socket); i++) await sleep(100);
    }
    const t0 = performance.now();
    const lat = [];
    const ids = [];
    let busy = 0;
    await Promise.all(
      Array.from({ length: processes }, async (_, p) => {
        for (let i = 0; i < writes; i++) {
          // (Through the daemon: a caller with its own lock timeout would write directly.)
          const r = await runCli(dir, ['create', 'demo', '--file', '-', '--agent', `p${p}`], JSON.stringify(entry(p, i)), useDaemon ? { BASS_AGENTS_LOCK_TIMEOUT_MS: '' } : {});
          lat.push(r.ms);
          if (r.code === 4) busy++;
          if (r.code !== 0) fail('writers', `process ${p} write ${i}: exit ${r.code}: ${r.stderr.trim()}`);
          else ids.push(r.stdout.trim());
        }
      }),
    );
    const ms = performance.now() - t0;
    if (daemon) {
      daemon.kill('SIGTERM');
      await new Promise((r) => daemon.on('close', r));
    }
    const inTree = new Set(git(dir, 'ls-files', 'ai-memory/demo').split('\n').filter((f) => f.endsWith('.json')).map((f) => f.split('/').pop().slice(0, -5)));
    for (const id of ids) if (!inTree.has(id)) fail('writers', `acknowledged entry ${id} is missing from the tree`);
    if (new Set(ids).size !== ids.length) fail('writers', 'duplicate ids were handed out');
    if (git(dir, 'diff', '--cached', '--name-only') !== stagedBefore || git(dir, 'show', ':app.txt') !== 'v2 staged by the user\n') fail('writers', "the user's staged change changed");
    if (git(dir, 'show', 'HEAD:app.txt') !== 'v1\n') fail('writers', "the user's staged change was committed");
    try {
      git(dir, 'fsck', '--no-progress', '--strict');
    } catch (err) {
      fail('writers', `git fsck: ${String(err.stdout ?? err.message).trim()}`);
    }
    Object.assign(report, {
      acknowledged_writes: ids.length,
      busy_exits: busy,
      concurrent_phase_ms: Math.round(ms),
      commits: Number(git(dir, 'rev-list', '--count', 'HEAD').trim()),
      writes_per_second: Math.round((ids.length / ms) * 1000 * 10) / 10,
      write_latency_ms: { p50: Math.round(pct(lat, 50)), p99: Math.round(pct(lat, 99)) },
    });
  }

  // ---------------------------------------------------------------- kills
  if (phase('kills')) {
    const dir = repo(root, 'kills', { staged: true });
    let killed = 0;
    let rounds = 0;
    let completed = 0;
    const hardEnd = Date.now() + (quick ? 60_000 : 600_000);
    while (killed < kills && Date.now() < hardEnd) {
      rounds++;
      const updates = Array.from({ length: 300 }, (_, i) => ({ operation: 'create', entry: entry(1000 + rounds, i) }));
      const pr = runCli(dir, ['apply', 'demo', '--file', '-', '--agent', 'killer'], JSON.stringify(updates));
      const child = pr.child;
      await sleep(150 + Math.random() * 1500);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        killed++;
      }
      const r = await pr;
      if (r.code === 0) completed++;
      // The next command, whatever it is, finishes or undoes what the dead writer left.
      const list = await runCli(dir, ['list', '--json', '--limit', '1'], '', { BASS_AGENTS_NO_DAEMON: '1' });
      if (list.code !== 0) fail('kills', `list after a kill: exit ${list.code}: ${list.stderr.trim()}`);
      checkClean('kills', dir, `after kill ${killed}`);
    }
    if (git(dir, 'show', ':app.txt') !== 'v2 staged by the user\n') fail('kills', "the user's staged change changed");
    try {
      git(dir, 'fsck', '--no-progress', '--strict');
    } catch (err) {
      fail('kills', `git fsck: ${String(err.stdout ?? err.message).trim()}`);
    }
    report.kill_loop = { writers_killed: killed, rounds, batches_completed: completed };
  }

  // ---------------------------------------------------------------- git-steps
  if (phase('git-steps')) {
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const wrap = join(root, 'wrap');
    mkdirSync(wrap, { recursive: true });
    // Kills the process that ran it (the writer) once, at the named step, before or after it.
    writeFileSync(
      join(wrap, 'git'),
      `#!/bin/sh\ncmd=; skip=\nfor a in "$@"; do if [ -n "$skip" ]; then skip=; continue; fi; case "$a" in -c) skip=1;; -*) ;; *) cmd=$a; break;; esac; done\nif [ "$cmd" = "$BASS_STRESS_STEP" ] && [ ! -f "$BASS_STRESS_MARK" ]; then\n  : > "$BASS_STRESS_MARK"\n  if [ "$BASS_STRESS_WHEN" = before ]; then kill -9 $PPID; exit 1; fi\n  "${realGit}" "$@"; s=$?; kill -9 $PPID; exit $s\nfi\nexec "${realGit}" "$@"\n`,
    );
    chmodSync(join(wrap, 'git'), 0o755);
    const steps = [];
    // Every step of a commit (git-commit.ts), for a small and a larger batch: the commit index
    // (update-index, write-tree), the commit (commit-tree), and, under git's index lock, the user's
    // index copy (update-index, the same command) and HEAD's move (update-ref).
    const all = [['update-index', 3], ['write-tree', 3], ['commit-tree', 3], ['update-ref', 3], ['update-index', 60], ['update-ref', 60]];
    for (const [step, size] of quick ? all.filter((_, i) => i !== 1 && i !== 4) : all) {
      for (const when of ['before', 'after']) {
        const dir = repo(root, `step-${step}-${size}-${when}`, { staged: true });
        const mark = join(root, `mark-${step}-${size}-${when}`);
        const batch = Array.from({ length: size }, (_, i) => ({ operation: 'create', entry: entry(7, i) }));
        const r = await runCli(dir, ['apply', 'demo', '--file', '-'], JSON.stringify(batch), {
          PATH: `${wrap}:${process.env.PATH}`,
          BASS_STRESS_STEP: step,
          BASS_STRESS_WHEN: when,
          BASS_STRESS_MARK: mark,
          BASS_AGENTS_NO_DAEMON: '1',
        });
        const died = r.signal === 'SIGKILL';
        // Every entry the next command lists (a page holds at most 50).
        let listed = 0;
        for (let page; listed >= 0 && (page === undefined || page === 50); ) {
          const next = await runCli(dir, ['list', '--json', '--limit', '50', '--offset', String(listed)], '', { BASS_AGENTS_NO_DAEMON: '1' });
          page = next.code === 0 ? JSON.parse(next.stdout).length : -1;
          listed = page < 0 ? -1 : listed + page;
        }
        const committed = git(dir, 'ls-tree', '-r', '--name-only', 'HEAD', 'ai-memory/demo').split('\n').filter((f) => f.endsWith('.json')).length;
        if (listed !== committed) fail('git-steps', `${when} ${step}: list shows ${listed} entries, HEAD holds ${committed}`);
        if (committed !== 0 && committed !== size) fail('git-steps', `${when} ${step}: a batch was committed in part (${committed} of ${size})`);
        if (!died) fail('git-steps', `${when} ${step}: the ${size}-entry batch never ran ${step}`);
        checkClean('git-steps', dir, `${when} ${step}`);
        if (git(dir, 'show', ':app.txt') !== 'v2 staged by the user\n') fail('git-steps', `${when} ${step}: the user's staged change changed`);
        const after = await runCli(dir, ['create', 'demo', '--file', '-'], JSON.stringify(entry(8, 0)), { BASS_AGENTS_NO_DAEMON: '1' });
        if (after.code !== 0) fail('git-steps', `${when} ${step}: the next write failed: ${after.stderr.trim()}`);
        steps.push({ step, size, when, killed: died, committed });
      }
    }
    report.git_steps = steps;
  }

  // ---------------------------------------------------------------- user-race
  if (phase('user-race')) {
    const dir = repo(root, 'race');
    const user = spawn('bash', ['-c', 'i=0; while [ ! -f stop ]; do i=$((i+1)); echo $i >> user.txt; git add user.txt 2>/dev/null && git commit -qm "user $i" 2>/dev/null; sleep 0.05; done'], { cwd: dir, env: baseEnv, stdio: 'ignore' });
    const ids = [];
    for (let i = 0; i < raceWrites; i++) {
      const r = await runCli(dir, ['create', 'demo', '--file', '-'], JSON.stringify(entry(9, i)), { BASS_AGENTS_NO_DAEMON: '1' });
      if (r.code === 0) ids.push(r.stdout.trim());
      else fail('user-race', `write ${i}: exit ${r.code}: ${r.stderr.trim()}`);
    }
    writeFileSync(join(dir, 'stop'), '');
    await new Promise((r) => user.on('close', r));
    const tree = new Set(git(dir, 'ls-tree', '-r', '--name-only', 'HEAD', 'ai-memory/demo').split('\n').map((f) => f.split('/').pop().replace(/\.json$/, '')));
    for (const id of ids) if (!tree.has(id)) fail('user-race', `entry ${id} is not in HEAD`);
    const deleted = git(dir, 'log', '--diff-filter=D', '--name-only', '--format=', '--', 'ai-memory').trim();
    if (deleted) fail('user-race', `memory files were deleted by a commit: ${deleted.split('\n').slice(0, 3).join(', ')}`);
    checkClean('user-race', dir, 'after the race');
    report.user_race = { memory_writes: ids.length, user_commits: Number(git(dir, 'rev-list', '--count', '--grep=^user ', 'HEAD').trim()) };
  }

  // ---------------------------------------------------------------- checkout
  if (phase('checkout')) {
    const dir = repo(root, 'checkout');
    const base = git(dir, 'rev-parse', 'HEAD').trim();
    const daemon = spawn(process.execPath, [BIN, 'memory', 'daemon', 'run', '--heartbeat', '300'], { cwd: dir, env: baseEnv, stdio: 'ignore' });
    const daemonGone = new Promise((r) => daemon.on('close', r));
    let stale = 0;
    const trips = quick ? 3 : 10;
    try {
      for (let i = 0; i < 100 && !existsSync(daemonPaths(stateDirOf(dir).dir).socket); i++) await sleep(100);
      const created = await runCli(dir, ['create', 'demo', '--file', '-'], JSON.stringify(entry(10, 0, { section: 'learnings', summary: 'kafka offsets reset weekly' })), {});
      const id = created.stdout.trim();
      const query = async () => {
        const r = await runCli(dir, ['query', 'kafka offsets', '--json'], '', {});
        return r.code === 0 ? JSON.parse(r.stdout).map((h) => h.id) : null;
      };
      for (let i = 0; i < trips; i++) {
        git(dir, 'checkout', '-q', base);
        if ((await query())?.length !== 0) stale++;
        git(dir, 'checkout', '-q', 'main');
        if ((await query())?.[0] !== id) stale++;
      }
    } finally {
      // Never left running, even when a step above throws.
      daemon.kill('SIGTERM');
      await daemonGone;
    }
    if (stale) fail('checkout', `${stale} of ${2 * trips} queries right after a checkout answered from a stale index`);
    report.checkout = { round_trips: trips, stale_answers: stale };
  }

  // ---------------------------------------------------------------- hostile
  if (phase('hostile')) {
    const origin = repo(root, 'hostile-origin');
    mkdirSync(join(origin, 'src'), { recursive: true });
    writeFileSync(join(origin, 'src', 'app.ts'), 'export const app = 1;\n');
    mkdirSync(join(origin, '.bass-agents', 'state'), { recursive: true });
    writeFileSync(join(origin, '.bass-agents', 'state', 'write-journal.json'), JSON.stringify(['src/app.ts', '.env']));
    git(origin, 'add', '-f', 'src/app.ts', '.bass-agents/state/write-journal.json');
    git(origin, 'commit', '-qm', 'ship a journal');
    const clone = join(root, 'hostile-clone');
    git(root, 'clone', '-q', origin, clone);
    git(clone, 'config', 'user.name', 'Cloner');
    git(clone, 'config', 'user.email', 'c@example.com');
    writeFileSync(join(clone, '.env'), 'MINE=1\n');
    writeFileSync(join(clone, 'src', 'app.ts'), 'export const app = 2;\n');
    const r = await runCli(clone, ['create', 'demo', '--file', '-'], JSON.stringify(entry(11, 0)), { BASS_AGENTS_NO_DAEMON: '1' });
    if (r.code !== 0) fail('hostile', `create in the clone failed: ${r.stderr.trim()}`);
    if (readFileSync(join(clone, '.env'), 'utf8') !== 'MINE=1\n' || readFileSync(join(clone, 'src', 'app.ts'), 'utf8') !== 'export const app = 2;\n') fail('hostile', "a shipped journal touched the cloner's files");
    // An earlier version's state folder, committed with links: to the victim's shell profile, to
    // another folder, and a dangling one. Nothing is written through them (nor anywhere outside
    // the workspace and its git dir, HOME included), with and without a daemon.
    const home = join(root, 'hostile-home');
    mkdirSync(home);
    writeFileSync(join(home, '.bashrc'), 'export PS1=victim\n');
    const other = join(root, 'hostile-elsewhere');
    mkdirSync(other);
    const planted = repo(root, 'hostile-links-origin');
    mkdirSync(join(planted, '.bass-agents', 'logs'), { recursive: true });
    symlinkSync(join(home, '.bashrc'), join(planted, '.bass-agents', 'logs', 'queries.jsonl'));
    symlinkSync(other, join(planted, '.bass-agents', 'cache'));
    symlinkSync(join(root, 'hostile-made-by-a-link'), join(planted, '.bass-agents', '.gitignore'));
    // And a config.yaml that is a link to a credentials file outside the repository.
    writeFileSync(join(root, 'hostile-hosts.yml'), 'github.com:\n  oauth_token: gho_16C7e42F292c6912E7710c838347Ae178B4a\n');
    git(planted, 'add', '-f', '.bass-agents');
    git(planted, 'commit', '-qm', 'ship links');
    const linked = join(root, 'hostile-links');
    git(root, 'clone', '-q', planted, linked);
    git(linked, 'config', 'user.name', 'Cloner');
    git(linked, 'config', 'user.email', 'c@example.com');
    const listing = (dir) => {
      const out = [];
      const walk = (d) => {
        for (const e of readdirSync(d, { withFileTypes: true })) {
          const p = join(d, e.name);
          if (e.isSymbolicLink()) out.push(`${p} -> ${readlinkSync(p)}`);
          else if (e.isDirectory()) walk(p);
          else out.push(`${p} ${readFileSync(p, 'latin1')}`);
        }
      };
      walk(dir);
      return out.sort().join('\n');
    };
    const outsideBefore = [home, other].map(listing).join('\n');
    const hostileEnv = { HOME: home, XDG_STATE_HOME: join(home, '.local', 'state') };
    const steps = [
      ['create', 'demo', '--file', '-'],
      ['query', 'stress $(touch pwned) write', '--subject', 'stress.p12'],
      ['list'],
    ];
    for (const a of steps) {
      const r = await runCli(linked, a, a[0] === 'create' ? JSON.stringify(entry(12, 0)) : '', { ...hostileEnv, BASS_AGENTS_NO_DAEMON: '1' });
      if (r.code !== 0) fail('hostile', `${a[0]} in a clone with .bass-agents links failed: ${r.stderr.trim()}`);
    }
    const daemon = spawn(process.execPath, [BIN, 'memory', 'daemon', 'run', '--heartbeat', '300'], { cwd: linked, env: { ...baseEnv, ...hostileEnv }, stdio: 'ignore' });
    const daemonGone = new Promise((r) => daemon.on('close', r));
    try {
      for (let i = 0; i < 100 && !existsSync(daemonPaths(stateDirOf(linked).dir).socket); i++) await sleep(100);
      for (const a of steps) {
        const r = await runCli(linked, a, a[0] === 'create' ? JSON.stringify(entry(12, 1)) : '', hostileEnv);
        if (r.code !== 0) fail('hostile', `${a[0]} through the daemon in a clone with .bass-agents links failed: ${r.stderr.trim()}`);
      }
    } finally {
      daemon.kill('SIGTERM');
      await daemonGone;
    }
    if ([home, other].map(listing).join('\n') !== outsideBefore) fail('hostile', 'something was written outside the workspace (through a .bass-agents link, or into HOME)');
    if (existsSync(join(root, 'hostile-made-by-a-link'))) fail('hostile', 'a dangling .bass-agents link made a file outside the workspace');
    if (git(linked, 'status', '--porcelain').trim()) fail('hostile', 'the committed .bass-agents/ links were changed');
    const queries = readFileSync(join(stateDirOf(linked).dir, 'logs', 'queries.jsonl'), 'utf8');
    if (/pwned|stress\.p12/.test(queries)) fail('hostile', 'the query log keeps query text or filter values');
    // A link planted in the state folder itself is refused, never followed.
    const log = join(stateDirOf(linked).dir, 'logs', 'queries.jsonl');
    rmSync(log);
    symlinkSync(join(home, '.bashrc'), log);
    const q = await runCli(linked, ['query', 'stress'], '', hostileEnv);
    if (q.code !== 1 || !q.stderr.includes('is a symbolic link')) fail('hostile', `a link in the state folder was not refused (exit ${q.code})`);
    rmSync(log);
    // A committed config.yaml that links out of the repository is never read or cached.
    rmSync(join(linked, 'ai-memory', 'demo', 'config.yaml'));
    symlinkSync(join(root, 'hostile-hosts.yml'), join(linked, 'ai-memory', 'demo', 'config.yaml'));
    for (const a of [['query', 'stress'], ['create', 'demo', '--file', '-']]) {
      const r = await runCli(linked, a, JSON.stringify(entry(12, 2)), { ...hostileEnv, BASS_AGENTS_NO_DAEMON: '1' });
      if (r.code !== 1 || !/config\.yaml.*symbolic link/.test(r.stderr)) fail('hostile', `${a[0]} with a linked config.yaml was not refused (exit ${r.code})`);
      if ((r.stdout + r.stderr).includes('gho_16C7e')) fail('hostile', `${a[0]} showed the linked config's token`);
    }
    if (listing(stateDirOf(linked).dir).includes('gho_16C7e')) fail('hostile', "the linked config's token reached the local state");
    if ([home, other].map(listing).join('\n') !== outsideBefore) fail('hostile', 'something was written outside the workspace');
    report.hostile = { steps: steps.length * 2 + 3 };
  }

  // ---------------------------------------------------------------- supersede
  if (phase('supersede')) {
    const dir = repo(root, 'supersede');
    const target = (await runCli(dir, ['create', 'demo', '--file', '-'], JSON.stringify(entry(13, 0)), { BASS_AGENTS_NO_DAEMON: '1' })).stdout.trim();
    const n = quick ? 4 : 8;
    const results = await Promise.all(
      Array.from({ length: n }, (_, k) =>
        runCli(dir, ['apply', 'demo', '--file', '-'], JSON.stringify([{ operation: 'supersede', target_id: target, entry: entry(14, k) }]), { BASS_AGENTS_NO_DAEMON: '1' }),
      ),
    );
    const won = results.filter((r) => r.code === 0).length;
    if (won !== 1) fail('supersede', `${won} of ${n} concurrent supersedes of one entry succeeded (expected exactly 1)`);
    const shown = JSON.parse((await runCli(dir, ['show', target, '--json'], '', { BASS_AGENTS_NO_DAEMON: '1' })).stdout);
    if (shown.status !== 'superseded') fail('supersede', `the target is ${shown.status}`);
    checkClean('supersede', dir, 'after concurrent supersedes');
    report.supersede = { processes: n, succeeded: won };
  }

  // ---------------------------------------------------------------- names
  if (fullPhase('names')) {
    const dir = repo(root, 'names');
    const env = { BASS_AGENTS_NO_DAEMON: '1', BASS_AGENTS_AGENT: 'stress' };
    const seed = (await runCli(dir, ['create', 'demo', '--file', '-'], JSON.stringify(entry(20, 0)), env)).stdout.trim();
    const GH = 'ghp_Zq8Wm2Xc4Vb6Nn1Ll3Kk5Pp7Oo9Ii0Uu2Yy4T';
    const SLACK = 'xoxb-2718281828-3141592653589-q7w3e9r1t5y8u2i4o6p0a3s7';
    const LEAK = /Zq8Wm2Xc4Vb6Nn1Ll3Kk5|q7w3e9r1t5y8u2i4o6p0a3s7/;
    const stored = (over) => ({
      ...entry(21, 0), id: '01JAAAAAAAAAAAAAAAAAAAAAAD', status: 'active', superseded_by: null, related_entries: [], valid_from: null, valid_to: null,
      created_by: 'x', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', ...over,
    });
    const cases = [];
    for (const token of [GH, SLACK]) {
      cases.push(
        ['create', 'demo', '--file', '-', { input: JSON.stringify(entry(22, 1, { related_entries: [token] })) }],
        ['create', 'demo', '--file', '-', { input: JSON.stringify(entry(22, 2, { lifecycle: { reviewed_at: token } })) }],
        ['create', 'demo', '--file', '-', { input: JSON.stringify(entry(22, 3, { tags: [token] })) }],
        ['import', 'demo', '-', { input: JSON.stringify([stored({ id: token })]) }],
        ['import', 'demo', '-', { input: JSON.stringify([stored({ superseded_by: token, status: 'superseded' })]) }],
        ['apply', 'demo', '--file', '-', { input: JSON.stringify([{ operation: 'deprecate', target_id: token }]) }],
        ['apply', 'demo', '--file', '-', { input: JSON.stringify([{ operation: 'supersede', target_id: seed, superseded_by: token }]) }],
        ['init', token, {}],
        ['create', '--project', token, '--file', '-', { input: JSON.stringify(entry(22, 4)) }],
        ['create', '--file', '-', { input: JSON.stringify(entry(22, 5)), env: { BASS_AGENTS_PROJECT: token } }],
        ['deprecate', seed, '--agent', token, {}],
        ['create', 'demo', '--file', '-', { input: JSON.stringify(entry(22, 6)), env: { BASS_AGENTS_AGENT: token } }],
        ['apply-result', 'demo', '--file', '-', { input: JSON.stringify({ agent: token, memory_updates: [{ operation: 'create', entry: entry(22, 7) }] }), env: { BASS_AGENTS_AGENT: '' } }],
        ['show', token, {}],
        ['supersede', token, '--by', seed, {}],
        ['link', seed, token, {}],
        ['reinforce', token, {}],
      );
    }
    const devices = quick ? ['CON', 'nul', 'Com1.txt'] : ['CON', 'PRN', 'AUX', 'NUL', ...[1, 2, 3, 4, 5, 6, 7, 8, 9].flatMap((n) => [`COM${n}`, `lpt${n}`])].flatMap((d) => (quick ? [d] : [d, d.toLowerCase(), `${d}.txt`, `${d.toLowerCase()}.tar.gz`]));
    for (const d of devices) cases.push(['init', d, { device: true }]);
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    let accepted = 0;
    let leaked = 0;
    for (const c of cases) {
      const opts = c[c.length - 1];
      const r = await runCli(dir, c.slice(0, -1), opts.input, { ...env, ...opts.env });
      if (r.code === 0) {
        accepted++;
        fail('names', `accepted: ${c.slice(0, 4).join(' ').replace(LEAK, '<token>')}`);
      }
      if (LEAK.test(r.stdout + r.stderr)) {
        leaked++;
        fail('names', `echoed a token: ${c.slice(0, 2).join(' ')}`);
      }
    }
    if (git(dir, 'rev-parse', 'HEAD').trim() !== head) fail('names', 'a refused write made a commit');
    const files = execFileSync('find', [dir, '-type', 'f'], { encoding: 'utf8' }).trim().split('\n');
    if (files.some((f) => LEAK.test(f) || LEAK.test(readFileSync(f).toString('latin1')))) fail('names', 'a token is in a file of the workspace or of the local state');
    const objects = execFileSync('git', ['cat-file', '--batch-all-objects', '--batch'], { cwd: dir, env: baseEnv, maxBuffer: 1 << 28 }).toString('latin1');
    if (LEAK.test(objects) || LEAK.test(git(dir, 'log', '--all', '--format=%B%an%ae'))) fail('names', 'a token is in a git object or a commit');
    report.names = { cases: cases.length, device_names: devices.length, accepted, echoed: leaked };
  }

  // ---------------------------------------------------------------- unreadable
  if (fullPhase('unreadable')) {
    const dir = repo(root, 'unreadable');
    const env = { BASS_AGENTS_NO_DAEMON: '1' };
    const base = { ...entry(30, 0), status: 'active', superseded_by: null, related_entries: [], valid_from: null, valid_to: null, created_by: 'x', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' };
    const kinds = {
      newer: (id) => JSON.stringify({ ...base, id, field_of_v9: true }),
      conflict: (id) => `<<<<<<< HEAD\n${JSON.stringify({ ...base, id })}\n=======\n${JSON.stringify({ ...base, id, summary: 'theirs' })}\n>>>>>>> theirs\n`,
      broken: (id) => `{"id": "${id}", `,
      status: (id) => JSON.stringify({ ...base, id, status: 'frozen' }),
    };
    const n = quick ? 1 : 25;
    let refused = 0;
    let lost = 0;
    for (let round = 0; round < (quick ? 1 : 4); round++) {
      const project = `gone${round}`;
      await runCli(dir, ['init', project], '', env);
      mkdirSync(join(dir, 'ai-memory', project, 'observations'), { recursive: true });
      const written = new Map();
      let k = 0;
      for (const [kind, make] of Object.entries(kinds)) {
        for (let i = 0; i < n; i++, k++) {
          const id = `01JB${String(round)}${String(k).padStart(21, '0')}`;
          written.set(join(dir, 'ai-memory', project, 'observations', `${id}.json`), make(id));
        }
      }
      written.set(join(dir, 'ai-memory', project, 'README.md'), 'notes of mine\n');
      for (const [f, text] of written) writeFileSync(f, text);
      const head = git(dir, 'rev-parse', 'HEAD').trim();
      const r = await runCli(dir, ['remove-project', project, '--json'], '', env);
      if (r.code === 1 && /nothing was removed/.test(r.stderr)) refused++;
      else fail('unreadable', `remove-project ${project} exited ${r.code}: ${r.stderr.trim().slice(0, 200)}`);
      const over = await runCli(dir, ['import', project, '-', '--on-conflict', 'overwrite', '--json'], JSON.stringify([...written.keys()].filter((f) => f.endsWith('.json')).slice(0, 10).map((f) => ({ ...base, id: f.slice(-31, -5) }))), env);
      if (over.code === 0 && JSON.parse(over.stdout).applied.length) fail('unreadable', 'an import wrote over a file it could not read');
      for (const [f, text] of written) if (!existsSync(f) || readFileSync(f, 'utf8') !== text) lost++;
      if (git(dir, 'rev-parse', 'HEAD').trim() !== head) fail('unreadable', `${project}: a commit was made`);
      const doctor = JSON.parse((await runCli(dir, ['doctor', '--json'], '', env)).stdout);
      const named = new Set(doctor.problems.map((p) => join(dir, p.file)));
      const missing = [...written.keys()].filter((f) => f.endsWith('.json') && !named.has(f));
      if (missing.length) fail('unreadable', `doctor did not name ${missing.length} unreadable files (${missing[0]})`);
    }
    if (lost) fail('unreadable', `${lost} files removed or changed`);
    report.unreadable = { rounds: quick ? 1 : 4, files_per_round: n * Object.keys(kinds).length + 1, refused, lost };
  }

  // ---------------------------------------------------------------- daemon-socket
  if (fullPhase('daemon-socket')) {
    const { connect } = await import('node:net');
    const dir = repo(root, 'daemon-socket');
    const d = spawn(process.execPath, [BIN, 'memory', 'daemon', 'run', '--heartbeat', '300'], { cwd: dir, env: { ...baseEnv, BASS_AGENTS_SEMANTIC: 'off' }, stdio: 'ignore' });
    try {
      let st;
      for (let i = 0; i < 200 && !st?.socket; i++) {
        await sleep(100);
        const r = await runCli(dir, ['daemon', 'status', '--json'], '', {});
        try {
          st = JSON.parse(r.stdout);
        } catch {
          st = undefined;
        }
      }
      if (!st?.socket) throw new Error('the daemon did not come up');
      const memory = async () => JSON.parse((await runCli(dir, ['daemon', 'status', '--json'], '', {})).stdout);
      const held = (m) => m.heap_used_bytes + m.array_buffers_bytes;
      const before = await memory();
      // The huge callers run in a process of their own, so the pings below time the daemon, not this loop.
      const hugeCallers = `const {connect}=require('net');const n=+process.argv[2];let done=0,refused=0;const end=()=>{if(++done===n){console.log(refused);process.exit(0)}};
        for(let k=0;k<n;k++){const s=connect(process.argv[1]);const c=Buffer.alloc(1<<20,97);let w=0,b='';
        s.on('data',x=>{b+=x;if(b.includes('\\n')){s.destroy();if(/request is over \\d+ bytes/.test(b))refused++;end()}});s.on('error',end);
        const p=()=>{while(w<60<<20){w+=c.length;if(!s.write(c))return void s.once('drain',p)}};s.on('connect',p)}`;
      const ping = () =>
        new Promise((res) => {
          const t = performance.now();
          const sock = connect(st.socket);
          let buf = '';
          sock.on('data', (c) => {
            buf += c;
            if (buf.includes('\n')) {
              sock.destroy();
              res(performance.now() - t);
            }
          });
          sock.on('error', () => res(Infinity));
          sock.on('connect', () => sock.write('{"id":1,"method":"ping","params":{}}\n'));
        });
      const clients = quick ? 2 : 8;
      const rounds = quick ? 1 : 3;
      const waits = [];
      let pinging = true;
      const pinger = (async () => {
        while (pinging) {
          waits.push(await ping());
          await sleep(5);
        }
      })();
      let refused = 0;
      for (let round = 0; round < rounds; round++) {
        const out = await new Promise((res) => {
          const c = spawn(process.execPath, ['-e', hugeCallers, st.socket, String(clients)], { stdio: ['ignore', 'pipe', 'ignore'] });
          let text = '';
          c.stdout.on('data', (x) => (text += x));
          c.on('close', () => res(text));
        });
        refused += Number(out.trim()) || 0;
      }
      pinging = false;
      await pinger;
      // What it read is garbage once refused: collected within seconds (resident pages the allocator keeps are reported, not judged).
      let after = await memory();
      for (let i = 0; i < 30 && held(after) - held(before) > 16 << 20; i++) {
        await sleep(500);
        after = await memory();
      }
      const worst = Math.max(...waits);
      if (refused !== clients * rounds) fail('daemon-socket', `${clients * rounds - refused} of ${clients * rounds} huge requests were not refused with a size error`);
      if (worst > 100) fail('daemon-socket', `another client waited ${Math.round(worst)} ms for a ping`);
      if (held(after) - held(before) > 16 << 20) fail('daemon-socket', `the daemon still holds ${Math.round((held(after) - held(before)) / 2 ** 20)} MiB more than before`);
      const mib = (n) => Math.round(n / 2 ** 20);
      report.daemon_socket = {
        huge_requests: clients * rounds,
        at_once: clients,
        pings: waits.length,
        worst_ping_ms: Math.round(worst),
        p50_ping_ms: Math.round(pct(waits, 50)),
        held_mib: [mib(held(before)), mib(held(after))],
        rss_mib: [mib(before.rss_bytes), mib(after.rss_bytes)],
      };
    } finally {
      d.kill('SIGTERM');
      await new Promise((r) => d.once('exit', r));
    }
  }

  // ---------------------------------------------------------------- daemon-start
  if (fullPhase('daemon-start')) {
    const dir = repo(root, 'daemon-start');
    const env = { BASS_AGENTS_SEMANTIC: 'off' };
    const n = quick ? 3 : 6;
    const rounds = [];
    for (let round = 0; round < (quick ? 2 : 5); round++) {
      const rs = await Promise.all(Array.from({ length: n }, () => runCli(dir, ['daemon', 'start'], '', env)));
      const started = rs.filter((r) => /daemon started/.test(r.stdout)).length;
      const already = rs.filter((r) => /already running/.test(r.stdout)).length;
      const failed = rs.filter((r) => r.code !== 0 || /did not start/.test(r.stderr)).length;
      rounds.push({ started, already, failed });
      if (started !== 1 || already !== n - 1 || failed) fail('daemon-start', `round ${round}: ${started} started, ${already} already running, ${failed} failed`);
      const st = JSON.parse((await runCli(dir, ['daemon', 'status', '--json'], '', env)).stdout);
      // Every other round the daemon is killed (its pid file stays behind); else stopped.
      if (round % 2 && st.pid) {
        process.kill(st.pid, 'SIGKILL');
        await sleep(200);
      } else await runCli(dir, ['daemon', 'stop'], '', env);
    }
    await runCli(dir, ['daemon', 'stop'], '', env);
    report.daemon_start = { starts_at_once: n, rounds };
  }

  // ---------------------------------------------------------------- index-lock
  if (fullPhase('index-lock')) {
    // A user's git holds the index lock (an open commit editor): every write gives up within its
    // bound with exit 4 and leaves nothing, reads never wait; writers waiting when it goes all finish.
    const dir = repo(root, 'index-lock', { staged: true });
    const lock = join(dir, '.git', 'index.lock');
    const direct = { BASS_AGENTS_NO_DAEMON: '1' };
    const listFree = [];
    for (let i = 0; i < 3; i++) listFree.push((await runCli(dir, ['list', '--json'], '', direct)).ms);
    writeFileSync(lock, '');
    const listHeld = [];
    const rounds = quick ? 2 : 10;
    for (let i = 0; i < rounds; i++) {
      const w = await runCli(dir, ['create', 'demo', '--file', '-'], JSON.stringify(entry(20, i)), { ...direct, BASS_AGENTS_LOCK_TIMEOUT_MS: '400' });
      if (w.code !== 4) fail('index-lock', `write ${i} with the index locked: exit ${w.code}: ${w.stderr.trim()}`);
      if ((w.stderr.match(/waiting up to/g) ?? []).length !== 1) fail('index-lock', `write ${i} did not say once what it waits for: ${w.stderr.trim()}`);
      if (/internal error|bug in/i.test(w.stderr)) fail('index-lock', `write ${i}: ${w.stderr.trim()}`);
      if (existsSync(join(dir, '.git', 'bass-agents', 'journal'))) fail('index-lock', `write ${i} left its journal`);
      const l = await runCli(dir, ['list', '--json'], '', direct);
      if (l.code !== 0 || l.stderr) fail('index-lock', `list with the index locked: exit ${l.code}: ${l.stderr.trim()}`);
      listHeld.push(l.ms);
    }
    const waiting = Array.from({ length: quick ? 2 : 6 }, (_, k) => runCli(dir, ['create', 'demo', '--file', '-'], JSON.stringify(entry(21, k)), { ...direct, BASS_AGENTS_LOCK_TIMEOUT_MS: '60000' }));
    await sleep(500);
    rmSync(lock);
    for (const r of await Promise.all(waiting)) if (r.code !== 0) fail('index-lock', `a write waiting for the lock: exit ${r.code}: ${r.stderr.trim()}`);
    checkClean('index-lock', dir, 'after the lock went');
    if (git(dir, 'show', ':app.txt') !== 'v2 staged by the user\n') fail('index-lock', "the user's staged change changed");
    report.index_lock = { refused_writes: rounds, list_ms_lock_free: Math.round(pct(listFree, 50)), list_ms_lock_held: Math.round(pct(listHeld, 50)), waited_writes: waiting.length };
  }

  // ---------------------------------------------------------------- gc-race
  if (fullPhase('gc-race')) {
    // git repack -ad and gc --auto in a loop beside concurrent writers: every acknowledged entry
    // is committed, and the object store stays whole.
    const dir = repo(root, 'gc-race', { staged: true });
    git(dir, 'config', 'gc.auto', '1');
    git(dir, 'config', 'gc.autoDetach', 'false');
    const loop = spawn('bash', ['-c', 'n=0; while [ ! -f .git/stop ]; do git repack -adq; git gc --auto --quiet; n=$((n+1)); echo $n > .git/rounds; done'], { cwd: dir, env: baseEnv, stdio: 'ignore' });
    const ids = [];
    try {
      await Promise.all(
        Array.from({ length: quick ? 2 : 4 }, async (_, p) => {
          for (let i = 0; i < (quick ? 4 : 50); i++) {
            const r = await runCli(dir, ['create', 'demo', '--file', '-'], JSON.stringify(entry(30 + p, i)), { BASS_AGENTS_NO_DAEMON: '1' });
            if (r.code === 0) ids.push(r.stdout.trim());
            else fail('gc-race', `writer ${p} write ${i}: exit ${r.code}: ${r.stderr.trim()}`);
          }
        }),
      );
    } finally {
      writeFileSync(join(dir, '.git', 'stop'), '');
      await new Promise((r) => loop.on('close', r));
    }
    const inTree = new Set(git(dir, 'ls-files', 'ai-memory/demo').split('\n').map((f) => f.split('/').pop().replace(/\.json$/, '')));
    for (const id of ids) if (!inTree.has(id)) fail('gc-race', `acknowledged entry ${id} is missing from the tree`);
    try {
      git(dir, 'fsck', '--no-progress', '--strict', '--no-dangling');
    } catch (err) {
      fail('gc-race', `git fsck: ${String(err.stdout ?? err.message).trim()}`);
    }
    checkClean('gc-race', dir, 'after the gc loop');
    report.gc_race = { writes: ids.length, repack_rounds: existsSync(join(dir, '.git', 'rounds')) ? Number(readFileSync(join(dir, '.git', 'rounds'), 'utf8').trim()) : 0 };
  }

  // ---------------------------------------------------------------- ctrl-c
  if (fullPhase('ctrl-c')) {
    // A Ctrl-C (SIGINT to the whole process group, git included) at random moments of an apply:
    // exit 130 with nothing of it kept, or 0 with all of it; never 1, never a half.
    const dir = repo(root, 'ctrl-c', { staged: true });
    const counts = { 130: 0, 0: 0 };
    for (let r = 0; r < (quick ? 2 : 20); r++) {
      const before = git(dir, 'rev-parse', 'HEAD').trim();
      const updates = Array.from({ length: 300 }, (_, i) => ({ operation: 'create', entry: entry(2000 + r, i) }));
      const child = spawn(process.execPath, [BIN, 'memory', 'apply', 'demo', '--file', '-'], { cwd: dir, env: { ...baseEnv, BASS_AGENTS_NO_DAEMON: '1' }, detached: true });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      child.stdin.end(JSON.stringify(updates));
      // (A signal that lands before the write starts ends node by the signal itself: a shell says 130.)
      const closed = new Promise((res) => child.on('close', (code, sig) => res(sig === 'SIGINT' ? 130 : code)));
      await sleep(200 + Math.random() * 1200);
      try {
        process.kill(-child.pid, 'SIGINT');
      } catch {
        /* already done */
      }
      const code = await closed;
      const added = Number(git(dir, 'rev-list', '--count', `${before}..HEAD`).trim());
      if (code === 130 && added !== 0) fail('ctrl-c', `round ${r}: exit 130 but a commit was kept`);
      else if (code === 0 && added !== 1) fail('ctrl-c', `round ${r}: exit 0 but ${added} commits`);
      else if (code !== 0 && code !== 130) fail('ctrl-c', `round ${r}: exit ${code}: ${stderr.trim()}`);
      else counts[code]++;
      checkClean('ctrl-c', dir, `after Ctrl-C ${r}`);
    }
    if (git(dir, 'show', ':app.txt') !== 'v2 staged by the user\n') fail('ctrl-c', "the user's staged change changed");
    report.ctrl_c = { interrupted: counts[130], finished_first: counts[0] };
  }

  // ---------------------------------------------------------------- git-env
  if (fullPhase('git-env')) {
    // A work tree whose repository GIT_DIR names elsewhere; callers with their own index or
    // identity beside a daemon (they write directly): every write lands where git was told.
    const store = join(root, 'env-store.git');
    const work = join(root, 'env-work');
    mkdirSync(join(work, 'src'), { recursive: true });
    const genv = { ...baseEnv, GIT_DIR: store, GIT_WORK_TREE: work, BASS_AGENTS_NO_DAEMON: '1' };
    const g = (...a) => execFileSync('git', a, { cwd: work, env: genv, encoding: 'utf8' });
    g('init', '-q', '-b', 'main');
    g('config', 'user.name', 'Env');
    g('config', 'user.email', 'env@example.com');
    writeFileSync(join(work, 'src', 'app.ts'), 'export {};\n');
    g('add', '-A');
    g('commit', '-qm', 'initial');
    const n = quick ? 3 : 30;
    for (let i = 0; i < n; i++) {
      const r = await runCli(i % 2 ? join(work, 'src') : work, ['create', 'demo', '--file', '-'], JSON.stringify(entry(40, i)), genv);
      if (r.code !== 0) fail('git-env', `GIT_DIR write ${i}: exit ${r.code}: ${r.stderr.trim()}`);
    }
    if (g('ls-files', 'ai-memory').split('\n').filter((f) => f.endsWith('.json')).length !== n) fail('git-env', 'GIT_DIR writes are missing from the index git was told about');
    if (g('status', '--porcelain')) fail('git-env', `GIT_DIR work tree not clean: ${g('status', '--porcelain').trim()}`);
    // Beside a daemon: the default caller, one with its own index, one with its own author.
    const dir = repo(root, 'env-daemon');
    const alt = join(root, 'env-alt-index');
    execFileSync('git', ['read-tree', 'HEAD'], { cwd: dir, env: { ...baseEnv, GIT_INDEX_FILE: alt } });
    const daemon = spawn(process.execPath, [BIN, 'memory', 'daemon', 'run'], { cwd: dir, env: baseEnv, stdio: 'ignore' });
    const written = { daemon: [], index: [], author: [] };
    try {
      for (let i = 0; i < 100 && !existsSync(daemonPaths(stateDirOf(dir).dir).socket); i++) await sleep(100);
      const callers = { daemon: {}, index: { GIT_INDEX_FILE: alt }, author: { GIT_AUTHOR_NAME: 'Another Author' } };
      await Promise.all(
        Object.entries(callers).map(async ([who, extra], p) => {
          for (let i = 0; i < (quick ? 2 : 20); i++) {
            const r = await runCli(dir, ['create', 'demo', '--file', '-'], JSON.stringify(entry(50 + p, i)), { ...extra, BASS_AGENTS_LOCK_TIMEOUT_MS: '', BASS_AGENTS_NO_DAEMON: '' });
            if (r.code === 0) written[who].push(r.stdout.trim());
            else fail('git-env', `${who} write ${i}: exit ${r.code}: ${r.stderr.trim()}`);
          }
        }),
      );
    } finally {
      daemon.kill('SIGTERM');
      await new Promise((r) => daemon.on('close', r));
    }
    const altFiles = execFileSync('git', ['ls-files', 'ai-memory'], { cwd: dir, env: { ...baseEnv, GIT_INDEX_FILE: alt }, encoding: 'utf8' });
    for (const id of written.index) if (!altFiles.includes(id)) fail('git-env', `entry ${id} written with GIT_INDEX_FILE is not in that index`);
    const authors = git(dir, 'log', '--format=%an%x09%B', '--', 'ai-memory/demo');
    for (const id of written.author) if (!new RegExp(`^Another Author\\t[^\\n]*${id}`, 'm').test(authors)) fail('git-env', `entry ${id} was not committed as the caller's author`);
    const tree = git(dir, 'ls-tree', '-r', '--name-only', 'HEAD', 'ai-memory/demo');
    for (const id of Object.values(written).flat()) if (!tree.includes(id)) fail('git-env', `entry ${id} is not in HEAD`);
    try {
      git(dir, 'fsck', '--no-progress', '--strict', '--no-dangling');
    } catch (err) {
      fail('git-env', `git fsck: ${String(err.stdout ?? err.message).trim()}`);
    }
    report.git_env = { git_dir_writes: n, daemon: written.daemon.length, own_index: written.index.length, own_author: written.author.length };
  }

  // ---------------------------------------------------------------- repo-policy
  if (fullPhase('repo-policy')) {
    // A repository with a policy: SSH-signed commits, a pre-commit hook that vets every commit
    // (commit.hooks: run), a clean filter, group-shared objects through an include, a split
    // index v4. Concurrent writers: what the hook refuses is refused (exit 1, nothing kept), the
    // rest is committed signed; the store and the user's work stay whole.
    const dir = repo(root, 'policy', { staged: true });
    const key = join(root, 'policy-key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'stress', '-f', key]);
    writeFileSync(join(root, 'policy-allowed'), `stress@example.com ${readFileSync(`${key}.pub`, 'utf8')}`);
    writeFileSync(join(dir, '.git', 'shared.inc'), '[core]\n\tsharedRepository = group\n');
    for (const [k, v] of [['gpg.format', 'ssh'], ['user.signingkey', `${key}.pub`], ['commit.gpgsign', 'true'], ['gpg.ssh.allowedSignersFile', join(root, 'policy-allowed')], ['include.path', 'shared.inc'], ['filter.squeeze.clean', 'tr -s " "'], ['filter.squeeze.smudge', 'cat'], ['filter.squeeze.required', 'true'], ['core.splitIndex', 'true'], ['index.version', '4']])
      git(dir, 'config', k, v);
    git(dir, 'update-index', '--split-index', '--index-version', '4');
    writeFileSync(join(dir, 'ai-memory', '.gitattributes'), `${readFileSync(join(dir, 'ai-memory', '.gitattributes'), 'utf8')}*.json filter=squeeze\n`);
    const cfg = join(dir, 'ai-memory', 'demo', 'config.yaml');
    writeFileSync(cfg, `${readFileSync(cfg, 'utf8')}commit:\n  hooks: run\n`);
    writeFileSync(join(dir, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\nif git diff --cached | grep -q FORBIDDEN; then echo "FORBIDDEN is not allowed" >&2; exit 1; fi\n');
    chmodSync(join(dir, '.git', 'hooks', 'pre-commit'), 0o755);
    git(dir, 'commit', '--no-verify', '-qm', 'policy', '--', 'ai-memory');
    const before = Number(git(dir, 'rev-list', '--count', 'HEAD').trim());
    const objects = join(dir, '.git', 'objects');
    const oldDirs = new Set(readdirSync(objects));
    const kept = [];
    let refused = 0;
    await Promise.all(
      Array.from({ length: quick ? 2 : 4 }, async (_, p) => {
        for (let i = 0; i < (quick ? 3 : 25); i++) {
          const bad = i % 3 === 2;
          const r = await runCli(dir, ['create', 'demo', '--file', '-'], JSON.stringify(entry(60 + p, i, bad ? { content: 'FORBIDDEN words' } : {})), { BASS_AGENTS_NO_DAEMON: '1' });
          if (bad && r.code === 1 && /FORBIDDEN is not allowed/.test(r.stderr)) refused++;
          else if (!bad && r.code === 0) kept.push(r.stdout.trim());
          else fail('repo-policy', `writer ${p} write ${i}: exit ${r.code}: ${r.stderr.trim()}`);
        }
      }),
    );
    const signs = git(dir, 'log', '--format=%G?', `-${Number(git(dir, 'rev-list', '--count', 'HEAD').trim()) - before}`).trim().split('\n');
    if (signs.some((x) => x !== 'G')) fail('repo-policy', `memory commits not signed: ${signs.join('')}`);
    if (signs.length !== kept.length) fail('repo-policy', `${kept.length} writes acknowledged, ${signs.length} commits made`);
    if (/FORBIDDEN/.test(git(dir, 'log', '-p', '--', 'ai-memory'))) fail('repo-policy', 'a refused entry was committed');
    // Object folders made since are git's, with the group's write and set-group-id bits.
    for (const d of readdirSync(objects).filter((x) => /^[0-9a-f]{2}$/.test(x) && !oldDirs.has(x)))
      if ((statSync(join(objects, d)).mode & 0o2070) !== 0o2070) fail('repo-policy', `objects/${d} is not group-writable`);
    try {
      git(dir, 'fsck', '--no-progress', '--strict', '--no-dangling');
    } catch (err) {
      fail('repo-policy', `git fsck: ${String(err.stdout ?? err.message).trim()}`);
    }
    checkClean('repo-policy', dir, 'after the policy writers');
    if (git(dir, 'show', ':app.txt') !== 'v2 staged by the user\n') fail('repo-policy', "the user's staged change changed");
    report.repo_policy = { signed_commits: signs.length, refused_by_hook: refused };
  }

  report.failures = failures;
  if (asJson) console.log(JSON.stringify(report, null, 2));
  else {
    if (report.write_latency_ms) console.log(`writers: ${processes} x ${writes}${useDaemon ? ' through the daemon' : ''}: ${report.acknowledged_writes} acknowledged in ${report.concurrent_phase_ms} ms (${report.writes_per_second}/s, ${report.commits} commits), p50 ${report.write_latency_ms.p50} ms, p99 ${report.write_latency_ms.p99} ms, ${report.busy_exits} exit 4`);
    if (report.kill_loop) console.log(`kills: ${report.kill_loop.writers_killed} writers killed with SIGKILL in ${report.kill_loop.rounds} rounds; the next command left nothing uncommitted each time`);
    if (report.git_steps) console.log(`git steps: ${report.git_steps.map((s) => `${s.when} ${s.step}: ${s.killed ? 'killed' : 'not killed'}, ${s.committed ? 'committed' : 'undone'}`).join('; ')}`);
    if (report.user_race) console.log(`user race: ${report.user_race.memory_writes} memory writes beside ${report.user_race.user_commits} user commits`);
    if (report.checkout) console.log(`checkout: ${report.checkout.round_trips} round trips under the daemon, ${report.checkout.stale_answers} stale answers`);
    if (report.supersede) console.log(`supersede: ${report.supersede.succeeded} of ${report.supersede.processes} concurrent supersedes won`);
    if (report.names) console.log(`names: ${report.names.cases} refusals checked (${report.names.device_names} device names), ${report.names.accepted} accepted, ${report.names.echoed} echoed a token`);
    if (report.unreadable) console.log(`unreadable: ${report.unreadable.rounds} projects of ${report.unreadable.files_per_round} unreadable files, remove-project refused ${report.unreadable.refused}, ${report.unreadable.lost} files lost`);
    if (report.daemon_socket) {
      const r = report.daemon_socket;
      console.log(`daemon socket: ${r.huge_requests} requests of 60 MB (${r.at_once} at once) refused; ${r.pings} pings meanwhile, worst ${r.worst_ping_ms} ms (p50 ${r.p50_ping_ms}); heap + buffers ${r.held_mib[0]} MiB before, ${r.held_mib[1]} after; resident ${r.rss_mib[0]} MiB before, ${r.rss_mib[1]} after`);
    }
    if (report.daemon_start) console.log(`daemon start: ${report.daemon_start.starts_at_once} at once, ${report.daemon_start.rounds.length} rounds: ${report.daemon_start.rounds.map((r) => `${r.started} started/${r.already} already running/${r.failed} failed`).join('; ')}`);
    if (report.index_lock) console.log(`index lock: ${report.index_lock.refused_writes} writes gave up (exit 4); list p50 ${report.index_lock.list_ms_lock_held} ms with the lock held, ${report.index_lock.list_ms_lock_free} ms without; ${report.index_lock.waited_writes} waiting writes finished`);
    if (report.gc_race) console.log(`gc race: ${report.gc_race.writes} writes beside ${report.gc_race.repack_rounds} repack/gc rounds`);
    if (report.ctrl_c) console.log(`ctrl-c: ${report.ctrl_c.interrupted} applies interrupted (130, nothing kept), ${report.ctrl_c.finished_first} finished first`);
    if (report.git_env) console.log(`git env: ${report.git_env.git_dir_writes} GIT_DIR writes; beside a daemon ${report.git_env.daemon} plain, ${report.git_env.own_index} with their own index, ${report.git_env.own_author} with their own author`);
    if (report.repo_policy) console.log(`repo policy: ${report.repo_policy.signed_commits} signed commits, ${report.repo_policy.refused_by_hook} refused by the hook`);
    for (const f of failures) console.log(`FAIL ${f}`);
    if (!failures.length) console.log('no failures');
  }
  process.exitCode = failures.length ? 1 : 0;
} finally {
  if (!args.includes('--keep')) rmSync(root, { recursive: true, force: true });
  else console.error(`kept ${root}`);
}

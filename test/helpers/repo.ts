/**
 * Test fixtures: real temp folders, real git repositories, the real CLI as a child process.
 * Every temp dir is removed when its test finishes; HOME points into it so no real config leaks in.
 */
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';
import { stateDirOf } from '../../src/store/state-dir.js';

export const BIN = resolve(dirname(fileURLToPath(import.meta.url)), '../../bin/bass-agents.cjs');

export function testdir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'bass-agents-test-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function git(cwd: string, ...args: string[]): string {
  // stderr captured (it is in the error when git fails), not leaked into the test output.
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: cleanGitEnv(cwd), stdio: ['pipe', 'pipe', 'pipe'] });
}

export function cleanGitEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_') && !k.startsWith('BASS_AGENTS_')) env[k] = v;
  env.HOME = home;
  env.GIT_CONFIG_NOSYSTEM = '1';
  // Daemons and MCP servers in tests stay lexical, so that ranking tests hold to words alone;
  // test/integration/semantic.test.ts turns semantic search on.
  env.BASS_AGENTS_SEMANTIC = 'off';
  return env;
}

/**
 * An empty repository made by `git init` and configured as gitdir's are, once per test worker
 * (it outlives a test file: nothing writes to it; removed when the worker exits): a new
 * repository is a copy of its .git, not five more git processes. Automatic maintenance is off:
 * git would start it after every commit a test makes, and gc.auto=0 leaves it nothing to do.
 */
let template: string | undefined;
function templateGitDir(): string {
  if (template) return join(template, '.git');
  const dir = mkdtempSync(join(tmpdir(), 'bass-agents-template-'));
  process.once('exit', dropTemplate);
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Test User');
  git(dir, 'config', 'user.email', 'test@example.com');
  git(dir, 'config', 'gc.auto', '0');
  git(dir, 'config', 'maintenance.auto', 'false');
  git(dir, 'config', 'commit.gpgsign', 'false');
  template = dir;
  return join(dir, '.git');
}
/**
 * The .git of a repository holding `files` in its one commit, made once per test worker for
 * each set of files: most tests start from the same README, and a copy of that .git replaces the
 * `git add`, `git commit` and the maintenance run of each.
 */
const committed = new Map<string, string>();
/** The same, after `memory init` (initdir). */
const initialised = new Map<string, string>();
function committedGitDir(files: Record<string, string>): string {
  const key = JSON.stringify(files);
  const known = committed.get(key);
  if (known) return join(known, '.git');
  const dir = mkdtempSync(join(tmpdir(), 'bass-agents-template-'));
  cpSync(templateGitDir(), join(dir, '.git'), { recursive: true });
  writeFiles(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  committed.set(key, dir);
  return join(dir, '.git');
}
function dropTemplate(): void {
  for (const dir of [template, ...committed.values(), ...initialised.values()]) if (dir) rmSync(dir, { recursive: true, force: true });
  template = undefined;
  committed.clear();
  initialised.clear();
}

function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), c);
  }
}

/** A real git repository on branch main with a fixed user and one commit. */
export function gitdir(files: Record<string, string> = { 'README.md': '# test repo\n' }): string {
  const dir = testdir();
  cpSync(committedGitDir(files), join(dir, '.git'), { recursive: true });
  writeFiles(dir, files);
  // The copied index holds the template's file times: refreshed, as `git commit` left it.
  git(dir, 'update-index', '-q', '--refresh');
  return dir;
}

/**
 * A repository as gitdir() makes it, after `memory init <project>` of the real CLI: the init is
 * run once per test worker for each set of files and project, and each test gets a copy (its .git
 * with the init commit and the local state init left, and its files), for tests that start from
 * an initialised project and do not check init itself (test/e2e/cli-core.test.ts does).
 */
export function initdir(project = 'demo', files: Record<string, string> = { 'README.md': '# test repo\n' }): string {
  const key = JSON.stringify([project, files]);
  let made = initialised.get(key);
  if (!made) {
    made = mkdtempSync(join(tmpdir(), 'bass-agents-template-'));
    cpSync(committedGitDir(files), join(made, '.git'), { recursive: true });
    writeFiles(made, files);
    git(made, 'update-index', '-q', '--refresh');
    const r = cli(made, ['init', project], { env: { BASS_AGENTS_NO_DAEMON: '1' } });
    if (r.code !== 0) throw new Error(`memory init exited ${r.code}: ${r.stderr}`);
    initialised.set(key, made);
  }
  const dir = testdir();
  cpSync(made, dir, { recursive: true });
  git(dir, 'update-index', '-q', '--refresh');
  return dir;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: () => any;
}

/** Runs the real CLI (`node bin/bass-agents.cjs memory …`) in `cwd`. */
export function cli(cwd: string, args: string[], opts: { env?: Record<string, string>; input?: string } = {}): CliResult {
  const r = spawnSync(process.execPath, [BIN, 'memory', ...args], {
    cwd,
    encoding: 'utf8',
    input: opts.input,
    env: { ...cleanGitEnv(cwd), ...opts.env },
  });
  return {
    code: r.status ?? -1,
    stdout: r.stdout,
    stderr: r.stderr,
    json: () => JSON.parse(r.stdout),
  };
}

/** The CLI without blocking this process (a test that serves HTTP from this process needs that). */
export function cliAsync(cwd: string, args: string[], opts: { env?: Record<string, string>; input?: string } = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'memory', ...args], { cwd, env: { ...cleanGitEnv(cwd), ...opts.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.end(opts.input ?? '');
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr, json: () => JSON.parse(stdout) }));
  });
}

export function writeJson(dir: string, name: string, value: unknown): string {
  const p = join(dir, name);
  writeFileSync(p, JSON.stringify(value));
  return p;
}

/** A valid entry input; override any field. */
export function entry(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    section: 'decisions',
    kind: 'decision',
    subject: 'billing.invoices',
    scope: 'service:billing',
    summary: 'Invoices are generated nightly by a cron job.',
    content: 'Invoice generation runs as a nightly batch to avoid ledger lock contention.',
    tags: ['billing'],
    confidence: 0.9,
    evidence: [{ type: 'code', uri: 'src/billing/cron.ts#L10-L40', note: 'the scheduler' }],
    ...over,
  };
}

/** The local state folder of the workspace at `dir` (`<git dir>/bass-agents`, or under $XDG_STATE_HOME outside git). */
export function stateDir(dir: string): string {
  return stateDirOf(dir).dir;
}

/** One string per item of a list given as a literal: a tuple of its length. */
export type IdsOf<E extends readonly unknown[]> = { -readonly [K in keyof E]: string };

/** The ids of a batch's applied updates, one per update asked for (the test fails here otherwise). */
export function idsFor<const E extends readonly unknown[]>(asked: E, applied: { id: string }[]): IdsOf<E> {
  if (applied.length !== asked.length) throw new Error(`${asked.length} updates asked for, ${applied.length} applied`);
  return applied.map((a) => a.id) as IdsOf<E>;
}

/**
 * Entries a test starts from, written into project demo by one `memory apply` of the real CLI
 * (one process and one commit, where a create each would start one of each): their ids, in order.
 */
export function seed<const E extends readonly Record<string, unknown>[]>(dir: string, entries: E, env: Record<string, string> = {}): IdsOf<E> {
  const r = cli(dir, ['apply', 'demo', '--file', '-', '--json'], { env, input: JSON.stringify(entries.map((e) => ({ operation: 'create', entry: e }))) });
  if (r.code !== 0) throw new Error(`memory apply exited ${r.code}: ${r.stderr}`);
  return idsFor(entries, r.json().applied);
}

type Tuple<T, N extends number, R extends T[] = []> = R['length'] extends N ? R : Tuple<T, N, [...R, T]>;

/** The first n items of xs as a tuple (the test fails here when there are fewer). */
export function firstOf<T, N extends number>(xs: readonly T[], n: N): Tuple<T, N> {
  if (xs.length < n) throw new Error(`expected at least ${n} items, got ${xs.length}`);
  return xs.slice(0, n) as Tuple<T, N>;
}

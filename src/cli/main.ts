/** The `bass-agents` CLI: yargs root, global options, and the one place errors become exit codes. */
import yargs, { type Argv, type PositionalOptions } from 'yargs';
import { NotFoundError, UsageError } from '../core/errors.js';
import { consolidationCommands } from './commands/consolidation.js';
import { contextCommands } from './commands/context.js';
import { frontEndCommands } from './commands/frontends.js';
import { interchangeCommands } from './commands/interchange.js';
import { lifecycleCommands } from './commands/lifecycle.js';
import { readCommands } from './commands/read.js';
import { syncCommands } from './commands/sync.js';
import { writeCommands } from './commands/write.js';
import { Cli, ownEngine, type Command, type EngineSource, type GlobalArgs, recoverIfPending } from './io.js';
import type { CliParams, Methods } from '../daemon/protocol.js';
import { Caller } from '../service/caller.js';
import type { Engine } from '../service/engine.js';
import { offerGitView, settleGitView, type GitViewRun } from '../store/git-view.js';
import { workspaceFound } from '../store/root.js';

/** yargs renders the whole help text after every command in case it is needed; our `.fail` and `--help` never use that copy. */
function dropHelpCache(y: Argv<GlobalArgs>): void {
  const internal = (y as unknown as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } } }).getInternalMethods?.();
  const usage = internal?.getUsageInstance?.();
  if (usage && typeof usage.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => undefined;
}

/** Commands that read a workspace: outside one they say so instead of reporting an empty one. */
const READS = new Set([
  'list',
  'query',
  'show',
  'stats',
  'doctor',
  'context',
  'check-freshness',
  'export',
  'related',
  'log',
  'diff',
  'dashboard',
  'validate-evidence',
]);

const COMMANDS: readonly Command[] = [
  ...writeCommands,
  ...readCommands,
  ...contextCommands,
  ...interchangeCommands,
  ...lifecycleCommands,
  ...consolidationCommands,
  ...frontEndCommands,
  ...syncCommands,
];

/** yargs passes `--limit abc` on as NaN and a repeated option as an array: a usage error for every number option. */
const oneNumber =
  (name: string) =>
  (v: unknown): number => {
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    throw new UsageError(`--${name} must be a number${Array.isArray(v) ? ` (given ${v.length} times)` : ''}`);
  };

function defineCommands(y: Argv<GlobalArgs>, k: Cli, commands: readonly Command[]): void {
  for (const c of commands) {
    const build = (b: Argv<GlobalArgs>): Argv<GlobalArgs> => {
      const positionals = [...c.cmd.matchAll(/[<[]([\w-]+)(\.\.)?[>\]]/g)];
      for (const [, name, rest] of positionals)
        b.positional(name!, { type: 'string', ...(rest ? { array: true } : {}), ...c.options?.[name!] } as PositionalOptions);
      for (const [name, o] of Object.entries(c.options ?? {}))
        if (!positionals.some((p) => p[1] === name)) b.option(name, o.type === 'number' ? { ...o, coerce: oneNumber(name) } : o);
      return b;
    };
    y.command(c.cmd, c.describe as string, build, async (a) => {
      await c.run(k, a);
    });
  }
}

/** Commands that must not take the write lock first: git runs the merge driver inside a merge. */
const NO_RECOVERY = new Set(['merge-driver', 'completion', 'textconv']);

/** The memory command a command line names, when only that one need be defined (help, version and completion list them all). */
function namedCommand(argv: readonly string[]): string | undefined {
  const name = argv[0] === 'memory' ? argv[1] : undefined;
  if (!name || !/^[a-z][a-z-]*$/.test(name)) return undefined;
  return argv.some((a) => /^(--help|-h|--version|--get-yargs-completions)$/.test(a)) ? undefined : name;
}

function memoryCommands(y: Argv<GlobalArgs>, k: Cli, only?: string): Argv<GlobalArgs> {
  dropHelpCache(y);
  // A writer killed part way left a journal: recover it before this command reads or writes.
  y.middleware(async (argv) => {
    for (const [key, v] of Object.entries(argv)) if (v === STDIO_ARG) argv[key] = '-';
    const command = String(argv._[1] ?? '');
    if (READS.has(command) && !workspaceFound(k.caller.cwd, argv.root, k.caller.env))
      throw new NotFoundError(
        `no workspace found: no folder from ${k.caller.cwd} up holds .git or ai-memory/; run \`bass-agents memory init <project>\` in your repository (or pass --root)`,
      );
    if (NO_RECOVERY.has(command)) return;
    // Files a recovery put back were written after git looked at them.
    if (await recoverIfPending(k, argv)) offerGitView();
    else await settleGitView();
  });
  // Only the command named is defined (a fair part of a daemon's short request); no command: all, for "did you mean".
  const named = COMMANDS.filter((c) => c.cmd.split(' ', 1)[0] === only);
  defineCommands(y, k, named.length ? named : COMMANDS);
  y.demandCommand(1, 'name a memory command (see bass-agents memory --help)');
  return y;
}

export function buildCli(argv: string[], k: Cli): Argv<GlobalArgs> {
  return yargs(argv)
    .scriptName('bass-agents')
    .usage('$0 memory <command> [options]\n\nDurable, git-native memory for coding agents.')
    .option('json', { type: 'boolean', describe: 'print one JSON document on stdout', global: true })
    .option('root', { type: 'string', describe: 'workspace root (default: nearest folder with .git or ai-memory/; env BASS_AGENTS_ROOT)', global: true })
    .option('project', { alias: 'p', type: 'string', describe: 'project (env BASS_AGENTS_PROJECT)', global: true })
    .option('agent', { type: 'string', describe: 'writer name stored in created_by (env BASS_AGENTS_AGENT)', global: true })
    .option('allow-detached', {
      type: 'boolean',
      describe: 'write memory on a detached HEAD or during a rebase, merge, cherry-pick or bisect (refused by default; env BASS_AGENTS_ALLOW_DETACHED=1)',
      global: true,
    })
    .command('memory', 'durable memory: init, create, apply, list, query, show, ...', (y) => memoryCommands(y as Argv<GlobalArgs>, k, namedCommand(argv)))
    .completion('completion', 'print a shell completion script (bash or zsh): bass-agents completion >> ~/.bashrc')
    .demandCommand(1, 'name a command (bass-agents memory --help)')
    .strict()
    .recommendCommands()
    .help()
    .alias('h', 'help')
    .version()
    .wrap(Math.min(110, k.caller.columns || 100))
    .fail((msg, err, usage) => {
      if (err && err.name !== 'YError') throw err; // (a YError: an option's coerce refused its value)
      const known = Object.keys((usage as unknown as { getDescriptions?: () => Record<string, unknown> }).getDescriptions?.() ?? {});
      throw new UsageError(humanUsage(msg ?? err?.message ?? 'invalid command line', argv, known));
    });
}

/** yargs' own words for a bad command line, said the way the rest of the CLI says things. */
function humanUsage(msg: string, argv: string[] = [], known: string[] = []): string {
  let m: RegExpExecArray | null;
  if ((m = /^Not enough non-option arguments: got (\d+), need at least (\d+)/.exec(msg))) {
    return `this command needs ${m[2]} argument${m[2] === '1' ? '' : 's'} and got ${m[1]} (its --help names them)`;
  }
  if ((m = /^Too many non-option arguments: got (\d+), maximum of (\d+)/.exec(msg))) return `too many arguments: got ${m[1]}, at most ${m[2]} go here`;
  if ((m = /^Unknown arguments?: (.+)$/.exec(msg))) {
    const said = m[1]!.split(', '); // the group is not optional
    const isOption = (n: string): boolean => argv.some((a) => a === `--${n}` || a.startsWith(`--${n}=`) || a === `-${n}`);
    const options = said.filter(isOption).map((n) => `${n.length === 1 ? '-' : '--'}${n}${didYouMean(n, known)}`);
    // yargs also names the camelCase twin of a dashed option (sumary-only, sumaryOnly): one is enough.
    const words = said.filter((n) => !isOption(n) && !isOption(n.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`))).map((n) => JSON.stringify(n));
    const list = (what: string, items: string[]): string => (items.length ? `${what}${items.length > 1 ? 's' : ''} ${items.join(', ')}` : '');
    return [list('unknown option', options), list('unexpected argument', words)].filter(Boolean).join('; ');
  }
  if ((m = /^Missing required arguments?: (.+)$/.exec(msg))) return `${m[1]!.replace(/[^, ]+/g, '--$&')} is required`;
  if ((m = /Argument: (\S+), Given: (.+), Choices: (.+)$/m.exec(msg))) return `--${m[1]} ${m[2]} is not one of: ${m[3]}`;
  return msg;
}

/** ` (did you mean --x?)` for the known option nearest to `name` (at most a third of its letters different), else nothing. */
function didYouMean(name: string, known: string[]): string {
  const max = Math.max(1, Math.floor(name.length / 3));
  const near = known.map((k) => [k, editDistance(name, k)] as const).filter(([, d]) => d <= max);
  const best = near.sort((x, y) => x[1] - y[1])[0]?.[0]; // (a stable sort: the first of equals)
  return best ? ` (did you mean --${best}?)` : '';
}

/** Levenshtein distance (two rows of b.length + 1 cells). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** A positional `-` on its way through yargs (see normalizeArgv). */
const STDIO_ARG = '\u0000-';

/** yargs misreads a lone `-`: `--file -` (stdin, CLI.md) becomes `--file=-`, a positional `-` a marker. */
export function normalizeArgv(argv: string[]): string[] {
  const takesDash = (i: number): boolean => argv[i + 1] === '-' && /^(--[\w-]+|-f)$/.test(argv[i] ?? '');
  // A positional `-` (import/export) would be read as `true`.
  return argv.flatMap((a, i) => (takesDash(i) ? [`${a}=-`] : a !== '-' ? [a] : takesDash(i - 1) ? [] : [STDIO_ARG]));
}

export interface RunOptions {
  /** Default: this process, whose exit code it sets. */
  caller?: Caller;
  /** Default: an engine opened for this command line. */
  engines?: EngineSource;
  /** Standard input the thin client already read. */
  stdin?: Buffer;
  /** git's view of the entry files, started before this CLI loaded (store/git-view.ts). */
  gitView?: GitViewRun;
}

export async function main(argv: string[], opts: RunOptions = {}): Promise<number> {
  if (opts.gitView) offerGitView(opts.gitView);
  const { stdout, stderr } = process; // (env and folder: the Caller's defaults)
  const caller = opts.caller ?? new Caller({ stdout, stderr, stdin: opts.stdin, stderrIsTTY: Boolean(stderr.isTTY), columns: stdout.columns });
  const k = new Cli(caller, opts.engines ?? ownEngine);
  const json = argv.includes('--json');
  try {
    await buildCli(normalizeArgv(argv), k).parseAsync();
  } catch (err) {
    caller.setExitCode(k.reportError(err, json));
    if (err instanceof UsageError && !json) caller.stderr.write('(see bass-agents memory --help)\n');
  } finally {
    offerGitView(); // unused (a usage error, a command that reads no catalog): git is not waited for
  }
  if (!opts.caller && caller.exitCode) process.exitCode = caller.exitCode;
  return caller.exitCode;
}

/** The runner a daemon is handed: a client's command line run by `main` on the daemon's engine, its output captured. */
export async function runForClient(p: CliParams, engine: Engine, ownEnv: NodeJS.ProcessEnv = process.env): Promise<Methods['cli']['result']> {
  const output: [1 | 2, string][] = [];
  const print = (fd: 1 | 2, text: string): void => {
    const last = output[output.length - 1];
    if (last && last[0] === fd) last[1] += text;
    else output.push([fd, text]);
  };
  // The daemon's own settings (its --agent, its project) never stand in for the caller's.
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(ownEnv)) if (!k.startsWith('BASS_AGENTS_')) env[k] = v;
  for (const [k, v] of Object.entries(p.env)) if (k.startsWith('BASS_AGENTS_')) env[k] = v;
  const caller = new Caller({
    env,
    cwd: p.cwd,
    stdout: { write: (t: string) => print(1, t) },
    stderr: { write: (t: string) => print(2, t) },
    stdin: p.stdin === null ? Buffer.alloc(0) : Buffer.from(p.stdin, 'base64'),
    columns: typeof p.columns === 'number' && p.columns > 0 ? p.columns : undefined,
    records: p.record !== false,
  });
  const exitCode = await main(p.argv, { caller, engines: () => engine });
  return { output, exitCode };
}

/**
 * The `bass-agents` CLI: yargs root, global options, and the one place that turns errors into
 * exit codes (CLI.md: 0 ok, 1 rejected, 2 usage, 3 not found, 4 busy).
 */
import yargs, { type Argv, type PositionalOptions } from 'yargs';
import { NotFoundError, UsageError } from '../core/errors.js';
import { consolidationCommands } from './commands/consolidation.js';
import { contextCommands } from './commands/context.js';
import { daemonCommands } from './commands/daemon.js';
import { dashboardCommands } from './commands/dashboard.js';
import { interchangeCommands } from './commands/interchange.js';
import { lifecycleCommands } from './commands/lifecycle.js';
import { mcpCommands } from './commands/mcp.js';
import { readCommands } from './commands/read.js';
import { syncCommands } from './commands/sync.js';
import { writeCommands } from './commands/write.js';
import { Cli, STDIO_ARG, ownEngine, type Command, type EngineSource, type GlobalArgs, recoverIfPending } from './io.js';
import { Caller } from '../service/caller.js';
import { dropGitView, offerGitView, settleGitView, type GitViewRun } from '../store/git-view.js';
import { workspaceFound } from '../store/root.js';

/**
 * yargs renders the whole help text after every command "in case it is needed later" (string-width
 * work on every call). Our `.fail` handler prints its own one-line error and help is
 * rendered fresh for `--help`, so that cached copy is never used: it is not made.
 */
function dropHelpCache(y: Argv<GlobalArgs>): void {
  const internal = (y as unknown as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } } }).getInternalMethods?.();
  const usage = internal?.getUsageInstance?.();
  if (usage && typeof usage.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => undefined;
}

/** Commands that read a workspace: outside of one they say so instead of reporting an empty one. */
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
  ...daemonCommands,
  ...dashboardCommands,
  ...syncCommands,
  ...mcpCommands,
];

/** Defines `commands` on `y`: the positionals of each command string as strings, then its options. */
function defineCommands(y: Argv<GlobalArgs>, k: Cli, commands: readonly Command[]): void {
  for (const c of commands) {
    const build = (b: Argv<GlobalArgs>): Argv<GlobalArgs> => {
      const positionals = [...c.cmd.matchAll(/[<[]([\w-]+)(\.\.)?[>\]]/g)];
      for (const [, name, rest] of positionals)
        b.positional(name!, { type: 'string', ...(rest ? { array: true } : {}), ...c.options?.[name!] } as PositionalOptions);
      b = c.build ? c.build(b) : b;
      for (const [name, o] of Object.entries(c.options ?? {})) if (!positionals.some((p) => p[1] === name)) b.option(name, o);
      return b;
    };
    y.command(c.cmd, c.describe as string, build, async (a) => {
      await c.run(k, a);
    });
  }
}

/** Commands that must not take the write lock first: git runs the merge driver inside a merge. */
const NO_RECOVERY = new Set(['merge-driver', 'completion', 'textconv']);

/**
 * The memory command a command line names (`memory <name> ...`), when only that one need be
 * defined: not for help, version or completion text, which list commands.
 */
function namedCommand(argv: readonly string[]): string | undefined {
  const name = argv[0] === 'memory' ? argv[1] : undefined;
  if (!name || !/^[a-z][a-z-]*$/.test(name)) return undefined;
  return argv.some((a) => /^(--help|-h|--version|--get-yargs-completions)$/.test(a)) ? undefined : name;
}

function memoryCommands(y: Argv<GlobalArgs>, k: Cli, only?: string): Argv<GlobalArgs> {
  dropHelpCache(y);
  // A writer killed part way left a journal: finish or undo its work before this command reads
  // or writes anything (a few stats when there is none).
  y.middleware(async (argv) => {
    const command = String(argv._[1] ?? '');
    // Not found (3), like any other thing a read names that is not there.
    if (READS.has(command) && !workspaceFound(k.caller.cwd, argv.root, k.caller.env))
      throw new NotFoundError(
        `no workspace found: no folder from ${k.caller.cwd} up holds .git or ai-memory/; run \`bass-agents memory init <project>\` in your repository (or pass --root)`,
      );
    if (NO_RECOVERY.has(command)) return;
    // Files a recovery puts back were written after git looked at them.
    if (await recoverIfPending(k, argv)) dropGitView();
    else await settleGitView();
  });
  // yargs runs this builder on every command line (a fair part of a daemon's short request), so
  // only the command named is defined; a name that is no command gets them all, for "did you mean".
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
      if (err) throw err;
      // The options this command knows (yargs' usage instance lists them), for "did you mean".
      const known = Object.keys((usage as unknown as { getDescriptions?: () => Record<string, unknown> }).getDescriptions?.() ?? {});
      throw new UsageError(humanUsage(msg ?? 'invalid command line', argv, known));
    });
}

/** yargs' own words for a bad command line, said the way the rest of the CLI says things. */
export function humanUsage(msg: string, argv: string[] = [], known: string[] = []): string {
  let m: RegExpExecArray | null;
  if ((m = /^Not enough non-option arguments: got (\d+), need at least (\d+)/.exec(msg))) {
    return `this command needs ${m[2]} argument${m[2] === '1' ? '' : 's'} and got ${m[1]} (its --help names them)`;
  }
  if ((m = /^Too many non-option arguments: got (\d+), maximum of (\d+)/.exec(msg))) return `too many arguments: got ${m[1]}, at most ${m[2]} go here`;
  if ((m = /^Unknown arguments?: (.+)$/.exec(msg))) {
    const said = m[1]!.split(', '); // the group is not optional
    const isOption = (n: string): boolean => argv.some((a) => a === `--${n}` || a.startsWith(`--${n}=`) || a === `-${n}`);
    // yargs also names the camelCase twin of a dashed option (sumary-only, sumaryOnly): one is enough.
    const dashed = said.filter(isOption);
    const options = dashed.map((n) => {
      const near = closest(n, known);
      return `${n.length === 1 ? `-${n}` : `--${n}`}${near ? ` (did you mean --${near}?)` : ''}`;
    });
    const camel = new Set(dashed.map((n) => n.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())));
    const words = said.filter((n) => !isOption(n) && !camel.has(n)).map((n) => JSON.stringify(n));
    return [
      options.length ? `unknown option${options.length > 1 ? 's' : ''} ${options.join(', ')}` : '',
      words.length ? `unexpected argument${words.length > 1 ? 's' : ''} ${words.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join('; ');
  }
  if ((m = /^Missing required arguments?: (.+)$/.exec(msg)))
    return `${m[1]!
      .split(', ')
      .map((n) => `--${n}`)
      .join(', ')} is required`;
  if ((m = /Argument: (\S+), Given: (.+), Choices: (.+)$/m.exec(msg))) return `--${m[1]} ${m[2]} is not one of: ${m[3]}`;
  return msg;
}

/** The known option nearest to `name` (at most a third of its letters different), if any. */
export function closest(name: string, known: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(name.length / 3)) + 1;
  for (const k of known) {
    const d = editDistance(name, k);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance (two rows). */
function editDistance(a: string, b: string): number {
  // `!`: both rows hold b.length + 1 cells, filled left to right.
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** yargs misreads a lone `-`: `--file -` (stdin, CLI.md) becomes `--file=-`, a positional `-` a marker. */
export function normalizeArgv(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!; // i < argv.length
    if (/^(--[\w-]+|-f)$/.test(a) && argv[i + 1] === '-') {
      out.push(`${a}=-`);
      i++;
    } else if (a === '-')
      out.push(STDIO_ARG); // a positional `-` (import/export): yargs would read it as `true`
    else out.push(a);
  }
  return out;
}

/** The caller of a command line run by this process for itself: its own folder, environment and standard streams. */
function processCaller(stdin?: Buffer): Caller {
  return new Caller({
    env: process.env,
    cwd: process.cwd(),
    stdout: process.stdout,
    stderr: process.stderr,
    stdin,
    stderrIsTTY: Boolean(process.stderr.isTTY),
    columns: process.stdout.columns,
  });
}

export interface RunOptions {
  /** Who runs the command line (default: this process, whose exit code it sets). */
  caller?: Caller;
  /** The engine of the workspace (default: one opened for this command line). */
  engines?: EngineSource;
  /** Standard input the thin client already read. */
  stdin?: Buffer;
  /** git's view of the entry files, started before this CLI loaded (see store/git-view.ts). */
  gitView?: GitViewRun;
}

/** Runs one command line; returns its exit code. */
export async function main(argv: string[], opts: RunOptions = {}): Promise<number> {
  if (opts.gitView) offerGitView(opts.gitView);
  const caller = opts.caller ?? processCaller(opts.stdin);
  const k = new Cli(caller, opts.engines ?? ownEngine);
  const json = argv.includes('--json');
  try {
    await buildCli(normalizeArgv(argv), k).parseAsync();
  } catch (err) {
    caller.setExitCode(k.reportError(err, json));
    // The error first, then where to read more.
    if (err instanceof UsageError && !json) caller.stderr.write('(see bass-agents memory --help)\n');
  } finally {
    dropGitView(); // unused (a usage error, a command that reads no catalog): git is not waited for
  }
  if (!opts.caller && caller.exitCode) process.exitCode = caller.exitCode;
  return caller.exitCode;
}

/**
 * CLI plumbing shared by every command: reading input files (or stdin), printing JSON or human
 * output, warnings, and turning errors into one clear line per problem.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Argv, Options } from 'yargs';
import { MemoryError, NotFoundError, UsageError, ValidationError, formatProblem } from '../core/errors.js';
import { checkDepth } from '../core/errors.js';
import type { Caller } from '../service/caller.js';
import { Engine } from '../service/engine.js';
import { hasPendingJournal, recoverPending } from '../service/transaction.js';
import { findRoot } from '../store/workspace.js';

export interface GlobalArgs {
  json?: boolean;
  root?: string;
  project?: string;
  agent?: string;
  allowDetached?: boolean;
}

/** A command's parsed arguments. */
export type Args = GlobalArgs & Record<string, unknown>;

/**
 * One command: its yargs command string (each positional in it is a string, an array for
 * `<name..>`), its options (a positional's too, by name), and what it does.
 */
export interface Command {
  cmd: string;
  /** false: run by programs (git, agent clients), not listed in help. */
  describe: string | false;
  options?: Record<string, Options>;
  /** Options several commands share (the query filters), declared before `options`. */
  build?: <T>(y: Argv<T>) => Argv<T>;
  run(k: Cli, a: Args): unknown;
}

/** `--file`: a JSON document to read. */
export const JSON_FILE: Options = { alias: 'f', type: 'string', describe: 'JSON file, or - for stdin' };

/** What a positional `-` (stdin or stdout) becomes on the way through yargs (see normalizeArgv). */
export const STDIO_ARG = '\u0000-';

/** The value of a positional file argument, with `-` restored. */
export function fileArg(v: unknown): string {
  const s = String(v ?? '');
  return s === STDIO_ARG ? '-' : s;
}

/** A value as the CLI prints JSON. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Where the engine of a command line comes from: the daemon's own, or one opened for this process. */
export type EngineSource = (args: GlobalArgs, caller: Caller) => Engine;

/** Opens the engine of a one-shot process; its writes tell a running daemon at once (best effort: its watcher would see them shortly anyway). */
export const ownEngine: EngineSource = (args, caller) => {
  const engine: Engine = new Engine({
    root: args.root,
    env: caller.env,
    cwd: caller.cwd,
    onWrite: async (files) => {
      const { daemonPaths, request } = await import('../daemon/client.js');
      await request(daemonPaths(engine.ws.localDir), 'notify', { files }, 1000);
    },
  });
  return engine;
};

/**
 * What every command of one command line uses: the caller (its folder, environment, standard
 * streams), the engine of the workspace it names, and the printing of results and warnings.
 */
export class Cli {
  private engine: Engine | undefined;

  constructor(
    readonly caller: Caller,
    private readonly engines: EngineSource,
  ) {}

  /** The engine of the command's workspace, and the caller with the command's --agent and --allow-detached. */
  open(args: GlobalArgs): [Engine, Caller] {
    const c = this.caller.with({
      ...(args.agent ? { agent: args.agent } : {}),
      ...(args.allowDetached ? { allowDetached: true } : {}),
      warn: (m) => this.warn(m),
    });
    this.engine ??= this.engines(args, c);
    return [this.engine, c];
  }

  out(text: string): void {
    this.caller.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  printJson(value: unknown): void {
    this.caller.stdout.write(jsonText(value));
  }

  /** `value` as JSON with --json, else the human `text`. */
  print(a: GlobalArgs, value: unknown, text: string): void {
    if (a.json) this.printJson(value);
    else if (text) this.out(text);
  }

  warn(message: string): void {
    this.caller.stderr.write(`warning: ${message}\n`);
  }

  table(rows: string[][], header: string[]): string {
    return table(rows, header, this.caller.columns);
  }

  /**
   * Reads a file (or `-` for stdin) as UTF-8 text; bytes that are not valid UTF-8 are refused with
   * their offset (never silently replaced), and so is input over MAX_INPUT_BYTES.
   */
  readTextInput(file: string): { text: string; source: string } {
    let buf: Buffer;
    let source: string;
    if (file === '-') {
      source = 'stdin';
      try {
        buf = this.caller.stdin ?? readFileSync(0);
      } catch {
        buf = Buffer.alloc(0);
      }
    } else {
      const abs = resolve(this.caller.cwd, file);
      if (!existsSync(abs)) throw new NotFoundError(`input file ${file} does not exist`);
      const st = statSync(abs);
      if (st.isDirectory()) throw new UsageError(`input file ${file} is a directory`);
      if (st.size > MAX_INPUT_BYTES)
        throw new ValidationError([{ path: file, message: `is ${st.size} bytes; at most ${MAX_INPUT_BYTES} are read (--file)` }], 'input');
      source = file;
      buf = readFileSync(abs);
    }
    if (buf.length > MAX_INPUT_BYTES)
      throw new ValidationError([{ path: source, message: `is ${buf.length} bytes; at most ${MAX_INPUT_BYTES} are read` }], 'input');
    try {
      return { text: new TextDecoder('utf-8', { fatal: true }).decode(buf), source };
    } catch {
      const at = firstInvalidUtf8(buf);
      throw new ValidationError([{ path: source, message: `is not valid UTF-8 (at byte ${at}); save it as UTF-8` }], 'input');
    }
  }

  /** Reads `--file F` (or `-` for stdin) as JSON; errors name the file and where the JSON broke. */
  readJsonInput(file: string | undefined): unknown {
    if (file === undefined || file === '') throw new UsageError('--file is required (a JSON file, or - for stdin)');
    const { text, source } = this.readTextInput(file);
    if (!text.trim()) throw new ValidationError([{ path: source, message: 'is empty (expected JSON)' }], 'input');
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      throw new ValidationError([{ path: source, message: `is not valid JSON (${(err as Error).message})` }], 'input');
    }
    checkDepth(doc, source);
    return doc;
  }

  /**
   * A progress bar on stderr for work that takes seconds (`phase` names the step: validating,
   * writing), or undefined when stderr is not a terminal or the output is JSON: piped output stays
   * clean. The bar ends its line when the last phase reaches its total.
   */
  progressBar(json: boolean, lastPhase: string): ((done: number, total: number, phase: string) => void) | undefined {
    if (json || !this.caller.stderrIsTTY) return undefined;
    return (done, total, phase) => {
      const fill = Math.round((done / Math.max(1, total)) * 30);
      this.caller.stderr.write(`\r${phase.padEnd(10)} [${'#'.repeat(fill)}${' '.repeat(30 - fill)}] ${done}/${total}`);
      if (phase === lastPhase && done === total) this.caller.stderr.write('\n');
    };
  }

  /** Prints an error the way CLI.md says: one sentence per problem on stderr, `{"error": …}` on stdout with --json. */
  reportError(err: unknown, json: boolean): number {
    const { stdout, stderr } = this.caller;
    if (err instanceof MemoryError) {
      if (err.problems.length) {
        // Hundreds of entries with the same problem: the first ones, then a count (--json has all).
        for (const p of err.problems.slice(0, MAX_PROBLEM_LINES)) stderr.write(`error: ${formatProblem(p)}\n`);
        const more = err.problems.length - MAX_PROBLEM_LINES;
        if (more > 0) stderr.write(`error: … and ${more} more problem${more === 1 ? '' : 's'} (--json lists them all)\n`);
      } else stderr.write(`error: ${err.message}\n`);
      if (json) stdout.write(jsonText({ error: err.toJSON() }));
      return err.exitCode;
    }
    const e = err as Error;
    stderr.write(`error: internal error: ${e?.stack ?? String(err)}\nThis is a bug in bass-agents; please report it with the command you ran.\n`);
    if (json) stdout.write(jsonText({ error: { code: 'E_INTERNAL', message: e?.message ?? String(err), problems: [] } }));
    return 1;
  }
}

/** Recovers a killed writer's journal before a command runs, when there is one (see main.ts): whether there was one. */
export async function recoverIfPending(k: Cli, args: GlobalArgs): Promise<boolean> {
  let root: string;
  try {
    root = findRoot(k.caller.cwd, args.root, k.caller.env);
  } catch {
    return false; // the command itself reports a bad --root
  }
  if (!hasPendingJournal(root)) return false;
  const r = await recoverPending(...k.open(args));
  if (r && r.undone) k.warn(`a write that was cut off left ${r.undone} file(s) behind; they were put back as the last commit has them`);
  return true;
}

/** The most input one command reads (a file or stdin): larger input is refused, not truncated. */
const MAX_INPUT_BYTES = 256 * 1024 * 1024;

/** Problems printed one per line before the rest are counted. */
const MAX_PROBLEM_LINES = 20;

/** The offset of the first byte that breaks UTF-8: where the first replacement character that was not in the input stands. */
function firstInvalidUtf8(buf: Buffer): number {
  const text = buf.toString('utf8');
  for (let i = text.indexOf('\uFFFD'); i >= 0; i = text.indexOf('\uFFFD', i + 1)) {
    // What precedes it decoded cleanly, so its UTF-8 length is the offset.
    const at = Buffer.byteLength(text.slice(0, i));
    if (buf[at] !== 0xef || buf[at + 1] !== 0xbf || buf[at + 2] !== 0xbd) return at;
  }
  return buf.length;
}

/**
 * Fixed-width table for human output. On a terminal, the last column (the summary) is cut to fit
 * its width, so rows never wrap into noise; piped output keeps every character.
 */
export function table(rows: string[][], header: string[], columns?: number): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const before = widths.slice(0, -1).reduce((n, w) => n + w + 2, 0);
  const room = columns ? Math.max(20, columns - before - 1) : Infinity;
  const last = (c: string): string => (c.length > room ? `${c.slice(0, room - 1)}…` : c);
  return all.map((r) => r.map((c, i) => (i === r.length - 1 ? last(c) : c.padEnd(widths[i] ?? 0))).join('  ')).join('\n');
}

export { clip } from '../core/entry.js';

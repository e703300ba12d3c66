/** What every command shares: input files (or stdin), JSON or human output, warnings, errors as one line per problem. */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Options } from 'yargs';
import { KINDS, SECTIONS } from '../core/constants.js';
import { MemoryError, NotFoundError, UsageError, ValidationError, checkDepth, formatProblem } from '../core/errors.js';
import type { Caller } from '../service/caller.js';
import { Engine } from '../service/engine.js';
import { hasPendingJournal, recoverPending } from '../service/transaction.js';
import { orThrow, tryOr } from '../try.js';
import { findRoot } from '../store/workspace.js';

export interface GlobalArgs {
  json?: boolean;
  root?: string;
  project?: string;
  agent?: string;
  allowDetached?: boolean;
}

export type Args = GlobalArgs & Record<string, unknown>;

/** One command: its yargs command string (positionals are strings, `<name..>` an array), its options (a positional's too), what it does. */
export interface Command {
  cmd: string;
  /** false: run by programs (git, agent clients), not in help. */
  describe: string | false;
  options?: Record<string, Options>;
  run(k: Cli, a: Args): unknown;
}

export const JSON_FILE: Options = { alias: 'f', type: 'string', describe: 'JSON file, or - for stdin' };

/** The query/list filters (CLI.md `memory query`); yargs' camelCase twins (minConfidence, ...) are core/filters.ts's input as they are. */
export const FILTERS: Record<string, Options> = {
  section: { type: 'string', describe: `comma list of: ${SECTIONS.join(', ')}` },
  kind: { type: 'string', describe: `comma list of: ${KINDS.join(', ')}` },
  scope: { type: 'string', describe: 'repo, org, customer, service:<name>, environment:<env> (adds repo and org)' },
  subject: { type: 'string', describe: 'exact subject key' },
  tags: { type: 'string', describe: 'comma list; entries must carry all of them' },
  status: { type: 'string', describe: 'comma list of statuses, or "any" (default: active); any or draft also drop the confidence default' },
  'min-confidence': { type: 'number', describe: 'default 0.6' },
  since: { type: 'string', describe: 'ISO 8601 timestamp, or an age: 30m, 24h, 7d, 2w' },
  until: { type: 'string', describe: 'ISO 8601 timestamp, or an age: 30m, 24h, 7d, 2w' },
  'date-field': { type: 'string', choices: ['updated_at', 'created_at'], describe: 'field --since/--until test (default updated_at)' },
  'include-expired': { type: 'boolean', describe: 'include entries outside their valid_from..valid_to window' },
  limit: { type: 'number', describe: 'at most this many results (max 50)' },
  offset: { type: 'number', describe: 'skip this many results first (the next page)' },
};

/** `; commit <short id>` (or another wording) after a message, when the change made a commit. */
export function commitNote(commit: string | null | undefined, lead = '; commit ', end = ''): string {
  return commit ? `${lead}${commit.slice(0, 12)}${end}` : '';
}

/** The engine of a command line: the daemon's own, or one opened for this process. */
export type EngineSource = (args: GlobalArgs, caller: Caller) => Engine;

/** A one-shot process's engine: its writes tell a running daemon at once (best effort: its watcher sees them shortly anyway). */
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

/** What a command line's commands use: the caller, the engine of the workspace it names, printing. */
export class Cli {
  private engine: Engine | undefined;

  constructor(
    readonly caller: Caller,
    private readonly engines: EngineSource,
  ) {}

  /** The engine, and the caller with the command's --agent and --allow-detached. */
  open(args: GlobalArgs): [Engine, Caller] {
    const c = this.caller.with({
      ...(args.agent ? { agent: args.agent } : {}),
      ...(args.allowDetached ? { allowDetached: true } : {}),
      warn: (m) => this.warn(m),
    });
    this.engine ??= this.engines(args, c);
    return [this.engine, c];
  }

  out(text: string | string[]): void {
    if (Array.isArray(text)) text = text.join('\n');
    this.caller.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  printJson(value: unknown): void {
    this.caller.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** `value` as JSON with --json, else the human `text`. */
  print(a: GlobalArgs, value: unknown, text: string): void {
    if (a.json) this.printJson(value);
    else if (text) this.out(text);
  }

  err(text: string): void {
    this.caller.stderr.write(`${text}\n`);
  }

  warn(message: string): void {
    this.caller.stderr.write(`warning: ${message}\n`);
  }

  /** A table, and a line after it if any. */
  table(rows: string[][], header: string[], after?: string): void {
    this.out(table(rows, header, this.caller.columns));
    if (after) this.out(after);
  }

  /** Reads a file (or `-`) as UTF-8: invalid bytes are refused with their offset (never replaced), and so is input over MAX_INPUT_BYTES. */
  readTextInput(file: string): { text: string; source: string } {
    const source = file === '-' ? 'stdin' : file;
    let buf: Buffer;
    if (file === '-') buf = this.caller.stdin ?? tryOr(() => readFileSync(0), Buffer.alloc(0));
    else {
      const abs = resolve(this.caller.cwd, file);
      const st = statSync(abs, { throwIfNoEntry: false });
      if (!st) throw new NotFoundError(`input file ${file} does not exist`);
      if (st.isDirectory()) throw new UsageError(`input file ${file} is a directory`);
      if (st.size > MAX_INPUT_BYTES)
        throw new ValidationError([{ path: file, message: `is ${st.size} bytes; at most ${MAX_INPUT_BYTES} are read (--file)` }], 'input');
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

  /** Reads `--file F` (or `-`) as JSON; errors name the file and where the JSON broke. */
  readJsonInput(file: string | undefined): unknown {
    if (file === undefined || file === '') throw new UsageError('--file is required (a JSON file, or - for stdin)');
    const { text, source } = this.readTextInput(file);
    if (!text.trim()) throw new ValidationError([{ path: source, message: 'is empty (expected JSON)' }], 'input');
    const doc: unknown = orThrow(JSON.parse, text, (err) => new ValidationError([{ path: source, message: `is not valid JSON (${err.message})` }], 'input'));
    checkDepth(doc, source);
    return doc;
  }

  /** A progress bar on stderr for work that takes seconds; none with --json or when stderr is no terminal. */
  progressBar(json: boolean, lastPhase: string): ((done: number, total: number, phase: string) => void) | undefined {
    if (json || !this.caller.stderrIsTTY) return undefined;
    return (done, total, phase) => {
      const fill = Math.round((done / Math.max(1, total)) * 30);
      this.caller.stderr.write(`\r${phase.padEnd(10)} [${'#'.repeat(fill)}${' '.repeat(30 - fill)}] ${done}/${total}`);
      if (phase === lastPhase && done === total) this.caller.stderr.write('\n');
    };
  }

  /** The first of `lines`, then a count: thousands must not bury what follows. */
  capped(lines: string[], write: (line: string) => void, more = 'problems'): void {
    for (const line of lines.slice(0, MAX_LINES)) write(line);
    if (lines.length > MAX_LINES) write(`… and ${lines.length - MAX_LINES} more ${more} (--json lists them all)`);
  }

  /** Prints an error as CLI.md says: one sentence per problem on stderr, `{"error": …}` on stdout with --json. */
  reportError(err: unknown, json: boolean): number {
    if (err instanceof MemoryError) {
      this.capped(err.problems.length ? err.problems.map((p) => `error: ${formatProblem(p)}`) : [`error: ${err.message}`], (l) => this.err(l));
      if (json) this.printJson({ error: err.toJSON() });
      return err.exitCode;
    }
    const e = err as Error;
    this.err(`error: internal error: ${e?.stack ?? String(err)}\nThis is a bug in bass-agents; please report it with the command you ran.`);
    if (json) this.printJson({ error: { code: 'E_INTERNAL', message: e?.message ?? String(err), problems: [] } });
    return 1;
  }
}

/** Recovers a killed writer's journal before a command runs; whether there was one. */
export async function recoverIfPending(k: Cli, args: GlobalArgs): Promise<boolean> {
  const root = tryOr(() => findRoot(k.caller.cwd, args.root, k.caller.env), null); // (the command itself reports a bad --root)
  if (root === null || !hasPendingJournal(root)) return false;
  const r = await recoverPending(...k.open(args));
  if (r && r.undone) k.warn(`a write that was cut off left ${r.undone} file(s) behind; they were put back as the last commit has them`);
  return true;
}

/** The most input one command reads (a file or stdin): larger input is refused, not truncated. */
const MAX_INPUT_BYTES = 256 * 1024 * 1024;

const MAX_LINES = 20;

/** The offset of the first byte that breaks UTF-8: the first replacement character the input did not hold. */
function firstInvalidUtf8(buf: Buffer): number {
  const text = buf.toString('utf8');
  for (let i = text.indexOf('\uFFFD'); i >= 0; i = text.indexOf('\uFFFD', i + 1)) {
    // What precedes it decoded cleanly, so its UTF-8 length is the offset.
    const at = Buffer.byteLength(text.slice(0, i));
    if (buf[at] !== 0xef || buf[at + 1] !== 0xbf || buf[at + 2] !== 0xbd) return at;
  }
  return buf.length;
}

/** A fixed-width table; on a terminal the last column is cut to fit its width, piped output keeps every character. */
export function table(rows: string[][], header: string[], columns?: number): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const before = widths.slice(0, -1).reduce((n, w) => n + w + 2, 0);
  const room = columns ? Math.max(20, columns - before - 1) : Infinity;
  const last = (c: string): string => (c.length > room ? `${c.slice(0, room - 1)}…` : c);
  return all.map((r) => r.map((c, i) => (i === r.length - 1 ? last(c) : c.padEnd(widths[i] ?? 0))).join('  ')).join('\n');
}

export { clip } from '../core/entry.js';

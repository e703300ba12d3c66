/**
 * CLI plumbing shared by every command: reading input files (or stdin), printing JSON or human
 * output, warnings, and turning errors into one clear line per problem.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { MemoryError, NotFoundError, UsageError, ValidationError, formatProblem } from '../core/errors.js';
import { checkDepth } from '../core/limits.js';
import type { Methods, Request, WriteMethod } from '../daemon/protocol.js';
import { MemoryService } from '../service/memory-service.js';
import { hasPendingJournal } from '../service/transaction.js';
import { daemonMayWrite } from '../store/git-env.js';
import { findRoot } from '../store/workspace.js';
import { io } from './stdio.js';

export interface GlobalArgs {
  json?: boolean;
  root?: string;
  project?: string;
  agent?: string;
  allowDetached?: boolean;
}

/** What a positional `-` (stdin or stdout) becomes on the way through yargs (see normalizeArgv). */
export const STDIO_ARG = '\u0000-';

/** The value of a positional file argument, with `-` restored. */
export function fileArg(v: unknown): string {
  const s = String(v ?? '');
  return s === STDIO_ARG ? '-' : s;
}

export function out(text: string): void {
  io().stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

export function printJson(value: unknown): void {
  io().stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function warn(message: string): void {
  io().stderr.write(`warning: ${message}\n`);
}

export function service(args: GlobalArgs): MemoryService {
  let svc: MemoryService | undefined;
  // Writes tell a running daemon at once (best effort; its watcher would see them shortly anyway).
  const onWrite = async (files: string[]): Promise<void> => {
    if (!svc) return;
    const { daemonPaths, request } = await import('../daemon/client.js');
    await request(daemonPaths(svc.ws.localDir), 'notify', { files }, 1000);
  };
  const { env, cwd, local } = io();
  svc = new MemoryService(
    { root: args.root, agent: args.agent, env, cwd, ...(local ? {} : { onWrite }), ...(args.allowDetached ? { allowDetached: true } : {}) },
    warn,
  );
  return svc;
}

/** Recovers a killed writer's journal before a command runs, when there is one (see main.ts): whether there was one. */
export async function recoverIfPending(args: GlobalArgs): Promise<boolean> {
  let root: string;
  try {
    root = findRoot(io().cwd, args.root, io().env);
  } catch {
    return false; // the command itself reports a bad --root
  }
  if (!hasPendingJournal(root)) return false;
  const r = await service(args).recoverJournal();
  if (r && r.undone) warn(`a write that was cut off left ${r.undone} file(s) behind; they were put back as the last commit has them`);
  return true;
}

/**
 * Asks a running daemon; undefined when there is none (or it is stale, or fails), so the caller
 * takes the direct path. An error the daemon reports (bad filter, unknown project) is thrown
 * exactly as the direct path would throw it.
 */
export async function viaDaemon<M extends 'query' | 'prepareTask'>(
  svc: MemoryService,
  method: M,
  params: Request<M>['params'],
): Promise<Methods[M]['result'] | undefined> {
  if (svc.env.BASS_AGENTS_NO_DAEMON) return undefined;
  const local = io().local;
  const { daemonPaths, request } = await import('../daemon/client.js');
  const req = { ...params, clock: svc.env.BASS_AGENTS_NOW || null };
  const r = local ? await local(method, req) : await request(daemonPaths(svc.ws.localDir), method, req);
  if (!r) return undefined;
  if ('error' in r) throw r.error;
  return r.result;
}

/**
 * Hands a write (create, apply, applyResult) to a running daemon, which has the catalog, the
 * schemas and the secret rules already loaded; undefined when there is none, so the caller writes
 * directly. The project and the agent are resolved here, as the direct path would resolve them.
 * A caller with its own lock timeout writes directly (the daemon would apply its own).
 */
export async function writeViaDaemon<M extends WriteMethod>(
  svc: MemoryService,
  method: M,
  input: unknown,
  project: string | undefined,
): Promise<Methods[M]['result']['value'] | undefined> {
  // A caller with its own lock timeout, its own leave to write on a detached HEAD, or a git
  // environment of its own (another index, repository, identity, config) writes directly.
  if (svc.env.BASS_AGENTS_NO_DAEMON || svc.env.BASS_AGENTS_LOCK_TIMEOUT_MS || svc.ctx.allowDetached) return undefined;
  const { daemonPaths, requestWrite } = await import('../daemon/client.js');
  if (!io().local && !daemonMayWrite(process.env, daemonPaths(svc.ws.localDir).dir)) return undefined;
  const params = { input, project, agent: svc.explicitAgent ?? null, clock: svc.env.BASS_AGENTS_NOW || null };
  // Long enough for the daemon to wait for the workspace lock (30 s) and commit.
  const local = io().local;
  const r = local ? await local(method, params) : await requestWrite(daemonPaths(svc.ws.localDir), method, params, 120_000);
  if (!r) return undefined;
  if ('lost' in r) {
    throw new MemoryError(
      'E_INTERNAL',
      'the daemon took this write but gave no answer: it may or may not be done; check `bass-agents memory log` before retrying',
      1,
    );
  }
  if ('error' in r) throw r.error;
  for (const w of r.result.warnings) warn(w);
  return r.result.value;
}

/** The most input one command reads (a file or stdin): larger input is refused, not truncated. */
export const MAX_INPUT_BYTES = 256 * 1024 * 1024;

/**
 * Reads a file (or `-` for stdin) as UTF-8 text; bytes that are not valid UTF-8 are refused with
 * their offset (never silently replaced), and so is input over MAX_INPUT_BYTES.
 */
export function readTextInput(file: string, option = '--file'): { text: string; source: string } {
  let buf: Buffer;
  let source: string;
  if (file === '-') {
    source = 'stdin';
    try {
      buf = io().stdin ?? readFileSync(0);
    } catch {
      buf = Buffer.alloc(0);
    }
  } else {
    const abs = resolve(io().cwd, file);
    if (!existsSync(abs)) throw new NotFoundError(`input file ${file} does not exist`);
    const st = statSync(abs);
    if (st.isDirectory()) throw new UsageError(`input file ${file} is a directory`);
    if (st.size > MAX_INPUT_BYTES)
      throw new ValidationError([{ path: file, message: `is ${st.size} bytes; at most ${MAX_INPUT_BYTES} are read (${option})` }], 'input');
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

/** The offset of the first byte that breaks UTF-8. */
function firstInvalidUtf8(buf: Buffer): number {
  const d = new TextDecoder('utf-8', { fatal: true });
  let lo = 0;
  let hi = buf.length;
  // The longest valid prefix, by halving (a decoder has no offset of its own).
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    try {
      d.decode(buf.subarray(0, mid));
      lo = mid;
    } catch {
      // A prefix may end inside a valid multi-byte character: allow up to 3 bytes of slack.
      let ok = false;
      for (let k = 1; k <= 3 && mid + k <= buf.length && !ok; k++) {
        try {
          d.decode(buf.subarray(0, mid + k));
          ok = true;
        } catch {
          /* still broken */
        }
      }
      if (ok) lo = mid;
      else hi = mid - 1;
    }
  }
  return lo;
}

/** Reads `--file F` (or `-` for stdin) as JSON; errors name the file and where the JSON broke. */
export function readJsonInput(file: string | undefined, option = '--file'): unknown {
  if (file === undefined || file === '') throw new UsageError(`${option} is required (a JSON file, or - for stdin)`);
  const { text, source } = readTextInput(file, option);
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

/** Problems printed one per line before the rest are counted. */
const MAX_PROBLEM_LINES = 20;

/** Prints an error the way CLI.md says: one sentence per problem on stderr, `{"error": …}` on stdout with --json. */
export function reportError(err: unknown, json: boolean): number {
  if (err instanceof MemoryError) {
    if (err.problems.length) {
      // Hundreds of entries with the same problem: the first ones, then a count (--json has all).
      for (const p of err.problems.slice(0, MAX_PROBLEM_LINES)) io().stderr.write(`error: ${formatProblem(p)}\n`);
      const more = err.problems.length - MAX_PROBLEM_LINES;
      if (more > 0) io().stderr.write(`error: … and ${more} more problem${more === 1 ? '' : 's'} (--json lists them all)\n`);
    } else io().stderr.write(`error: ${err.message}\n`);
    if (json) printJson({ error: err.toJSON() });
    return err.exitCode;
  }
  const e = err as Error;
  io().stderr.write(`error: internal error: ${e?.stack ?? String(err)}\nThis is a bug in bass-agents; please report it with the command you ran.\n`);
  if (json) printJson({ error: { code: 'E_INTERNAL', message: e?.message ?? String(err), problems: [] } });
  return 1;
}

/**
 * A progress bar on stderr for work that takes seconds (`phase` names the step: validating,
 * writing), or undefined when stderr is not a terminal or the output is JSON: piped output stays
 * clean. The bar ends its line when the last phase reaches its total.
 */
export function progressBar(json: boolean, lastPhase: string): ((done: number, total: number, phase: string) => void) | undefined {
  if (json || !io().stderrIsTTY) return undefined;
  return (done, total, phase) => {
    const fill = Math.round((done / Math.max(1, total)) * 30);
    io().stderr.write(`\r${phase.padEnd(10)} [${'#'.repeat(fill)}${' '.repeat(30 - fill)}] ${done}/${total}`);
    if (phase === lastPhase && done === total) io().stderr.write('\n');
  };
}

/**
 * Fixed-width table for human output. On a terminal, the last column (the summary) is cut to fit
 * its width, so rows never wrap into noise; piped output keeps every character.
 */
export function table(rows: string[][], header: string[], columns: number | undefined = io().columns): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const before = widths.slice(0, -1).reduce((n, w) => n + w + 2, 0);
  const room = columns ? Math.max(20, columns - before - 1) : Infinity;
  const last = (c: string): string => (c.length > room ? `${c.slice(0, room - 1)}…` : c);
  return all.map((r) => r.map((c, i) => (i === r.length - 1 ? last(c) : c.padEnd(widths[i]))).join('  ')).join('\n');
}

export function clip(s: string, n: number): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length <= n ? one : `${one.slice(0, n - 1)}…`;
}

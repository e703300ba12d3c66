/**
 * CLI plumbing shared by every command: reading input files (or stdin), printing JSON or human
 * output, warnings, and turning errors into one clear line per problem.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { MemoryError, NotFoundError, UsageError, ValidationError, formatProblem, type ErrorCode } from '../core/errors.js';
import { MemoryService } from '../service/memory-service.js';
import { hasPendingJournal } from '../service/transaction.js';
import { findRoot } from '../store/workspace.js';

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
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function warn(message: string): void {
  process.stderr.write(`warning: ${message}\n`);
}

export function service(args: GlobalArgs): MemoryService {
  let svc: MemoryService | undefined;
  // Writes tell a running daemon at once (best effort; its watcher would see them shortly anyway).
  const onWrite = async (files: string[]): Promise<void> => {
    if (!svc) return;
    const { daemonPaths, request } = await import('../daemon/client.js');
    await request(daemonPaths(svc.ws.localDir), 'notify', { files }, 1000);
  };
  svc = new MemoryService({ root: args.root, agent: args.agent, onWrite, ...(args.allowDetached ? { allowDetached: true } : {}) }, warn);
  return svc;
}

/** Recovers a killed writer's journal before a command runs, when there is one (see main.ts). */
export async function recoverIfPending(args: GlobalArgs): Promise<void> {
  let root: string;
  try {
    root = findRoot(process.cwd(), args.root, process.env);
  } catch {
    return; // the command itself reports a bad --root
  }
  if (!hasPendingJournal(root)) return;
  const r = await service(args).recoverJournal();
  if (r && r.undone) warn(`a write that was cut off left ${r.undone} file(s) behind; they were put back as the last commit has them`);
}

/**
 * Asks a running daemon; undefined when there is none (or it is stale, or fails), so the caller
 * takes the direct path. An error the daemon reports (bad filter, unknown project) is thrown
 * exactly as the direct path would throw it.
 */
export async function viaDaemon<T>(svc: MemoryService, method: string, params: unknown): Promise<T | undefined> {
  if (svc.env.BASS_AGENTS_NO_DAEMON) return undefined;
  const { daemonPaths, request } = await import('../daemon/client.js');
  const r = await request<T>(daemonPaths(svc.ws.localDir), method, { ...(params as object), clock: svc.env.BASS_AGENTS_NOW || null });
  if (!r) return undefined;
  if ('error' in r) throw new MemoryError(r.error.code as ErrorCode, r.error.message, r.error.exitCode, r.error.problems);
  return r.result;
}

/**
 * Hands a write (create, apply, applyResult) to a running daemon, which has the catalog, the
 * schemas and the secret rules already loaded; undefined when there is none, so the caller writes
 * directly. The project and the agent are resolved here, as the direct path would resolve them.
 * A caller with its own lock timeout writes directly (the daemon would apply its own).
 */
export async function writeViaDaemon<T>(svc: MemoryService, method: 'create' | 'apply' | 'applyResult', input: unknown, project: string | undefined): Promise<T | undefined> {
  // A caller with its own lock timeout or its own leave to write on a detached HEAD writes directly.
  if (svc.env.BASS_AGENTS_NO_DAEMON || svc.env.BASS_AGENTS_LOCK_TIMEOUT_MS || svc.ctx.allowDetached) return undefined;
  const { daemonPaths, requestWrite } = await import('../daemon/client.js');
  const params = { input, project, agent: svc.explicitAgent ?? null, clock: svc.env.BASS_AGENTS_NOW || null };
  // Long enough for the daemon to wait for the workspace lock (30 s) and commit.
  const r = await requestWrite<{ value: T; warnings: string[] }>(daemonPaths(svc.ws.localDir), method, params, 120_000);
  if (!r) return undefined;
  if ('lost' in r) {
    throw new MemoryError('E_INTERNAL', 'the daemon took this write but gave no answer: it may or may not be done; check `bass-agents memory log` before retrying', 1);
  }
  if ('error' in r) throw new MemoryError(r.error.code as ErrorCode, r.error.message, r.error.exitCode, r.error.problems);
  for (const w of r.result.warnings) warn(w);
  return r.result.value;
}

/** Reads `--file F` (or `-` for stdin) as JSON; errors name the file and where the JSON broke. */
export function readJsonInput(file: string | undefined, option = '--file'): unknown {
  if (file === undefined || file === '') throw new UsageError(`${option} is required (a JSON file, or - for stdin)`);
  let text: string;
  let source: string;
  if (file === '-') {
    source = 'stdin';
    try {
      text = readFileSync(0, 'utf8');
    } catch {
      text = '';
    }
  } else {
    const abs = resolve(file);
    if (!existsSync(abs)) throw new NotFoundError(`input file ${file} does not exist`);
    if (statSync(abs).isDirectory()) throw new UsageError(`input file ${file} is a directory`);
    source = file;
    text = readFileSync(abs, 'utf8');
  }
  if (!text.trim()) throw new ValidationError([{ path: source, message: 'is empty (expected JSON)' }], 'input');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ValidationError([{ path: source, message: `is not valid JSON (${(err as Error).message})` }], 'input');
  }
}

/** Prints an error the way CLI.md says: one sentence per problem on stderr, `{"error": …}` on stdout with --json. */
export function reportError(err: unknown, json: boolean): number {
  if (err instanceof MemoryError) {
    if (err.problems.length) {
      for (const p of err.problems) process.stderr.write(`error: ${formatProblem(p)}\n`);
    } else process.stderr.write(`error: ${err.message}\n`);
    if (json) printJson({ error: err.toJSON() });
    return err.exitCode;
  }
  const e = err as Error;
  process.stderr.write(`error: internal error: ${e?.stack ?? String(err)}\nThis is a bug in bass-agents; please report it with the command you ran.\n`);
  if (json) printJson({ error: { code: 'E_INTERNAL', message: e?.message ?? String(err), problems: [] } });
  return 1;
}

/** Fixed-width table for human output. */
export function table(rows: string[][], header: string[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

export function clip(s: string, n: number): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length <= n ? one : `${one.slice(0, n - 1)}…`;
}

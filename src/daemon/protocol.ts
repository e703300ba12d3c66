/**
 * The daemon's socket protocol, shared by the server and the CLI's client: every method with the
 * types of its parameters and result, the wire form of errors, and
 * the limits of a message. One request or reply per line of JSON.
 */
import { MemoryError, UsageError, type ErrorCode, type Problem } from '../core/errors.js';
import { checkDepth } from '../core/errors.js';
import type { Engine } from '../service/engine.js';

/**
 * A command line a thin client hands over whole (bin/bass-agents.cjs): the daemon runs it as the
 * CLI would, with the caller's folder, environment (its BASS_AGENTS_* variables) and standard
 * input, and returns what the command printed and its exit code.
 */
export interface CliParams {
  argv: string[];
  cwd: string;
  /** The workspace root the caller found: a daemon of another root declines. */
  root: string;
  env: Record<string, string>;
  /** Standard input, base64, when the command line reads it (`-`). */
  stdin: string | null;
  /** The width of the caller's terminal, when its stdout is one (tables are cut to fit it). */
  columns?: number | null;
}

export interface Methods {
  ping: { params: Record<string, never>; result: { pid: number } };
  status: { params: Record<string, never>; result: Record<string, unknown> };
  notify: { params: { files: string[] }; result: { ok: true } };
  /** `output`: what the command printed, in order, as [1 (stdout) or 2 (stderr), text] pieces. */
  cli: { params: CliParams; result: { output: [1 | 2, string][]; exitCode: number } };
  stop: { params: Record<string, never>; result: { stopping: true } };
}

export type Method = keyof Methods;
const METHODS: readonly Method[] = ['ping', 'status', 'notify', 'cli', 'stop'];

export interface Request<M extends Method = Method> {
  id: number;
  method: M;
  /** `clock`: the caller's fixed clock (BASS_AGENTS_NOW); a command line is run only on the daemon's own. */
  params: Methods[M]['params'] & { clock?: string | null };
}

export type Reply<M extends Method = Method> =
  | { id: number; result: Methods[M]['result'] }
  | { id: number; error: WireError }
  /** Not for this daemon (another fixed clock): nothing was done; the caller runs it itself. */
  | { id: number; declined: string };

/** An error as it crosses the socket: its class, code, message, problems and exit code. */
export interface WireError {
  name: string;
  code: ErrorCode;
  message: string;
  problems: Problem[];
  exitCode: number;
}

/**
 * The longest request the daemon reads. Its parse must not hold the daemon's other callers for
 * long (JSON.parse of 2 MiB takes some tens of milliseconds), so the CLI sends nothing larger:
 * a bigger write (an apply of thousands of updates) is done by the CLI itself, under the same lock.
 */
export const MAX_MESSAGE_BYTES = 2 * 1024 * 1024;
/** The longest reply the CLI reads (the output of a command line run by the daemon, a whole `list --json`). */
export const MAX_REPLY_BYTES = 256 * 1024 * 1024;

export function errorToWire(err: unknown): WireError {
  if (err instanceof MemoryError) return { name: err.name, code: err.code, message: err.message, problems: err.problems, exitCode: err.exitCode };
  return { name: 'Error', code: 'E_INTERNAL', message: err instanceof Error ? err.message : String(err), problems: [], exitCode: 1 };
}

/** Parses one request line: a UsageError (never a crash) for anything that is not a request. */
export function parseRequest(line: string): Request {
  if (line.length > MAX_MESSAGE_BYTES) throw new UsageError(`request is ${line.length} bytes; at most ${MAX_MESSAGE_BYTES} are accepted`);
  let req: unknown;
  try {
    req = JSON.parse(line);
  } catch {
    throw new UsageError('request is not JSON');
  }
  checkDepth(req, 'request');
  const r = req as Partial<Request>;
  if (!r || typeof r !== 'object' || typeof r.method !== 'string' || !(METHODS as string[]).includes(r.method)) {
    throw new UsageError(`unknown method ${JSON.stringify((r as { method?: unknown } | null)?.method ?? null)}`);
  }
  return { id: typeof r.id === 'number' ? r.id : 0, method: r.method, params: r.params ?? {} };
}

/** Runs a client's command line against the daemon's engine: handed over by the CLI (the daemon never imports it). */
export type Runner = (params: CliParams, engine: Engine) => Promise<Methods['cli']['result']>;

/** The daemon's socket protocol (one JSON request or reply per line): its methods, errors on the wire, message limits, framing. */
import { MemoryError, UsageError, checkDepth } from '../core/errors.js';
import { orThrow } from '../try.js';
import type { Engine } from '../service/engine.js';

/** A command line a thin client hands over whole, run as the CLI would with the caller's folder, BASS_AGENTS_* and stdin. */
export interface CliParams {
  argv: string[];
  cwd: string;
  /** The caller's workspace root: a daemon of another declines. */
  root: string;
  env: Record<string, string>;
  /** Standard input, base64, when the command line reads it (`-`). */
  stdin: string | null;
  /** The caller's terminal width, when stdout is one. */
  columns?: number | null;
  /** false: no retrieval or query is recorded (the daemon's own warm-up). */
  record?: boolean;
}

export interface Methods {
  ping: { params: Record<string, never>; result: { pid: number } };
  status: { params: Record<string, never>; result: Record<string, unknown> };
  notify: { params: { files: string[] }; result: { ok: true } };
  /** `output`: what the command printed, in order, as [fd, text] pieces. */
  cli: { params: CliParams; result: { output: [1 | 2, string][]; exitCode: number } };
}

export type Method = keyof Methods;
const METHODS: readonly Method[] = ['ping', 'status', 'notify', 'cli'];

export interface Request<M extends Method = Method> {
  id: number;
  method: M;
  /** The caller's fixed clock (BASS_AGENTS_NOW): a command line runs only on the daemon's own. */
  params: Methods[M]['params'] & { clock?: string | null };
}

export type Reply<M extends Method = Method> =
  | { id: number; result: Methods[M]['result'] }
  | { id: number; error: WireError }
  /** Not for this daemon: nothing was done; the caller runs it itself. */
  | { id: number; declined: string };

export type WireError = ReturnType<typeof errorToWire>;

/** The longest request the daemon reads: its parse must not hold other callers long; the CLI runs larger writes itself. */
export const MAX_MESSAGE_BYTES = 2 * 1024 * 1024;
/** The longest reply the CLI reads (a whole `list --json`). */
export const MAX_REPLY_BYTES = 256 * 1024 * 1024;

export function errorToWire(err: unknown) {
  if (err instanceof MemoryError) return { name: err.name, code: err.code, message: err.message, problems: err.problems, exitCode: err.exitCode };
  return { name: 'Error', code: 'E_INTERNAL', message: err instanceof Error ? err.message : String(err), problems: [], exitCode: 1 };
}

/** Parses one request line: a UsageError for anything that is not a request. */
export function parseRequest(line: string): Request {
  if (line.length > MAX_MESSAGE_BYTES) throw new UsageError(`request is ${line.length} bytes; at most ${MAX_MESSAGE_BYTES} are accepted`);
  const req = orThrow<string, unknown>(JSON.parse, line, () => new UsageError('request is not JSON'));
  checkDepth(req, 'request');
  const r = req as Partial<Request>;
  if (!r || typeof r !== 'object' || typeof r.method !== 'string' || !(METHODS as string[]).includes(r.method))
    throw new UsageError(`unknown method ${JSON.stringify((r as { method?: unknown } | null)?.method ?? null)}`);
  return { id: typeof r.id === 'number' ? r.id : 0, method: r.method, params: r.params ?? {} };
}

/** Runs a client's command line on the daemon's engine: the CLI hands it over (the daemon never imports the CLI). */
export type Runner = (params: CliParams, engine: Engine) => Promise<Methods['cli']['result']>;

/** Splits the socket's bytes into lines of at most `max` bytes, searching each chunk once (linear however a message is cut). */
export class LineReader {
  private chunks: Buffer[] = [];
  private size = 0;
  private stopped = false;

  constructor(
    private readonly max: number,
    private readonly onLine: (line: string) => void,
    /** A line passed `max` bytes: nothing more is read. */
    private readonly onTooLong: (bytes: number) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (!this.stopped) {
      const nl = chunk.indexOf(10, start);
      const part = chunk.subarray(start, nl < 0 ? chunk.length : nl);
      const bytes = this.size + part.length;
      if (bytes > this.max) {
        this.stop();
        return this.onTooLong(bytes);
      }
      if (nl < 0) {
        if (part.length) {
          this.chunks.push(part);
          this.size += part.length;
        }
        return;
      }
      // Decoded only once whole: a character cut between two chunks comes out right.
      const line = this.chunks.length ? Buffer.concat([...this.chunks, part], this.size + part.length) : part;
      this.chunks = [];
      this.size = 0;
      start = nl + 1;
      this.onLine(line.toString('utf8'));
    }
  }

  /** Stops reading; what was kept is dropped. */
  stop(): void {
    this.stopped = true;
    this.chunks = [];
    this.size = 0;
  }
}

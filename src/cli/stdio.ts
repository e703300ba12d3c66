/**
 * Where a CLI command reads and writes: this process's stdio, environment and folder, or — when a
 * running daemon executes a command line for a thin client (bin/bass-agents.cjs, cli/thin.ts) —
 * the caller's, captured and sent back. Commands reach them only through `io()`, so the same
 * command code runs in both places and says the same thing.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Method, Methods, Request } from '../daemon/protocol.js';
import type { MemoryError } from '../core/errors.js';

export interface Sink {
  write(text: string): unknown;
}

/** A daemon's own request handler, for a command it runs itself (no socket in between). */
export type LocalDaemon = <M extends Method>(method: M, params: Request<M>['params']) => Promise<{ result: Methods[M]['result'] } | { error: MemoryError }>;

export interface CliIo {
  stdout: Sink;
  stderr: Sink;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Standard input when it was captured for the command (the daemon's case); else fd 0 is read. */
  stdin?: Buffer;
  /** Whether stderr is a terminal (progress bars). */
  stderrIsTTY: boolean;
  columns: number | undefined;
  setExitCode(code: number): void;
  /** Set when the daemon runs the command: requests go to it directly. */
  local?: LocalDaemon;
}

const store = new AsyncLocalStorage<CliIo>();

const processIo: CliIo = {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  get cwd() {
    return process.cwd();
  },
  get stderrIsTTY() {
    return Boolean(process.stderr.isTTY);
  },
  get columns() {
    return process.stdout.columns;
  },
  setExitCode(code: number) {
    process.exitCode = code;
  },
};

/** The stdio, environment and folder of the command being run. */
export function io(): CliIo {
  return store.getStore() ?? processIo;
}

/** Runs `fn` with `cli` as its stdio, environment and folder. */
export function withIo<T>(cli: CliIo, fn: () => Promise<T>): Promise<T> {
  return store.run(cli, fn);
}

/** The daemon's client side: its files, whether it lives, a request. Any failure is `undefined`: the caller runs the command itself. */
import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { tryOr } from '../store/fsutil.js';
import { daemonMayWrite, hasGitLocation } from '../store/git-env.js';
import { checkStateFolder, isAlive, readNoFollow, signalReaches, stateDirOf } from '../store/state-dir.js';
import { UnsafePathError } from '../core/errors.js';
import { LineReader, MAX_MESSAGE_BYTES, MAX_REPLY_BYTES, type Method, type Methods, type Reply, type Request, type WireError } from './protocol.js';

export { isAlive };

export interface DaemonPaths {
  dir: string;
  pid: string;
  socket: string;
  /** The private folder holding the socket when `dir` is too deep for a socket path. */
  socketDir?: { base: string; dir: string };
  status: string;
  state: string;
  log: string;
}

/** Unix socket paths are limited to about 104-108 bytes. */
export const MAX_SOCKET_PATH = 100;

/** The daemon's files; a socket path too long goes to a private folder of this user's, named by a hash of the state folder (docs/daemon.md). */
export function daemonPaths(localDir: string, env: NodeJS.ProcessEnv = process.env): DaemonPaths {
  const dir = join(localDir, 'daemon');
  let socket = join(dir, 'daemon.sock');
  let socketDir: DaemonPaths['socketDir'];
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    const runtime = env.XDG_RUNTIME_DIR;
    socketDir =
      runtime && isAbsolute(runtime)
        ? { base: runtime, dir: join(runtime, 'bass-agents') }
        : { base: tmpdir(), dir: join(tmpdir(), `bass-agents-${process.getuid?.() ?? 'user'}`) };
    const real = tryOr(() => realpathSync.native(localDir), localDir); // (else hashed as given)
    socket = join(socketDir.dir, `${process.getBuiltinModule('node:crypto').createHash('sha256').update(real).digest('hex').slice(0, 24)}.sock`);
  }
  return {
    dir,
    pid: join(dir, 'daemon.pid'),
    socket,
    ...(socketDir ? { socketDir } : {}),
    status: join(dir, 'status.json'),
    state: join(dir, 'state.json'),
    log: join(localDir, 'logs', 'daemon.log'),
  };
}

/** Whether the socket's private folder (if any) is this user's alone (made 0700 when `make`); else refused: another user could plant a socket. */
export function checkSocketDir(paths: DaemonPaths, make = false): boolean {
  const sd = paths.socketDir;
  if (!sd) return true;
  if (!checkStateFolder(sd.base, sd.dir, { make, mode: 0o700 })) return false;
  const st = lstatSync(sd.dir);
  if ((st.mode & 0o077) !== 0 || (process.getuid && st.uid !== process.getuid()))
    throw new UnsafePathError(`${sd.dir} (the daemon's socket folder) must belong to this user alone (mode 0700): remove it`, 'local state');
  return true;
}

/** Node flags of a spawned daemon: a small young generation, and full collections around jobs (docs/daemon.md, `daemon start`). */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2', '--expose-gc'];

/**
 * A spawned daemon's environment: glibc's malloc gives each thread that allocates (V8's compiler
 * and GC threads) an arena of its own and keeps what they freed, so two arenas keep a long-lived
 * process's resident memory down at no cost measured (docs/benchmarks.md, R15); a value the user set stays.
 */
export const daemonEnv = (env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv => ({ MALLOC_ARENA_MAX: '2', ...env });

export function readPid(file: string): number | null {
  const pid = Number(tryOr(() => readNoFollow(file, 'utf8').trim(), ''));
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

export function runningPid(paths: DaemonPaths): number | null {
  const pid = readPid(paths.pid);
  return pid !== null && isAlive(pid) ? pid : null;
}

export function readStatus(paths: DaemonPaths): { pid: number; heartbeat_at: string; heartbeat_ms: number; [k: string]: unknown } | null {
  return tryOr(() => JSON.parse(readNoFollow(paths.status, 'utf8')) as ReturnType<typeof readStatus>, null);
}

/** The daemon's files of the workspace at `root`; undefined without a sound state folder (the full CLI says why). */
export function daemonFor(root: string, env: NodeJS.ProcessEnv = process.env): DaemonPaths | undefined {
  return tryOr(() => {
    const state = stateDirOf(root, env);
    return checkStateFolder(state.base, state.dir, { deep: true }) ? daemonPaths(state.dir, env) : undefined;
  }, undefined);
}

/** Settings only a command run in the caller's own process honours (git variables: see daemonMayWrite and hasGitLocation). */
const OWN_PROCESS_ENV = /^BASS_AGENTS_(NO_DAEMON|LOCK_TIMEOUT_MS|ALLOW_DETACHED|NO_BUNDLE)$/;

export interface HandOver {
  argv: string[];
  root: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Whether the command writes: a caller whose git would commit differently writes itself. */
  writes: boolean;
  /** Standard input for the command, read only once a daemon is there to take it. */
  stdin?: () => Buffer | undefined;
  columns?: number | null;
}

export const LOST_WRITE = 'the daemon took this write but gave no answer: it may or may not be done; check `bass-agents memory log` before retrying';

/** Hands a command line to the daemon: its output and exit code; undefined: run it yourself; `lost`: taken, never answered. */
export async function handOver(o: HandOver): Promise<Methods['cli']['result'] | 'lost' | undefined> {
  if (Object.entries(o.env).some(([k, v]) => v && OWN_PROCESS_ENV.test(k)) || hasGitLocation(o.env)) return undefined;
  const paths = daemonFor(o.root, o.env);
  if (!paths) return undefined;
  const stdin = o.stdin?.();
  if (o.writes && !daemonMayWrite(o.env, paths.dir)) return undefined;
  const params = {
    argv: o.argv,
    cwd: o.cwd,
    root: o.root,
    env: Object.fromEntries(Object.entries(o.env).filter(([k, v]) => k.startsWith('BASS_AGENTS_') && v !== undefined)) as Record<string, string>,
    stdin: stdin ? stdin.toString('base64') : null,
    columns: o.columns ?? null,
    clock: o.env.BASS_AGENTS_NOW || null,
  };
  const r = await request(paths, 'cli', params, o.writes ? 120_000 : 60_000).catch(() => undefined);
  // An error reply: the daemon did not run it (the command's own errors come back as its output).
  return !r || 'error' in r ? undefined : 'lost' in r ? 'lost' : r.result;
}

/** Sends one request: its result or error; undefined when not delivered (no daemon, stale, declined); `lost` when sent but never answered. */
export async function request<M extends Method>(
  paths: DaemonPaths,
  method: M,
  params: Request<M>['params'],
  timeoutMs = 2000,
): Promise<{ result: Methods[M]['result'] } | { error: WireError } | { lost: true } | undefined> {
  if (!tryOr(() => checkSocketDir(paths) && existsSync(paths.socket), false)) return undefined;
  const status = readStatus(paths);
  // Stale: no heartbeat for three intervals (a zombie's too, so this path reads nothing in /proc).
  if (!status || !signalReaches(status.pid) || Date.now() - Date.parse(status.heartbeat_at) > 3 * status.heartbeat_ms) return undefined;
  const req: Request<M> = { id: 1, method, params };
  const line = `${JSON.stringify(req)}\n`;
  if (line.length > MAX_MESSAGE_BYTES || Buffer.byteLength(line) > MAX_MESSAGE_BYTES) return undefined;
  // getBuiltinModule, not import(): a dynamic import starts Node's ES module loader on every call.
  const { connect } = process.getBuiltinModule('node:net');
  type Out = { result: Methods[M]['result'] } | { error: WireError } | undefined;
  return new Promise((resolve) => {
    let sent = false;
    // (Called again by the close that follows: resolve keeps the first answer.)
    const finish = (v: Out): void => {
      clearTimeout(timer);
      reader.stop();
      sock.destroy();
      resolve(v === undefined && sent ? { lost: true } : v);
    };
    const reader = new LineReader(
      MAX_REPLY_BYTES,
      (reply) => {
        try {
          const msg = JSON.parse(reply) as Reply<M>;
          if ('declined' in msg) sent = false; // (another fixed clock): nothing was done
          finish('declined' in msg ? undefined : 'error' in msg ? { error: msg.error } : { result: msg.result });
        } catch {
          finish(undefined);
        }
      },
      () => finish(undefined),
    );
    const sock = connect(paths.socket);
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    sock.on('error', () => finish(undefined));
    sock.on('close', () => finish(undefined));
    sock.on('data', (chunk: Buffer) => reader.push(chunk));
    sock.on('connect', () => {
      sent = true;
      sock.write(line);
    });
  });
}

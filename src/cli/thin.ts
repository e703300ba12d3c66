/** The thin client: with a daemon running, everyday command lines go to it whole; anything else is left to the full CLI. */
import { existsSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isatty } from 'node:tty';
import { LOST_WRITE, handOver } from '../daemon/client.js';
import { tryOr } from '../store/fsutil.js';
import { hasGitLocation } from '../store/git-env.js';
import { startGitView, type GitViewRun } from '../store/git-view.js';
import { findRoot, MEMORY_DIR } from '../store/root.js';
import { checkStateFolder, stateDirOf } from '../store/state-dir.js';

/** Commands a daemon runs for a caller: reads, and the writes it group-commits. */
const REMOTE = new Set(['create', 'apply', 'apply-result', 'query', 'list', 'show', 'prepare-task']);
const WRITES = new Set(['create', 'apply', 'apply-result']);

/** Options only the full CLI answers. */
const LOCAL_OPTIONS = /^(--help|-h|--version|--allow-detached(=.*)?|--no-allow-detached)$/;

export interface ThinOutcome {
  /** The daemon ran the command (its output is printed). */
  exitCode?: number;
  /** Standard input read for a daemon that declined: the full CLI uses it. */
  stdin?: Buffer;
}

/** Commands that start with a full catalog refresh, which git's view of the files spares. */
const CATALOG_READS = new Set(['query', 'list', 'show', 'prepare-task', 'stats']);

/** Starts git looking at the entry files while the full CLI loads (store/git-view.ts): catalog reads and writes with a catalog cache, no git variables. */
export function startCatalogView(argv: string[], env: NodeJS.ProcessEnv = process.env): GitViewRun | undefined {
  if (!endsWhenDone(argv, true) || hasGitLocation(env)) return undefined;
  try {
    const root = findRoot(process.cwd(), rootOption(argv), env);
    if (!existsSync(join(root, MEMORY_DIR))) return undefined;
    const state = stateDirOf(root, env);
    const cacheDir = join(state.dir, 'cache');
    if (!checkStateFolder(state.base, state.dir, { deep: true }) || !existsSync(join(cacheDir, 'catalog.bin'))) return undefined;
    return startGitView(root, cacheDir);
  } catch {
    return undefined;
  }
}

/** Whether the command line is a read (or with `writes`, a write run here) with nothing left to do once main returns: the process may exit without winding down its event loop. */
export function endsWhenDone(argv: string[], writes = false): boolean {
  const cmd = argv[0] === 'memory' ? (argv[1] ?? '') : '';
  return (CATALOG_READS.has(cmd) || (writes && WRITES.has(cmd))) && !argv.some((a) => /^(--help|-h|--version)$/.test(a));
}

function readsStdin(argv: string[]): boolean {
  return argv.some((a) => a === '-' || /^(--file|-f)=-$/.test(a));
}

function rootOption(argv: string[]): string | undefined {
  const i = argv.findIndex((a) => a === '--root' || a.startsWith('--root='));
  return i < 0 ? undefined : argv[i] === '--root' ? argv[i + 1] : argv[i]!.slice('--root='.length);
}

/** Hands the command line to the workspace's daemon; `exitCode` when it ran it. Never throws: any doubt leaves it to the full CLI. */
export async function runThin(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<ThinOutcome> {
  if (argv[0] !== 'memory' || !REMOTE.has(argv[1] ?? '')) return {};
  if (argv.some((a) => LOCAL_OPTIONS.test(a))) return {};
  const root = tryOr(() => findRoot(process.cwd(), rootOption(argv), env), null);
  if (root === null) return {};
  let stdin: Buffer | undefined;
  const input = (): Buffer | undefined => (readsStdin(argv) ? (stdin ??= tryOr(() => readFileSync(0), Buffer.alloc(0))) : undefined);
  const writes = WRITES.has(argv[1] ?? '');
  // (`process.stdout` sets up a stream, a fair part of a short call: only a terminal has columns.)
  const columns = isatty(1) ? process.stdout.columns : null;
  const r = await handOver({ argv, root, cwd: process.cwd(), env, writes, stdin: input, columns }).catch(() => undefined);
  if (!r) return { stdin };
  if (r === 'lost') {
    if (!writes) return { stdin };
    process.stderr.write(`error: ${LOST_WRITE}\n`);
    return { exitCode: 1 };
  }
  for (const [fd, text] of r.output) print(fd === 1 ? 1 : 2, text);
  return { exitCode: r.exitCode };
}

/** How each descriptor takes output: directly, through its stream (after a refused direct write), or not at all (reader gone). */
const outputs: Record<1 | 2, 'direct' | 'stream' | 'closed'> = { 1: 'direct', 2: 'direct' };

/**
 * Writes straight to the descriptor (`process.stdout` loads Node's streams, a fair part of a short
 * call); after a full pipe refused, all goes through the stream, in order; a reader gone, nothing.
 */
function print(fd: 1 | 2, text: string): void {
  if (outputs[fd] === 'closed') return;
  const stream = fd === 1 ? process.stdout : process.stderr;
  let rest = Buffer.from(text, 'utf8');
  if (outputs[fd] === 'direct') {
    try {
      while (rest.length) rest = rest.subarray(writeSync(fd, rest));
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EPIPE') {
        outputs[fd] = 'closed';
        return;
      }
      outputs[fd] = 'stream';
      stream.on('error', () => {
        outputs[fd] = 'closed';
      });
    }
  }
  stream.write(rest);
}

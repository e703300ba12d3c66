/**
 * The thin client: when a daemon runs for this workspace, the everyday command lines (create,
 * apply, apply-result, query, list, show, prepare-task) are handed to it whole and run there
 * (cli/run.ts), so this process loads a few small modules instead of the CLI (yargs, zod, the
 * secret rules): a call costs little more than starting node. Anything else — no daemon, a stale
 * one, help, another fixed clock, settings only the full CLI honours — returns undefined and
 * bin/bass-agents.cjs runs the full CLI as before.
 */
import { existsSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { handOver } from '../daemon/client.js';
import { hasGitLocation } from '../store/git-env.js';
import { startGitView, type GitViewRun } from '../store/git-view.js';
import { findRoot, MEMORY_DIR } from '../store/root.js';
import { checkStateFolder, stateDirOf } from '../store/state-dir.js';

/** Commands a daemon runs for a caller. Reads, and the writes it already group-commits. */
const REMOTE = new Set(['create', 'apply', 'apply-result', 'query', 'list', 'show', 'prepare-task']);
const WRITES = new Set(['create', 'apply', 'apply-result']);

/** Options only the full CLI answers (help and version text), or that ask for the full CLI. */
const LOCAL_OPTIONS = /^(--help|-h|--version|--allow-detached(=.*)?|--no-allow-detached)$/;

export interface ThinOutcome {
  /** The daemon ran the command: its exit code (its output is already printed). */
  exitCode?: number;
  /** Standard input read for the daemon, which the full CLI must use instead (it was declined). */
  stdin?: Buffer;
}

/** Commands whose work starts with a full catalog refresh, which git's view of the files spares (see startCatalogView). */
const CATALOG_READS = new Set(['query', 'list', 'show', 'prepare-task', 'stats']);

/**
 * For a command line the full CLI is about to run: starts git looking at the entry files now,
 * so that it works on the other core while the CLI loads (store/git-view.ts). Nothing for other
 * commands, help, a workspace without a catalog cache (git's view only spares checks of cached
 * rows), or git variables that point elsewhere.
 */
export function startCatalogView(argv: string[], env: NodeJS.ProcessEnv = process.env): GitViewRun | undefined {
  if (!endsWhenDone(argv) || hasGitLocation(env)) return undefined;
  try {
    const root = findRoot(process.cwd(), rootOption(argv), env);
    if (!existsSync(join(root, MEMORY_DIR))) return undefined;
    // (A state folder that fails its check is left to the full CLI, which says why.)
    const state = stateDirOf(root, env);
    const cacheDir = join(state.dir, 'cache');
    if (!checkStateFolder(state.base, state.dir, { deep: true }) || !existsSync(join(cacheDir, 'catalog.bin'))) return undefined;
    return startGitView(root, cacheDir);
  } catch {
    return undefined;
  }
}

/**
 * Whether the command line is a read that has nothing left to do once the CLI's main returns, so
 * the process may exit as soon as its output is out (bin/bass-agents.cjs) instead of letting the
 * event loop wind down (closed child-process handles, a last garbage collection). Help and
 * version text go the usual way.
 */
export function endsWhenDone(argv: string[]): boolean {
  return argv[0] === 'memory' && CATALOG_READS.has(argv[1] ?? '') && !argv.some((a) => /^(--help|-h|--version)$/.test(a));
}

/** Whether the command line reads standard input (`--file -`, `-f -`, a positional `-`). */
function readsStdin(argv: string[]): boolean {
  return argv.some((a) => a === '-' || /^(--file|-f)=-$/.test(a));
}

/** The `--root` of the command line, if any. */
function rootOption(argv: string[]): string | undefined {
  for (const [i, a] of argv.entries()) {
    if (a === '--root') return argv[i + 1];
    if (a.startsWith('--root=')) return a.slice('--root='.length);
  }
  return undefined;
}

/**
 * Hands the command line to the workspace's daemon; `exitCode` when it ran it. Never throws: any
 * doubt leaves the command to the full CLI.
 */
export async function runThin(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<ThinOutcome> {
  if (argv[0] !== 'memory' || !REMOTE.has(argv[1] ?? '')) return {};
  if (argv.some((a) => LOCAL_OPTIONS.test(a))) return {};
  let root: string;
  try {
    root = findRoot(process.cwd(), rootOption(argv), env);
  } catch {
    return {};
  }
  let stdin: Buffer | undefined;
  const input = (): Buffer | undefined => {
    if (stdin || !readsStdin(argv)) return stdin;
    try {
      return (stdin = readFileSync(0));
    } catch {
      return (stdin = Buffer.alloc(0));
    }
  };
  const writes = WRITES.has(argv[1] ?? '');
  const columns = process.stdout.isTTY ? process.stdout.columns : null;
  const r = await handOver({ argv, root, cwd: process.cwd(), env, writes, stdin: input, columns }).catch(() => undefined);
  if (!r) return { stdin };
  if (r === 'lost') {
    if (!writes) return { stdin };
    process.stderr.write('error: the daemon took this write but gave no answer: it may or may not be done; check `bass-agents memory log` before retrying\n');
    return { exitCode: 1 };
  }
  for (const [fd, text] of r.output) print(fd === 1 ? 1 : 2, text);
  return { exitCode: r.exitCode };
}

/** How each descriptor takes output: directly, through its stream (it refused a direct write), or not at all (its reader is gone). */
const outputs: Record<1 | 2, 'direct' | 'stream' | 'closed'> = { 1: 'direct', 2: 'direct' };

/**
 * Writes the daemon's output to our stdout or stderr. Straight to the descriptor while that
 * works: making `process.stdout` loads Node's stream modules, a fair part of a short call.
 * A descriptor that refuses (a non-blocking pipe that is full) gets the rest through the stream,
 * which waits for it, and so does all later output to it, to keep the order. A reader that went
 * away (`| head`) gets nothing more, quietly.
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

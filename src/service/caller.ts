/**
 * Who asks, per request: the writer's name, the environment, the default project, the clock, the
 * folder and the output sinks of one command line, MCP tool call or API call. The engine holds
 * what every request shares (engine.ts); a daemon builds a Caller for each request it runs, so one
 * caller's settings or warnings never reach another's.
 */
import { userInfo } from 'node:os';
import { UsageError } from '../core/errors.js';
import { pickAgent } from '../core/filters.js';
import { clockFromEnv, type Clock } from '../store/clock.js';
import { GLOBAL_PROJECT } from '../store/workspace.js';
import type { Engine } from './engine.js';

/** Where text goes (a stream of this process, or a buffer sent back to a thin client). */
export interface Sink {
  write(text: string): unknown;
}

/** Warnings for the front end to show (bad files, no git, performance). */
export type WarningSink = (message: string) => void;

export interface CallerOptions {
  /** The writer named by `--agent` (else BASS_AGENTS_AGENT of `env`). */
  agent?: string;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  cwd?: string;
  stdout?: Sink;
  stderr?: Sink;
  /** Standard input already read (a daemon runs the command of a thin client); else fd 0 is read. */
  stdin?: Buffer;
  stderrIsTTY?: boolean;
  columns?: number;
  /**
   * Write on a detached HEAD or while a rebase, merge, cherry-pick or bisect is in progress
   * (`--allow-detached`, `BASS_AGENTS_ALLOW_DETACHED=1`). Refused by default: such a commit is
   * lost on the next checkout or spliced into the user's rewritten history.
   */
  allowDetached?: boolean;
  warn?: WarningSink;
}

const quiet: Sink = { write: () => true };

export class Caller {
  readonly env: NodeJS.ProcessEnv;
  readonly clock: Clock;
  readonly cwd: string;
  readonly stdout: Sink;
  readonly stderr: Sink;
  readonly stdin: Buffer | undefined;
  readonly stderrIsTTY: boolean;
  readonly columns: number | undefined;
  readonly allowDetached: boolean;
  readonly warn: WarningSink;
  /** The writer named by --agent or BASS_AGENTS_AGENT, if any. */
  readonly explicitAgent: string | undefined;
  exitCode = 0;
  private agentName: string | undefined;

  constructor(private readonly opts: CallerOptions = {}) {
    this.env = opts.env ?? process.env;
    this.clock = opts.clock ?? clockFromEnv(this.env);
    this.cwd = opts.cwd ?? process.cwd();
    this.stdout = opts.stdout ?? quiet;
    this.stderr = opts.stderr ?? quiet;
    this.stdin = opts.stdin;
    this.stderrIsTTY = opts.stderrIsTTY ?? false;
    this.columns = opts.columns;
    this.allowDetached = opts.allowDetached ?? ['1', 'true', 'yes'].includes(String(this.env.BASS_AGENTS_ALLOW_DETACHED ?? '').toLowerCase());
    this.warn = opts.warn ?? (() => undefined);
    this.explicitAgent = pickAgent(opts.agent, this.env.BASS_AGENTS_AGENT);
    this.agentName = this.explicitAgent;
  }

  /** The same caller with some options changed (a command line's --agent, say). */
  with(opts: CallerOptions): Caller {
    return new Caller({ ...this.opts, ...opts });
  }

  setExitCode(code: number): void {
    this.exitCode = code;
  }

  now(): Date {
    return this.clock();
  }

  /** The writer stored in created_by: --agent, BASS_AGENTS_AGENT, the git user, the OS user. */
  async agent(engine: Engine): Promise<string> {
    if (this.agentName) return this.agentName;
    const git = await engine.git();
    let os: string | undefined;
    try {
      os = userInfo().username;
    } catch {
      os = undefined;
    }
    return (this.agentName = pickAgent(git ? await git.userName() : null, os) ?? 'unknown');
  }

  /** The agent name known without asking git (for audit records of read-only commands). */
  get knownAgent(): string {
    return this.agentName ?? 'unknown';
  }

  /** Resolves the project for a command (CLI.md "--project"). */
  project(engine: Engine, explicit?: string, mustExist = false): string {
    engine.checkSparse();
    return engine.ws.resolveProject(explicit, this.env, { mustExist });
  }

  /** The projects a read covers: the named one plus global, or every project when none is chosen. */
  readProjects(engine: Engine, explicit?: string): string[] | undefined {
    let p: string;
    try {
      p = this.project(engine, explicit, Boolean(explicit));
    } catch (err) {
      if (err instanceof UsageError && !explicit) return undefined; // several projects, no default: read them all
      throw err;
    }
    return p === GLOBAL_PROJECT ? [p] : [p, GLOBAL_PROJECT];
  }
}

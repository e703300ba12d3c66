/** Who asks, one per request (docs/ARCHITECTURE.md "One engine"): one caller's settings or warnings never reach another's. */
import { userInfo } from 'node:os';
import { UsageError } from '../core/errors.js';
import { pickAgent } from '../core/filters.js';
import { clockFromEnv, type Clock } from '../store/clock.js';
import { GLOBAL_PROJECT } from '../store/workspace.js';
import type { Engine } from './engine.js';

export interface Sink {
  write(text: string): unknown;
}

export type WarningSink = (message: string) => void;

export interface CallerOptions {
  /** `--agent` (else BASS_AGENTS_AGENT). */
  agent?: string;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  cwd?: string;
  stdout?: Sink;
  stderr?: Sink;
  /** Standard input already read (a thin client's, in the daemon); else fd 0 is read. */
  stdin?: Buffer;
  stderrIsTTY?: boolean;
  columns?: number;
  /** Write on a detached HEAD or mid-rebase/merge (refused by default: such a commit is lost or spliced into rewritten history). */
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

  /** Without asking git (audit records of read-only commands). */
  get knownAgent(): string {
    return this.agentName ?? 'unknown';
  }

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

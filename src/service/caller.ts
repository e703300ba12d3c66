/** Who asks, one per request (docs/ARCHITECTURE.md "One engine"): one caller's settings or warnings never reach another's. */
import { userInfo } from 'node:os';
import { UsageError } from '../core/errors.js';
import { pickAgent } from '../core/filters.js';
import { normalizeTimestamp } from '../core/time.js';
import { tryOr } from '../store/fsutil.js';
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
  /** false: its queries record no retrieval and no query log line (a daemon's own warm-up). */
  records?: boolean;
}

const quiet: Sink = { write: () => true };

export type Clock = () => Date;

/** The one clock (DESIGN.md "Time"): `BASS_AGENTS_NOW=<ISO 8601>` fixes "now" for every command, the daemon and tests. */
function clockFromEnv(env: NodeJS.ProcessEnv): Clock {
  const fixed = env.BASS_AGENTS_NOW;
  if (!fixed) return () => new Date();
  const iso = normalizeTimestamp(fixed);
  if (!iso) throw new UsageError(`BASS_AGENTS_NOW must be an ISO 8601 timestamp such as 2026-01-31T12:00:00Z (got ${JSON.stringify(fixed)})`);
  const t = new Date(iso);
  return () => new Date(t.getTime());
}

/** Holds the options before a subclass's fields built from them are initialized (a parameter property would be assigned after them). */
export class Options<O> {
  constructor(protected readonly opts: O) {}
}

export class Caller extends Options<CallerOptions> {
  readonly env = this.opts.env ?? process.env;
  /** The time now: BASS_AGENTS_NOW fixes it. */
  readonly now: Clock = this.opts.clock ?? clockFromEnv(this.env);
  readonly cwd = this.opts.cwd ?? process.cwd();
  readonly stdout = this.opts.stdout ?? quiet;
  readonly stderr = this.opts.stderr ?? quiet;
  readonly stdin = this.opts.stdin;
  readonly stderrIsTTY = this.opts.stderrIsTTY ?? false;
  readonly columns = this.opts.columns;
  readonly allowDetached = this.opts.allowDetached ?? ['1', 'true', 'yes'].includes(String(this.env.BASS_AGENTS_ALLOW_DETACHED ?? '').toLowerCase());
  readonly warn: WarningSink = this.opts.warn ?? (() => undefined);
  readonly records = this.opts.records ?? true;
  readonly explicitAgent = pickAgent(this.opts.agent, this.env.BASS_AGENTS_AGENT);
  exitCode = 0;
  private agentName = this.explicitAgent;

  with(opts: CallerOptions): Caller {
    return new Caller({ ...this.opts, ...opts });
  }

  setExitCode(code: number): void {
    this.exitCode = code;
  }

  /** The writer stored in created_by: --agent, BASS_AGENTS_AGENT, the git user, the OS user. */
  async agent(engine: Engine): Promise<string> {
    if (this.agentName) return this.agentName;
    const git = await engine.git();
    const os = tryOr(() => userInfo().username, undefined);
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

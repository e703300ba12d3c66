/**
 * The wiring every use case shares: the workspace, the clock, the environment, the stores of
 * local state, git, and the resolution of agent and project names. One per MemoryService; the
 * use-case modules under `ops/` take it as their first argument.
 */
import { userInfo } from 'node:os';
import { ConflictError, UsageError } from '../core/errors.js';
import { pickAgent } from '../core/filters.js';
import { resolveDecay, type DecayConfig } from '../core/lifecycle.js';
import { lazy } from '../lazy.js';
import { Catalog, type CatalogSnapshot } from '../store/catalog.js';
import { clockFromEnv, type Clock } from '../store/clock.js';
import { readConfig } from '../store/config.js';
import { EvidenceCache } from '../store/evidence-cache.js';
import { GitRepo } from '../store/git.js';
import { findGitDir, sparseProblem } from '../store/git-state.js';
import { LogReader } from '../store/local-log.js';
import { SessionStore } from '../store/sessions.js';
import { UsageStore } from '../store/usage.js';
import { GLOBAL_PROJECT, Workspace, findRoot } from '../store/workspace.js';

export interface ServiceOptions {
  /** Folder to start root discovery from (default: process.cwd()). */
  cwd?: string;
  /** Explicit workspace root (`--root`). */
  root?: string;
  /** Writer name for created_by (`--agent`). */
  agent?: string;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  /**
   * A process that answers many queries (daemon, MCP server): keep the whole text index in
   * memory. One-shot CLI processes leave it false and load only what one query needs.
   */
  longLived?: boolean;
  /** Called with the files of each write (before its commit): the CLI notifies a running daemon. */
  onWrite?: (files: string[]) => Promise<void>;
  /** Called when a write moved HEAD from `parent` to `commit` (the daemon then knows that move without asking git). */
  onCommit?: (commit: string, parent: string | null, files: string[]) => void;
  /**
   * A file watcher keeps this service's catalog current (the daemon): writes check duplicates and
   * targets against it instead of a stat of every file.
   */
  watched?: boolean;
  /**
   * Write on a detached HEAD or while a rebase, merge, cherry-pick or bisect is in progress
   * (`--allow-detached`, `BASS_AGENTS_ALLOW_DETACHED=1`). Refused by default: such a commit is
   * lost on the next checkout or spliced into the user's rewritten history.
   */
  allowDetached?: boolean;
}

/** Warnings for the front end to show (bad files, no git, performance). */
export type WarningSink = (message: string) => void;

// Modules of single commands load on first use: the service is imported by every CLI call.
export const modules = {
  evidenceCheck: lazy<typeof import('../core/evidence-check.js')>('./core/evidence-check.js'),
  freshness: lazy<typeof import('../core/freshness.js')>('./core/freshness.js'),
  merge: lazy<typeof import('../core/merge.js')>('./core/merge.js'),
  consolidate: lazy<typeof import('../core/consolidate.js')>('./core/consolidate.js'),
  extraction: lazy<typeof import('../core/extract.js')>('./core/extract.js'),
  similarity: lazy<typeof import('../core/similarity.js')>('./core/similarity.js'),
  secretRules: lazy<typeof import('../core/secrets.js')>('./core/secrets.js'),
  validation: lazy<typeof import('../core/validate.js')>('./core/validate.js'),
  schemas: lazy<typeof import('../core/schema.js')>('./core/schema.js'),
  ulid: lazy<typeof import('ulid')>('ulid'),
  secretScan: lazy<typeof import('./secret-scan.js')>('./service/secret-scan.js'),
  setup: lazy<typeof import('../core/setup.js')>('./core/setup.js'),
};

export class ServiceContext {
  readonly ws: Workspace;
  readonly env: NodeJS.ProcessEnv;
  readonly clock: Clock;
  readonly catalog: Catalog;
  readonly usage: UsageStore;
  readonly sessions: SessionStore;
  readonly evidenceCache: EvidenceCache;
  readonly logs = new LogReader();
  readonly longLived: boolean;
  readonly watched: boolean;
  readonly onWrite: ServiceOptions['onWrite'];
  readonly onCommit: ServiceOptions['onCommit'];
  readonly allowDetached: boolean;
  readonly warn: WarningSink;
  /** Whether this process made sure of the merge driver (once: see withWrite). */
  mergeDriverChecked = false;
  /** The snapshot the last `snapshot()` returned. */
  lastSnap: CatalogSnapshot | undefined;
  /**
   * In a watched process (the daemon): the read model's snapshot, which the watcher and the
   * reconciles keep current. Set by the read model.
   */
  current: (() => CatalogSnapshot | undefined) | undefined;
  private agentName: string | undefined;
  private readonly agentFromOptions: string | undefined;
  private gitRepo: Promise<GitRepo | null> | undefined;
  private sparseChecked = false;

  constructor(opts: ServiceOptions = {}, warn: WarningSink = () => undefined) {
    this.longLived = opts.longLived ?? false;
    this.watched = opts.watched ?? false;
    this.onWrite = opts.onWrite;
    this.onCommit = opts.onCommit;
    this.env = opts.env ?? process.env;
    this.allowDetached = opts.allowDetached ?? ['1', 'true', 'yes'].includes(String(this.env.BASS_AGENTS_ALLOW_DETACHED ?? '').toLowerCase());
    this.ws = new Workspace(findRoot(opts.cwd ?? process.cwd(), opts.root, this.env), this.env);
    this.clock = opts.clock ?? clockFromEnv(this.env);
    this.agentName = pickAgent(opts.agent, this.env.BASS_AGENTS_AGENT);
    this.agentFromOptions = this.agentName;
    this.catalog = new Catalog(this.ws, { noteWrites: !this.watched, holdEntries: !this.longLived });
    this.usage = new UsageStore(this.ws);
    this.sessions = new SessionStore(this.ws);
    this.evidenceCache = new EvidenceCache(this.ws);
    this.warn = warn;
  }

  now(): Date {
    return this.clock();
  }

  /** The git repository of the workspace, or null outside git (opened once). */
  git(): Promise<GitRepo | null> {
    this.gitRepo ??= GitRepo.open(this.ws.root);
    return this.gitRepo;
  }

  /** The writer stored in created_by: --agent, BASS_AGENTS_AGENT, the git user, the OS user. */
  async agent(opts: { ignoreOwnAgent?: boolean } = {}): Promise<string> {
    // ignoreOwnAgent: a daemon writing for a CLI caller must not sign with its own --agent/env.
    if (this.agentName && !(opts.ignoreOwnAgent && this.agentName === this.agentFromOptions)) return this.agentName;
    const git = await this.git();
    let os: string | undefined;
    try {
      os = userInfo().username;
    } catch {
      os = undefined;
    }
    const found = pickAgent(git ? await git.userName() : null, os) ?? 'unknown';
    if (!opts.ignoreOwnAgent) this.agentName = found;
    return found;
  }

  /** The agent name known without asking git (for audit records of read-only commands). */
  get knownAgent(): string {
    return this.agentName ?? 'unknown';
  }

  /** The writer named by --agent or BASS_AGENTS_AGENT, if any (what a daemon must be told: its own env differs). */
  get explicitAgent(): string | undefined {
    return this.agentFromOptions;
  }

  /** Memory that git keeps out of a sparse checkout would be missing from every read and write: refused (once per context). */
  checkSparse(): void {
    if (this.sparseChecked) return;
    const gitDir = findGitDir(this.ws.root);
    const why = gitDir ? sparseProblem(gitDir, this.ws.root) : null;
    if (why) throw new ConflictError(`refusing to use memory here: ${why}`);
    this.sparseChecked = true;
  }

  /** Resolves the project for a command (CLI.md "--project"). */
  project(explicit?: string, mustExist = false): string {
    this.checkSparse();
    return this.ws.resolveProject(explicit, this.env, { mustExist });
  }

  /** The projects a read covers: the named one plus global, or every project when none is chosen. */
  readProjects(explicit?: string): string[] | undefined {
    let p: string;
    try {
      p = this.project(explicit, Boolean(explicit));
    } catch (err) {
      if (err instanceof UsageError && !explicit) return undefined; // several projects, no default: read them all
      throw err;
    }
    return p === GLOBAL_PROJECT ? [p] : [p, GLOBAL_PROJECT];
  }

  /** The catalog of all entries; files that fail to parse or validate are reported and skipped. */
  /**
   * Every entry of the workspace. In a watched process, the snapshot its watcher keeps current
   * (a full refresh would stat every file and hold a second copy of the catalog while a job
   * runs); elsewhere, refreshed from the files (see refreshSnapshot).
   */
  snapshot(): CatalogSnapshot {
    const live = this.watched ? this.current?.() : undefined;
    return live ?? this.refreshSnapshot();
  }

  /** The catalog refreshed from the files: a stat of every entry file, re-reading the changed ones. */
  refreshSnapshot(): CatalogSnapshot {
    this.checkSparse();
    const snap = this.catalog.refresh();
    this.lastSnap = snap;
    for (const b of snap.bad) {
      for (const p of b.problems) this.warn(`skipping ${p.path.startsWith(b.file) ? '' : `${b.file}: `}${p.path}: ${p.message}`);
    }
    return snap;
  }

  /** A project's resolved config.yaml. */
  projectConfig(project: string): ReturnType<typeof readConfig> {
    return readConfig(this.ws.configPath(project), project, this.now().toISOString(), this.ws.ensureLocal() ? this.ws.local('cache', true) : undefined);
  }

  /** The project's decay configuration (config.yaml `decay`, over the defaults). */
  decayConfig(project: string): DecayConfig {
    return resolveDecay(this.projectConfig(project).decay);
  }
}

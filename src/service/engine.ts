/** What every request to a workspace shares, one per workspace per process (docs/ARCHITECTURE.md "One engine"). */
import { ConflictError } from '../core/errors.js';
import { DEFAULT_DECAY, overlay, type DecayConfig } from '../core/lifecycle.js';
import { lazy } from '../lazy.js';
import { Catalog, type CatalogSnapshot } from '../store/catalog.js';
import { readConfig } from '../store/config.js';
import { EvidenceCache } from '../store/evidence-cache.js';
import { GitRepo } from '../store/git.js';
import { sparseProblem } from '../store/git-state.js';
import { gitDirOf } from '../store/state-dir.js';
import { LogReader } from '../store/local-log.js';
import { SessionStore } from '../store/sessions.js';
import { UsageStore } from '../store/usage.js';
import { Workspace, findRoot } from '../store/workspace.js';
import { Options, type Caller, type WarningSink } from './caller.js';
import type { ApplyResult, Batch } from './ops/apply.js';
import type { Aggregates } from './ops/statistics.js';
import { ReadModel } from './read-model.js';
import { SAVE_EVERY_MS, Semantic } from './semantic.js';

export interface EngineOptions {
  /** Where root discovery starts, or the root itself (`--root`). */
  cwd?: string;
  root?: string;
  env?: NodeJS.ProcessEnv;
  /** A daemon or MCP server: the whole text index in memory (a one-shot CLI loads what one query needs). */
  longLived?: boolean;
  /** A file watcher keeps the catalog current (the daemon): writes check against it instead of a stat of every file. */
  watched?: boolean;
  /** Told each write's files before its commit (the CLI notifies a running daemon). */
  onWrite?: (files: string[], caller: Caller) => Promise<void>;
  /** Told each HEAD move a write made (the daemon then need not ask git). */
  onCommit?: (commit: string, parent: string | null, files: string[]) => void;
}

// Modules of single commands load on first use: the engine is built by every CLI call.
export const modules = {
  evidenceCheck: lazy<typeof import('../core/evidence.js')>('./core/evidence.js'),
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

export class Engine extends Options<EngineOptions> {
  readonly longLived = this.opts.longLived ?? false;
  readonly watched = this.opts.watched ?? false;
  readonly onWrite = this.opts.onWrite;
  readonly onCommit = this.opts.onCommit;
  readonly env = this.opts.env ?? process.env;
  readonly ws = new Workspace(findRoot(this.opts.cwd ?? process.cwd(), this.opts.root, this.env), this.env);
  readonly catalog = new Catalog(this.ws, { noteWrites: !this.watched, holdEntries: !this.longLived });
  readonly usage = new UsageStore(this.ws);
  readonly sessions = new SessionStore(this.ws);
  readonly evidenceCache = new EvidenceCache(this.ws);
  readonly logs = new LogReader();
  readonly rm = new ReadModel(this);
  readonly aggregates: Aggregates = new Map();
  /** Told each group commit's results (the daemon's log and metrics). */
  onGroup: ((group: { batch: Batch; result: ApplyResult | Error }[]) => void) | undefined;
  semantic: Semantic | null = null;
  mergeDriverChecked = false;
  private gitRepo: Promise<GitRepo | null> | undefined;
  private sparseChecked = false;
  private serving = 0;
  private onQuiet = new Set<() => void>();

  /** Serves a caller's request: background work (vectors, the evidence check) waits while any is served. */
  async serve<T>(request: () => Promise<T>): Promise<T> {
    this.serving++;
    try {
      return await request();
    } finally {
      if (--this.serving === 0) for (const go of this.onQuiet) go();
    }
  }

  /** Resolves once no request is served (background work waits between slices), or after `maxMs`: a stream of requests slows it, never stops it. */
  quiet(maxMs = 200): Promise<void> {
    if (!this.serving) return Promise.resolve();
    return new Promise((resolve) => {
      const go = (): void => {
        clearTimeout(timer);
        this.onQuiet.delete(go);
        resolve();
      };
      const timer = setTimeout(go, maxMs);
      this.onQuiet.add(go);
    });
  }

  git(): Promise<GitRepo | null> {
    return (this.gitRepo ??= GitRepo.open(this.ws.root, { helper: this.longLived }));
  }

  /** Memory a sparse checkout leaves out would be missing from every read and write: refused. */
  checkSparse(): void {
    if (this.sparseChecked) return;
    const gitDir = gitDirOf(this.ws.root)?.gitDir;
    const why = gitDir ? sparseProblem(gitDir, this.ws.root) : null;
    if (why) throw new ConflictError(`refusing to use memory here: ${why}`);
    this.sparseChecked = true;
  }

  /** Every entry: in a watched process the watcher's snapshot (a refresh would stat every file and hold a second catalog), else refreshed. */
  snapshot(warn?: WarningSink): CatalogSnapshot {
    return (this.watched ? this.rm.current : undefined) ?? this.refreshSnapshot(warn);
  }

  refreshSnapshot(warn: WarningSink = () => undefined): CatalogSnapshot {
    this.checkSparse();
    const snap = this.catalog.refresh();
    for (const b of snap.bad) for (const p of b.problems) warn(`skipping ${p.path.startsWith(b.file) ? '' : `${b.file}: `}${p.path}: ${p.message}`);
    return snap;
  }

  /** `now` dates a default config. */
  projectConfig(project: string, now: Date = new Date()): ReturnType<typeof readConfig> {
    return readConfig(this.ws.configPath(project), project, now.toISOString(), this.ws.ensureLocal() ? this.ws.local('cache', true) : undefined);
  }

  decayConfig(project: string, now?: Date): DecayConfig {
    return overlay(DEFAULT_DECAY, this.projectConfig(project, now).decay);
  }

  /**
   * A long-lived process's semantic search: the static table, or with `BASS_AGENTS_SEMANTIC=minilm`
   * the model in a worker (queries stay lexical until it loads); none when it is off everywhere.
   */
  startSemantic(onReady?: (model: string | null) => void, onError?: (err: unknown) => void): Semantic | null {
    const projects = this.ws.listProjects();
    const wanted = this.env.BASS_AGENTS_SEMANTIC !== 'off' && (projects.length === 0 || projects.some((p) => this.projectConfig(p).query.semantic !== 'off'));
    if (!wanted) return null;
    const sem = (this.semantic ??= new Semantic(this));
    sem.attach(null);
    sem.state = 'loading';
    void import('./embedder.js')
      .then(({ WorkerEmbedder, staticEmbedder }) => (this.env.BASS_AGENTS_SEMANTIC === 'minilm' ? WorkerEmbedder.start() : staticEmbedder()))
      .then(
        (embedder) => {
          if (sem.isClosed) return void embedder?.close();
          sem.attach(embedder);
          onReady?.(embedder?.model ?? null);
          void this.indexSemantic();
        },
        (err: unknown) => {
          sem.attach(null, err instanceof Error ? err.message : String(err));
          onError?.(err);
        },
      );
    return sem;
  }

  /** Computes missing vectors in the background (the daemon calls this after each refresh). */
  indexSemantic(): Promise<void> {
    return this.semantic?.index(() => this.rm.current ?? this.snapshot(), { saveEveryMs: SAVE_EVERY_MS }) ?? Promise.resolve();
  }
}

/**
 * MemoryService: the public API every front end (CLI, MCP, daemon, dashboard, TypeScript users)
 * calls. A thin façade: each method is one use case in `ops/` (one file per area), every write
 * goes through the one write transaction (`transaction.ts`), and reads go through the read model
 * (`read-model.ts`). The wiring they share is `context.ts`.
 */
import type { ConsolidationPlan, Strategy } from '../core/consolidate.js';
import type { BoostType, DecayConfig } from '../core/lifecycle.js';
import type { QueryFilters } from '../core/query.js';
import type { AgentTask, MemoryEntry } from '../core/schema.js';
import type { DateRange, Statistics } from '../core/stats.js';
import type { CatalogSnapshot } from '../store/catalog.js';
import type { Clock } from '../store/clock.js';
import type { EvidenceCache } from '../store/evidence-cache.js';
import type { SessionStore, ShortTermEntry } from '../store/sessions.js';
import type { UsageStore } from '../store/usage.js';
import type { Workspace } from '../store/workspace.js';
import { ServiceContext, type ServiceOptions, type WarningSink } from './context.js';
import * as agents from './ops/agents.js';
import * as applyOps from './ops/apply.js';
import * as capture from './ops/capture.js';
import * as checks from './ops/checks.js';
import * as conflicts from './ops/conflicts.js';
import * as consolidation from './ops/consolidation.js';
import * as contextDocs from './ops/context-docs.js';
import * as decayOps from './ops/decay.js';
import * as diffOps from './ops/diff.js';
import * as entries from './ops/entries.js';
import * as evidence from './ops/evidence.js';
import * as extraction from './ops/extraction.js';
import * as interchange from './ops/interchange.js';
import * as lifecycle from './ops/lifecycle.js';
import * as queries from './ops/query.js';
import * as repo from './ops/repo.js';
import * as sessions from './ops/sessions.js';
import * as setupOps from './ops/setup.js';
import * as statistics from './ops/statistics.js';
import { ReadModel } from './read-model.js';
import type { Embedder } from './embedder.js';
import { Semantic, type SemanticStatus } from './semantic.js';
import { recoverPending } from './transaction.js';

export type { ServiceOptions, WarningSink } from './context.js';
export type { AppliedUpdate, ApplyResult } from './ops/apply.js';
export type { ApplyPlanReport } from './ops/consolidation.js';
export type { DecayReport } from './ops/decay.js';
export type { EntryVersion, ShownEntry } from './ops/entries.js';
export type { EvidenceReport } from './ops/evidence.js';
export type { ExtractReport } from './ops/extraction.js';
export type { ImportResult } from './ops/interchange.js';
export type { QueryHit, QueryOptions, QueryResult, QueryStats } from './ops/query.js';
export type { SemanticStatus } from './semantic.js';
export { hitJson } from './ops/query.js';

type Args<F> = F extends (ctx: ServiceContext, rm: ReadModel, ...rest: infer R) => unknown ? R : never;
type ArgsC<F> = F extends (ctx: ServiceContext, ...rest: infer R) => unknown ? R : never;

export class MemoryService {
  readonly ctx: ServiceContext;
  private semantic: Semantic | null = null;
  private readonly rm: ReadModel;
  private readonly aggregates: statistics.Aggregates = new Map();

  constructor(opts: ServiceOptions = {}, warn: WarningSink = () => undefined) {
    this.ctx = new ServiceContext(opts, warn);
    this.rm = new ReadModel(this.ctx);
  }

  get ws(): Workspace {
    return this.ctx.ws;
  }
  get env(): NodeJS.ProcessEnv {
    return this.ctx.env;
  }
  get clock(): Clock {
    return this.ctx.clock;
  }
  get usage(): UsageStore {
    return this.ctx.usage;
  }
  get sessions(): SessionStore {
    return this.ctx.sessions;
  }
  get evidenceCache(): EvidenceCache {
    return this.ctx.evidenceCache;
  }
  /** The writer named by --agent or BASS_AGENTS_AGENT, if any (what a daemon must be told: its own env differs). */
  get explicitAgent(): string | undefined {
    return this.ctx.explicitAgent;
  }

  now(): Date {
    return this.ctx.now();
  }
  agent(opts: { ignoreOwnAgent?: boolean } = {}): Promise<string> {
    return this.ctx.agent(opts);
  }
  project(explicit?: string, mustExist = false): string {
    return this.ctx.project(explicit, mustExist);
  }
  readProjects(explicit?: string): string[] | undefined {
    return this.ctx.readProjects(explicit);
  }
  snapshot(): CatalogSnapshot {
    return this.ctx.snapshot();
  }
  projectConfig(project: string): ReturnType<ServiceContext['projectConfig']> {
    return this.ctx.projectConfig(project);
  }
  decayConfig(project: string): DecayConfig {
    return this.ctx.decayConfig(project);
  }

  /**
   * Finishes or undoes what a killed writer left behind, when no writer holds the lock (every
   * write does this first; the CLI does it before any command when a journal is there).
   */
  recoverJournal(): Promise<{ kept: number; undone: number; ignored: number } | null> {
    return recoverPending(this.ctx);
  }

  // ---------------------------------------------------------------- writes (each one transaction)
  init(project: string): ReturnType<typeof repo.init> {
    return repo.init(this.ctx, project);
  }
  removeProject(project: string): ReturnType<typeof repo.removeProject> {
    return repo.removeProject(this.ctx, project);
  }
  registerMergeDriver(): Promise<boolean> {
    return repo.registerMergeDriver(this.ctx);
  }
  sync(...a: ArgsC<typeof repo.sync>): ReturnType<typeof repo.sync> {
    return repo.sync(this.ctx, ...a);
  }
  create(...a: Args<typeof applyOps.create>): ReturnType<typeof applyOps.create> {
    return applyOps.create(this.ctx, this.rm, ...a);
  }
  apply(...a: Args<typeof applyOps.apply>): ReturnType<typeof applyOps.apply> {
    return applyOps.apply(this.ctx, this.rm, ...a);
  }
  supersede(...a: Args<typeof applyOps.supersede>): ReturnType<typeof applyOps.supersede> {
    return applyOps.supersede(this.ctx, this.rm, ...a);
  }
  deprecate(...a: Args<typeof applyOps.deprecate>): ReturnType<typeof applyOps.deprecate> {
    return applyOps.deprecate(this.ctx, this.rm, ...a);
  }
  /** Group commit (the daemon): several callers' batches of one project and agent in one commit. */
  applyGroup(batches: { updates: unknown; opts: applyOps.ApplyOptions }[]): Promise<(applyOps.ApplyResult | Error)[]> {
    return applyOps.applyGroup(this.ctx, this.rm, batches);
  }
  applyResult(...a: Args<typeof applyOps.applyResult>): ReturnType<typeof applyOps.applyResult> {
    return applyOps.applyResult(this.ctx, this.rm, ...a);
  }
  importEntries(...a: ArgsC<typeof interchange.importEntries>): ReturnType<typeof interchange.importEntries> {
    return interchange.importEntries(this.ctx, ...a);
  }
  decay(...a: ArgsC<typeof decayOps.decay>): ReturnType<typeof decayOps.decay> {
    return decayOps.decay(this.ctx, ...a);
  }
  reinforce(ids: string[], opts: { project?: string; boostType?: BoostType; amount?: number } = {}): Promise<lifecycle.EditResult> {
    return lifecycle.reinforce(this.ctx, ids, opts);
  }
  promote(id: string, opts: { project?: string } = {}): Promise<lifecycle.EditResult> {
    return lifecycle.promote(this.ctx, id, opts);
  }
  restore(...a: ArgsC<typeof lifecycle.restore>): ReturnType<typeof lifecycle.restore> {
    return lifecycle.restore(this.ctx, ...a);
  }
  link(...a: ArgsC<typeof lifecycle.link>): ReturnType<typeof lifecycle.link> {
    return lifecycle.link(this.ctx, ...a);
  }
  extract(...a: Args<typeof extraction.extract>): ReturnType<typeof extraction.extract> {
    return extraction.extract(this.ctx, this.rm, ...a);
  }
  compactPlan(
    projectName: string | undefined,
    opts: { strategy?: Strategy; summarizeAt?: number; file?: string } = {},
  ): { plan: ConsolidationPlan; path: string } {
    return consolidation.compactPlan(this.ctx, projectName, opts);
  }
  applyPlan(planFile: string): ReturnType<typeof consolidation.applyPlan> {
    return consolidation.applyPlan(this.ctx, planFile);
  }
  remember(...a: Args<typeof sessions.remember>): ReturnType<typeof sessions.remember> {
    return sessions.remember(this.ctx, this.rm, ...a);
  }
  sessionHits(session: string, text: string): ShortTermEntry[] {
    return sessions.sessionHits(this.ctx, session, text);
  }
  sessionEnd(...a: Args<typeof sessions.sessionEnd>): ReturnType<typeof sessions.sessionEnd> {
    return sessions.sessionEnd(this.ctx, this.rm, ...a);
  }
  diff(...a: ArgsC<typeof diffOps.memoryDiff>): ReturnType<typeof diffOps.memoryDiff> {
    return diffOps.memoryDiff(this.ctx, ...a);
  }
  renderDiff(...a: Parameters<typeof diffOps.renderDiff>): string {
    return diffOps.renderDiff(...a);
  }
  setup(...a: ArgsC<typeof setupOps.setup>): ReturnType<typeof setupOps.setup> {
    return setupOps.setup(this.ctx, ...a);
  }
  stopReminder(...a: ArgsC<typeof capture.stopReminder>): ReturnType<typeof capture.stopReminder> {
    return capture.stopReminder(this.ctx, ...a);
  }
  syncContext(...a: Args<typeof contextDocs.syncContext>): ReturnType<typeof contextDocs.syncContext> {
    return contextDocs.syncContext(this.ctx, this.rm, ...a);
  }

  // ---------------------------------------------------------------- reads
  locate(id: string, project?: string): { project: string; file: string; entry: MemoryEntry } {
    return entries.locate(this.ctx, id, project);
  }
  show(...a: ArgsC<typeof entries.show>): ReturnType<typeof entries.show> {
    return entries.show(this.ctx, ...a);
  }
  history(...a: ArgsC<typeof entries.history>): ReturnType<typeof entries.history> {
    return entries.history(this.ctx, ...a);
  }
  query(text: string, filters: QueryFilters, opts: queries.QueryOptions = {}): queries.QueryResult {
    return queries.query(this.ctx, this.rm, text, filters, opts);
  }
  /** Counts results as retrieved (local usage, never a commit): those actually delivered for use. */
  recordDelivered(hits: { project: string; entry: { id: string } }[]): void {
    this.ctx.usage.recordRetrievals(
      hits.map((h) => `${h.project}/${h.entry.id}`),
      this.ctx.now().toISOString(),
    );
  }
  logQuery(record: { text: string; filters: QueryFilters; result_count: number; execution_ms: number }): void {
    queries.logQuery(this.ctx, record);
  }
  slowQueryMs(project?: string): number {
    return queries.slowQueryMs(this.ctx, project);
  }
  related(...a: Args<typeof lifecycle.related>): ReturnType<typeof lifecycle.related> {
    return lifecycle.related(this.ctx, this.rm, ...a);
  }
  prepareTask(task: unknown, opts: { project?: string; full?: boolean; refresh?: boolean } = {}): AgentTask {
    return agents.prepareTask(this.ctx, this.rm, task, opts);
  }
  exportEntries(project: string, filters: QueryFilters = {}): MemoryEntry[] {
    return interchange.exportEntries(this.ctx, project, filters);
  }
  decayState(): ReturnType<typeof decayOps.decayState> {
    return decayOps.decayState(this.ctx);
  }
  log(...a: ArgsC<typeof consolidation.log>): ReturnType<typeof consolidation.log> {
    return consolidation.log(this.ctx, ...a);
  }
  renderContext(projectName: string, opts: { budget?: number } = {}): ReturnType<typeof contextDocs.renderContext> {
    return contextDocs.renderContext(this.ctx, this.rm, projectName, opts);
  }
  getStatistics(project?: string, range: DateRange = {}, opts: { refresh?: boolean } = {}): Statistics {
    return statistics.getStatistics(this.ctx, this.rm, this.aggregates, project, range, opts);
  }

  // ---------------------------------------------------------------- checks
  validate(...a: ArgsC<typeof checks.validate>): ReturnType<typeof checks.validate> {
    return checks.validate(this.ctx, ...a);
  }
  doctor(): ReturnType<typeof checks.doctor> {
    return checks.doctor(this.ctx);
  }
  /** `memory doctor --fix`: entries with git conflict markers merged field by field from the merge's sides. */
  fixConflicts(): ReturnType<typeof conflicts.fixConflicts> {
    return conflicts.fixConflicts(this.ctx);
  }
  fixLinks(): ReturnType<typeof conflicts.fixLinks> {
    return conflicts.fixLinks(this.ctx);
  }
  checkFreshness(...a: ArgsC<typeof checks.checkFreshness>): ReturnType<typeof checks.checkFreshness> {
    return checks.checkFreshness(this.ctx, ...a);
  }
  validateEvidence(...a: ArgsC<typeof evidence.validateEvidence>): ReturnType<typeof evidence.validateEvidence> {
    return evidence.validateEvidence(this.ctx, ...a);
  }

  // ---------------------------------------------------------------- the read model (long-lived processes)
  refresh(opts: { saveIndex?: boolean | 'drifted'; paths?: string[] } = {}): ReturnType<ReadModel['refresh']> {
    return this.rm.refresh(opts);
  }
  compactIndex(): boolean {
    return this.rm.compactIndex();
  }
  saveIndex(): void {
    this.rm.saveIndex();
  }
  flushIndex(): void {
    this.rm.flushIndex();
  }

  // ---------------------------------------------------------------- semantic search
  /**
   * Semantic search with `engine` (a long-lived process: the daemon's worker thread); null when
   * the model is not installed. Loads the vectors cached for its model.
   */
  attachEmbedder(engine: Embedder | null, error?: string): Semantic {
    this.semantic ??= new Semantic(this.ctx);
    this.semantic.attach(engine, error);
    return this.semantic;
  }

  /**
   * For a long-lived process (daemon, MCP server): semantic search with the static table, ready
   * at once (its vectors are computed in the background), or with `BASS_AGENTS_SEMANTIC=minilm`
   * the model in a worker thread (state `loading`; queries stay lexical until it is ready). None
   * with `BASS_AGENTS_SEMANTIC=off` or when every project has `query.semantic: off`. `onReady`
   * is told the model's name (null: not available).
   */
  startSemantic(onReady?: (model: string | null) => void, onError?: (err: unknown) => void): Semantic | null {
    const projects = this.ws.listProjects();
    const wanted = this.env.BASS_AGENTS_SEMANTIC !== 'off' && (projects.length === 0 || projects.some((p) => this.projectConfig(p).query.semantic !== 'off'));
    if (!wanted) return null;
    const sem = this.attachEmbedder(null);
    sem.state = 'loading';
    void import('./embedder.js')
      .then(({ WorkerEmbedder, staticEmbedder }) => (this.env.BASS_AGENTS_SEMANTIC === 'minilm' ? WorkerEmbedder.start() : staticEmbedder()))
      .then(
        (engine) => {
          if (sem.isClosed) return void engine?.close();
          this.attachEmbedder(engine);
          onReady?.(engine?.model ?? null);
          void this.indexSemantic();
        },
        (err: unknown) => {
          this.attachEmbedder(null, err instanceof Error ? err.message : String(err));
          onError?.(err);
        },
      );
    return sem;
  }

  /** Stops the model and saves the vectors computed so far. */
  async closeSemantic(): Promise<void> {
    await this.semantic?.close();
  }

  /** Computes the vectors entries lack, in the background (the daemon calls this after each refresh). */
  indexSemantic(): Promise<void> {
    return this.semantic?.index(() => this.rm.current ?? this.ctx.snapshot()) ?? Promise.resolve();
  }

  /**
   * The semantic part of a query of `text`, for `query`'s options: from the attached engine
   * when there is one; otherwise, when `ask` (`--semantic`), the model is loaded in this
   * process and at most `inlineMax` missing vectors are computed first (the daemon computes the
   * rest). Undefined when semantic search cannot answer (no model, no vectors, empty text).
   */
  async semanticFor(text: string, ask = false, inlineMax = 64): Promise<queries.QueryOptions['semantic']> {
    if (!text.trim()) return undefined;
    // Never a second engine in a process whose own is still loading (a daemon running the
    // command line of a `query --semantic`): that query is lexical until it is ready.
    if (!this.semantic?.ready && ask && this.semantic?.state !== 'loading') {
      const { inlineEmbedder } = await import('./embedder.js');
      this.attachEmbedder(await inlineEmbedder(this.env.BASS_AGENTS_SEMANTIC === 'minilm'));
      await this.semantic!.index(() => this.ctx.snapshot(), { max: inlineMax });
    }
    if (!this.semantic?.ready) return undefined;
    // A long-lived process without a watcher (an MCP server) notices new entries at each query.
    // (Never a one-shot CLI: it embedded its few above, and must not stay alive for the rest.)
    if (this.ctx.longLived && !this.ctx.watched) void this.indexSemantic();
    const similarity = await this.semantic.similarity(text);
    return similarity ? { similarity } : undefined;
  }

  /** Whether semantic search is on and how many vectors are current (null: no engine attached in this process). */
  semanticStatus(): SemanticStatus | null {
    return this.semantic?.status(this.rm.current) ?? null;
  }
}

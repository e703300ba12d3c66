/**
 * MemoryService: the public TypeScript API (src/index.ts). One engine (engine.ts) and one default
 * caller (caller.ts), with every use case of use-cases.ts bound to them: `memory.create(entry)`
 * is `create(engine, caller, entry)`. The CLI, the daemon and the MCP server call the use cases
 * themselves, with a caller per request.
 */
import { Caller, type CallerOptions, type WarningSink } from './caller.js';
import { Engine, type EngineOptions } from './engine.js';
import { applyGroup, type ApplyOptions, type ApplyResult } from './ops/apply.js';
import { renderDiff } from './ops/diff.js';
import type { Semantic } from './semantic.js';
import * as useCases from './use-cases.js';

export type ServiceOptions = Omit<EngineOptions, 'onWrite' | 'onCommit'> & Omit<CallerOptions, 'warn'>;
export type { WarningSink } from './caller.js';
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

type UseCases = typeof useCases;
type Bound<F> = F extends (engine: Engine, caller: Caller, ...rest: infer R) => infer T ? (...rest: R) => T : never;
type BoundUseCases = { [K in keyof UseCases]: Bound<UseCases[K]> };

// The bound use cases (declared here, put on the prototype below).
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface MemoryService extends BoundUseCases {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class MemoryService {
  readonly engine: Engine;
  readonly caller: Caller;

  constructor(opts: ServiceOptions = {}, warn?: WarningSink) {
    this.engine = new Engine(opts);
    this.caller = new Caller({ ...opts, warn });
  }

  get ws(): Engine['ws'] {
    return this.engine.ws;
  }
  get evidenceCache(): Engine['evidenceCache'] {
    return this.engine.evidenceCache;
  }
  get env(): NodeJS.ProcessEnv {
    return this.caller.env;
  }
  now(): Date {
    return this.caller.now();
  }
  agent(): Promise<string> {
    return this.caller.agent(this.engine);
  }
  project(explicit?: string, mustExist = false): string {
    return this.caller.project(this.engine, explicit, mustExist);
  }
  readProjects(explicit?: string): string[] | undefined {
    return this.caller.readProjects(this.engine, explicit);
  }
  snapshot(): ReturnType<Engine['snapshot']> {
    return this.engine.snapshot(this.caller.warn);
  }
  renderDiff(...a: Parameters<typeof renderDiff>): string {
    return renderDiff(...a);
  }
  /** Group commit: several batches of one project in one commit, each with its own result or error. */
  applyGroup(batches: { updates: unknown; opts: ApplyOptions }[]): Promise<(ApplyResult | Error)[]> {
    return applyGroup(
      this.engine,
      batches.map((b) => ({ ...b, caller: this.caller })),
    );
  }
  /** For a long-lived process: semantic search in the background (see Engine.startSemantic). */
  startSemantic(...a: Parameters<Engine['startSemantic']>): Semantic | null {
    return this.engine.startSemantic(...a);
  }
  closeSemantic(): Promise<void> {
    return this.engine.closeSemantic();
  }
  /** Re-reads changed files and brings the whole index up to date (a long-lived process). */
  refresh(opts: Parameters<Engine['rm']['refresh']>[0] = {}): ReturnType<Engine['rm']['refresh']> {
    return this.engine.rm.refresh(opts);
  }
  /** Saves the index snapshot, up to date with the files, for the one-shot commands that come next. */
  flushIndex(): void {
    this.engine.rm.flushIndex();
  }
}

for (const [name, fn] of Object.entries(useCases)) {
  Object.defineProperty(MemoryService.prototype, name, {
    value: function (this: MemoryService, ...a: unknown[]) {
      return (fn as (e: Engine, c: Caller, ...rest: unknown[]) => unknown)(this.engine, this.caller, ...a);
    },
  });
}

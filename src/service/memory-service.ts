/**
 * MemoryService: the public TypeScript API (src/index.ts). One engine (engine.ts) and one default
 * caller (caller.ts), with every use case of use-cases.ts bound to them: `memory.create(entry)`
 * is `create(engine, caller, entry)`; the rest of the engine (its read model, stores, semantic
 * search) is `memory.engine`. The CLI, the daemon and the MCP server call the use cases
 * themselves, with a caller per request.
 */
import { Caller, type CallerOptions, type WarningSink } from './caller.js';
import { Engine, type EngineOptions } from './engine.js';
import { applyGroup, type ApplyOptions, type ApplyResult } from './ops/apply.js';
import * as useCases from './use-cases.js';

export type ServiceOptions = Omit<EngineOptions, 'onWrite' | 'onCommit'> & Omit<CallerOptions, 'warn'>;
export type { ApplyResult } from './ops/apply.js';
export type { EntryVersion, ShownEntry } from './ops/entries.js';
export type { QueryHit, QueryResult } from './ops/query.js';

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

  /** Group commit: several batches of one project in one commit, each with its own result or error. */
  applyGroup(batches: { updates: unknown; opts: ApplyOptions }[]): Promise<(ApplyResult | Error)[]> {
    return applyGroup(
      this.engine,
      batches.map((b) => ({ ...b, caller: this.caller })),
    );
  }
}

for (const [name, fn] of Object.entries(useCases)) {
  Object.defineProperty(MemoryService.prototype, name, {
    value: function (this: MemoryService, ...a: unknown[]) {
      return (fn as (e: Engine, c: Caller, ...rest: unknown[]) => unknown)(this.engine, this.caller, ...a);
    },
  });
}

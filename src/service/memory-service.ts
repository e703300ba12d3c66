/** The TypeScript API: every use case bound to one engine and a default caller (`memory.create(entry)` is `create(engine, caller, entry)`). */
import { Caller, type CallerOptions, type WarningSink } from './caller.js';
import { Engine, type EngineOptions } from './engine.js';
import * as useCases from './use-cases.js';

export type ServiceOptions = Omit<EngineOptions, 'onWrite' | 'onCommit'> & Omit<CallerOptions, 'warn'>;

type UseCases = typeof useCases;
type Bound<F> = F extends (engine: Engine, caller: Caller, ...rest: infer R) => infer T ? (...rest: R) => T : never;
type BoundUseCases = { [K in keyof UseCases]: Bound<UseCases[K]> };

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
}

for (const [name, fn] of Object.entries(useCases)) {
  Object.defineProperty(MemoryService.prototype, name, {
    value: function (this: MemoryService, ...a: unknown[]) {
      return (fn as (e: Engine, c: Caller, ...rest: unknown[]) => unknown)(this.engine, this.caller, ...a);
    },
  });
}

/**
 * Loads a module on first use, synchronously (Node >= 20.19 can `require` ES modules). The read
 * path of a short-lived CLI process must not pay for libraries it does not touch: zod, yaml,
 * proper-lockfile and ulid each cost more to import than a warm query takes (docs/benchmarks.md).
 *
 * NOTE: a test runner that loads `src/` as TypeScript cannot `require` it: it registers the
 * modules it loaded itself under their specs (test/setup.ts), and those are used instead, so
 * tests run the source they import, never a stale build.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Modules registered by a test runner, by spec. */
const preloaded = (): Map<string, unknown> | undefined => (globalThis as { __bassAgentsLazy?: Map<string, unknown> }).__bassAgentsLazy;

/** `spec` is resolved relative to `dist/` (this file's folder) or is a package name. */
export function lazy<T>(spec: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= (preloaded()?.get(spec) as T | undefined) ?? (require(spec) as T));
}

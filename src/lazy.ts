/**
 * Loads a module on first use, synchronously: a one-shot CLI must not pay for libraries it does not
 * touch (zod, yaml, proper-lockfile, ulid each cost more than a warm query). A test runner loading
 * `src/` as TypeScript cannot `require` it: it registers its own modules by spec (test/setup.ts).
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

const preloaded = (): Map<string, unknown> | undefined => (globalThis as { __bassAgentsLazy?: Map<string, unknown> }).__bassAgentsLazy;

/**
 * `spec` is resolved relative to `dist/` (this file's folder) or is a package name; with `beside`, as that package resolves it
 * (a package of its own, not ours: the very instance it uses, under any node_modules layout). The bundle resolves both at build time.
 */
export function lazy<T>(spec: string, beside?: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= (preloaded()?.get(spec) as T | undefined) ?? ((beside ? createRequire(require.resolve(beside)) : require)(spec) as T));
}

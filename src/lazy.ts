/**
 * Loads a module on first use, synchronously (Node >= 20.19 can `require` ES modules). The read
 * path of a short-lived CLI process must not pay for libraries it does not touch: zod, yaml,
 * proper-lockfile and ulid cost 10-60 ms each to import, more than a warm query takes.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** `spec` is resolved relative to `dist/` (this file's folder) or is a package name. */
export function lazy<T>(spec: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= require(spec) as T);
}

/** `fn()`, or `fallback` when it throws: for reads whose failure means "none", and writes a failure of which only costs speed. */
export function tryOr<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

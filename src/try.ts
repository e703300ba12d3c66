/** `fn()`, or `fallback` when it throws: for reads whose failure means "none", and writes a failure of which only costs speed. */
export function tryOr<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

/** `fn(input)`, or the error `fail` makes of what it throws: for parses whose failure the caller words (a file's, a request's). */
export function orThrow<A, T>(fn: (input: A) => T, input: A, fail: (err: Error) => Error): T {
  try {
    return fn(input);
  } catch (err) {
    throw fail(err as Error);
  }
}

/** `fn` with its results kept by argument, all dropped once `max` are kept: for pure functions met with the same values again and again. */
export function memo<A, R>(fn: (a: A) => R, max: number): (a: A) => R {
  const kept = new Map<A, R>();
  return (a) => {
    let r = kept.get(a);
    if (r === undefined) {
      if (kept.size >= max) kept.clear();
      kept.set(a, (r = fn(a)));
    }
    return r;
  };
}

/**
 * Limits on input, pure: what any front end refuses before it parses further.
 */
import { ValidationError } from './errors.js';

/** The deepest nesting of arrays and objects accepted in any input document. */
export const MAX_DEPTH = 64;

/**
 * Refuses input nested deeper than MAX_DEPTH (validation and merging recurse; a 5,000-deep
 * document would overflow the stack). Iterative, so the check itself cannot.
 */
export function checkDepth(value: unknown, what: string, max = MAX_DEPTH): void {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d >= max) throw new ValidationError([{ path: what, message: `is nested more than ${max} levels deep` }], what);
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, d + 1]);
  }
}

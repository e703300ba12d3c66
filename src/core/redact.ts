/**
 * How an error message shows a value the user gave: quoted when it is short and plainly not a
 * secret, otherwise only its length. Messages name fields, never echo what might be a key (a
 * subject, a scope, an id or a date can hold one as easily as content can).
 */
import { entropy } from './secret-rules.js';
import { scanText } from './secrets.js';

/** The longest value an error message quotes. */
const QUOTED_MAX = 40;

/** `bare`: an id-like value printed as it is, without quotes, when it is safe to print. */
export function shown(value: unknown, opts: { bare?: boolean } = {}): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  const risky =
    text.length > QUOTED_MAX ||
    scanText('value', text).length > 0 ||
    // A long run of random-looking characters: possibly a token of a format no rule knows.
    (text.match(/[A-Za-z0-9+/_=.~-]{16,}/g) ?? []).some((run) => entropy(run) >= 3.5 && /\d/.test(run) && /[A-Za-z]/.test(run));
  if (risky) return `a value of ${text.length} characters, not shown`;
  return typeof value === 'string' && !opts.bare ? JSON.stringify(value) : text;
}

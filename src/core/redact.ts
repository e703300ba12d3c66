/** How an error message shows a value the user gave: quoted when short and plainly not a secret (any field can hold a key), else only its length. */
import { lazy } from '../lazy.js';

// Loaded on the first message that shows a value: the rules are not needed on the happy path.
const secrets = lazy<typeof import('./secrets.js')>('./core/secrets.js');

const QUOTED_MAX = 40;

export function showable(value: unknown): boolean {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  // A memory id (a ULID) is safe to print, random as it looks.
  if (/^[0-9A-HJKMNP-TV-Z]{26}$/.test(text)) return true;
  return !(
    text.length > QUOTED_MAX ||
    secrets().scanText('value', text).length > 0 ||
    // A long run of random-looking characters: possibly a token of a format no rule knows.
    (text.match(/[A-Za-z0-9+/_=.~-]{16,}/g) ?? []).some((run) => secrets().entropy(run) >= 3.5 && /\d/.test(run) && /[A-Za-z]/.test(run))
  );
}

/** `bare`: an id-like value printed as it is, without quotes, when it is safe to print. */
export function shown(value: unknown, opts: { bare?: boolean } = {}): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  return !showable(value) ? `a value of ${text.length} characters, not shown` : typeof value === 'string' && !opts.bare ? JSON.stringify(value) : text;
}

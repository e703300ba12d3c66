/**
 * A provider's name a few words before a token-shaped value (`MAILJET_API_KEY=…`, "the Abyssale
 * key: …", `[DEBUG] Using Key=…` under a line naming the service): how tokens of the hundreds of
 * services with no fixed prefix are found. The names are data (rules/secrets/providers.json).
 * The value must look random (length, character mix, entropy) and not be a placeholder, a word,
 * a path, an id or a hash named as a commit; a "weak" name (also an English word: box, front,
 * square), a hex string or a UUID counts only with a secret word (key, token, …) nearby.
 *
 * Linear: one pass finds the candidate values, and each looks back over at most WINDOW characters.
 */
import { readFileSync } from 'node:fs';
import { classes, decodeBase64Text, entropy, isCodeReference, isPlaceholder, isWordLike, type Rule, type Span } from './checks.js';

// The data file sits at the package root; `import.meta.url` names this file in src/, dist/ and the bundle alike.
const DATA = JSON.parse(readFileSync(new URL('../../../rules/secrets/providers.json', import.meta.url), 'utf8')) as {
  providers: string[];
  weak: string[];
};
const STRONG = new Set(DATA.providers);
const WEAK = new Set(DATA.weak);

/** How far back (characters) a provider's name may sit from the value. */
const WINDOW = 80;

const SECRET_WORDS = new Set(
  'key keys apikey token tokens secret secrets password passwd pass pwd credential credentials cred creds auth pat bearer access sid license private signing'.split(
    ' ',
  ),
);
/** A value that follows these words is an id or a digest, not a credential. */
const NOT_SECRET_WORDS = new Set(
  'id ids uuid guid commit commits sha sha1 sha256 sha512 hash digest checksum revision fingerprint integrity md5 etag version build release tag trace span request order invoice customer account user username email org organization tenant project workspace team channel issue ticket event message job run image file path url uri host domain region zone bucket name'.split(
    ' ',
  ),
);
/** Words glued after a provider's name in an identifier (`mailjetapikey`). */
const GLUED = /(?:api|key|token|secret|pat|auth|password|pass|access|client|private|bot|app|_)+$/;

/** Candidate values: runs of token characters, 16 to 256 long. */
const CANDIDATE = /(?<![A-Za-z0-9_+/-])[A-Za-z0-9][A-Za-z0-9_+/-]{15,255}={0,2}(?![A-Za-z0-9_+/=-])/g;

const HEXISH = /^(?:[0-9a-f]+|[0-9A-F]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;
const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** Whether a value has a token's shape: random-looking, not a word, path, id or encoded prose. */
function tokenShaped(v: string): boolean {
  if (ULID.test(v) || isPlaceholder(v) || isCodeReference(v)) return false;
  if (HEXISH.test(v)) return entropy(v.replace(/-/g, '')) >= 3;
  if (!/\d/.test(v) && !(/[a-z]/.test(v) && /[A-Z]/.test(v) && v.length >= 24)) return false;
  if (classes(v) < 2 || entropy(v) < (v.length < 24 ? 3.4 : 3.7)) return false;
  // Every piece between separators a word or a number: a path, a slug, a version.
  if (/\/[A-Za-z]?[a-z]{2,}(?:\/|$)|^[A-Za-z]?[a-z]{2,}\//.test(v)) return false; // a path: a piece is a word
  if (v.split(/[_+/-]/).every((p) => !p || /^(?:[A-Za-z][a-z]*|[A-Z]+|\d+)$/.test(p) || isWordLike(p))) return false;
  const text = /[+/=]/.test(v) || v.length % 4 === 0 ? decodeBase64Text(v) : null;
  return text === null || !/\s/.test(text.trim());
}

/** Lower-case words of a stretch of text: identifiers split at `_`, `-`, `.` and camelCase humps. */
function words(s: string): { parts: string[]; runs: string[] } {
  const runs = s.match(/[A-Za-z0-9]+/g) ?? [];
  const parts = runs.flatMap((r) => r.replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(' ')).map((w) => w.toLowerCase());
  return { parts, runs: runs.map((r) => r.toLowerCase()) };
}

/** The provider named in `before`: 'strong', 'weak', or null. Single words, two joined (`new relic`), glued suffixes. */
function providerIn(parts: string[], runs: string[]): 'strong' | 'weak' | null {
  const names = [...parts, ...parts.slice(1).map((w, i) => parts[i]! + w), ...runs.filter((r) => r.length > 4).map((r) => r.replace(GLUED, ''))];
  if (names.some((w) => STRONG.has(w))) return 'strong';
  // A name glued to more (`algoliasearch`, `twiliorestclient`): its prefixes of five letters or more.
  for (const r of runs) for (let n = 5; n < r.length; n++) if (STRONG.has(r.slice(0, n))) return 'strong';
  return names.some((w) => WEAK.has(w)) ? 'weak' : null;
}

function providerTokens(text: string): Span[] {
  const out: Span[] = [];
  CANDIDATE.lastIndex = 0;
  for (let m = CANDIDATE.exec(text); m; m = CANDIDATE.exec(text)) {
    const v = m[0];
    if (text[m.index - 1] === '.' || !tokenShaped(v)) continue; // after a dot: a domain's or a file's tail
    // Up to WINDOW characters back, over at most two line breaks.
    const before = text
      .slice(Math.max(0, m.index - WINDOW), m.index)
      .split('\n')
      .slice(-3)
      .join('\n');
    const { parts, runs } = words(before);
    const last = parts.slice(-6);
    const named = last.some((w) => SECRET_WORDS.has(w));
    // Named as an id, a digest or something public; any other noun (`workspace`) only without a secret word near.
    if (!last.length || /^(?:u|g)?uids?$|^ids?$/.test(last.at(-1)!) || (!named && NOT_SECRET_WORDS.has(last.at(-1)!))) continue;
    if (last.some((w) => /^(?:commit|sha\d*|hash|digest|checksum|public|publishable)$/.test(w)) || /^pk_/.test(v)) continue;
    const kind = providerIn(parts, runs);
    if (!kind) continue;
    if ((kind === 'weak' || HEXISH.test(v)) && !parts.some((w) => SECRET_WORDS.has(w))) continue;
    out.push({ start: m.index, end: m.index + v.length });
  }
  return out;
}

export const PROVIDER_CONTEXT_RULES: readonly Rule[] = [{ id: 'provider-context', scan: providerTokens }];

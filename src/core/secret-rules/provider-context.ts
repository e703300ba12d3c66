/**
 * A provider's name a few words before a random-looking value (`MAILJET_API_KEY=…`), for services whose tokens have no
 * fixed prefix (docs/secrets.md; words in rules/secrets/providers.json). Linear: each candidate looks back WINDOW characters.
 */
import { camelWords, classes, decodeBase64Text, entropy, isCodeReference, isPlaceholder, isWordLike, ruleData, type Rule, type Span } from './checks.js';

const DATA = ruleData('providers');
const STRONG = new Set(DATA.providers);
const WEAK = new Set(DATA.weak);
const SECRET_WORDS = new Set(DATA.secret_words);
const NOT_SECRET_WORDS = new Set(DATA.not_secret_words);
const RECORD_KEY = new Set(DATA.record_key);
/** Object ids with a type prefix (Stripe's `cus_`, OpenAI's `run_`, Vercel's `dpl_`) and publishable keys (`pk_`). */
const ID_PREFIX = new RegExp(`^(?:${DATA.id_prefixes!.join('|')})_`);
/** The first five letters of each name of five or more: a word that starts with none of them names no provider glued to more. */
const STEMS = new Set(DATA.providers!.filter((p) => p.length >= 5).map((p) => p.slice(0, 5)));

/** How far back (characters) a provider's name may sit from the value. */
const WINDOW = 80;

/** Words glued after a provider's name in an identifier (`mailjetapikey`). */
const GLUED = /(?:api|key|token|secret|pat|auth|password|pass|access|client|private|bot|app|_)+$/;

/** Candidate values: runs of token characters, 12 to 256 long (under 16 only with a secret word near and a known name). */
const CANDIDATE = /(?<![A-Za-z0-9_+/-])[A-Za-z0-9][A-Za-z0-9_+/-]{11,255}={0,2}(?![A-Za-z0-9_+/=-])/g;

/** Hex, a UUID, or hex behind a short type prefix (Twilio's `AC…`/`MG…` ids): an id as often as a key. */
const HEXISH = /^(?:[A-Za-z]{1,4}[-_]?)?(?:[0-9a-f]{16,}|[0-9A-F]{16,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$|^[0-9a-f]+$/i;
const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** Whether a value has a token's shape: random-looking, not a word, path, id or encoded prose (cheapest tests first). */
function tokenShaped(v: string): boolean {
  if (classes(v) < 2 || ULID.test(v)) return false;
  const hex = HEXISH.test(v);
  if (!hex && !/\d/.test(v) && !(/[a-z]/.test(v) && /[A-Z]/.test(v) && v.length >= 24)) return false;
  if (entropy(hex ? v.replace(/-/g, '') : v) < (hex ? 3 : v.length < 24 ? 3.4 : 3.7)) return false;
  if (isPlaceholder(v) || isCodeReference(v)) return false;
  if (hex) return true;
  if (/\/[A-Za-z]?[a-z]{2,}(?:\/|$)|^[A-Za-z]?[a-z]{2,}\//.test(v)) return false; // a path: a piece is a word
  // Every piece between separators a word or a number: a slug, a version, an identifier.
  if (v.split(/[_+/-]/).every((p) => !p || /^(?:[A-Za-z][a-z]*|[A-Z]+|\d+)$/.test(p) || isWordLike(p))) return false;
  const text = /[+/=]/.test(v) || v.length % 4 === 0 ? decodeBase64Text(v) : null;
  return text === null || !/\s/.test(text.trim());
}

/** Where the text names a provider, in one pass over its words (camelCase split; two joined, `new relic`; glued to more, `mailjetapikey`). */
function mentions(text: string): { end: number; kind: 'strong' | 'weak' }[] {
  const out: { end: number; kind: 'strong' | 'weak' }[] = [];
  const run = /[A-Za-z0-9]{2,64}(?![A-Za-z0-9])/g;
  let prev = '';
  let prevEnd = -10;
  for (let m = run.exec(text); m; m = run.exec(text)) {
    if (/^\d+$/.test(m[0])) continue;
    const lower = m[0].toLowerCase();
    const parts = /[a-z0-9][A-Z]/.test(m[0]) ? camelWords(m[0]) : [lower];
    if (m.index - prevEnd > 2) prev = '';
    let kind: 'strong' | 'weak' | null = null;
    const consider = (w: string): void => {
      if (STRONG.has(w)) kind = 'strong';
      else if (WEAK.has(w) && !kind) kind = 'weak';
    };
    for (const p of parts) {
      consider(p);
      if (prev) consider(prev + p);
      prev = p;
    }
    if (lower.length > 4) consider(lower.replace(GLUED, ''));
    if (kind !== 'strong' && STEMS.has(lower.slice(0, 5)))
      for (let n = 5; n < Math.min(lower.length, 25) && kind !== 'strong'; n++) if (STRONG.has(lower.slice(0, n))) kind = 'strong';
    prevEnd = m.index + m[0].length;
    if (kind) out.push({ end: prevEnd, kind });
  }
  return out;
}

/** Candidates checked in full per text: text made of names and tokens costs no more than this (one finding refuses the write). */
const MAX_CHECKED = 32;

function providerTokens(text: string): Span[] {
  const out: Span[] = [];
  let named: { end: number; kind: 'strong' | 'weak' }[] | null = null;
  let next = 0;
  let checked = 0;
  CANDIDATE.lastIndex = 0;
  for (let m = CANDIDATE.exec(text); m && checked <= MAX_CHECKED && out.length < 4; m = CANDIDATE.exec(text)) {
    const v = m[0];
    // After a word and a dot (a domain's or a file's tail), in a path or an image reference (`registry/app:tag`), in a colon chain.
    const chunk = /[^\s"'`(<[{]*$/.exec(text.slice(Math.max(0, m.index - 120), m.index))![0];
    if (/(?:^|[^A-Za-z0-9_+/-])[A-Za-z]+\.$/.test(chunk) || (/\//.test(chunk) && !/[=@]$/.test(chunk)) || /:[^:]*:$/.test(chunk)) continue;
    // Letters and digits mixed, or long and mixed-case, before any further work (words are most candidates).
    if (!(/\d/.test(v) ? /[A-Za-z]/.test(v) : v.length >= 24 && /[a-z]/.test(v) && /[A-Z]/.test(v))) continue;
    // A provider named within WINDOW characters before the value (mentions come in order, as candidates do).
    named ??= mentions(text);
    while (next < named.length && named[next]!.end < m.index - WINDOW) next++;
    const near: { end: number; kind: 'strong' | 'weak' }[] = [];
    for (let i = next; i < named.length && named[i]!.end <= m.index; i++) near.push(named[i]!);
    if (!near.length || checked++ > MAX_CHECKED || !tokenShaped(v)) continue;
    // Up to WINDOW characters back, over at most two line breaks.
    const before = text
      .slice(Math.max(0, m.index - WINDOW), m.index)
      .split('\n')
      .slice(-3)
      .join('\n');
    const inWindow = near.filter((x) => x.end > m.index - before.length);
    if (!inWindow.length) continue;
    const kind = inWindow.some((x) => x.kind === 'strong') ? 'strong' : 'weak';
    // The words before the value (random-looking runs, such as another token, are not words).
    const last = (before.match(/[A-Za-z0-9]+/g) ?? [])
      .filter((r) => !(r.length > 12 && /\d/.test(r) && /[A-Za-z]/.test(r)))
      .flatMap(camelWords)
      .slice(-6);
    const secretWord = last.some((w) => SECRET_WORDS.has(w));
    const lastWord = last.at(-1) ?? '';
    // Named as an id, a digest or something public; any other noun (`workspace`) only without a secret word near.
    if (last.slice(-3).some((w) => /^(?:u|g)?uids?$|^s?ids?$/.test(w)) || (!secretWord && NOT_SECRET_WORDS.has(lastWord))) continue;
    if (last.some((w) => /^(?:commit|sha\d*|hash|digest|checksum|public|publishable)$/.test(w)) || ID_PREFIX.test(v)) continue;
    // A key that names a record, not a credential: `file key`, `primary key`, `idempotency key`.
    if (/^(?:key|token)$/.test(lastWord) && RECORD_KEY.has(last.at(-2) ?? '')) continue;
    // A hex string or a UUID needs a secret word, unless it is the value of the provider's own name (`mailerlite: …`).
    const ownValue = kind === 'strong' && STRONG.has(lastWord) && /[:=][ \t"']*$/.test(before);
    if ((kind === 'weak' || HEXISH.test(v) || v.length < 16) && !secretWord && !ownValue) continue;
    if (v.length < 16 && (kind === 'weak' || !/\d/.test(v) || !/[A-Za-z]/.test(v))) continue;
    out.push({ start: m.index, end: m.index + v.length });
  }
  return out;
}

export const PROVIDER_CONTEXT_RULE: Rule = { id: 'provider-context', scan: providerTokens };

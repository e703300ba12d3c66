/** What the secret rules share: the shape of a rule, and the checks that tell a secret from a placeholder, a code reference or a name. */
import { readFileSync } from 'node:fs';

/** Word lists of the checks, kept with the context rules: keys published as examples in vendor documentation, name suffixes of non-secrets. */
const WORDS = JSON.parse(readFileSync(new URL('../../../rules/secrets/context.json', import.meta.url), 'utf8')) as Record<string, string[]>;

export interface Span {
  start: number;
  end: number;
}

export interface Rule {
  id: string;
  /** Lower-case substrings, one of which the text must contain for the rule to run. */
  keywords?: readonly string[];
  re?: RegExp;
  /** Capture group holding the secret value (default: the whole match). */
  group?: number;
  check?: (value: string) => boolean;
  /** Check on the whole match (the name beside the value). */
  matchCheck?: (m: RegExpExecArray) => boolean;
  /** The value, matched (sticky) right after `re` once `matchCheck` passed: a name that is not key-like costs nothing more. */
  value?: RegExp;
  /** A rule that is not one pattern: the spans of the secrets it finds. */
  scan?: (text: string) => Span[];
}

/** `judge`, told once per text (bounded): a scan meets the same names and values again and again, within a text and across fields. */
function judgedOnce(judge: (text: string) => boolean): (text: string) => boolean {
  const verdicts = new Map<string, boolean>();
  return (text) => {
    let yes = verdicts.get(text);
    if (yes === undefined) {
      if (verdicts.size >= 4096) verdicts.clear();
      verdicts.set(text, (yes = judge(text)));
    }
    return yes;
  };
}

/** An identifier's lower-case words, split at camelCase humps. */
export const camelWords = (s: string): string[] =>
  s
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(' ');

/** Shannon entropy in bits per character. */
export function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

export function classes(s: string): number {
  return [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((re) => re.test(s)).length;
}

/** The share of `v` in runs of 4+ characters each `step` (one of `steps`) from the one before: 0 repeats, 1 and -1 count. */
function runShare(v: string, steps: readonly number[]): number {
  let covered = 0;
  for (let i = 0; i < v.length;) {
    let j = i + 1;
    const step = v.charCodeAt(i + 1) - v.charCodeAt(i);
    if (steps.includes(step)) while (j < v.length && v.charCodeAt(j) - v.charCodeAt(j - 1) === step) j++;
    if (j - i >= 4) covered += j - i;
    i = j;
  }
  return covered / v.length;
}

/** Whether a matched value is a placeholder or a documented example rather than a secret. */
export function isPlaceholder(value: string): boolean {
  const v = value.trim();
  if (!v) return true;
  for (const ex of WORDS.documented_examples!) if (v.includes(ex)) return true;
  if (/^(?:\[[^\]]*\]|<[^>]*>|\$\{[^}]*\}|\{\{[^}]*\}\}|%[A-Z_]+%|\$[A-Z_][A-Z0-9_]*)$/.test(v)) return true;
  if (/[[<{]\s*[A-Za-z_][\w-]*\s*[\]>}]/.test(v) || /\$\{[^}]*\}|\{\{[^}]*\}\}/.test(v)) return true;
  if (/x{4,}|X{4,}|\*{3,}|\.{3,}|\u2026/.test(v)) return true; // \u2026: an ellipsis
  // Mostly one repeated character or a counting run: `AAAAAAAA`, `1234567890`, `abcdefgh`. (A
  // real token may start with a run, as Twitter's bearer tokens do: the rest must be random.)
  if (v.length >= 6 && (runShare(v, [0]) >= 0.6 || runShare(v, [1, -1]) >= 0.7)) return true;
  if (/example|sample|placeholder|redacted|changeme|dummy|your[-_]?(?:api[-_]?)?(?:key|token|secret|password)|not[-_]?a[-_]?real|fake|<|>/i.test(v))
    return true;
  return false;
}

/** Words that stand in for a password in documentation (`postgres://user:password@host`). */
export const PLACEHOLDER_PASSWORDS =
  /^(?:pass(?:word|wd)?|pwd|secret|changeme|admin|root|test|user(?:name)?|guest|default|mypass(?:word)?|yourpass(?:word)?|p@ssw0rd|letmein|\*+|x+)$/i;

const KEYLIKE_WHOLE =
  /^(?:api[_-]?key|apikey|api[_-]?secret|app[_-]?secret|secret(?:[_-]?key)?|client[_-]?secret|access[_-]?token|auth[_-]?token|refresh[_-]?token|bearer[_-]?token|private[_-]?key|token|passwd|password|pwd|passphrase|credentials?|creds?|auth|master[_-]?key|signing[_-]?key|encryption[_-]?key|auth[_-]?key|access[_-]?key|session[_-]?key|license[_-]?key|app[_-]?key|shared[_-]?secret|service[_-]?key|account[_-]?key|admin[_-]?key|write[_-]?key|deploy[_-]?key)$/i;

/** Last name segments that make a key-like name hold something else: `token_url`, `password_file`, `CREDENTIALS_ID`. */
const NOT_A_VALUE_SUFFIX = new Set(WORDS.not_a_value_suffix);

/** Whether a name (`client_secret`, `DB-PASSWORD`, `gitterToken`) holds a key-like part of up to four whole segments. */
export const isKeylikeName = judgedOnce((name) => {
  if (/[_.-]$/.test(name)) return false; // a name ends with a letter or digit (`password_` is not one)
  const segs = secretNameSegments(name);
  if (!segs) return false;
  // A segment that holds a password, secret or token word glued to others (`PGPASSWORD`, `dbpasswd`, `apitoken`).
  if (segs.some((s) => /pass(?:word|wd)|secret(?!ar)|token(?!i[sz])|apikey/.test(s))) return true;
  for (let i = 0; i < segs.length; i++) {
    let joined = '';
    for (const s of segs.slice(i, i + 4)) {
      joined = joined ? `${joined}_${s}` : s; // segments are never empty
      if (KEYLIKE_WHOLE.test(joined)) return true;
    }
  }
  return false;
});

/** Whether a name mentions a key word (`signing_key`, `webhookSecret`) and is not a public key's or an id's name. */
export function mentionsKeyWord(name: string): boolean {
  if (!/key|secret|token|credential|signature|passphrase|auth/i.test(name)) return false;
  return secretNameSegments(name) !== null;
}

/** A name's lower-case segments (split at `_-.` and camelCase), or null for a public key's name or one ending in an id, a path or a setting. */
function secretNameSegments(name: string): string[] | null {
  const segs = camelWords(name)
    .flatMap((w) => w.split(/[_.-]+/))
    .filter(Boolean);
  const last = segs.at(-1);
  if (last === undefined || NOT_A_VALUE_SUFFIX.has(last)) return null;
  return segs.some((s) => s === 'public' || s === 'pub' || s === 'pubkey') ? null : segs;
}

/** A reference to where a secret comes from (`process.env.X`, `config.apiKey`, `getToken()`), not a secret. */
export const isCodeReference = (v: string): boolean =>
  /^(?:process\.env|os\.environ|import\.meta\.env|ENV|env|secrets|vars|settings|config)[.[]/.test(v) ||
  /[()]/.test(v) ||
  /^\$[A-Za-z_{(]/.test(v) ||
  // A secret manager's reference (`vault:secret/db#password`, `arn:aws:secretsmanager:…`), a subscript (`sys.argv[1]`).
  /^(?:vault|ssm|secretsmanager|arn|sm|op|keyvault|gcpsm|awssm|ref|file|k8s|secret|secrets|env):/i.test(v) ||
  /^[A-Za-z_$][\w$.]*\[[^\]]*\]/.test(v) ||
  // A property chain (`settings.STRIPE_API_KEY`), not random pieces joined by dots.
  (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(v) && v.split('.').every((p) => p.length < 6 || !/\d/.test(p) || isWordLike(p.replace(/^[_$]+/, ''))));

/** A constant's or variable's name (`K8S_CRED`, `DB_PASSWORD_SECRET`), a path or a URL: not a value. */
export const isIdentifierOrPath = (v: string): boolean =>
  /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(v) || /^(?:\.{0,2}\/|~\/|[A-Za-z]:\\)/.test(v) || /^[a-z][a-z0-9+.-]*:\/\//i.test(v);

/** A value that reads as words, a name in code or a version: `mysecretpassword`, `Secret123!`, `apiKeyValue`, `v1.2.3-beta`. */
export function isWordLike(v: string): boolean {
  if ((v.match(/[A-Z]/g)?.length ?? 0) > Math.max(2, v.length / 5)) return false;
  // Deterministic pieces (each piece is the longest run of its kind: no backtracking).
  const parts = v.match(/[A-Z]?[a-z]+|[A-Z]+|\d+|[^A-Za-z\d]+/g) ?? [];
  const first = parts.findIndex((p) => /[A-Za-z]/.test(p));
  const last = parts.findLastIndex((p) => /[A-Za-z]/.test(p));
  if (first < 0 || parts.slice(0, first).join('').length > 4 || parts.slice(last + 1).join('').length > 4) return false;
  for (let i = first + 1; i < last; i++) {
    const p = parts[i]!;
    if (/^\d/.test(p) ? !/^[-_. ]$/.test(parts[i - 1]!) : !/[A-Za-z]/.test(p) && !/^[-_. ]$/.test(p)) return false;
  }
  return true;
}

const LEET: Record<string, string> = { 0: 'o', 1: 'i', '!': 'i', '|': 'i', 3: 'e', 4: 'a', '@': 'a', 5: 's', $: 's', 7: 't' };

/** A common test password, leetspeak undone (`P@ssw0rd123`, `s3cr3t!`, `Welcome1`). */
const isTestPassword = (v: string): boolean => {
  if (v.length >= 20) return false;
  const plain = v
    .toLowerCase()
    .replace(/[01!|34@5$7]/g, (c) => LEET[c]!)
    .replace(/[^a-z]+$/, '');
  return /^(?:my|your|the|super|test|dev|prod|local|default)?[-_]?(?:pas+(?:word|wd)?|secret|token|apikey|admin|root|welcome|letmein|qwerty|changeme|hunter|monkey|dragon|master|login|test|demo|sample|default)/.test(
    plain,
  );
};

/** A test value with a counting run (`abcdef123`, `12345abc`; a long value, a long run). */
const countsUp = (v: string): boolean =>
  (v.length < 20 && /(?:abcd|bcde|cdef|1234|2345|3456|4567|5678|6789|qwer|asdf)/i.test(v)) || /abcdefgh|12345678|qwertyui/i.test(v);

/** A template or a value built at run time (`%s`, `{0}`, `#{x}`, `@key@`, `$name`). */
const isTemplate = (v: string): boolean => /%\(?\w*\)?[sd]\b|\{\d*\}|#\{|^@[\w.]+@$|\$[A-Za-z_{(]/.test(v);

/** A file name or a relative path (`keys/api.pem`, `secret.json`). */
const isFileName = (v: string): boolean =>
  (/^[\w.-]+(?:\/[\w.-]+)+\/?$/.test(v) && v.split('/').every((p) => !p || isWordLike(p.replace(/\.\w{1,5}$/, '')))) ||
  /^[\w-]+\.(?:pem|key|json|txt|p12|pfx|crt|ya?ml|env|cfg|conf|ini|toml|xml|properties)$/i.test(v);

/** Base64 of prose, a placeholder, a word (`cGFzc3dvcmQ=`) or `user:password` with a placeholder password. */
const encodesNonSecret = (v: string): boolean => {
  if (v.length < 8 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(v)) return false;
  const t = decodeBase64Text(v)?.trim();
  if (!t) return false;
  const secret = /^[^\s:]+:(\S+)$/.exec(t)?.[1] ?? t;
  return /\s/.test(t) || PLACEHOLDER_PASSWORDS.test(secret) || isPlaceholder(secret) || (secret.length < 24 && isWordLike(secret));
};

/** A value beside a key-like name that looks like a credential, not a word, a reference, a name or a test value. */
export const looksLikeSecretValue = judgedOnce(
  (v) =>
    !/^(?:true|false|null|none|nil|undefined|required|optional|string|number|env|secret|password|token|bearer|basic|yes|no|on|off)$/i.test(v) &&
    !isCodeReference(v) &&
    !isIdentifierOrPath(v) &&
    !PLACEHOLDER_PASSWORDS.test(v) &&
    !isPlaceholder(v) &&
    !isTemplate(v) &&
    !isFileName(v) &&
    !countsUp(v) &&
    !isTestPassword(v) &&
    !/^v?\d+(?:\.\d+)+(?:[-+][\w.-]+)?$/.test(v) &&
    !isWordLike(v) &&
    // A digest named as such, or a value that says it is not for real use.
    !/^(?:sha(?:1|224|256|384|512)|md5|blake2b?)[:-]|insecure|do[-_]?not[-_]?use|change[-_]?(?:me|it|this|in)/i.test(v) &&
    !encodesNonSecret(v) &&
    ((v.length >= 8 && classes(v) >= 2 && !/^[a-z]+(?:[-_][a-z]+)*$/.test(v) && !/^\d+(?:\.\d+)*$/.test(v) && entropy(v) >= 2.5) ||
      (v.length >= 20 && entropy(v) >= 3.5)),
);

/** A random-looking token: long enough, several character classes, high entropy. */
export const randomToken =
  (min: number, bits = 3.5) =>
  (v: string) =>
    v.length >= min && classes(v) >= 2 && entropy(v) >= bits && !isCodeReference(v);

/** Decodes base64 (standard or URL-safe) to text; null when it is not valid base64 of printable text. */
export function decodeBase64Text(b64: string): string | null {
  const clean = b64.replace(/-/g, '+').replace(/_/g, '/');
  if (clean.length < 4 || /[^A-Za-z0-9+/=]/.test(clean)) return null;
  const text = Buffer.from(clean, 'base64').toString('utf8');
  if (!text || text.includes('\uFFFD')) return null;
  let printable = 0;
  for (const ch of text) if (/[\x20-\x7E\t\n\r]/.test(ch)) printable++;
  return printable / text.length >= 0.95 ? text : null;
}

export function decodeURIComponentSafe(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

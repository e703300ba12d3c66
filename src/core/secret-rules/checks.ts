/** What the secret rules share: a rule's shape, the checks that tell a secret from a placeholder, a reference or a name, and the named ones rules call. */
import { readFileSync } from 'node:fs';
import { memo, tryOr } from '../../try.js';

/** A data file of `rules/secrets/`: read, not imported (it sits at the package root; `import.meta.url` names this file in src/, dist/ and the bundle alike). */
export const ruleData = <T = Record<string, string[]>>(name: string): T =>
  JSON.parse(readFileSync(new URL(`../../../rules/secrets/${name}.json`, import.meta.url), 'utf8')) as T;

/** Word lists of the checks, kept with the context rules: keys published as examples in vendor documentation, name suffixes of non-secrets. */
const WORDS = ruleData('context');

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
  matchCheck?: (m: RegExpExecArray) => boolean;
  /** The value, matched (sticky) right after `re` once `matchCheck` passed: a name that is not key-like costs nothing more. */
  value?: RegExp;
  scan?: (text: string) => Span[];
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

export const classes = (s: string): number => [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((re) => re.test(s)).length;

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
  // Mostly one repeated character or a counting run (a real token may start with one, as Twitter's bearer tokens do).
  if (v.length >= 6 && (runShare(v, [0]) >= 0.6 || runShare(v, [1, -1]) >= 0.7)) return true;
  return /example|sample|placeholder|redacted|changeme|dummy|your[-_]?(?:api[-_]?)?(?:key|token|secret|password)|not[-_]?a[-_]?real|fake|<|>/i.test(v);
}

/** Words that stand in for a password in documentation (`postgres://user:password@host`). */
export const PLACEHOLDER_PASSWORDS =
  /^(?:pass(?:word|wd)?|pwd|secret|changeme|admin|root|test|user(?:name)?|guest|default|mypass(?:word)?|yourpass(?:word)?|p@ssw0rd|letmein|\*+|x+)$/i;

const KEYLIKE_WHOLE =
  /^(?:api[_-]?key|apikey|api[_-]?secret|app[_-]?secret|secret(?:[_-]?key)?|client[_-]?secret|access[_-]?token|auth[_-]?token|refresh[_-]?token|bearer[_-]?token|private[_-]?key|token|passwd|password|pwd|passphrase|credentials?|creds?|auth|master[_-]?key|signing[_-]?key|encryption[_-]?key|auth[_-]?key|access[_-]?key|session[_-]?key|license[_-]?key|app[_-]?key|shared[_-]?secret|service[_-]?key|account[_-]?key|admin[_-]?key|write[_-]?key|deploy[_-]?key)$/i;

/** Last name segments that make a key-like name hold something else: `token_url`, `password_file`, `CREDENTIALS_ID`. */
const NOT_A_VALUE_SUFFIX = new Set(WORDS.not_a_value_suffix);

/** Whether a name (`client_secret`, `DB-PASSWORD`, `gitterToken`) holds a key-like part of up to four whole segments. */
// Memoized (bounded), as is looksLikeSecretValue: a scan meets the same names and values again and again, within a text and across fields.
export const isKeylikeName = memo((name: string) => {
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
}, 4096);

/** Whether a name mentions a key word (`signing_key`, `webhookSecret`) and is not a public key's or an id's name. */
export const mentionsKeyWord = (name: string): boolean =>
  /key|secret|token|credential|signature|passphrase|auth/i.test(name) && secretNameSegments(name) !== null;

/** A name's lower-case segments (split at `_-.` and camelCase), or null for a public key's name or one ending in an id, a path or a setting. */
function secretNameSegments(name: string): string[] | null {
  const segs = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .split(/[_.-]+/)
    .filter(Boolean)
    .map((s) => s.toLowerCase());
  const last = segs.at(-1);
  return last === undefined || NOT_A_VALUE_SUFFIX.has(last) || segs.some((s) => s === 'public' || s === 'pub' || s === 'pubkey') ? null : segs;
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
export const looksLikeSecretValue = memo(
  (v: string) =>
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
  4096,
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

export const decodeURIComponentSafe = (v: string): string => tryOr(() => decodeURIComponent(v), v);

/** A password as written beside a user name: not a placeholder, a variable or the user name again. */
const realPassword = (v: string, user = ''): boolean =>
  v.length >= 3 &&
  v !== user &&
  !PLACEHOLDER_PASSWORDS.test(v) &&
  !isPlaceholder(v) &&
  !/^(?:\$|%[sd(]|\{\d*\}|#\{|@[A-Za-z_]|\*+$)/.test(v) &&
  !/^(?:pass(?:word)?|secret|test|changeit|hunter2|foobar|qwerty|123456?|admin123|pa\$\$w0rd)\d{0,3}$/i.test(v);

function jsonObject(b64url: string): Record<string, unknown> | null {
  const v = tryOr<unknown>(() => JSON.parse(Buffer.from(b64url, 'base64url').toString('utf8')), null);
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

/** A JWT (or JWE): a header that decodes to JSON naming its algorithm, then a payload. */
function isJwt(v: string): boolean {
  const [header = '', payload = ''] = v.split('.');
  const h = jsonObject(header);
  if (!h || (typeof h.alg !== 'string' && typeof h.enc !== 'string')) return false;
  return jsonObject(payload) !== null || payload.length >= 16;
}

/** Values of a YAML `kind: Secret`'s `data:` (base64) and `stringData:` blocks, line by line. */
function yamlSecretData(text: string): Span[] {
  const out: Span[] = [];
  let block: 'data' | 'stringData' | null = null;
  let blockIndent = -1;
  let at = 0;
  for (const line of text.split('\n')) {
    const start = at;
    at += line.length + 1;
    const indent = line.length - line.trimStart().length;
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#')) continue;
    const head = /^(data|stringData):\s*$/.exec(trimmed);
    if (head) {
      block = head[1] as 'data' | 'stringData';
      blockIndent = indent;
      continue;
    }
    if (block && indent <= blockIndent) block = null;
    if (!block) continue;
    const [, key, value] = /^([\w.-]{1,253}):\s*["']?([^\s"']{1,10000})["']?\s*$/.exec(trimmed) ?? [];
    if (key === undefined || value === undefined || !secretDataValue(block, value)) continue;
    const s = start + line.indexOf(value, indent + key.length);
    out.push({ start: s, end: s + value.length });
  }
  return out;
}

/** A Secret's value: base64 (`data`) of something other than a placeholder, a short name or a (public) certificate, or a plain value that looks like one. */
function secretDataValue(block: string, value: string): boolean {
  if (isPlaceholder(value)) return false;
  if (block !== 'data') return value.length >= 6 && looksLikeSecretValue(value);
  if (!/^[A-Za-z0-9+/]{4,}={0,2}$/.test(value)) return false;
  const text = decodeBase64Text(value);
  if (text === null) return value.length >= 16; // binary: a key
  const t = text.trim();
  return t.length >= 6 && !PLACEHOLDER_PASSWORDS.test(t) && !isPlaceholder(t) && !/^-----BEGIN (?:CERTIFICATE|PUBLIC KEY)/.test(t);
}

/** A Secret written as JSON: the values of its `"data"` object. */
function jsonSecretData(text: string): Span[] {
  const out: Span[] = [];
  const block = /"(data|stringData)"\s*:\s*\{([^{}]{0,8000})\}/g;
  for (let b = block.exec(text); b; b = block.exec(text)) {
    const entry = /"[\w.-]{1,253}"\s*:\s*"([^"\\]{1,8000})"/g;
    const bodyAt = b.index + b[0].indexOf('{') + 1;
    for (let e = entry.exec(b[2]!); e; e = entry.exec(b[2]!)) {
      if (!secretDataValue(b[1]!, e[1]!)) continue;
      const start = bodyAt + e.index + e[0].lastIndexOf(e[1]!);
      out.push({ start, end: start + e[1]!.length });
    }
  }
  return out;
}

const kubernetesSecretData = (text: string): Span[] =>
  /\bkind:\s*["']?Secret\b/.test(text) ? yamlSecretData(text) : /"kind"\s*:\s*"Secret"/.test(text) ? jsonSecretData(text) : [];

/** Base64 of `user:password` with a real-looking password (Basic auth, docker's `auth`). */
const encodesUserPassword = (v: string): boolean => {
  const [, user, password] = /^([^\s:]{1,128}):(\S{3,256})$/.exec(decodeBase64Text(v)?.trim() ?? '') ?? [];
  return password !== undefined && !PLACEHOLDER_PASSWORDS.test(password) && !isPlaceholder(password) && password !== user;
};

/** Basic authorization: `user:password` inside, or (not text) a random key. */
const basicValue = (v: string): boolean => {
  const text = decodeBase64Text(v);
  return encodesUserPassword(v) || (text === null ? randomToken(16, 3.5)(v) : !text.includes(':') && randomToken(16, 3.5)(text));
};

/** Named checks on a value (the words of a rule's `check`). */
export const CHECKS: Record<string, (v: string) => boolean> = {
  digit: (v) => /\d/.test(v),
  mixed: (v) => /[a-z]/.test(v) && /[A-Z]/.test(v) && /\d/.test(v),
  random: (v) => [/[a-z]/, /[A-Z]/, /\d/].filter((re) => re.test(v)).length >= 2,
  any: () => true,
  'b64-id-colon': (v) => /^\d{12}:/.test(Buffer.from(v, 'base64').toString('latin1')),
  jwt: isJwt,
  password: (v) => realPassword(v),
  'connection-password': (v) => realPassword(v) && !isCodeReference(v) && !isWordLike(v),
  authorization: (v) => !isCodeReference(v) && (classes(v) >= 2 || v.length >= 32) && entropy(v) >= 3.2,
  basic: basicValue,
  'docker-auth': (v) => encodesUserPassword(v) || (!/^[A-Za-z0-9+/]+=*$/.test(v) || decodeBase64Text(v) === null ? randomToken(16, 3.5)(v) : false),
  'npmrc-auth': (v) => {
    const t = decodeBase64Text(v);
    return t !== null && realPassword(t.includes(':') ? t.slice(t.indexOf(':') + 1) : t);
  },
  'secret-value': looksLikeSecretValue,
  'prose-value': (v) => looksLikeSecretValue(v.replace(/[.,;:!?)]+$/, '')),
  'url-token': (v) => randomToken(16, 3.5)(decodeURIComponentSafe(v)),
  'keylike-value': (v) => classes(v) >= 2 && !isCodeReference(v) && !isIdentifierOrPath(v) && looksLikeSecretValue(v),
};

/** Named checks on the whole match (a rule's `match`). */
export const MATCHES: Record<string, (m: RegExpExecArray) => boolean> = {
  // A PEM private key's BEGIN line with a body (an empty BEGIN/END pair in documentation is not one; the body may sit in a
  // JSON string with `\n` line breaks; header lines such as `Proc-Type: …` are skipped).
  'pem-body': (m) => {
    const end = m.index + m[0].length;
    const [body = ''] = m.input
      .slice(end, end + 600)
      .replace(/\\[nr]/g, '\n')
      .split('-----');
    return /^[A-Za-z0-9+/=]{16,}/.test(
      body
        .split('\n')
        .filter((l) => !l.includes(': '))
        .join('')
        .replace(/\s/g, ''),
    );
  },
  'url-password': (m) => realPassword(decodeURIComponentSafe(m[2] ?? ''), m[1]),
  // A name inside a colon-separated chain (`arn:aws:secretsmanager:…:secret:prod/db`) is not assigned anything.
  'keylike-assignment': (m) => isKeylikeName(m[1] ?? '') && !(m.input[m.index - 1] === ':' && !m[0].slice(m[1]!.length).includes('=')),
  'mentions-key-word': (m) => mentionsKeyWord(m[1] ?? ''),
};

/** Named checks on a pair (a rule's `pairs`): a name or user, then a value or password (empty: the first is the secret). */
export const PAIRS: Record<string, (first: string, value: string) => boolean> = {
  // A `prefix:` before the name is left out.
  keyed: (name, value) => isKeylikeName(name.replace(/^.*:/, '')) && looksLikeSecretValue(value),
  'url-parameter': (a, b) => (b ? realPassword(b, a) : realPassword(a)),
  'user-password': (user, password) => realPassword(password, user),
  // An API key as the user with no password counts too.
  'curl-user': (user, password) => (password ? realPassword(password, user) : randomToken(16, 3.5)(user)),
};

/** The spans of a pattern whose alternatives each capture a pair (the groups an alternative did not reach are skipped) where `ok` holds. */
export function pairSpans(re: RegExp, text: string, ok: (first: string, value: string) => boolean): Span[] {
  const out: Span[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const [first = '', second = ''] = m.slice(1).filter((g) => g !== undefined);
    if (!ok(first, second)) continue;
    const value = second || first;
    const start = m.index + m[0].lastIndexOf(value);
    out.push({ start, end: start + value.length });
  }
  return out;
}

/** Rules that are not one pattern (a rule's `scan`). */
export const SCANS: Record<string, (text: string) => Span[]> = { 'kubernetes-secret-data': kubernetesSecretData };

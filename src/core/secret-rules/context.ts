/**
 * The code half of the context rules (rules/secrets/context.json, described in docs/secrets.md): the named checks, match
 * checks, pair checks and scans that its rules call, for what a pattern alone cannot tell.
 */
import {
  PLACEHOLDER_PASSWORDS,
  classes,
  decodeBase64Text,
  decodeURIComponentSafe,
  entropy,
  isCodeReference,
  isIdentifierOrPath,
  isKeylikeName,
  isPlaceholder,
  isWordLike,
  looksLikeSecretValue,
  mentionsKeyWord,
  randomToken,
  type Span,
} from './checks.js';

/** PEM private keys with a body (an empty BEGIN/END pair in documentation is not one), which may sit in a JSON string with `\n` line breaks. */
function pemPrivateKeys(text: string): Span[] {
  const out: Span[] = [];
  const begin = /-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----/g;
  for (let m = begin.exec(text); m; m = begin.exec(text)) {
    const after = text.slice(m.index + m[0].length, m.index + m[0].length + 600).replace(/\\[nr]/g, '\n');
    const [body = ''] = after.split('-----');
    const base64 = body
      .split('\n')
      .filter((l) => !l.includes(': '))
      .join('')
      .replace(/\s/g, '');
    if (/^[A-Za-z0-9+/=]{16,}/.test(base64)) out.push({ start: m.index, end: m.index + m[0].length });
  }
  return out;
}

/** A password as written beside a user name: not a placeholder, a variable or the user name again. */
const realPassword = (v: string, user = ''): boolean =>
  v.length >= 3 &&
  v !== user &&
  !PLACEHOLDER_PASSWORDS.test(v) &&
  !isPlaceholder(v) &&
  !/^(?:\$|%[sd(]|\{\d*\}|#\{|@[A-Za-z_]|\*+$)/.test(v) &&
  !/^(?:pass(?:word)?|secret|test|changeit|hunter2|foobar|qwerty|123456?|admin123|pa\$\$w0rd)\d{0,3}$/i.test(v);

function jsonObject(b64url: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(Buffer.from(b64url, 'base64url').toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
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
export const SCANS: Record<string, (text: string) => Span[]> = { 'pem-private-keys': pemPrivateKeys, 'kubernetes-secret-data': kubernetesSecretData };

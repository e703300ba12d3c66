/**
 * Secret rules that know a key by its shape, whoever issued it (JWTs, PEM private keys and their
 * bare bodies, age and 1Password keys), then those that read a credential's structure: JWTs (the
 * header decoded), passwords in URLs and connection strings, Basic authorization (decoded to
 * `user:password`), `curl -u`, .netrc, .npmrc, docker's config.json and Kubernetes Secrets.
 */
import {
  PLACEHOLDER_PASSWORDS,
  classes,
  entropy,
  decodeBase64Text,
  decodeURIComponentSafe,
  encodesUserPassword,
  isCodeReference,
  isPlaceholder,
  isWordLike,
  looksLikeSecretValue,
  pairSpans,
  randomToken,
  type Rule,
  type Span,
} from './checks.js';

/**
 * PEM private keys with a body: an empty BEGIN/END pair in documentation is not a key. The body
 * may sit in a JSON string (a service account file), its line breaks written as `\n`; header
 * lines (`Proc-Type: …`) are skipped.
 */
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
export const realPassword = (v: string, user = ''): boolean =>
  v.length >= 3 &&
  v !== user &&
  !PLACEHOLDER_PASSWORDS.test(v) &&
  !isPlaceholder(v) &&
  !/^(?:\$|%[sd(]|\{\d*\}|#\{|@[A-Za-z_]|\*+$)/.test(v) &&
  !/^(?:pass(?:word)?|secret|test|changeit|hunter2|foobar|qwerty|123456?|admin123|pa\$\$w0rd)\d{0,3}$/i.test(v);

/** A JSON object, or null. */
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

/** `curl -u user:password`, `--user=…`, `-uuser:…`, `--proxy-user`, httpie's `-a`; an API key as the user with no password counts too. */
const curlUser = pairSpans(
  /\b(?:curl|https?|wget)\b[^\n]{0,300}?[ \t](?:-u|-U|--user|--proxy-user|-a|--auth)(?:[ \t]*=?[ \t]*)["']?([^\s"':]{0,128}):([^\s"']{0,256})/g,
  (user, password) => (password ? realPassword(password, user) : randomToken(16, 3.5)(user)),
);

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

/**
 * A Secret's value: base64 (`data`) that decodes to something other than a placeholder, a
 * short name or a certificate (public), or a plain value (`stringData`) that looks like one.
 */
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

/** Basic authorization: `user:password` inside, or (not text) a random key. */
const basicValue = (v: string): boolean => {
  const text = decodeBase64Text(v);
  return encodesUserPassword(v) || (text === null ? randomToken(16, 3.5)(v) : !text.includes(':') && randomToken(16, 3.5)(text));
};

export const STRUCTURED_RULES: readonly Rule[] = [
  { id: 'jwt', keywords: ['eyj'], re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { id: 'private-key', keywords: ['private key'], scan: pemPrivateKeys },
  {
    // The base64 body of a private key without its BEGIN line: DER of PKCS#1 RSA, PKCS#8, SEC1 EC, Ed25519.
    id: 'private-key-body',
    keywords: ['mii', 'mhcc', 'mc4c', 'mig'],
    re: /\b(?:MII[A-Za-z0-9+/]{2}(?:IBAAK|AIBAAK|IBADAN|gIBADAN)|MIG[A-Za-z0-9+/]IBADAT|MHcCAQEE|MC4CAQAwBQYDK2Vw)[A-Za-z0-9+/]{24,}/g,
  },
  { id: 'age-secret-key', keywords: ['age-secret-key-1'], re: /\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b/g },
  { id: 'onepassword-token', keywords: ['ops_eyj'], re: /\bops_eyJ[A-Za-z0-9+/=_-]{200,}/g },
  {
    id: 'json-web-token',
    keywords: ['eyj', 'eyai', 'ewo', 'ew0k'],
    re: /(?<![A-Za-z0-9_-])(?:eyJ|eyAi|ewo|ew0K)[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{2,8192}\.[A-Za-z0-9_-]{0,4096}(?:\.[A-Za-z0-9_-]{2,8192}\.[A-Za-z0-9_-]{2,4096})?/g,
    check: isJwt,
  },
  {
    // scheme://user:password@host, any scheme (databases, brokers, registries, URLs with basic auth); the user may be empty.
    id: 'credentials-in-url',
    keywords: ['://'],
    re: /\b[a-z][a-z0-9+.:-]{1,30}:\/\/([^\s/:@'"<>]{0,256}):([^\s/@'"<>]{1,256})@[^\s/'"@]/gi,
    group: 2,
    matchCheck: (m) => realPassword(decodeURIComponentSafe(m[2] ?? ''), m[1]),
  },
  {
    // A password in a JDBC or ODBC URL's parameters, or Oracle's `user/password@host`.
    id: 'password-in-url-parameters',
    keywords: ['jdbc:', 'password=', 'pwd='],
    scan: pairSpans(/[?&;](?:password|passwd|pwd)=([^&\s;"'#]{3,256})|\bjdbc:oracle:[a-z]+:([\w.$-]{1,64})\/([^@\s'"]{3,128})@/gi, (a, b) =>
      b ? realPassword(b, a) : realPassword(a),
    ),
  },
  {
    // Password=...; in connection strings (ADO.NET, JDBC properties, ODBC).
    id: 'password-in-connection-string',
    keywords: ['password', 'pwd'],
    re: /\b(?:Password|Pwd)\s*=\s*([^;'"\s]{4,256})/gi,
    group: 1,
    check: (v) => realPassword(v) && !isCodeReference(v) && !isWordLike(v),
  },
  {
    // Authorization: Bearer|Token|SSWS|Api-Key|… <token> (any scheme, or none), in headers, curl -H, code and config.
    id: 'authorization-header',
    keywords: ['bearer', 'authorization'],
    re: /(?:\bauthorization["']?[ \t]*[:=,][ \t]*["']?[ \t]*(?:(?!basic\b)[A-Za-z][\w-]{0,30}[ \t]+)?|\bbearer[ \t]+)([A-Za-z0-9._~+/-]{16,4096}={0,2})/gi,
    group: 1,
    check: (v) => !isCodeReference(v) && (classes(v) >= 2 || v.length >= 32) && entropy(v) >= 3.2,
  },
  {
    // Authorization: Basic <base64>, any spelling (headers, curl -H, HTTP dumps, code).
    id: 'basic-auth',
    keywords: ['basic'],
    re: /\bbasic\s+([A-Za-z0-9+/]{6,4096}={0,2})(?![A-Za-z0-9+/=])/gi,
    group: 1,
    check: basicValue,
  },
  {
    // Basic auth in code: HTTPBasicAuth("u", "p"), auth=("u", "p"), btoa("u:p"), b64encode(b"u:p").
    id: 'basic-auth-in-code',
    keywords: ['auth', 'btoa', 'encode', 'base64'],
    scan: pairSpans(
      /\b(?:[A-Za-z_]*basic_?auth|auth|credentials)\s*[=(:]\s*[([]?\s*["']([^"'\s]{1,128})["']\s*,\s*["']([^"'\s]{1,256})["']|\b(?:btoa|b64encode|encode64|strict_encode64|base64_encode|encodeToString)\s*\(\s*b?["']([^"':\s]{1,128}):([^"'\s]{1,256})["']|\b(?:echo|printf)[ \t]+(?:-n[ \t]+)?["']?([^\s"':]{1,128}):([^\s"']{1,256}?)["']?[ \t]*\|[ \t]*base64/gi,
      (user, password) => realPassword(password, user),
    ),
  },
  { id: 'curl-user-password', keywords: ['curl', 'http', 'wget'], scan: curlUser },
  {
    // docker's config.json: "auth" (base64 of user:password), "identitytoken", "registrytoken"; also inside an escaped JSON string.
    id: 'docker-config-auth',
    keywords: ['auth', 'token"', 'token\\"'],
    re: /\\?"(?:auth|identitytoken|registrytoken)\\?"\s*:\s*\\?"([A-Za-z0-9+/_.=-]{6,4096})\\?"/gi,
    group: 1,
    check: (v) => encodesUserPassword(v) || (!/^[A-Za-z0-9+/]+=*$/.test(v) || decodeBase64Text(v) === null ? randomToken(16, 3.5)(v) : false),
  },
  {
    // .netrc: machine <host> login <user> password <password> (on one line or several).
    id: 'netrc-password',
    keywords: ['machine', 'default'],
    re: /\b(?:machine[ \t]+[^\s]{1,253}|default)\s+(?:login[ \t]+([^\s]{1,128})\s+)?password[ \t]+([^\s]{1,256})/g,
    group: 2,
    check: (v) => realPassword(v),
  },
  {
    // .npmrc: _auth (base64 of user:password) and _password (base64).
    id: 'npmrc-auth',
    keywords: ['_auth', '_password'],
    re: /(?<![A-Za-z0-9])_(?:auth|password)[ \t]*=[ \t]*["']?([A-Za-z0-9+/]{8,4096}={0,2})/g,
    group: 1,
    check: (v) => {
      const t = decodeBase64Text(v);
      return t !== null && realPassword(t.includes(':') ? t.slice(t.indexOf(':') + 1) : t);
    },
  },
  { id: 'kubernetes-secret-data', keywords: ['secret'], scan: kubernetesSecretData },
];

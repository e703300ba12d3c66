/**
 * Secret rules that find a credential by its context: URLs with a password, connection strings, Authorization headers, curl, Kubernetes Secrets, key-like names beside values, prose and URL queries.
 */
import {
  PLACEHOLDER_PASSWORDS,
  classes,
  decodeURIComponentSafe,
  encodesUserPassword,
  entropy,
  isCodeReference,
  isIdentifierOrPath,
  isKeylikeName,
  isPlaceholder,
  looksLikeSecretValue,
  mentionsKeyWord,
  randomToken,
  type Rule,
  type Span,
} from './checks.js';

/**
 * Values of a Kubernetes `kind: Secret`: every entry under `data:` (base64) and `stringData:`.
 * Found line by line (YAML block indentation), linear in the text.
 */
function kubernetesSecretData(text: string): Span[] {
  if (!/\bkind:\s*["']?Secret\b/.test(text)) return [];
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
    if (key === undefined || value === undefined || isPlaceholder(value)) continue;
    if (block === 'data' ? value.length >= 4 && /^[A-Za-z0-9+/]+={0,2}$/.test(value) : value.length >= 6 && looksLikeSecretValue(value)) {
      const s = start + line.indexOf(value, indent + key.length);
      out.push({ start: s, end: s + value.length });
    }
  }
  return out;
}

export const CONTEXT_RULES: readonly Rule[] = [
  {
    // scheme://user:password@host (databases, brokers, URLs with basic auth).
    id: 'credentials-in-url',
    keywords: ['://'],
    re: /\b[a-z][a-z0-9+.-]{1,20}:\/\/[^\s/:@'"]{1,256}:([^\s/@'"]{1,256})@[^\s/'"]/gi,
    group: 1,
    check: (v) => v.length >= 3 && !PLACEHOLDER_PASSWORDS.test(v),
  },
  {
    // Password=...; in connection strings (ADO.NET, JDBC properties).
    id: 'password-in-connection-string',
    keywords: ['password', 'pwd'],
    re: /\b(?:Password|Pwd)\s*=\s*([^;'"\s]{4,256})/gi,
    group: 1,
    check: (v) => !PLACEHOLDER_PASSWORDS.test(v) && !isCodeReference(v),
  },
  {
    // Authorization: Bearer|Token <token>, in headers, curl -H, code and config.
    id: 'authorization-header',
    keywords: ['bearer', 'token ', 'authorization'],
    re: /\b(?:authorization["']?\s*[:=,]\s*["']?\s*(?:bearer|token)|bearer)\s+([A-Za-z0-9._~+/-]{16,4096}={0,2})/gi,
    group: 1,
    check: (v) => !isCodeReference(v) && (classes(v) >= 2 || v.length >= 32) && entropy(v) >= 3.2,
  },
  {
    // Authorization: Basic <base64 of user:password>.
    id: 'basic-auth',
    keywords: ['basic'],
    re: /\bbasic\s+([A-Za-z0-9+/]{6,4096}={0,2})(?![A-Za-z0-9+/=])/gi,
    group: 1,
    check: encodesUserPassword,
  },
  // Docker's config.json: "auth": "<base64 of user:password>".
  { id: 'docker-config-auth', keywords: ['auth'], re: /"auth"\s*:\s*"([A-Za-z0-9+/]{6,4096}={0,2})"/g, group: 1, check: encodesUserPassword },
  {
    // curl -u user:password / --user user:password (same line).
    id: 'curl-user-password',
    keywords: ['curl'],
    re: /\bcurl\b[^\n]{0,300}?\s(?:-u|--user)(?:\s+|=)["']?[^\s"':]{1,128}:([^\s"']{3,256})/g,
    group: 1,
    check: (v) => !PLACEHOLDER_PASSWORDS.test(v) && !/^\$/.test(v),
  },
  { id: 'kubernetes-secret-data', keywords: ['secret'], scan: kubernetesSecretData },
  {
    // password = "...", api_key: ..., client_secret=..., export TOKEN=..., gitterToken := ...,
    // FOO_TOKEN ?= ..., `github token - 'value'`.
    id: 'secret-assignment',
    keywords: ['key', 'secret', 'token', 'pass', 'pwd', 'credential', 'auth'],
    // NOTE: the name is matched as one run of name characters that starts at a boundary, and its
    // key-like part is found in JS (isKeylikeName): a pattern that let the engine choose where
    // the key-like part sits backtracked super-linearly on long runs of name characters and
    // could hang every writer behind the lock.
    re: /(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{1,200})["']?[ \t]*(?:::=|:=|\?=|=>|[:=]|-(?=[ \t]))[ \t]*["'`]?/g,
    matchCheck: (m) => isKeylikeName(m[1] ?? ''),
    value: /[^\s"'`,;]{6,4096}/y,
    check: looksLikeSecretValue,
  },
  {
    // Prose: "the password is Zq8v…", "api key was …".
    id: 'secret-in-prose',
    keywords: ['password', 'passphrase', 'secret', 'token', 'api key'],
    re: /\b(?:password|passphrase|passwd|secret|token|api key|access key)\s+(?:is|was|=|:|of)\s+["'`]?([^\s"'`]{8,256})/gi,
    group: 1,
    check: (v) => looksLikeSecretValue(v.replace(/[.,;:!?)]+$/, '')) && entropy(v) >= 3,
  },
  {
    // A session, code or signature in a URL's query (evidence links copied from a browser).
    id: 'secret-in-url-query',
    keywords: ['?', '&'],
    re: /[?&](?:session(?:_?id)?|sid|code|token|access_token|id_token|refresh_token|auth|key|api_?key|signature|sig|secret|password|x-amz-signature|x-amz-security-token)=([^&\s#"']{16,2048})/gi,
    group: 1,
    check: (v) => randomToken(16, 3.5)(decodeURIComponentSafe(v)),
  },
  {
    // A long, random-looking value beside a name that mentions a key, secret, token, signature, ...
    // (same line; not a public key, not an id or a path of one).
    id: 'high-entropy-keylike',
    keywords: ['key', 'secret', 'token', 'credential', 'signature', 'passphrase', 'auth'],
    re: /(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{1,80})["']?[ \t]*[:=][ \t]*["']?([A-Za-z0-9+/_=.-]{20,4096})/g,
    matchCheck: (m) => mentionsKeyWord(m[1] ?? ''),
    group: 2,
    check: (v) => entropy(v) >= 3.7 && classes(v) >= 2 && !isCodeReference(v) && !isIdentifierOrPath(v),
  },
];

/**
 * Secret rules that find a credential by its context: a key-like name beside a value (in the
 * assignment, call, element and flag syntaxes of many languages and config formats), prose,
 * URL queries; then the structured credentials (structured.ts) and a provider's name near a
 * token (provider-context.ts).
 */
import {
  classes,
  decodeURIComponentSafe,
  entropy,
  isCodeReference,
  isIdentifierOrPath,
  isKeylikeName,
  looksLikeSecretValue,
  mentionsKeyWord,
  pairSpans,
  randomToken,
  type Rule,
} from './checks.js';
import { PROVIDER_CONTEXT_RULES } from './provider-context.js';
import { STRUCTURED_RULES } from './structured.js';

const KEY_WORDS = ['key', 'secret', 'token', 'pass', 'pwd', 'cred', 'auth'];

/** Values beside key-like names (a `prefix:` before the name is left out). */
const keyedValues = (re: RegExp) => pairSpans(re, (name, value) => isKeylikeName(name.replace(/^.*:/, '')) && looksLikeSecretValue(value));

export const CONTEXT_RULES: readonly Rule[] = [
  ...STRUCTURED_RULES,
  {
    // password = "...", api_key: ..., client_secret=..., export TOKEN=..., gitterToken := ...,
    // FOO_TOKEN ?= ..., `github token - 'value'`, typed declarations (`apiKey: string = …`,
    // `var apiToken string = …`, `const API_KEY: &str = …`), subscripts (`ENV["API_KEY"] = …`).
    id: 'secret-assignment',
    keywords: KEY_WORDS,
    // NOTE: the name is matched as one run of name characters that starts at a boundary, and its
    // key-like part is found in JS (isKeylikeName): a pattern that let the engine choose where
    // the key-like part sits backtracked super-linearly on long runs of name characters and
    // could hang every writer behind the lock.
    re: /(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{1,200})\\?["']?\]?(?:[ \t]*:[ \t]*&?(?:'static[ \t]+)?[A-Za-z][\w.<>?]{0,30}(?=[ \t]*=[^=>])|[ \t]+(?:string|String|str)\b)?[ \t]*(?:::=|:=|\?=|=>|->|\|\||\?\?|===?|!==?|<-|[:=]|-(?=[ \t]))[ \t]*(?:@|[bfrBFR]{1,2}(?=["']))?\\?["'`]?/g,
    // A name inside a colon-separated chain (`arn:aws:secretsmanager:…:secret:prod/db`) is not assigned anything.
    matchCheck: (m) => isKeylikeName(m[1] ?? '') && !(m.input[m.index - 1] === ':' && !m[0].slice(m[1]!.length).includes('=')),
    value: /[^\s"'`,;)\\]{6,4096}/y,
    check: looksLikeSecretValue,
  },
  {
    // The other places a name meets its value: call arguments (`setenv("API_KEY", "…")`,
    // `define('DB_PASSWORD', '…')`), XML elements (`<apiKey>…</apiKey>`) and `key="…" value="…"`
    // attributes and `<entry key="…">…</entry>`, command-line flags (`--api-key …`), Dockerfile
    // `ENV NAME value`, `setx NAME value`, C's `#define NAME "…"`, Clojure's `:api-key "…"`.
    id: 'secret-keyed-value',
    keywords: KEY_WORDS,
    scan: keyedValues(
      /["']([A-Za-z0-9_.-]{1,80})["'][ \t]*,[ \t]*["'`]([^"'`\s]{6,4096})["'`]|<([A-Za-z_][\w.:-]{0,80})>[ \t]*([^<\s]{6,4096})[ \t]*<\/|\b(?:key|name)[ \t]*=[ \t]*["']([\w.:-]{1,80})["'][ \t]+value[ \t]*=[ \t]*["']([^"'\s]{6,4096})["']|(?<![\w-])--([A-Za-z][\w-]{1,60})[ \t]+["']?([^\s"'-][^\s"']{5,4095})|(?:\b(?:ENV|ARG|setx|set -x)|#define)[ \t]+([A-Za-z_][\w.-]{0,80})[ \t]+["']?([^\s"'=]{6,4096})|\b(?:key|name)=["']([\w.:-]{1,80})["'][^<>]{0,100}>[ \t]*([^<\s]{6,4096})[ \t]*<|(?<![\w:]):([A-Za-z][\w-]{0,80})[ \t]+"([^"\s]{6,4096})"/g,
    ),
  },
  {
    // Prose: "the password is Zq8v…", "api key was …".
    id: 'secret-in-prose',
    keywords: ['password', 'passphrase', 'secret', 'token', 'api key'],
    re: /\b(?:password|passphrase|passwd|secret|token|api key|access key|secret key|access token|auth token)(?:[ \t]*[:=][ \t]*|\s+(?:is|was|=|:|of)\s+)["'`]?([^\s"'`]{8,256})/gi,
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
    check: (v) => entropy(v) >= 3.7 && classes(v) >= 2 && !isCodeReference(v) && !isIdentifierOrPath(v) && looksLikeSecretValue(v),
  },
  ...PROVIDER_CONTEXT_RULES,
];

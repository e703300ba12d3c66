/**
 * The rule catalogue of the secret scan (src/core/secrets.ts runs it): provider token formats as
 * their vendors and the major scanners document them (the formats are facts; the patterns are
 * ours), context rules (Authorization headers, curl credentials, Kubernetes Secrets, connection
 * strings, key-like names beside values) and the checks that tell a secret from a placeholder, a
 * code reference or an identifier.
 *
 * Every pattern runs in linear time: no nested unbounded repeats, bounded gaps only. A rule with
 * `keywords` runs only on text that contains one of them (lower-cased), so most rules cost one
 * substring search per field.
 */

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
  /** Extra check on the value (entropy, character classes). */
  check?: (value: string) => boolean;
  /** Extra check on the whole match (the name beside the value). */
  matchCheck?: (m: RegExpExecArray) => boolean;
  /**
   * The value, matched right after `re` (a sticky pattern) once `matchCheck` passed: `re` then
   * matches only the name and the operator, so a name that is not key-like costs nothing more.
   */
  value?: RegExp;
  /** A rule that is not one pattern: the spans of the secrets it finds. */
  scan?: (text: string) => Span[];
}

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

/** Keys published in vendor documentation as examples; never real. */
const DOCUMENTED_EXAMPLES = [
  'AKIAIOSFODNN7EXAMPLE',
  'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  'sk_test_4eC39HqLyjWDarjtT1zdp7dc',
  'sk_test_BQokikJOvBiI2HlWgH4olfQ2',
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
];

/** How much of `v` is covered by runs of one repeated character (4 or more). */
function repeatedShare(v: string): number {
  let covered = 0;
  for (let i = 0; i < v.length;) {
    let j = i + 1;
    while (j < v.length && v[j] === v[i]) j++;
    if (j - i >= 4) covered += j - i;
    i = j;
  }
  return covered / v.length;
}

/** How much of `v` is covered by ascending or descending runs (`123456`, `abcdef`, `fedcba`) of 4 or more. */
function sequentialShare(v: string): number {
  let covered = 0;
  for (let i = 0; i < v.length;) {
    let j = i + 1;
    const step = v.charCodeAt(i + 1) - v.charCodeAt(i);
    if (step === 1 || step === -1) while (j < v.length && v.charCodeAt(j) - v.charCodeAt(j - 1) === step) j++;
    if (j - i >= 4) covered += j - i;
    i = j;
  }
  return covered / v.length;
}

/** Whether a matched value is a placeholder or a documented example rather than a secret. */
export function isPlaceholder(value: string): boolean {
  const v = value.trim();
  if (!v) return true;
  for (const ex of DOCUMENTED_EXAMPLES) if (v.includes(ex)) return true;
  if (/^(?:\[[^\]]*\]|<[^>]*>|\$\{[^}]*\}|\{\{[^}]*\}\}|%[A-Z_]+%|\$[A-Z_][A-Z0-9_]*)$/.test(v)) return true;
  if (/[[<{]\s*[A-Za-z_][\w-]*\s*[\]>}]/.test(v) || /\$\{[^}]*\}|\{\{[^}]*\}\}/.test(v)) return true;
  if (/x{4,}|X{4,}|\*{3,}|\.{3,}|\u2026/.test(v)) return true; // \u2026: an ellipsis
  // Mostly one repeated character or a counting run: `AAAAAAAA`, `1234567890`, `abcdefgh`. (A
  // real token may start with a run, as Twitter's bearer tokens do: the rest must be random.)
  if (v.length >= 6 && (repeatedShare(v) >= 0.6 || sequentialShare(v) >= 0.7)) return true;
  if (/example|sample|placeholder|redacted|changeme|dummy|your[-_]?(?:api[-_]?)?(?:key|token|secret|password)|not[-_]?a[-_]?real|fake|<|>/i.test(v))
    return true;
  return false;
}

/** Words that stand in for a password in documentation (`postgres://user:password@host`). */
const PLACEHOLDER_PASSWORDS =
  /^(?:pass(?:word|wd)?|pwd|secret|changeme|admin|root|test|user(?:name)?|guest|default|mypass(?:word)?|yourpass(?:word)?|p@ssw0rd|letmein|\*+|x+)$/i;

const KEYLIKE =
  '(?:api[_-]?key|apikey|api[_-]?secret|app[_-]?secret|secret(?:[_-]?key)?|client[_-]?secret|access[_-]?token|auth[_-]?token|refresh[_-]?token|bearer[_-]?token|private[_-]?key|token|passwd|password|pwd|passphrase|credentials?|master[_-]?key|signing[_-]?key|encryption[_-]?key)';

const KEYLIKE_WHOLE = new RegExp(`^${KEYLIKE}$`, 'i');

/** Last name segments that make a key-like name hold something else: `token_url`, `password_file`, `CREDENTIALS_ID`. */
const NOT_A_VALUE_SUFFIX = new Set([
  'id',
  'ids',
  'name',
  'names',
  'file',
  'files',
  'path',
  'dir',
  'url',
  'uri',
  'endpoint',
  'type',
  'length',
  'len',
  'ref',
  'var',
  'env',
  'header',
  'field',
  'prefix',
  'suffix',
  'format',
  'mode',
  'count',
  'size',
  'policy',
  'rotation',
  'expiry',
  'expires',
  'ttl',
  'hint',
  'label',
  'provider',
  'source',
  'location',
  'store',
  'version',
  'hash',
  'digest',
  'fingerprint',
  'algorithm',
  'enabled',
  'required',
]);

/**
 * Whether a name (`client_secret`, `DB-PASSWORD`, `x_api_key_2`, `gitterToken`) holds a key-like
 * part made of whole segments: the name is split at `_`, `-`, `.` and camelCase humps, and each
 * run of up to four segments (a key-like word has at most three, `refresh_token` for instance)
 * is tried with `_` between them. A public key (`public_key`, `pub`) and names that hold an id,
 * a path or a setting about the secret (`token_url`, `CREDENTIALS_ID`) are not key-like.
 * Linear in the name's length.
 */
export function isKeylikeName(name: string): boolean {
  if (/[_.-]$/.test(name)) return false; // a name ends with a letter or digit (`password_` is not one)
  const segs = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .split(/[_.-]+/)
    .filter(Boolean)
    .map((s) => s.toLowerCase());
  if (!segs.length) return false;
  if (segs.some((s) => s === 'public' || s === 'pub' || s === 'pubkey')) return false;
  if (NOT_A_VALUE_SUFFIX.has(segs[segs.length - 1])) return false;
  for (let i = 0; i < segs.length; i++) {
    let joined = '';
    for (let j = i; j < Math.min(segs.length, i + 4); j++) {
      joined = j === i ? segs[j] : `${joined}_${segs[j]}`;
      if (KEYLIKE_WHOLE.test(joined)) return true;
    }
  }
  return false;
}

/** Whether a name mentions a key word (`signing_key`, `webhookSecret`) and is not a public key's or an id's name. */
export function mentionsKeyWord(name: string): boolean {
  if (!/key|secret|token|credential|signature|passphrase|auth/i.test(name)) return false;
  const segs = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .split(/[_.-]+/)
    .filter(Boolean)
    .map((s) => s.toLowerCase());
  return segs.length > 0 && !segs.some((s) => s === 'public' || s === 'pub' || s === 'pubkey') && !NOT_A_VALUE_SUFFIX.has(segs[segs.length - 1]);
}

/** A reference to where a secret comes from (`process.env.X`, `config.apiKey`, `getToken()`), not a secret. */
export const isCodeReference = (v: string): boolean =>
  /^(?:process\.env|os\.environ|import\.meta\.env|ENV|env|secrets|vars|settings|config)[.[]/.test(v) ||
  /[()]/.test(v) ||
  /^\$[A-Za-z_{(]/.test(v) ||
  /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(v);

/** A constant's or variable's name (`K8S_CRED`, `DB_PASSWORD_SECRET`), a path or a URL: not a value. */
const isIdentifierOrPath = (v: string): boolean =>
  /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(v) || /^(?:\.{0,2}\/|~\/|[A-Za-z]:\\)/.test(v) || /^[a-z][a-z0-9+.-]*:\/\//i.test(v);

/** Generic assignments: the value must look like a credential, not a word, a reference or a name. */
export const looksLikeSecretValue = (v: string): boolean =>
  !/^(?:true|false|null|none|nil|undefined|required|optional|string|number|env|secret|password|token|bearer|basic|yes|no|on|off)$/i.test(v) &&
  !isCodeReference(v) &&
  !isIdentifierOrPath(v) &&
  !PLACEHOLDER_PASSWORDS.test(v) &&
  ((v.length >= 8 && classes(v) >= 2 && !/^[a-z]+(?:[-_][a-z]+)*$/.test(v) && !/^\d+(?:\.\d+)*$/.test(v)) || (v.length >= 20 && entropy(v) >= 3.5));

/** A random-looking token: long enough, several character classes, high entropy. */
const randomToken =
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

/** `user:password` with a real-looking password (the decoded form of Basic auth and docker's `auth`). */
const isUserPassword = (s: string): boolean => {
  const m = /^([^\s:]{1,128}):(\S{3,256})$/.exec(s.trim());
  return m !== null && !PLACEHOLDER_PASSWORDS.test(m[2]) && !isPlaceholder(m[2]) && m[2] !== m[1];
};

/** Base64 of `user:password` (Basic auth, docker's `auth`). */
const encodesUserPassword = (v: string): boolean => {
  const text = decodeBase64Text(v);
  return text !== null && isUserPassword(text);
};

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
    const m = /^([\w.-]{1,253}):\s*["']?([^\s"']{1,10000})["']?\s*$/.exec(trimmed);
    if (!m) continue;
    const value = m[2];
    if (isPlaceholder(value)) continue;
    if (block === 'data' ? value.length >= 4 && /^[A-Za-z0-9+/]+={0,2}$/.test(value) : value.length >= 6 && looksLikeSecretValue(value)) {
      const s = start + line.indexOf(value, indent + m[1].length);
      out.push({ start: s, end: s + value.length });
    }
  }
  return out;
}

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
    const body = after.split('-----')[0];
    const base64 = body
      .split('\n')
      .filter((l) => !l.includes(': '))
      .join('')
      .replace(/\s/g, '');
    if (/^[A-Za-z0-9+/=]{16,}/.test(base64)) out.push({ start: m.index, end: m.index + m[0].length });
  }
  return out;
}

export const RULES: readonly Rule[] = [
  // ---------------------------------------------------------------- cloud providers
  { id: 'aws-access-key-id', keywords: ['akia', 'asia', 'abia', 'acca', 'a3t'], re: /\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}\b/g },
  {
    id: 'aws-secret-access-key',
    keywords: ['aws'],
    re: /aws.{0,24}?(?:secret|private).{0,16}?[:=]\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/gi,
    group: 1,
  },
  { id: 'gcp-api-key', keywords: ['aiza'], re: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { id: 'google-oauth-client-secret', keywords: ['gocspx'], re: /\bGOCSPX-[A-Za-z0-9_-]{28}\b/g },
  { id: 'google-oauth-access-token', keywords: ['ya29.'], re: /\bya29\.[0-9A-Za-z_-]{30,}/g },
  { id: 'azure-storage-key', keywords: ['accountkey'], re: /AccountKey=([A-Za-z0-9+/]{86}==)/g, group: 1 },
  { id: 'azure-client-secret', keywords: ['q~'], re: /(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/g },
  { id: 'azure-sas-signature', keywords: ['sig='], re: /[?&]sig=([A-Za-z0-9%+/]{30,}={0,2})/g, group: 1 },
  { id: 'alibaba-access-key-id', keywords: ['ltai'], re: /\bLTAI[A-Za-z0-9]{20}\b/g },
  { id: 'digitalocean-token', keywords: ['do'], re: /\bdo[opr]_v1_[a-f0-9]{64}\b/g },
  { id: 'openshift-token', keywords: ['sha256~'], re: /\bsha256~[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g },
  {
    id: 'flyio-token',
    keywords: ['flyv1', 'fo1_', 'fm1', 'fm2_'],
    re: /\bFlyV1 fm[12][ar]?_[A-Za-z0-9+/=_,-]{40,}|\bfo1_[A-Za-z0-9_-]{43}\b|\bfm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3}/g,
  },
  { id: 'heroku-key', keywords: ['hrku-'], re: /\bHRKU-[A-Za-z0-9_-]{40,}\b/g },
  {
    id: 'cloudflare-token',
    keywords: ['cloudflare', 'cf_api'],
    re: /(?:cloudflare|cf_api).{0,24}?[:=]\s*["']?([A-Za-z0-9_-]{40})(?![A-Za-z0-9_-])/gi,
    group: 1,
  },
  { id: 'cloudflare-origin-ca-key', keywords: ['v1.0-'], re: /\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b/g },
  { id: 'terraform-cloud-token', keywords: ['atlasv1'], re: /\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}\b/g },
  { id: 'vault-token', keywords: ['hvs.', 'hvb.'], re: /\bhv[sb]\.[A-Za-z0-9_-]{24,}\b/g },
  {
    // Vault's older service tokens: `s.` and 24 random characters (not a property chain: mixed case and digits).
    id: 'vault-legacy-token',
    keywords: ['s.'],
    re: /(?<![\w.])s\.[A-Za-z0-9]{24}(?![\w(])/g,
    check: (v) => /[a-z]/.test(v) && /[A-Z]/.test(v) && /\d/.test(v.slice(2)) && entropy(v.slice(2)) >= 3.8,
  },
  { id: 'doppler-token', keywords: ['dp.'], re: /\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}\b/g },
  { id: 'pulumi-token', keywords: ['pul-'], re: /\bpul-[a-f0-9]{40}\b/g },
  { id: 'dynatrace-token', keywords: ['dt0c01.'], re: /\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}\b/g },
  { id: 'artifactory-token', keywords: ['akcp', 'cmvmdgtu'], re: /\bAKCp[A-Za-z0-9]{69}\b|\bcmVmdGtu[A-Za-z0-9]{56}\b/g },
  { id: 'harness-token', keywords: ['pat.', 'sat.'], re: /\b(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[a-f0-9]{24}\.[A-Za-z0-9]{20}\b/g },
  {
    id: 'yandex-token',
    keywords: ['aqvn', 'yc', 't1.'],
    re: /\bAQVN[A-Za-z0-9_-]{35,38}\b|\bYC[A-Za-z0-9_-]{38}\b|\bt1\.[A-Z0-9a-z_-]+={0,2}\.[A-Z0-9a-z_-]{86}={0,2}/g,
  },
  // ---------------------------------------------------------------- code hosting, CI, packages
  { id: 'github-token', keywords: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], re: /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b/g },
  { id: 'github-fine-grained-token', keywords: ['github_pat_'], re: /\bgithub_pat_[A-Za-z0-9_]{60,}\b/g },
  {
    id: 'gitlab-token',
    keywords: ['gl', 'gr1348941'],
    re: /\bgl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent|oas|ffct|wt)-[A-Za-z0-9_-]{20,}\b|\bGR1348941[A-Za-z0-9_-]{20,}\b/g,
  },
  { id: 'sourcegraph-token', keywords: ['sgp_', 'sgs_'], re: /\bsg[ps]_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}\b/g },
  { id: 'npm-token', keywords: ['npm_'], re: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { id: 'pypi-token', keywords: ['pypi-'], re: /\bpypi-AgE[A-Za-z0-9_-]{50,}/g },
  { id: 'rubygems-key', keywords: ['rubygems_'], re: /\brubygems_[a-f0-9]{48}\b/g },
  { id: 'nuget-api-key', keywords: ['oy2'], re: /\boy2[a-z0-9]{43}\b/g },
  { id: 'nuget-config-password', keywords: ['cleartextpassword'], re: /key=["']ClearTextPassword["']\s+value=["']([^"']{4,})["']/gi, group: 1 },
  { id: 'clojars-token', keywords: ['clojars_'], re: /\bCLOJARS_[a-z0-9]{60}\b/gi },
  {
    id: 'sidekiq-credentials',
    keywords: ['contribsys'],
    re: /BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM\s*[:=]\s*["']?([a-f0-9]{8}:[a-f0-9]{8})\b/gi,
    group: 1,
  },
  { id: 'sonarqube-token', keywords: ['sqp_', 'squ_', 'sqa_'], re: /\bsq[pua]_[a-f0-9]{40}\b/g },
  {
    id: 'sonar-token',
    keywords: ['sonar'],
    re: /sonar[\w.-]{0,20}?(?:token|login|key|password)["']?\s*(?:[:=]|:=)\s*["']?([A-Za-z0-9_=-]{40})(?![A-Za-z0-9_=-])/gi,
    group: 1,
  },
  {
    id: 'snyk-token',
    keywords: ['snyk'],
    re: /snyk[\w.-]{0,20}?(?:token|key|auth)["']?\s*(?:[:=]|:=)\s*["']?([a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})\b/gi,
    group: 1,
  },
  { id: 'postman-key', keywords: ['pmak-'], re: /\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b/g },
  { id: 'atlassian-token', keywords: ['atatt3'], re: /\bATATT3[A-Za-z0-9_\-=]{150,}/g },
  { id: 'octopus-deploy-key', keywords: ['api-'], re: /\bAPI-[A-Z0-9]{26}\b/g, check: (v) => /\d/.test(v.slice(4)) },
  { id: 'prefect-token', keywords: ['pnu_'], re: /\bpnu_[A-Za-z0-9]{36}\b/g },
  { id: 'scalingo-token', keywords: ['tk-us-'], re: /\btk-us-[A-Za-z0-9_-]{48}\b/g },
  { id: 'intra42-secret', keywords: ['s-s4t2'], re: /\bs-s4t2(?:ud|af)-[a-f0-9]{64}\b/g },
  { id: 'infracost-key', keywords: ['ico-'], re: /\bico-[A-Za-z0-9]{32}\b/g },
  { id: 'readme-key', keywords: ['rdme_'], re: /\brdme_[a-z0-9]{70}\b/g },
  { id: 'netlify-token', keywords: ['nfp_'], re: /\bnfp_[A-Za-z0-9]{36}\b/g },
  { id: 'render-key', keywords: ['rnd_'], re: /\brnd_[A-Za-z0-9]{32}\b/g },
  // ---------------------------------------------------------------- messaging, payments, SaaS
  {
    id: 'slack-token',
    keywords: ['xox', 'xapp-'],
    re: /\bxox[abposre]-(?:\d+-)?[A-Za-z0-9-]{10,250}\b|\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+\b/g,
    // Real tokens carry long numeric ids (team, user, bot): `xoxb-12345-abcd234` is only shaped like one.
    check: (v) => v.length >= 24 && /\d{8,}/.test(v),
  },
  { id: 'slack-webhook', keywords: ['hooks.slack.com'], re: /https?:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_/+-]{20,}/g },
  { id: 'discord-webhook', keywords: ['discord'], re: /https:\/\/(?:\w+\.)?discord(?:app)?\.com\/api\/webhooks\/\d+\/[A-Za-z0-9_-]{60,}/g },
  { id: 'stripe-key', keywords: ['sk_', 'rk_'], re: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g },
  { id: 'stripe-webhook-secret', keywords: ['whsec_'], re: /\bwhsec_[A-Za-z0-9+/]{32,}\b/g },
  { id: 'square-token', keywords: ['sq0', 'eaaa'], re: /\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}\b|\bEAAA[A-Za-z0-9_-]{60}\b/g },
  { id: 'facebook-access-token', keywords: ['eaa'], re: /\bEAA[A-Za-z0-9]{90,}/g },
  { id: 'twilio-key', keywords: ['sk'], re: /\bSK[0-9a-f]{32}\b/g },
  { id: 'sendgrid-key', keywords: ['sg.'], re: /\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b/g },
  { id: 'brevo-key', keywords: ['xkeysib-', 'xsmtpsib-'], re: /\bx(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}\b/g },
  { id: 'mailgun-key', keywords: ['key-'], re: /\bkey-[0-9a-f]{32}\b/g },
  { id: 'mailchimp-key', keywords: ['-us'], re: /\b[0-9a-f]{32}-us\d{1,2}\b/g },
  { id: 'easypost-key', keywords: ['ezak', 'eztk'], re: /\bEZ[AT]K[A-Za-z0-9]{54}\b/g },
  { id: 'shopify-token', keywords: ['shp'], re: /\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b/g },
  { id: 'shippo-token', keywords: ['shippo_'], re: /\bshippo_(?:live|test)_[a-f0-9]{40}\b/g },
  { id: 'duffel-token', keywords: ['duffel_'], re: /\bduffel_(?:test|live)_[A-Za-z0-9_=-]{43}\b/g },
  {
    id: 'plaid-token',
    keywords: ['access-sandbox', 'access-development', 'access-production'],
    re: /\baccess-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g,
  },
  { id: 'telegram-bot-token', keywords: [':aa'], re: /\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b/g },
  { id: 'discord-bot-token', keywords: ['.'], re: /\b[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b/g },
  { id: 'linear-key', keywords: ['lin_'], re: /\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b/g },
  { id: 'notion-token', keywords: ['secret_', 'ntn_'], re: /\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})\b/g },
  { id: 'airtable-token', keywords: ['pat'], re: /\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b/g },
  { id: 'typeform-token', keywords: ['tfp_'], re: /\btfp_[A-Za-z0-9_.=-]{59}\b/g },
  { id: 'contentful-token', keywords: ['cfpat-'], re: /\bCFPAT-[A-Za-z0-9_-]{43}\b/g },
  { id: 'frameio-token', keywords: ['fio-u-'], re: /\bfio-u-[A-Za-z0-9_=-]{64}\b/g },
  { id: 'adobe-client-secret', keywords: ['p8e-'], re: /\bp8e-[A-Za-z0-9]{32}\b/g },
  {
    id: 'sumologic-key',
    keywords: ['sumo'],
    re: /sumo[\w.-]{0,20}?(?:key|secret|access|id)["']?\s*(?:[:=]|:=)\s*["']?(su[A-Za-z0-9]{12}|[A-Za-z0-9]{64})(?![A-Za-z0-9])/gi,
    group: 1,
  },
  // ---------------------------------------------------------------- observability, data, AI
  { id: 'grafana-token', keywords: ['glsa_', 'glc_'], re: /\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|\bglc_[A-Za-z0-9+/]{32,}={0,2}/g },
  { id: 'newrelic-key', keywords: ['nrak-', 'nrjs-', 'nrii-'], re: /\bNRAK-[A-Z0-9]{27}\b|\bNRJS-[a-f0-9]{19}\b|\bNRII-[A-Za-z0-9_-]{32}\b/g },
  { id: 'sentry-token', keywords: ['sntry'], re: /\bsntry[su]_[A-Za-z0-9+/=_-]{40,}/g },
  { id: 'databricks-token', keywords: ['dapi'], re: /\bdapi[a-f0-9]{32}(?:-\d)?\b/g },
  { id: 'planetscale-token', keywords: ['pscale_'], re: /\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,}\b/g },
  { id: 'supabase-token', keywords: ['sbp_'], re: /\bsbp_[a-f0-9]{40}\b/g },
  { id: 'pinecone-key', keywords: ['pcsk_'], re: /\bpcsk_[A-Za-z0-9_]{50,}\b/g },
  { id: 'mapbox-secret-token', keywords: ['sk.eyj'], re: /\bsk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}/g },
  {
    id: 'openai-key',
    keywords: ['sk-'],
    re: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}\b|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}\b|\bsk-[A-Za-z0-9]{48}\b/g,
  },
  { id: 'anthropic-key', keywords: ['sk-ant-'], re: /\bsk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_-]{32,}\b/g },
  { id: 'huggingface-token', keywords: ['hf_', 'api_org_'], re: /\b(?:hf_|api_org_)[A-Za-z]{34}\b/g },
  { id: 'groq-key', keywords: ['gsk_'], re: /\bgsk_[A-Za-z0-9]{52}\b/g },
  { id: 'perplexity-key', keywords: ['pplx-'], re: /\bpplx-[A-Za-z0-9]{48}\b/g },
  { id: 'replicate-token', keywords: ['r8_'], re: /\br8_[A-Za-z0-9]{37}\b/g },
  { id: 'xai-key', keywords: ['xai-'], re: /\bxai-[A-Za-z0-9]{80}\b/g },
  { id: 'langsmith-key', keywords: ['lsv2_'], re: /\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b/g },
  // ---------------------------------------------------------------- keys and tokens by shape
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
  // ---------------------------------------------------------------- credentials in context
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
    // the key-like part sits backtracked super-linearly (2,000 characters of `token_` took
    // 200 ms, 20 KB over a minute) and could hang every writer behind the lock.
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

export function decodeURIComponentSafe(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

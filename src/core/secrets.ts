/**
 * Our own secret rules (002 Req 13), pure and synchronous. They close what secretlint's
 * recommend preset misses on the provider formats we measured (Stripe, JWTs, generic
 * `password=` / `api_key:` assignments, credentials in connection strings, Azure, Twilio,
 * Google OAuth, high-entropy values beside key-like names, ...). The service runs both and
 * merges the findings (src/service/secret-scan.ts).
 *
 * A finding names the field, the rule and the position; it never carries the secret. Values
 * that are placeholders (`[API_KEY]`, `<TOKEN>`, `${SECRET}`, `xxxx…`, `your-key-here`) or
 * documented example keys are not secrets.
 */

export interface SecretFinding {
  /** Field path, e.g. `entry.content` or `[2].entry.evidence[0].uri`. */
  path: string;
  rule: string;
  /** Character offsets of the secret inside the field's text. */
  start: number;
  end: number;
  line: number;
  column: number;
}

interface Rule {
  id: string;
  re: RegExp;
  /** Capture group holding the secret value (default: the whole match). */
  group?: number;
  /** Extra check on the value (entropy, character classes). */
  check?: (value: string) => boolean;
  /** Extra check on the whole match (the name beside the value). */
  matchCheck?: (m: RegExpMatchArray) => boolean;
  /**
   * The value, matched right after `re` (a sticky pattern) once `matchCheck` passed: `re` then
   * matches only the name and the operator, so a name that is not key-like costs nothing more.
   */
  value?: RegExp;
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

function classes(s: string): number {
  return [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((re) => re.test(s)).length;
}

/** Keys published in vendor documentation as examples; never real. */
const DOCUMENTED_EXAMPLES = new Set([
  'AKIAIOSFODNN7EXAMPLE',
  'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  'sk_test_4eC39HqLyjWDarjtT1zdp7dc',
  'sk_test_BQokikJOvBiI2HlWgH4olfQ2',
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
]);

/** Whether a matched value is a placeholder or a documented example rather than a secret. */
export function isPlaceholder(value: string): boolean {
  const v = value.trim();
  if (DOCUMENTED_EXAMPLES.has(v)) return true;
  for (const ex of DOCUMENTED_EXAMPLES) if (v.includes(ex)) return true;
  if (/^(?:\[[^\]]*\]|<[^>]*>|\$\{[^}]*\}|\{\{[^}]*\}\}|%[A-Z_]+%|\$[A-Z_][A-Z0-9_]*)$/.test(v)) return true;
  if (/[[<{]\s*[A-Za-z_][\w-]*\s*[\]>}]/.test(v) || /\$\{[^}]*\}|\{\{[^}]*\}\}/.test(v)) return true;
  if (/x{4,}|X{4,}|\*{3,}|\.{3,}|…|(.)\1{7,}/.test(v)) return true;
  if (/example|sample|placeholder|redacted|changeme|dummy|your[-_]?(?:api[-_]?)?(?:key|token|secret|password)|not[-_]?a[-_]?real|fake|<|>/i.test(v))
    return true;
  return false;
}

const KEYLIKE =
  '(?:api[_-]?key|apikey|secret(?:[_-]?key)?|client[_-]?secret|access[_-]?token|auth[_-]?token|refresh[_-]?token|private[_-]?key|token|passwd|password|pwd|passphrase|credentials?)';

const KEYLIKE_WHOLE = new RegExp(`^${KEYLIKE}$`, 'i');

/**
 * Whether a name (`client_secret`, `DB-PASSWORD`, `x_api_key_2`) holds a key-like part made of
 * whole segments: the name is split at `_` and `-`, and each run of up to four segments (a
 * key-like word has at most three, `refresh_token` for instance) is tried with the separators
 * it had. Linear in the name's length.
 */
export function isKeylikeName(name: string): boolean {
  if (/[_-]$/.test(name)) return false; // a name ends with a letter or digit (`password_` is not one)
  const parts = name.split(/([_-])/); // segments at even indexes, separators between them
  const segs = (parts.length + 1) >> 1;
  for (let i = 0; i < segs; i++) {
    if (!parts[2 * i]) continue;
    let joined = parts[2 * i];
    for (let j = i; j < Math.min(segs, i + 4); j++) {
      if (j > i) {
        if (!parts[2 * j]) break;
        joined += parts[2 * j - 1] + parts[2 * j];
      }
      if (KEYLIKE_WHOLE.test(joined)) return true;
    }
  }
  return false;
}

/** A reference to where a secret comes from (`process.env.X`, `config.apiKey`, `getToken()`), not a secret. */
const isCodeReference = (v: string): boolean =>
  /^(?:process\.env|os\.environ|import\.meta\.env|ENV|env|secrets|vars)[.[]/.test(v) ||
  /[()]/.test(v) ||
  /^\$[A-Za-z_{(]/.test(v) ||
  /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(v);

/** Generic assignments: the value must look like a credential, not a word or a reference. */
const looksLikeSecretValue = (v: string): boolean =>
  !/^(?:true|false|null|none|undefined|required|optional|string|number|env|secret|password|token)$/i.test(v) &&
  !isCodeReference(v) &&
  ((v.length >= 8 && classes(v) >= 2 && !/^[a-z]+(?:[-_][a-z]+)*$/.test(v)) || (v.length >= 20 && entropy(v) >= 3.5));

export const OWN_RULES: readonly Rule[] = [
  { id: 'aws-access-key-id', re: /\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}\b/g },
  { id: 'aws-secret-access-key', re: /aws.{0,24}?(?:secret|private).{0,16}?[:=]\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/gi, group: 1 },
  { id: 'gcp-api-key', re: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { id: 'google-oauth-client-secret', re: /\bGOCSPX-[A-Za-z0-9_-]{28}\b/g },
  { id: 'azure-storage-key', re: /AccountKey=([A-Za-z0-9+/]{86}==)/g, group: 1 },
  { id: 'azure-client-secret', re: /(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/g },
  { id: 'azure-sas-signature', re: /[?&]sig=([A-Za-z0-9%+/]{30,}={0,2})/g, group: 1 },
  { id: 'github-token', re: /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b/g },
  { id: 'github-fine-grained-token', re: /\bgithub_pat_[A-Za-z0-9_]{60,}\b/g },
  { id: 'gitlab-token', re: /\bgl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent)-[A-Za-z0-9_-]{20,}\b/g },
  { id: 'slack-token', re: /\bxox[abposr]-(?:\d+-)?[A-Za-z0-9-]{10,}\b/g },
  { id: 'slack-webhook', re: /https:\/\/hooks\.slack\.com\/(?:services|workflows)\/T[A-Z0-9]+\/[A-Z0-9]+\/[A-Za-z0-9]+/g },
  { id: 'stripe-key', re: /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g, check: (v) => !v.startsWith('pk_') },
  { id: 'stripe-webhook-secret', re: /\bwhsec_[A-Za-z0-9+/]{32,}\b/g },
  {
    id: 'openai-key',
    re: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}\b|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}\b|\bsk-[A-Za-z0-9]{48}\b/g,
  },
  { id: 'anthropic-key', re: /\bsk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_-]{32,}\b/g },
  { id: 'jwt', re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { id: 'private-key', re: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/g },
  { id: 'age-secret-key', re: /\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b/g },
  { id: 'sendgrid-key', re: /\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b/g },
  { id: 'twilio-key', re: /\bSK[0-9a-f]{32}\b/g },
  { id: 'npm-token', re: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { id: 'pypi-token', re: /\bpypi-AgE[A-Za-z0-9_-]{50,}/g },
  { id: 'mailgun-key', re: /\bkey-[0-9a-f]{32}\b/g },
  { id: 'digitalocean-token', re: /\bdo[opr]_v1_[a-f0-9]{64}\b/g },
  { id: 'shopify-token', re: /\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b/g },
  { id: 'huggingface-token', re: /\bhf_[A-Za-z]{34}\b/g },
  { id: 'databricks-token', re: /\bdapi[a-f0-9]{32}(?:-\d)?\b/g },
  { id: 'linear-key', re: /\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b/g },
  { id: 'notion-token', re: /\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})\b/g },
  { id: 'vault-token', re: /\bhv[sb]\.[A-Za-z0-9_-]{24,}\b/g },
  { id: 'doppler-token', re: /\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}\b/g },
  { id: 'atlassian-token', re: /\bATATT3[A-Za-z0-9_\-=]{150,}/g },
  { id: 'postman-key', re: /\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b/g },
  { id: 'grafana-token', re: /\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|\bglc_[A-Za-z0-9+/]{32,}={0,2}/g },
  { id: 'square-token', re: /\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}\b|\bEAAA[A-Za-z0-9_-]{60}\b/g },
  { id: 'telegram-bot-token', re: /\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b/g },
  { id: 'discord-bot-token', re: /\b[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b/g },
  { id: 'supabase-token', re: /\bsbp_[a-f0-9]{40}\b/g },
  { id: 'mapbox-secret-token', re: /\bsk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}/g },
  { id: 'heroku-key', re: /\bHRKU-[A-Za-z0-9_-]{40,}\b/g },
  { id: 'newrelic-key', re: /\bNRAK-[A-Z0-9]{27}\b/g },
  { id: 'sentry-token', re: /\bsntry[su]_[A-Za-z0-9+/=_-]{40,}/g },
  { id: 'planetscale-token', re: /\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,}\b/g },
  { id: 'cloudflare-token', re: /cloudflare.{0,24}?[:=]\s*["']?([A-Za-z0-9_-]{40})(?![A-Za-z0-9_-])/gi, group: 1 },
  {
    // scheme://user:password@host (databases, brokers, URLs with basic auth).
    id: 'credentials-in-url',
    re: /\b[a-z][a-z0-9+.-]{1,20}:\/\/[^\s/:@'"]+:([^\s/@'"]+)@[^\s/'"]+/gi,
    group: 1,
    check: (v) => v.length >= 3,
  },
  {
    // Password=...; in connection strings (ADO.NET, JDBC properties).
    id: 'password-in-connection-string',
    re: /\b(?:Password|Pwd)\s*=\s*([^;'"\s]{4,})/gi,
    group: 1,
  },
  {
    // password = "...", api_key: ..., client_secret=..., export TOKEN=...
    id: 'secret-assignment',
    // NOTE: the name is matched as one run of name characters that starts at a boundary, and its
    // key-like part is found in JS (isKeylikeName): a pattern that let the engine choose where
    // the key-like part sits backtracked super-linearly (2,000 characters of `token_` took
    // 200 ms, 20 KB over a minute) and could hang every writer behind the lock.
    re: /(?<![A-Za-z0-9_-])([A-Za-z0-9_-]{1,200})["']?[ \t]*(?::=|=>|[:=])[ \t]*["']?/g,
    matchCheck: (m) => isKeylikeName(m[1] ?? ''),
    value: /[^\s"',;]{6,}/y,
    check: looksLikeSecretValue,
  },
  {
    // A long, random-looking value beside a key-like name (key, secret, token, signature, ...).
    id: 'high-entropy-keylike',
    re: /(?:key|secret|token|credential|signature|passphrase|auth)[A-Za-z0-9_.-]{0,20}["']?\s*[:=]\s*["']?([A-Za-z0-9+/_=.-]{20,})/gi,
    group: 1,
    check: (v) => entropy(v) >= 3.7 && classes(v) >= 2 && !isCodeReference(v),
  },
];

function position(text: string, index: number): { line: number; column: number } {
  let line = 1;
  let last = -1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) {
    line++;
    last = i;
  }
  return { line, column: index - last };
}

/** Runs our rules over one field's raw text. */
export function scanText(path: string, text: string): SecretFinding[] {
  const out: SecretFinding[] = [];
  for (const rule of OWN_RULES) {
    rule.re.lastIndex = 0;
    for (let m = rule.re.exec(text); m; m = rule.re.exec(text)) {
      if (m[0] === '') rule.re.lastIndex++;
      if (rule.matchCheck && !rule.matchCheck(m)) continue;
      let value: string | undefined;
      let start: number;
      if (rule.value) {
        rule.value.lastIndex = rule.re.lastIndex;
        const v = rule.value.exec(text);
        if (!v) continue;
        value = v[0];
        start = v.index;
      } else {
        value = rule.group ? m[rule.group] : m[0];
        if (!value) continue;
        start = m.index + (rule.group ? m[0].indexOf(value) : 0);
      }
      if (isPlaceholder(value)) continue;
      if (rule.check && !rule.check(value)) continue;
      out.push({ path, rule: rule.id, start, end: start + value.length, ...position(text, start) });
    }
  }
  return dedupe(out);
}

/** One finding per overlapping span (the first rule that found it names it). */
export function dedupe(findings: SecretFinding[]): SecretFinding[] {
  const sorted = [...findings].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.start - b.start || b.end - a.end));
  const out: SecretFinding[] = [];
  for (const f of sorted) {
    const prev = out[out.length - 1];
    if (prev && prev.path === f.path && f.start < prev.end) continue;
    out.push(f);
  }
  return out;
}

/** The texts of an entry (or create input) that are scanned: summary, content, subject, tags, evidence uri and note. */
export function secretFields(entry: unknown, prefix = ''): { path: string; text: string }[] {
  if (!entry || typeof entry !== 'object') return [];
  const e = entry as Record<string, unknown>;
  const at = (f: string): string => (prefix ? `${prefix}.${f}` : f);
  const out: { path: string; text: string }[] = [];
  for (const f of ['summary', 'content', 'subject', 'scope']) if (typeof e[f] === 'string') out.push({ path: at(f), text: e[f] });
  if (Array.isArray(e.tags)) e.tags.forEach((t, i) => typeof t === 'string' && out.push({ path: at(`tags[${i}]`), text: t }));
  if (Array.isArray(e.evidence)) {
    e.evidence.forEach((ev, i) => {
      if (!ev || typeof ev !== 'object') return;
      const o = ev as Record<string, unknown>;
      if (typeof o.uri === 'string') out.push({ path: at(`evidence[${i}].uri`), text: o.uri });
      if (typeof o.note === 'string') out.push({ path: at(`evidence[${i}].note`), text: o.note });
    });
  }
  return out;
}

/** The problem message of a finding: the rule and where, never the value. */
export function findingMessage(f: SecretFinding): string {
  return `contains what looks like a secret (rule ${f.rule}, line ${f.line}, column ${f.column}); remove it or write a placeholder such as [API_KEY]`;
}

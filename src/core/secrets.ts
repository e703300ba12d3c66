/** The secret scan's engine, pure: the rules over each field's raw text, its normalised form and its decoded base64 blobs. */
import { RULES, type Rule, type Span } from './secret-rules/catalogue.js';
import { decodeBase64Text, decodeURIComponentSafe, isPlaceholder } from './secret-rules/checks.js';

export { entropy, isPlaceholder } from './secret-rules/checks.js';

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

/** The longest text scanned: longer fields are refused (no stored field may be longer than 2,048 characters). */
export const MAX_SCANNED = 4096;

/** Base64 runs decoded and scanned again, per text (the first ones). */
const MAX_BLOBS = 64;

export function position(text: string, index: number): { line: number; column: number } {
  const before = text.slice(0, index);
  return { line: before.split('\n').length, column: index - before.lastIndexOf('\n') };
}

// Every rule's keywords in one trie: a text is walked once and only the rules whose keywords it holds run (hundreds of
// substring searches per field would cost more than the rules); no big alternation to compile before the first scan.
interface TrieNode {
  word?: string;
  next: Map<number, TrieNode>;
}
const TRIE: TrieNode = { next: new Map() };
for (const k of new Set(RULES.flatMap((r) => r.keywords ?? []))) {
  let n = TRIE;
  for (let i = 0; i < k.length; i++) {
    const c = k.charCodeAt(i);
    let child = n.next.get(c);
    if (!child) n.next.set(c, (child = { next: new Map() }));
    n = child;
  }
  n.word = k;
}

/** The first level as an array: most places of a text end there. */
const FIRST: (TrieNode | undefined)[] = Array.from({ length: 128 }, (_, c) => TRIE.next.get(c));

/** The keywords present in `lower`, overlapping ones included. */
function keywordsIn(lower: string): Set<string> {
  const found = new Set<string>();
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charCodeAt(i);
    for (let n = c < 128 ? FIRST[c] : TRIE.next.get(c), j = i + 1; n; n = n.next.get(lower.charCodeAt(j++))) if (n.word) found.add(n.word);
  }
  return found;
}

const RULES_BY_KEYWORD = new Map<string, Rule[]>();
for (const r of RULES) for (const k of r.keywords ?? []) RULES_BY_KEYWORD.set(k, [...(RULES_BY_KEYWORD.get(k) ?? []), r]);
const ALWAYS = RULES.filter((r) => !r.keywords);
const RULE_ORDER = new Map(RULES.map((r, i) => [r, i]));

/** The spans one rule finds in `text`. */
export function runRule(rule: Rule, text: string): (Span & { rule: string })[] {
  if (rule.scan) return rule.scan(text).map((s) => ({ ...s, rule: rule.id }));
  const re = rule.re!;
  const out: (Span & { rule: string })[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[0] === '') re.lastIndex++;
    if (rule.matchCheck && !rule.matchCheck(m)) continue;
    let value: string | undefined;
    let start: number;
    if (rule.value) {
      rule.value.lastIndex = re.lastIndex;
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
    out.push({ start, end: start + value.length, rule: rule.id });
    // A value found is passed over: `a_token=a_token=…` is one finding, not one per `=` each running to the text's end (quadratic).
    if (rule.value) re.lastIndex = start + value.length;
  }
  return out;
}

function runRules(text: string): (Span & { rule: string })[] {
  const rules = new Set<Rule>(ALWAYS);
  for (const k of keywordsIn(text.toLowerCase())) for (const r of RULES_BY_KEYWORD.get(k)!) rules.add(r);
  // In RULES order: of two rules that find the same span, the first names it.
  return [...rules].sort((a, b) => RULE_ORDER.get(a)! - RULE_ORDER.get(b)!).flatMap((r) => runRule(r, text));
}

/** A text rewritten, with the origin of each of its characters in the original. */
interface Rewritten {
  text: string;
  from: number[];
}

function rewrite(t: Rewritten, re: RegExp, replace: (m: RegExpExecArray) => string): Rewritten {
  let text = '';
  const from: number[] = [];
  let at = 0;
  re.lastIndex = 0;
  for (let m = re.exec(t.text); m; m = re.exec(t.text)) {
    if (m[0] === '') {
      re.lastIndex++;
      continue;
    }
    text += t.text.slice(at, m.index);
    for (let i = at; i < m.index; i++) from.push(t.from[i]!);
    const r = replace(m);
    text += r;
    for (let i = 0; i < r.length; i++) from.push(t.from[m.index]!);
    at = m.index + m[0].length;
  }
  text += t.text.slice(at);
  for (let i = at; i < t.text.length; i++) from.push(t.from[i]!);
  return { text, from };
}

/** The steps of normalising, in order: zero-width characters and soft hyphens dropped, line continuations and string concatenations (`"ghp_" + "…"`) joined, URL escapes decoded. */
const NORMALISING: [RegExp, (m: RegExpExecArray) => string][] = [
  [/[\u200B-\u200D\u2060\uFEFF\u00AD]+/g, () => ''],
  [/\\\r?\n[ \t]*/g, () => ''],
  [/(["'`])[ \t]*(?:\+|\.|\|\|)[ \t]*(?:\r?\n[ \t]*)?\1/g, () => ''],
  [/(?:%[0-9A-Fa-f]{2})+/g, (m) => decodeURIComponentSafe(m[0])],
];

/** The text once normalised, or null when that changes nothing (every step that applies shortens it). */
function normalised(text: string): Rewritten | null {
  // The identity map is made only when a step applies (most texts need none).
  let t: Rewritten | null = null;
  for (const [re, fn] of NORMALISING) {
    re.lastIndex = 0;
    if (re.test(t?.text ?? text)) t = rewrite(t ?? { text, from: Array.from({ length: text.length }, (_, i) => i) }, re, fn);
  }
  return t && t.text !== text ? t : null;
}

export function scanText(path: string, text: string): SecretFinding[] {
  if (text.length > MAX_SCANNED) {
    // Refused, not scanned: no stored field is this long, and scanning it would hold the writer.
    return [{ path, rule: 'too-long-to-scan', start: 0, end: 0, line: 1, column: 1 }];
  }
  const spans = runRules(text);
  const norm = normalised(text);
  /** A span of the normalised text, in the original's offsets. */
  const back = (s: number, e: number): Span => {
    const start = norm ? (norm.from[s] ?? 0) : s;
    return { start, end: norm ? (norm.from[Math.max(s, e - 1)] ?? start) + 1 : e };
  };
  for (const s of norm ? runRules(norm.text) : []) spans.push({ ...back(s.start, s.end), rule: s.rule });
  // Base64 blobs: the decoded text, scanned once more (a token or `user:password` inside).
  const blobs = /(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{20,8192}={0,2}(?![A-Za-z0-9+/=_-])/g;
  let n = 0;
  for (let m = blobs.exec(norm?.text ?? text); m && n < MAX_BLOBS; m = blobs.exec(norm?.text ?? text)) {
    // A word or a hex digest is not base64 text. (Three linear tests: `[A-Z].*[a-z]` is quadratic.)
    if (!/[+/=]/.test(m[0]) && !(/[A-Z]/.test(m[0]) && /[a-z]/.test(m[0]))) continue;
    const decoded = decodeBase64Text(m[0]);
    if (decoded === null || decoded.length < 8) continue;
    n++;
    const [found] = runRules(decoded);
    if (found) spans.push({ ...back(m.index, m.index + m[0].length), rule: `${found.rule} (base64)` });
  }
  return dedupe(spans.map((s) => ({ path, rule: s.rule, start: s.start, end: s.end, ...position(text, s.start) })));
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

/** Strings that cannot hold a secret and are many: ULIDs and ISO 8601 timestamps. */
const PLAIN = /^(?:[0-7][0-9A-HJKMNP-TV-Z]{25}|\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?)$/;

/** Every string of a document with its path (any field may be stored or shown); a key that is not a plain name is named by position (it could be the secret). */
export function secretFields(value: unknown, prefix = ''): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  const walk = (v: unknown, path: string, depth: number): void => {
    if (typeof v === 'string') {
      if (!PLAIN.test(v)) out.push({ path, text: v });
    } else if (depth > 64) {
      return; // (input is refused past 64 levels before it gets here)
    } else if (Array.isArray(v)) {
      v.forEach((x, i) => walk(x, `${path}[${i}]`, depth + 1));
    } else if (v && typeof v === 'object') {
      for (const [i, [k, x]] of Object.entries(v).entries()) {
        const key = /^[a-z][a-z0-9_]{0,39}$/.test(k) ? k : `(field ${i + 1})`;
        walk(x, path ? `${path}.${key}` : key, depth + 1);
      }
    }
  };
  walk(value, prefix, 0);
  return out;
}

/** The problem message of a finding: the rule and where, never the value. */
export function findingMessage(f: SecretFinding): string {
  if (f.rule === 'too-long-to-scan') return `is over ${MAX_SCANNED} characters, too long to scan for secrets: shorten it`;
  return `contains what looks like a secret (rule ${f.rule}, line ${f.line}, column ${f.column}); remove it or write a placeholder such as [API_KEY]`;
}

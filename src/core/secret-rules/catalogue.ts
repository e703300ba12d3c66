/**
 * The provider-format catalogue, kept as data: one JSON file per family in `rules/secrets/`, read
 * when the scan is first used; each pattern compiled when its keywords first call for it. A
 * rule's `check` names what the value must also be (the words of `predicate`); every rule also
 * refuses values of low entropy for their length, unless its check says `any`.
 */
import { readFileSync } from 'node:fs';
import { entropy, type Rule } from './checks.js';

/** The families, in the order their rules are tried (of two rules that find the same span, the first names it). */
export const FAMILIES =
  'cloud cloud-platforms code-hosting ci-and-quality chat payments observability ai databases email-and-messaging saas-a-m saas-n-z'.split(' ');

interface RuleData {
  id: string;
  keywords: string[];
  pattern: string;
  flags?: string;
  group?: number;
  check?: string;
}

/** One word of a check, as a predicate on the value. */
function predicate(word: string, where: string): (v: string) => boolean {
  const [, name, n] = /^([a-z0-9-]+?)(?:>=(\d+(?:\.\d+)?))?$/.exec(word) ?? [];
  const min = Number(n);
  if (name === 'entropy' && n) return (v) => entropy(v) >= min;
  if (name === 'len' && n) return (v) => v.length >= min;
  if (name === 'digits' && n) {
    const run = new RegExp(`\\d{${min}}`);
    return (v) => run.test(v);
  }
  if (name === 'digit' && !n) return (v) => /\d/.test(v);
  if (name === 'mixed' && !n) return (v) => /[a-z]/.test(v) && /[A-Z]/.test(v) && /\d/.test(v);
  if (name === 'random' && !n) return (v) => [/[a-z]/, /[A-Z]/, /\d/].filter((re) => re.test(v)).length >= 2;
  if (name === 'any' && !n) return () => true;
  if (name === 'b64-id-colon' && !n) return (v) => /^\d{12}:/.test(Buffer.from(v, 'base64').toString('latin1'));
  throw new Error(`${where}: unknown check "${word}"`);
}

/** Random values of 16 characters or more have well over 2.5 bits per character; below that is a pattern someone typed. */
const notTyped = (v: string): boolean => v.length < 16 || entropy(v) >= 2.5;

function compile(r: RuleData, where: string): Rule {
  if (!r.id || !r.pattern || !r.keywords?.length) throw new Error(`${where}: a rule needs an id, keywords and a pattern`);
  if (r.keywords.some((k) => k !== k.toLowerCase())) throw new Error(`${where}: keywords are lower case`);
  const words = (r.check ?? '').split(' ').filter(Boolean);
  const checks = words.map((w) => predicate(w, where));
  if (!words.includes('any')) checks.push(notTyped);
  const rule: Rule = { id: r.id, keywords: r.keywords, ...(r.group ? { group: r.group } : {}), check: (v) => checks.every((c) => c(v)) };
  // Compiled on first use: a one-shot command that scans one entry compiles only the few rules
  // whose keywords its text holds (the tests run every rule on its own sample).
  let re: RegExp | undefined;
  Object.defineProperty(rule, 're', { enumerable: true, get: () => (re ??= new RegExp(r.pattern, `g${r.flags ?? ''}`)) });
  return rule;
}

/** Every family's rules, in FAMILIES order. */
export function loadCatalogue(): Rule[] {
  const seen = new Set<string>();
  return FAMILIES.flatMap((family) => {
    const file = `rules/secrets/${family}.json`;
    // Read, not imported: the rules are data files of the package (two levels above dist/core/).
    const data = JSON.parse(readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8')) as { rules: RuleData[] };
    return data.rules.map((r, i) => {
      const rule = compile(r, `${file} rule ${i + 1}`);
      if (seen.has(rule.id)) throw new Error(`${file}: rule id ${rule.id} is used twice`);
      seen.add(rule.id);
      return rule;
    });
  });
}

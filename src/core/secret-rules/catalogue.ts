/** The rule catalogue, kept as data in `rules/secrets/` (docs/secrets.md); every pattern runs in linear time (no nested unbounded repeats). */
import { CHECKS, MATCHES, PAIRS, SCANS, entropy, pairSpans, ruleData, type Rule } from './checks.js';
import { PROVIDER_CONTEXT_RULE } from './provider-context.js';

export type { Rule, Span } from './checks.js';

/** The families, in the order their rules are tried (of two rules that find the same span, the first names it). */
export const FAMILIES =
  'cloud cloud-platforms code-hosting ci-and-quality chat payments observability ai databases email-and-messaging saas-a-m saas-n-z'.split(' ');

interface RuleData {
  id: string;
  keywords: string[];
  pattern?: string;
  flags?: string;
  group?: number;
  /** Words naming what the value must also be (`entropy>=3.5`, `mixed`, a check of checks.ts). */
  check?: string;
  match?: string;
  value?: string;
  pairs?: string;
  scan?: string;
}

/** Words of a check that take a number (`len>=24`). */
const MEASURES: Record<string, (n: number) => (v: string) => boolean> = {
  entropy: (n) => (v) => entropy(v) >= n,
  len: (n) => (v) => v.length >= n,
  digits: (n) => {
    const run = new RegExp(`\\d{${n}}`);
    return (v) => run.test(v);
  },
};

/** A name of a table, or an error naming the rule. */
function named<T>(table: Record<string, T>, name: string, where: string): T {
  if (!Object.hasOwn(table, name)) throw new Error(`${where}: unknown name "${name}"`);
  return table[name]!;
}

/** One word of a check, as a predicate on the value. */
function predicate(word: string, where: string): (v: string) => boolean {
  const [, name = '', n] = /^([a-z0-9-]+?)(?:>=(\d+(?:\.\d+)?))?$/.exec(word) ?? [];
  return n ? named(MEASURES, name, where)(Number(n)) : named(CHECKS, name || word, where);
}

/** Random values of 16 characters or more have well over 2.5 bits per character; below that is a pattern someone typed. */
const notTyped = (v: string): boolean => v.length < 16 || entropy(v) >= 2.5;

function compile(r: RuleData, where: string): Rule {
  if (!r.id || !(r.pattern || r.scan) || !r.keywords?.length) throw new Error(`${where}: a rule needs an id, keywords and a pattern`);
  if (r.keywords.some((k) => k !== k.toLowerCase())) throw new Error(`${where}: keywords are lower case`);
  const words = (r.check ?? '').split(' ').filter(Boolean);
  const checks = words.map((w) => predicate(w, where));
  if (!words.includes('any')) checks.push(notTyped);
  const rule: Rule = { id: r.id, keywords: r.keywords, ...(r.group ? { group: r.group } : {}), check: (v) => checks.every((c) => c(v)) };
  if (r.match) rule.matchCheck = named(MATCHES, r.match, where);
  if (r.value) rule.value = new RegExp(r.value, 'y');
  if (r.scan) rule.scan = named(SCANS, r.scan, where);
  if (r.pairs) {
    const ok = named(PAIRS, r.pairs, where);
    rule.scan = (text) => pairSpans(rule.re!, text, ok);
  }
  // Compiled on first use: a one-shot command that scans one entry compiles only the few rules its text calls for.
  let re: RegExp | undefined;
  if (r.pattern) Object.defineProperty(rule, 're', { enumerable: true, get: () => (re ??= new RegExp(r.pattern!, `g${r.flags ?? ''}`)) });
  return rule;
}

/** Every rule, in order: the families', the context rules', then the provider named near a token. */
export const RULES: readonly Rule[] = loadCatalogue();

function loadCatalogue(): Rule[] {
  const seen = new Set<string>();
  const rules = [...FAMILIES, 'context'].flatMap((family) => {
    const file = `rules/secrets/${family}.json`;
    return ruleData<{ rules: RuleData[] }>(family).rules.map((r, i) => {
      const rule = compile(r, `${file} rule ${i + 1}`);
      if (seen.has(rule.id)) throw new Error(`${file}: rule id ${rule.id} is used twice`);
      seen.add(rule.id);
      return rule;
    });
  });
  return [...rules, PROVIDER_CONTEXT_RULE];
}

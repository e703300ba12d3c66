// The catalogue's part of the corpus: for each rule in rules/secrets/*.json, one sample of its
// documented token shape (catalogue-samples.js) set in the kind of text an agent writes (prose,
// env files, YAML, code in several languages); and, per family, as many negatives: the hard ones
// of catalogue-negatives.js, then the positives' own shapes masked (`xxxx`), referenced
// (`${NAME}`) or elided, as documentation writes them.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SAMPLES } from './catalogue-samples.js';
import { NEGATIVES } from './catalogue-negatives.js';

const RULES_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../rules/secrets');

const WRAPS = [
  (t) => `The staging deploy kept failing until we set ${t} in the CI settings.`,
  (t) => `Config used by the billing worker:\n${t}\nRotate it after the incident.`,
  (t) => `# .env.production\n${t}\nLOG_LEVEL=info`,
  (t) => `Found in the old runbook: ${t}`,
  (t) => `jobs:\n  deploy:\n    steps:\n      - run: ./deploy.sh\n        env:\n          ${t}`,
  (t) => `Note to self — ${t} — do not share.`,
  (t) => `client = Client("${t}")  # to move to the secret store`,
  (t) => `svc := api.New("${t}")`,
  (t) => `var client = new ApiClient("${t}");`,
  (t) => `\`\`\`\n${t}\n\`\`\`\nThis is what the failing job printed.`,
];

/** The family of every catalogue rule, from the rule files. */
function familyOfRules() {
  const out = new Map();
  for (const f of readdirSync(RULES_DIR).filter((n) => n.endsWith('.json'))) {
    const data = JSON.parse(readFileSync(join(RULES_DIR, f), 'utf8'));
    for (const r of data.rules ?? []) out.set(r.id, data.family);
  }
  return out;
}

/** `otherPositives`: how many positives of each family the rest of the corpus holds (negatives match them too). */
export function catalogueCorpus({ fill, pick, rand }, otherPositives = {}) {
  const families = familyOfRules();
  const samples = SAMPLES.trim()
    .split('\n')
    .map((l) => l.split(' | '))
    .map(([rule, template]) => ({ rule, template, family: families.get(rule) }));
  for (const s of samples) if (!s.family) throw new Error(`catalogue-samples.js: no rule ${s.rule} in rules/secrets/`);
  const positives = samples.map((s) => ({ provider: s.rule, rule: s.rule, family: s.family, text: pick(WRAPS)(fill(s.template)) }));
  const negatives = [];
  for (const [family, hard] of Object.entries(NEGATIVES)) {
    const own = samples.filter((s) => s.family === family);
    hard.forEach((t, i) => negatives.push({ kind: `${family}-${i}`, family, text: fill(t) }));
    // As many negatives as positives: the rest are the family's own shapes as docs write them.
    for (let i = hard.length; i < own.length + (otherPositives[family] ?? 0); i++) {
      const s = own[(i * 7) % own.length];
      const masked = s.template.replace(/\{\w+:(\d+)\}|\{(?:uuid|UUID)\}/g, (_, n) => (n ? 'x'.repeat(Number(n)) : '<uuid>'));
      const name = s.template.match(/^([A-Z][A-Z0-9_]+)=/)?.[1];
      const forms = [
        () => pick(WRAPS)(masked),
        () => (name ? `${name}=\${${name}}` : `token: {{ ${s.rule.replace(/-/g, '_')} }}`),
        () => `Rotate the ${s.rule.replace(/-/g, ' ')} (${s.template.slice(0, Math.min(6, s.template.indexOf('{') >= 0 ? s.template.indexOf('{') : 6))}…) every 90 days.`,
      ];
      negatives.push({ kind: `${family}-shape-${s.rule}`, family, text: forms[Math.floor(rand() * forms.length)]() });
    }
  }
  return { positives, negatives };
}

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runRule, scanText } from '../../src/core/secrets.js';
import { FAMILIES, RULES } from '../../src/core/secret-rules/catalogue.js';

const ROOT = join(__dirname, '../..');
const corpus = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/secrets/corpus.json'), 'utf8')) as {
  positives: { provider: string; family: string; rule?: string; text: string }[];
  negatives: { kind: string; family: string; text: string }[];
};
const files = readdirSync(join(ROOT, 'rules/secrets')).filter((f) => f.endsWith('.json') && !['providers.json', 'context.json'].includes(f));
const catalogue = files.map(
  (f) => JSON.parse(readFileSync(join(ROOT, 'rules/secrets', f), 'utf8')) as { family: string; rules: { id: string; keywords: string[] }[] },
);

describe('the provider-format catalogue (rules/secrets/*.json)', () => {
  it('is loaded whole, family by family, each file under 450 lines', () => {
    expect(files.map((f) => f.replace(/\.json$/, '')).sort()).toEqual([...FAMILIES].sort());
    for (const f of files) expect(readFileSync(join(ROOT, 'rules/secrets', f), 'utf8').split('\n').length, f).toBeLessThanOrEqual(450);
    const ids = new Set(RULES.map((r) => r.id));
    for (const { rules } of catalogue) for (const r of rules) expect(ids.has(r.id), r.id).toBe(true);
  });

  it('finds every rule’s own sample with that rule alone, and every match holds one of the rule’s keywords', () => {
    const byId = new Map(RULES.map((r) => [r.id, r]));
    const sampled = new Set<string>();
    for (const p of corpus.positives.filter((x) => x.rule)) {
      const rule = byId.get(p.rule!);
      expect(rule, p.rule).toBeDefined();
      const spans = runRule(rule!, p.text);
      expect(spans.length, `${p.rule}: ${p.text}`).toBeGreaterThan(0);
      // The keyword prefilter must not hide a match: every match holds one of the rule's keywords.
      for (const m of p.text.matchAll(new RegExp(rule!.re!.source, rule!.re!.flags)))
        expect(
          rule!.keywords!.some((k) => m[0].toLowerCase().includes(k)),
          `${p.rule}: ${m[0]}`,
        ).toBe(true);
      sampled.add(p.rule!);
    }
    for (const { rules } of catalogue) for (const r of rules) expect(sampled.has(r.id), `no sample for ${r.id}`).toBe(true);
  });

  it('flags none of the hard negatives of the catalogue families (ids, hashes, public keys, placeholders)', () => {
    const families = new Set(catalogue.map((c) => c.family));
    const flagged = corpus.negatives.filter(
      (n) => families.has(n.family) && scanText('content', n.text).some((f) => catalogue.some((c) => c.rules.some((r) => r.id === f.rule))),
    );
    expect(flagged.map((n) => n.text)).toEqual([]);
  });
});

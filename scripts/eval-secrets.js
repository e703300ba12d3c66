#!/usr/bin/env node
// `npm run eval:secrets`: recall and false-positive rate of the secret scan on
// test/fixtures/secrets/corpus.json, for secretlint's recommend preset alone, our rules alone,
// and both together (what every write runs); per family for the combined scan; whether each
// catalogue rule finds its own sample by itself (so a broken pattern shows even when a context
// rule catches the sample); and the slowest scans of adversarial text. `--json` prints the
// figures as JSON.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_SCANNED, runRule, scanText, secretFields } from '../dist/core/secrets.js';
import { RULES } from '../dist/core/secret-rules/catalogue.js';
import { scanFields, scanWithSecretlint } from '../dist/service/secret-scan.js';

const corpus = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../test/fixtures/secrets/corpus.json'), 'utf8'));

export async function evaluate() {
  const detectors = {
    'secretlint preset': async (t) => (await scanWithSecretlint([{ path: 'x', text: t }])).length > 0,
    'our rules': async (t) => scanText('x', t).length > 0,
    combined: async (t) => (await scanFields([{ path: 'x', text: t }])).length > 0,
  };
  const out = {};
  const families = {};
  const fam = (f) => (families[f] ??= { positives: 0, found: 0, negatives: 0, flagged: 0 });
  for (const [name, hit] of Object.entries(detectors)) {
    const missed = [];
    let tp = 0;
    for (const p of corpus.positives) {
      const found = await hit(p.text);
      if (found) tp++;
      else missed.push(p.provider);
      if (name === 'combined') (fam(p.family).positives++, found && fam(p.family).found++);
    }
    const flagged = [];
    for (const n of corpus.negatives) {
      const found = await hit(n.text);
      if (found) flagged.push(n.kind);
      if (name === 'combined') (fam(n.family).negatives++, found && fam(n.family).flagged++);
    }
    out[name] = {
      positives: corpus.positives.length,
      negatives: corpus.negatives.length,
      recall: tp / corpus.positives.length,
      false_positive_rate: flagged.length / corpus.negatives.length,
      missed: [...new Set(missed)],
      false_positives: [...new Set(flagged)],
    };
  }
  out.families = Object.fromEntries(
    Object.entries(families)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([f, x]) => [f, { ...x, recall: x.positives ? x.found / x.positives : null, false_positive_rate: x.negatives ? x.flagged / x.negatives : null }]),
  );
  const byId = new Map(RULES.map((r) => [r.id, r]));
  const own = corpus.positives.filter((p) => p.rule);
  const notOwn = own.filter((p) => !byId.has(p.rule) || runRule(byId.get(p.rule), p.text).length === 0).map((p) => p.rule);
  out.catalogue = { rules: own.length, found_by_own_rule: own.length - notOwn.length, not_found_by_own_rule: notOwn };
  Object.assign(out, await worstScans());
  return out;
}

const UNITS = ['token_', 'password-', 'a=', 'api_key: ', 'key=key=', 'AAAA', 'aB3+', '%41', '"a"+', 'Bearer ', 'basic ', 's.', 'xoxb-1', 'curl -u a:', 'http://a:b@', 'kind: Secret\ndata:\n  a: ', '?code=', '\u200b', 'eyJ', 'MIIEpAIBAAK', 'the password is ', ': : ', 'a.a.', '\\\n', 'sk-', '0.', '/', 'u+', 'api-', 'live_', 'okta 00', 'splunk_token=', 'ATCTT3xFfG', 'sl.', '1//0'];
const adversarial = (u) => `${u.repeat(Math.ceil(MAX_SCANNED / u.length)).slice(0, MAX_SCANNED - 8)}${Math.random().toString(36).slice(2, 8)}`;

/**
 * The slowest scan of one entry whose every field is adversarial text at the longest length
 * scanned (name-like runs, repeated separators, escapes, base64, header and YAML shapes, token
 * prefixes), and of 100 KB of it (25 fields of 4 KB in one write): the write path's scan must
 * stay fast whatever the input.
 */
async function worstScans() {
  await scanFields([{ path: 'warm-up', text: 'ghp_warm' }]);
  let entry = 0;
  let kb100 = 0;
  for (const u of UNITS) {
    const text = adversarial(u);
    const e = { summary: text, content: text, subject: text, scope: text, created_by: text, tags: [text], evidence: [{ type: 'doc', uri: text, note: text }] };
    let t = performance.now();
    await scanFields(secretFields(e));
    entry = Math.max(entry, performance.now() - t);
    const fields = Array.from({ length: 25 }, (_, i) => ({ path: `f${i}`, text: adversarial(u) }));
    t = performance.now();
    await scanFields(fields);
    kb100 = Math.max(kb100, performance.now() - t);
  }
  return { worst_entry_scan_ms: Math.round(entry * 10) / 10, worst_100kb_scan_ms: Math.round(kb100 * 10) / 10 };
}

const pct = (x) => (x === null ? '  -  ' : `${(x * 100).toFixed(1)}%`.padStart(6));

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const r = await evaluate();
  if (process.argv.includes('--json')) console.log(JSON.stringify(r, null, 2));
  else {
    for (const name of ['secretlint preset', 'our rules', 'combined']) {
      const x = r[name];
      console.log(`${name.padEnd(18)} recall ${(x.recall * 100).toFixed(1)}%  false positives ${(x.false_positive_rate * 100).toFixed(1)}%  (${x.positives} positive, ${x.negatives} negative samples)`);
      if (name === 'combined') {
        if (x.missed.length) console.log(`  missed: ${x.missed.join(', ')}`);
        if (x.false_positives.length) console.log(`  flagged by mistake: ${x.false_positives.join(', ')}`);
      }
    }
    console.log('\nper family (combined)      recall   false positives');
    for (const [f, x] of Object.entries(r.families)) console.log(`  ${f.padEnd(24)} ${pct(x.recall)} of ${String(x.positives).padStart(3)}   ${pct(x.false_positive_rate)} of ${String(x.negatives).padStart(3)}`);
    const c = r.catalogue;
    console.log(`\ncatalogue rules that find their own sample by themselves: ${c.found_by_own_rule} of ${c.rules}${c.not_found_by_own_rule.length ? ` (not: ${c.not_found_by_own_rule.join(', ')})` : ''}`);
    console.log(`worst scan of one adversarial entry (every field ${MAX_SCANNED} characters): ${r.worst_entry_scan_ms} ms`);
    console.log(`worst scan of 100 KB of adversarial text (25 fields of ${MAX_SCANNED} characters): ${r.worst_100kb_scan_ms} ms`);
  }
}

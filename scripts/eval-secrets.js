#!/usr/bin/env node
// `npm run eval:secrets`: recall and false-positive rate of the secret scan on
// test/fixtures/secrets/corpus.json, for secretlint's recommend preset alone, our rules alone,
// and both together (what every write runs). `--json` prints the figures as JSON.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_SCANNED, scanText, secretFields } from '../dist/core/secrets.js';
import { scanFields, scanWithSecretlint } from '../dist/service/secret-scan.js';

const corpus = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../test/fixtures/secrets/corpus.json'), 'utf8'));

export async function evaluate() {
  const detectors = {
    'secretlint preset': async (t) => (await scanWithSecretlint([{ path: 'x', text: t }])).length > 0,
    'our rules': async (t) => scanText('x', t).length > 0,
    combined: async (t) => (await scanFields([{ path: 'x', text: t }])).length > 0,
  };
  const out = {};
  for (const [name, hit] of Object.entries(detectors)) {
    const missed = [];
    let tp = 0;
    for (const p of corpus.positives) (await hit(p.text)) ? tp++ : missed.push(p.provider);
    const flagged = [];
    for (const n of corpus.negatives) if (await hit(n.text)) flagged.push(n.kind);
    out[name] = {
      positives: corpus.positives.length,
      negatives: corpus.negatives.length,
      recall: tp / corpus.positives.length,
      false_positive_rate: flagged.length / corpus.negatives.length,
      missed: [...new Set(missed)],
      false_positives: [...new Set(flagged)],
    };
  }
  out.worst_entry_scan_ms = await worstEntryScan();
  return out;
}

/**
 * The slowest scan of one entry whose every field is adversarial text at the longest length
 * scanned (name-like runs, repeated separators, escapes, base64, header and YAML shapes): the
 * write path's scan must stay under 100 ms whatever the input.
 */
async function worstEntryScan() {
  const units = ['token_', 'password-', 'a=', 'api_key: ', 'key=key=', 'AAAA', 'aB3+', '%41', '"a"+', 'Bearer ', 'basic ', 's.', 'xoxb-1', 'curl -u a:', 'http://a:b@', 'kind: Secret\ndata:\n  a: ', '?code=', '\u200b', 'eyJ', 'MIIEpAIBAAK', 'the password is ', ': : ', 'a.a.', '\\\n'];
  await scanFields([{ path: 'warm-up', text: 'ghp_warm' }]);
  let worst = 0;
  for (const u of units) {
    const text = `${u.repeat(Math.ceil(MAX_SCANNED / u.length)).slice(0, MAX_SCANNED - 8)}${Math.random().toString(36).slice(2, 8)}`;
    const entry = { summary: text, content: text, subject: text, scope: text, created_by: text, tags: [text], evidence: [{ type: 'doc', uri: text, note: text }] };
    const t = performance.now();
    await scanFields(secretFields(entry));
    worst = Math.max(worst, performance.now() - t);
  }
  return Math.round(worst * 10) / 10;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const r = await evaluate();
  if (process.argv.includes('--json')) console.log(JSON.stringify(r, null, 2));
  else {
    for (const [name, x] of Object.entries(r)) {
      if (typeof x !== 'object') continue;
      console.log(`${name.padEnd(18)} recall ${(x.recall * 100).toFixed(1)}%  false positives ${(x.false_positive_rate * 100).toFixed(1)}%  (${x.positives} positive, ${x.negatives} negative samples)`);
      if (name === 'combined') {
        if (x.missed.length) console.log(`  missed: ${x.missed.join(', ')}`);
        if (x.false_positives.length) console.log(`  flagged by mistake: ${x.false_positives.join(', ')}`);
      }
    }
    console.log(`worst scan of one adversarial entry (every field ${MAX_SCANNED} characters): ${r.worst_entry_scan_ms} ms`);
  }
}

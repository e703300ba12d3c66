import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isPlaceholder, scanText, secretFields } from '../../src/core/secrets.js';
import { scanFields } from '../../src/service/secret-scan.js';

const corpus = JSON.parse(readFileSync(join(__dirname, '../fixtures/secrets/corpus.json'), 'utf8')) as {
  positives: { provider: string; text: string }[];
  negatives: { kind: string; text: string }[];
};

describe('secret scan', () => {
  it('meets the targets on the corpus: recall >= 95 %, false positives <= 2 %', async () => {
    expect(corpus.positives.length).toBeGreaterThanOrEqual(100);
    expect(corpus.negatives.length).toBeGreaterThanOrEqual(100);
    let tp = 0;
    const missed: string[] = [];
    for (const p of corpus.positives) {
      if ((await scanFields([{ path: 'content', text: p.text }])).length) tp++;
      else missed.push(p.provider);
    }
    let fp = 0;
    const flagged: string[] = [];
    for (const n of corpus.negatives) {
      if ((await scanFields([{ path: 'content', text: n.text }])).length) {
        fp++;
        flagged.push(n.text);
      }
    }
    expect(tp / corpus.positives.length, `missed: ${missed.join(', ')}`).toBeGreaterThanOrEqual(0.95);
    expect(fp / corpus.negatives.length, `flagged: ${flagged.join(' | ')}`).toBeLessThanOrEqual(0.02);
  });

  it('accepts placeholders and documented example keys', () => {
    for (const v of ['[API_KEY]', '<TOKEN>', '${SECRET}', '{{ token }}', 'ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'AKIAIOSFODNN7EXAMPLE', 'your-api-key'])
      expect(isPlaceholder(v), v).toBe(true);
    expect(scanText('c', 'set password=<PASSWORD> and api_key: [API_KEY] and token=${TOKEN}')).toEqual([]);
    expect(scanText('c', 'the docs key AKIAIOSFODNN7EXAMPLE is fine')).toEqual([]);
  });

  it('names field, rule and position, never the value', () => {
    const text = 'line one\nuse sk_live_4hK9sT2mQ8vX1bN7cR5eW3zY please';
    const [f] = scanText('entry.content', text);
    expect(f).toMatchObject({ path: 'entry.content', rule: 'stripe-key', line: 2, column: 5 });
    expect(JSON.stringify(f)).not.toContain('4hK9sT2mQ8vX1bN7cR5eW3zY');
  });

  it('scans summary, content, subject, tags and evidence uri and note', () => {
    const fields = secretFields({ summary: 's', content: 'c', subject: 'x', tags: ['a'], evidence: [{ type: 'doc', uri: 'u', note: 'n' }] }, 'entry');
    expect(fields.map((f) => f.path)).toEqual([
      'entry.summary',
      'entry.content',
      'entry.subject',
      'entry.tags[0]',
      'entry.evidence[0].uri',
      'entry.evidence[0].note',
    ]);
  });

  it('finds a private key that JSON escaping would hide (raw text, not the serialization)', async () => {
    const key = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAw8Jx1\n-----END RSA PRIVATE KEY-----';
    expect((await scanFields([{ path: 'content', text: key }])).map((f) => f.rule)).toContain('private-key');
  });
});

describe('the assignment rule on hostile input', () => {
  it('scans 100 KB of name-like text at once (it used to backtrack for minutes), and still finds the real assignment', () => {
    for (const unit of ['token_', 'password-', 'a=', 'api_key: ', 'secret_key_token_']) {
      const text = `${unit.repeat(Math.ceil(100_000 / unit.length))}\nclient_secret = "Zq8Wm2Xc4Vb6Nn1Ll3Kk5"`;
      const found = scanText('content', text).filter((f) => f.rule === 'secret-assignment');
      expect(found.map((f) => text.slice(f.start, f.end))).toContain('Zq8Wm2Xc4Vb6Nn1Ll3Kk5');
    }
  });
  it('reads the value on the same line only, and names the value, not a copy of it inside the name', () => {
    expect(scanText('content', 'API_KEY=\nOTHER_SETTING=enabled-for-all').filter((f) => f.rule === 'secret-assignment')).toEqual([]);
    const text = 'export hunter2hunter_PASSWORD="hunter2hunter"';
    const [f] = scanText('content', text).filter((x) => x.rule === 'secret-assignment');
    expect(f?.start).toBe(text.lastIndexOf('hunter2hunter'));
  });
});

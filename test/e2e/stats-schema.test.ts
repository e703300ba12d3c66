/**
 * `memory stats --json` conforms to schemas/statistics.schema.json (002 Req 22.8), checked with a
 * JSON Schema validator (ajv, draft 2020-12) against the checked-in file, on an empty project, a
 * busy one, all projects and a date range.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { cli, entry, gitdir } from '../helpers/repo.js';

const schema = JSON.parse(readFileSync(join(__dirname, '../../schemas/statistics.schema.json'), 'utf8'));
const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
const check = (doc: unknown): void => {
  const ok = validate(doc);
  expect(ok, JSON.stringify(validate.errors, null, 1)).toBe(true);
};

describe('Statistics JSON Schema', () => {
  it('accepts every stats document and rejects a broken one', () => {
    const dir = gitdir();
    cli(dir, ['init', 'empty']);
    check(cli(dir, ['stats', 'empty', '--json']).json());
    const env = { BASS_AGENTS_NOW: '2026-03-01T00:00:00Z', BASS_AGENTS_AGENT: 'a1' };
    const updates = [
      entry({ summary: 'one' }),
      entry({ summary: 'two', confidence: 0.3, status: 'draft', evidence: [] }),
      entry({ section: 'state', summary: 'three', valid_from: '2026-02-01T00:00:00Z', valid_to: '2026-03-04T00:00:00Z' }),
    ];
    const r = cli(dir, ['apply', 'demo', '--file', '-', '--json'], { env, input: JSON.stringify(updates.map((e) => ({ operation: 'create', entry: e }))) });
    const [first] = r.json().applied.map((a: { id: string }) => a.id);
    cli(dir, ['apply', 'demo', '--file', '-'], {
      env,
      input: JSON.stringify([{ operation: 'supersede', target_id: first, entry: entry({ summary: 'one, revised' }) }]),
    });
    cli(dir, ['query', 'revised', '--scope', 'service:billing'], { env });
    const busy = cli(dir, ['stats', 'demo', '--json'], { env }).json();
    check(busy);
    expect(busy).toMatchObject({ total_entries: 4, low_confidence_count: 1, compaction_candidates: { count: 1 } });
    expect(busy.entries_approaching_expiry).toHaveLength(1);
    check(cli(dir, ['stats', '--json'], { env }).json());
    check(cli(dir, ['stats', 'demo', '--since', '2026-02-01T00:00:00Z', '--until', '2026-02-02T00:00:00Z', '--json'], { env }).json());
    expect(validate({ ...busy, avg_confidence: 2 })).toBe(false);
    expect(validate({ ...busy, total_entries: undefined })).toBe(false);
  });
});

/**
 * check-freshness, export and import through the CLI on real repos (002 Req 14, 19, 20.3).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, entry, git, gitdir, seed, writeJson } from '../helpers/repo.js';

const env = { BASS_AGENTS_NOW: '2026-06-01T12:00:00Z', BASS_AGENTS_AGENT: 'tester' };

describe('check-freshness', () => {
  it('lists expired, expiring and review-due entries, most urgent first', () => {
    const dir = gitdir();
    seed(
      dir,
      [
        entry({ section: 'state', summary: 'flag A on', valid_from: '2026-05-01T00:00:00Z', valid_to: '2026-06-04T00:00:00Z' }),
        entry({ section: 'state', summary: 'flag B on', valid_from: '2026-05-01T00:00:00Z', valid_to: '2026-07-30T00:00:00Z' }),
        entry({ summary: 'runbook reviewed monthly', review_interval: 'P30D' }),
      ],
      env,
    );
    const later = { ...env, BASS_AGENTS_NOW: '2026-07-05T00:00:00Z' };
    const r = cli(dir, ['check-freshness', '--json'], { env: later });
    expect(r.code).toBe(0);
    const items = r.json();
    expect(items.map((i: { state: string; summary: string }) => [i.state, i.summary])).toEqual([
      ['expired', 'flag A on'],
      ['review_due', 'runbook reviewed monthly'],
    ]);
    const wide = cli(dir, ['check-freshness', '--days', '30', '--json'], { env: later }).json();
    expect(wide.map((i: { summary: string }) => i.summary)).toContain('flag B on');
    expect(cli(dir, ['check-freshness', '--days', '-1'], { env }).code).toBe(2);
  });
});

describe('export and import', () => {
  it('round-trips a project through JSON, JSONL and a folder of entry files, byte for byte', () => {
    const src = gitdir();
    const ids = seed(src, [entry({ summary: 'one', tags: ['a'] }), entry({ summary: 'two' }), entry({ summary: 'three', status: 'draft', evidence: [] })], env);
    for (const format of ['json', 'jsonl', 'entries']) {
      const out = format === 'entries' ? 'export/entries' : `export/all.${format}`;
      const e = cli(src, ['export', 'demo', out, '--format', format], { env });
      expect(e.code, e.stderr).toBe(0);
      const dst = gitdir();
      mkdirSync(join(dst, 'export'), { recursive: true });
      const target = format === 'entries' ? join(dst, out) : join(dst, out);
      if (format === 'entries') {
        mkdirSync(target, { recursive: true });
        for (const id of ids) writeFileSync(join(target, `${id}.json`), readFileSync(join(src, out, `${id}.json`)));
      } else writeFileSync(target, readFileSync(join(src, out)));
      const i = cli(dst, ['import', 'demo', out, '--json'], { env });
      expect(i.code, i.stderr).toBe(0);
      expect(i.json().applied).toHaveLength(3);
      for (const id of ids) {
        const rel = (d: string): string => git(d, 'ls-files', `ai-memory/demo/*/${id}.json`).trim();
        expect(readFileSync(join(dst, rel(dst)), 'utf8')).toBe(readFileSync(join(src, rel(src)), 'utf8'));
      }
      expect(git(dst, 'log', '-1', '--format=%s')).toMatch(/memory\(demo\): 3 entries \(3 import\)/);
    }
    const jsonl = cli(src, ['export', 'demo', '-', '--format', 'jsonl'], { env }).stdout.trim().split('\n');
    expect(jsonl.map((l) => JSON.parse(l).id)).toEqual([...ids].sort());
    const filtered = cli(src, ['export', 'demo', '-', '--status', 'draft'], { env });
    expect(JSON.parse(filtered.stdout).map((e: { summary: string }) => e.summary)).toEqual(['three']);
  });

  it('validates everything before writing anything, and resolves id conflicts by skip, overwrite or merge', () => {
    const dir = gitdir();
    const [id] = seed(dir, [entry({ summary: 'original', tags: ['a'] })], env);
    const exported = JSON.parse(cli(dir, ['export', 'demo', '-'], { env }).stdout);
    const head = git(dir, 'rev-parse', 'HEAD');
    const bad = [
      { ...exported[0], id: 'NEW1', summary: 'fine' },
      { ...exported[0], id: 'NEW2', confidence: 7 },
    ];
    const rejected = cli(dir, ['import', 'demo', '-'], { env, input: JSON.stringify(bad) });
    expect(rejected.code).toBe(1);
    expect(rejected.stderr).toMatch(/\[1\]\.confidence/);
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(cli(dir, ['show', 'NEW1'], { env }).code).toBe(3);

    const changed = [{ ...exported[0], summary: 'changed', tags: ['b'], updated_at: '2026-06-01T13:00:00.000Z' }];
    const skip = cli(dir, ['import', 'demo', '-', '--json'], { env, input: JSON.stringify(changed) }).json();
    expect(skip.skipped[0]).toMatchObject({ id });
    expect(cli(dir, ['import', 'demo', '-', '--on-conflict', 'merge', '--json'], { env, input: JSON.stringify(changed) }).json().applied[0]).toMatchObject({
      id,
      action: 'merged',
    });
    const merged = cli(dir, ['show', id, '--json'], { env }).json();
    expect(merged.summary).toBe('changed');
    expect(merged.tags).toEqual(['a', 'b']);
    cli(dir, ['import', 'demo', '-', '--on-conflict', 'overwrite'], { env, input: JSON.stringify(changed) });
    expect(cli(dir, ['show', id, '--json'], { env }).json().tags).toEqual(['b']);
  });

  it('imports the MCP memory server memory.jsonl as entries with their relations; refuses paths outside the workspace', () => {
    const dir = gitdir();
    const lines = [
      { type: 'entity', name: 'Billing Service', entityType: 'service', observations: ['retries invoices 3 times', 'owned by team payments'] },
      { type: 'entity', name: 'Payments Team', entityType: 'team', observations: ['on call weekly'] },
      { type: 'relation', from: 'Payments Team', to: 'Billing Service', relationType: 'owns' },
    ];
    writeFileSync(join(dir, 'memory.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n'));
    const r = cli(dir, ['import', 'demo', 'memory.jsonl', '--from', 'mcp-memory', '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().applied).toHaveLength(2);
    const hits = cli(dir, ['query', 'billing invoices', '--json'], { env }).json();
    expect(hits[0].summary).toBe('Billing Service (service): retries invoices 3 times');
    expect(hits[0].content).toContain('Payments Team owns Billing Service');
    expect(hits[0].related_entries).toHaveLength(1);
    expect(hits[0].created_by).toBe('tester');
    // Again: same ids, skipped.
    expect(cli(dir, ['import', 'demo', 'memory.jsonl', '--from', 'mcp-memory', '--json'], { env }).json().skipped).toHaveLength(2);
    writeFileSync(join(dir, 'broken.jsonl'), '{"type":"entity","name":"x"}\nnot json\n');
    const broken = cli(dir, ['import', 'demo', 'broken.jsonl', '--from', 'mcp-memory'], { env });
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/broken\.jsonl:2/);
    expect(cli(dir, ['import', 'demo', '/etc/hostname'], { env }).code).toBe(1);
    expect(cli(dir, ['export', 'demo', '../outside.json'], { env }).stderr).toMatch(/outside the workspace root/);
  });
});

describe('import of input-shaped entries and copies', () => {
  it('takes entries without id or timestamps as creates, copies with --reassign-ids, never commits nothing, and counts repeated errors', () => {
    const dir = gitdir();
    const shaped = [1, 2, 3].map((i) => entry({ subject: `billing.s${i}`, summary: `Input-shaped fact ${i}.` }));
    const file = writeJson(dir, 'shaped.json', shaped);
    const r = cli(dir, ['import', 'demo', file, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().applied.map((x: { action: string }) => x.action)).toEqual(['created', 'created', 'created']);
    const ids = cli(dir, ['list', '--json'])
      .json()
      .map((e: { id: string }) => e.id);
    expect(ids).toHaveLength(3);
    // The same file again: duplicates, skipped, and no commit.
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    const again = cli(dir, ['import', 'demo', file, '--json']);
    expect(again.json().skipped).toHaveLength(3);
    expect(again.json().skipped[0].errors[0].message).toMatch(/duplicates entry/);
    expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(head);
    // A copy into another project of this repository, under new ids.
    const out = join(dir, 'out.json');
    expect(cli(dir, ['export', 'demo', out]).code).toBe(0);
    const copy = cli(dir, ['import', 'other', out, '--reassign-ids', '--json']);
    expect(copy.code, copy.stderr).toBe(0);
    const copied = copy.json().applied.map((x: { id: string }) => x.id);
    expect(copied).toHaveLength(3);
    for (const id of copied) expect(ids).not.toContain(id);
    // Thirty broken entries: twenty lines and a count on stderr, all of them with --json.
    const broken = writeJson(
      dir,
      'broken.json',
      Array.from({ length: 30 }, (_, i) => entry({ subject: `x.${i}`, confidence: 7 })),
    );
    const bad = cli(dir, ['import', 'demo', broken]);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split('\n')).toHaveLength(21);
    expect(bad.stderr).toMatch(/… and 10 more problems \(--json lists them all\)/);
    expect(cli(dir, ['import', 'demo', broken, '--json']).json().error.problems).toHaveLength(30);
  });
});

describe('import says what happened', () => {
  it('names --reassign-ids when the ids belong to another project (exit 1); copies rewrite links in the batch and never leave one dangling', () => {
    const dir = gitdir();
    const [a, b, c] = seed(
      dir,
      [
        entry({ subject: 'billing.retries', summary: 'Invoice retries stop after 3 attempts.' }),
        entry({ subject: 'billing.cron', summary: 'Invoices are generated nightly.' }),
        entry({ subject: 'billing.ledger', summary: 'The ledger is append-only.' }),
      ],
      env,
    );
    const replaced = cli(dir, ['apply', 'demo', '--file', '-'], {
      env,
      input: JSON.stringify([
        { operation: 'supersede', target_id: a, entry: entry({ subject: 'billing.retries', summary: 'Invoice retries stop after 5 attempts.' }) },
      ]),
    });
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(cli(dir, ['link', b, c], { env }).code).toBe(0);
    expect(cli(dir, ['export', 'demo', 'out.json'], { env }).code).toBe(0);
    const exported = JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8')) as { id: string; superseded_by: string | null }[];
    expect(exported).toHaveLength(4);

    // The same ids into another project: nothing imported, and the message says what to do.
    const head = git(dir, 'rev-parse', 'HEAD');
    const plain = cli(dir, ['import', 'other', 'out.json'], { env });
    expect(plain.code).toBe(1);
    expect(plain.stdout).toMatch(/exists in project demo; --reassign-ids imports a copy/);
    expect(plain.stderr).toMatch(/nothing was imported into other: .*--reassign-ids/);
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);

    // One of the copies duplicates an entry already in the target: the copy superseded by it points at that entry.
    expect(cli(dir, ['import', 'demo', 'out.json'], { env }).stdout).toMatch(/nothing new: every entry is already in demo/);
    const target = cli(dir, ['init', 'other'], { env });
    expect(target.code).toBe(0);
    const d = cli(dir, ['create', 'other', '--file', '-'], {
      env,
      input: JSON.stringify(entry({ subject: 'billing.retries', summary: 'Invoice retries stop after 5 attempts.' })),
    }).stdout.trim();
    const copy = cli(dir, ['import', 'other', 'out.json', '--reassign-ids', '--json'], { env });
    expect(copy.code, copy.stderr).toBe(0);
    const r = copy.json();
    expect(r.applied).toHaveLength(3); // the successor was a duplicate of d
    expect(r.skipped[0].errors[0].message).toMatch(new RegExp(`duplicates entry ${d}`));
    const copies = (
      cli(dir, ['list', 'other', '--status', 'any', '--json'], { env }).json() as {
        id: string;
        subject: string;
        status: string;
        superseded_by: string | null;
        related_entries: string[];
      }[]
    ).filter((e) => e.id !== d);
    expect(copies.find((e) => e.status === 'superseded')!.superseded_by).toBe(d);
    const linked = copies.filter((e) => e.related_entries.length);
    expect(linked).toHaveLength(2);
    for (const e of linked) expect(copies.map((x) => x.id)).toContain(e.related_entries[0]); // the copies link each other, not the originals
    expect(cli(dir, ['doctor'], { env }).code).toBe(0);

    // A superseded entry whose successor is neither imported nor stored is not imported.
    const orphan = exported.filter((e) => e.superseded_by).map((e) => ({ ...e, superseded_by: '01HZZZZZZZZZZZZZZZZZZZZZZZ' }));
    const lone = cli(dir, ['import', 'third', '-', '--reassign-ids', '--json'], { env, input: JSON.stringify(orphan) });
    expect(lone.code).toBe(1);
    expect(lone.json().skipped[0].errors[0]).toMatchObject({ path: '[0].superseded_by', message: expect.stringMatching(/neither imported nor stored/) });
  });
});

/**
 * Lifecycle through the CLI on real repos, with BASS_AGENTS_NOW moving the clock.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, entry, git, gitdir, seed, stateDir } from '../helpers/repo.js';

const at = (iso: string): Record<string, string> => ({ BASS_AGENTS_NOW: iso, BASS_AGENTS_AGENT: 'tester' });
const DAY0 = '2026-01-01T00:00:00Z';

describe('decay and forgetting', () => {
  it('dry run lists before → after and changes nothing; --apply archives below the threshold in one commit; restore brings it back', () => {
    const dir = gitdir();
    const [obs, fact, kept] = seed(
      dir,
      [
        entry({ section: 'observations', summary: 'the nightly job was slow on Monday' }),
        entry({ section: 'decisions', kind: 'decision', summary: 'we use Postgres for billing' }),
        entry({ section: 'observations', summary: 'protected note', lifecycle: { protected: true } }),
      ],
      at(DAY0),
    );
    appendFileSync(join(dir, 'ai-memory/demo/config.yaml'), 'decay:\n  curve: exponential\n  exponential:\n    stability_hours: 24\n');
    git(dir, 'commit', '-qam', 'decay settings');
    const head = git(dir, 'rev-parse', 'HEAD');
    const dry = cli(dir, ['decay', 'demo', '--json'], { env: at('2026-01-04T00:00:00Z') });
    expect(dry.code, dry.stderr).toBe(0);
    const r = dry.json();
    expect(r).toMatchObject({ analyzed: 3, forgotten: 1, dry_run: true, curve: 'exponential', forget_threshold: 0.1 });
    const row = r.entries.find((x: { id: string }) => x.id === obs);
    expect(row).toMatchObject({ before: 1, forget: true, retrievals: 0, days_since_access: 3 });
    expect(row.after).toBeCloseTo(Math.exp(-3), 4);
    expect(r.entries.map((x: { id: string }) => x.id)).not.toContain(fact); // semantic: no decay
    expect(r.entries.map((x: { id: string }) => x.id)).not.toContain(kept); // protected
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);

    const applied = cli(dir, ['decay', 'demo', '--apply', '--json'], { env: at('2026-01-04T00:00:00Z') }).json();
    expect(applied).toMatchObject({ forgotten: 1, dry_run: false });
    expect(git(dir, 'log', '-1', '--format=%B')).toMatch(new RegExp(`Memory-Id: ${obs}\\nMemory-Op: forget`));
    expect(git(dir, 'show', '--stat', '--format=', 'HEAD').trim().split('\n')).toHaveLength(2); // one file + summary line
    expect(cli(dir, ['show', obs, '--json'], { env: at('2026-01-04T00:00:00Z') }).json().status).toBe('archived');
    expect(
      cli(dir, ['list', '--json'], { env: at('2026-01-04T00:00:00Z') })
        .json()
        .map((h: { id: string }) => h.id),
    ).not.toContain(obs);
    // The next run compares with this one: nothing moved in between.
    const again = cli(dir, ['decay', 'demo', '--json'], { env: at('2026-01-04T00:00:00Z') }).json();
    expect(again).toMatchObject({ analyzed: 2, changed: 0, previous_run_at: '2026-01-04T00:00:00.000Z' });

    const restored = cli(dir, ['restore', obs, '--json'], { env: at('2026-01-05T00:00:00Z') });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.json()).toMatchObject({ from: 'archive', entry: { status: 'active' } });
    expect(cli(dir, ['restore', fact], { env: at('2026-01-05T00:00:00Z') }).code).toBe(1); // active: nothing to restore
  });

  it('forget_action delete removes the file; restore finds it in git history', () => {
    const dir = gitdir();
    const [id] = seed(dir, [entry({ section: 'observations', summary: 'a passing remark' })], at(DAY0));
    const r = cli(
      dir,
      ['decay', 'demo', '--apply', '--curve', 'half-life', '--half-life-days', '1', '--access-weight', '0', '--forget-action', 'delete', '--json'],
      { env: at('2026-03-01T00:00:00Z') },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ curve: 'half-life', forgotten: 1, forget_threshold: 0.15 });
    expect(git(dir, 'ls-files', 'ai-memory/demo/observations').trim()).toBe('');
    expect(cli(dir, ['show', id], { env: at('2026-03-01T00:00:00Z') }).code).toBe(3);
    const back = cli(dir, ['restore', id, '--json'], { env: at('2026-03-02T00:00:00Z') });
    expect(back.code, back.stderr).toBe(0);
    expect(back.json()).toMatchObject({ from: 'history', project: 'demo', entry: { id, status: 'active', summary: 'a passing remark' } });
    expect(existsSync(join(dir, `ai-memory/demo/observations/${id}.json`))).toBe(true);
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('periodic (default): 60 days → 0.9025, semantic untouched, nothing forgotten', () => {
    const dir = gitdir();
    const [id] = seed(dir, [entry({ section: 'observations', confidence: 1, summary: 'observed once' })], at(DAY0));
    const r = cli(dir, ['decay', '--json'], { env: at('2026-03-02T00:00:00Z') }).json();
    expect(r).toMatchObject({ curve: 'periodic', forgotten: 0 });
    expect(r.entries).toEqual([expect.objectContaining({ id, before: 1, after: 0.9025 })]);
    const shown = cli(dir, ['show', id, '--json'], { env: at('2026-03-02T00:00:00Z') }).json();
    expect(shown.computed).toMatchObject({
      effective_confidence: 0.9025,
      confidence_label: 'stated explicitly',
      curve: 'periodic',
      memory_type: 'episodic',
      decays: true,
    });
  });
});

describe('reinforcement, promotion, links', () => {
  it('a query is a retrieval (local, no commit); reinforce is committed; promotion after 5 retrievals', () => {
    const dir = gitdir();
    const [id] = seed(dir, [entry({ section: 'observations', confidence: 0.8, summary: 'ledger exports run at midnight' })], at(DAY0));
    const head = git(dir, 'rev-parse', 'HEAD');
    for (let i = 0; i < 5; i++) expect(cli(dir, ['query', 'ledger exports', '--json'], { env: at(`2026-01-0${i + 2}T00:00:00Z`) }).json()).toHaveLength(1);
    expect(cli(dir, ['list'], { env: at('2026-01-07T00:00:00Z') }).code).toBe(0); // browsing is not a retrieval
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
    const shown = cli(dir, ['show', id, '--json'], { env: at('2026-01-07T00:00:00Z') }).json();
    expect(shown.computed).toMatchObject({
      retrieval_count: 5,
      last_accessed_at: '2026-01-06T00:00:00.000Z',
      effective_confidence: 0.95,
      promotion_candidate: true,
    });
    expect(cli(dir, ['decay', '--json'], { env: at('2026-01-07T00:00:00Z') }).json().promotion_candidates).toEqual([id]);

    const re = cli(dir, ['reinforce', id, '--boost-type', 'additive', '--amount', '0.2', '--json'], { env: at('2026-01-08T00:00:00Z') });
    expect(re.code, re.stderr).toBe(0);
    const lc = re.json().entries[0].lifecycle;
    expect(lc.reviewed_at).toBe('2026-01-08T00:00:00.000Z');
    expect(lc.stability).toBeGreaterThan(0);
    expect(lc.importance).toBeGreaterThan(0.2);
    expect(git(dir, 'log', '-1', '--format=%B')).toContain('Memory-Op: reinforce');

    const pr = cli(dir, ['promote', id, '--json'], { env: at('2026-01-09T00:00:00Z') });
    expect(pr.code, pr.stderr).toBe(0);
    expect(pr.json().entries[0]).toMatchObject({ confidence: 0.9, lifecycle: { memory_type: 'semantic' } });
    expect(cli(dir, ['promote', id], { env: at('2026-01-09T00:00:00Z') }).code).toBe(1);
  });

  it('link relates both entries in one commit; related lists links first, then similar entries', () => {
    const dir = gitdir();
    const [a, b, c] = seed(
      dir,
      [
        entry({ summary: 'invoice retries use exponential backoff', subject: 'billing.retry' }),
        entry({ summary: 'the payments team owns billing', subject: 'org.payments' }),
        entry({ summary: 'invoice retries stop after five attempts', subject: 'billing.retry-limit' }),
      ],
      at(DAY0),
    );
    const l = cli(dir, ['link', a, b, '--type', 'owned-by', '--json'], { env: at(DAY0) });
    expect(l.code, l.stderr).toBe(0);
    expect(cli(dir, ['show', b, '--json'], { env: at(DAY0) }).json().related_entries).toEqual([a]);
    expect(git(dir, 'log', '-1', '--format=%B').match(/Memory-Op: link/g)).toHaveLength(2);
    const rel = cli(dir, ['related', a, '--json'], { env: at(DAY0) }).json();
    expect(rel[0]).toMatchObject({ id: b, meta: { relation: 'linked' } });
    expect(rel[1]).toMatchObject({ id: c, meta: { relation: 'similar' } });
    expect(cli(dir, ['link', a, a], { env: at(DAY0) }).code).toBe(2);
    expect(readFileSync(join(stateDir(dir), 'logs/operations.jsonl'), 'utf8')).toContain('"type":"owned-by"');
  });

  it('a confidence label never claims more than the entry states, however often it is read', () => {
    const dir = gitdir();
    const id = cli(dir, ['create', 'demo', '--file', '-'], {
      input: JSON.stringify(entry({ kind: 'incident', section: 'observations', confidence: 0.7 })),
    }).stdout.trim();
    for (let i = 0; i < 8; i++) expect(cli(dir, ['query', 'invoices', '--json']).code).toBe(0);
    const shown = cli(dir, ['show', id, '--json']).json();
    expect(shown.confidence).toBe(0.7);
    expect(shown.computed.confidence_label).toBe('high confidence');
    const hit = cli(dir, ['query', 'invoices', '--json']).json()[0];
    expect(hit.meta.confidence_label).not.toBe('stated explicitly');
  });
});

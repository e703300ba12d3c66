/**
 * extract, compact (plan → apply → log), remember and short-term sessions through the CLI.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, entry, git, gitdir, testdir, stateDir } from '../helpers/repo.js';

const at = (iso: string): Record<string, string> => ({ BASS_AGENTS_NOW: iso, BASS_AGENTS_AGENT: 'tester' });
const NOW = '2026-02-01T10:00:00Z';

describe('extract', () => {
  it('stores candidates as drafts in one commit, skips what memory already knows, and --dry-run writes nothing', () => {
    const dir = gitdir();
    expect(
      cli(dir, ['create', 'demo', '--file', '-'], {
        env: at(NOW),
        input: JSON.stringify(entry({ summary: 'the staging database is reset every Sunday night' })),
      }).code,
    ).toBe(0);
    writeFileSync(
      join(dir, 'notes.md'),
      'We decided to use Postgres advisory locks for the billing scheduler.\nRemember that the staging database is reset every Sunday night.\nThe fix was to raise the HTTP client timeout in the config.\n',
    );
    const head = git(dir, 'rev-parse', 'HEAD');
    const dry = cli(dir, ['extract', 'demo', '--file', 'notes.md', '--dry-run', '--json'], { env: at(NOW) }).json();
    expect(dry).toMatchObject({ candidates: 3, stored: 0, deduplicated_count: 1, dry_run: true });
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
    const r = cli(dir, ['extract', 'demo', '--file', 'notes.md', '--json'], { env: at(NOW) });
    expect(r.code, r.stderr).toBe(0);
    const out = r.json();
    expect(out.stored).toBe(2);
    const decision = out.extractions.find((x: { type: string }) => x.type === 'decision');
    const stored = cli(dir, ['show', decision.id, '--json'], { env: at(NOW) }).json();
    expect(stored).toMatchObject({ status: 'draft', section: 'decisions', kind: 'decision', evidence: [{ type: 'assumption' }] });
    expect(git(dir, 'log', '-1', '--format=%s')).toMatch(/: 2 entries \(2 create\)/);
    // Drafts stay out of default queries until someone confirms them.
    // ("advisory" alone: "locks" would find the active entry's "lock contention", by its stem.)
    expect(cli(dir, ['query', 'advisory', '--json'], { env: at(NOW) }).json()).toEqual([]);
    expect(cli(dir, ['query', 'advisory', '--status', 'draft', '--min-confidence', '0', '--json'], { env: at(NOW) }).json()).toHaveLength(1);
  });
});

describe('compact', () => {
  it('writes a plan and changes nothing; applying it merges and supersedes in one commit; log shows it', () => {
    const dir = gitdir();
    const updates = [
      entry({ summary: 'Invoice retries use exponential backoff with jitter', subject: 'billing.retry', tags: ['retry'] }),
      entry({
        summary: 'invoice retries use exponential backoff with jitter.',
        subject: 'billing.retry',
        tags: ['backoff'],
        confidence: 0.9,
        evidence: [{ type: 'code', uri: 'src/b.ts', note: '' }],
      }),
      entry({ summary: 'Dashboards load slowly on Monday mornings', subject: 'ui.dashboard' }),
    ];
    const applied = cli(dir, ['apply', 'demo', '--file', '-', '--json'], {
      env: at(NOW),
      input: JSON.stringify(updates.map((e) => ({ operation: 'create', entry: e }))),
    });
    // The second is a near-duplicate, not an exact one (punctuation differs), so both are written.
    expect(applied.json().applied).toHaveLength(3);
    const [a, b] = applied.json().applied.map((x: { id: string }) => x.id);
    const head = git(dir, 'rev-parse', 'HEAD');
    const p = cli(dir, ['compact', 'demo', '--json'], { env: at(NOW) });
    expect(p.code, p.stderr).toBe(0);
    const plan = p.json();
    expect(plan.path).toMatch(/^\.git\/bass-agents\/plans\/compact-demo-.*\.json$/);
    expect(plan.groups).toEqual([
      // Members in id order: the ids of one batch have random parts, so that order is not a and b's.
      expect.objectContaining({ action: 'merge', members: [a, b].sort().map((id: string) => expect.objectContaining({ id })) }),
    ]);
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(dir, 'status', '--porcelain')).toBe('');

    const r = cli(dir, ['compact', '--apply', plan.path, '--json'], { env: at('2026-02-01T11:00:00Z') });
    expect(r.code, r.stderr).toBe(0);
    const res = r.json();
    expect(res.merged).toHaveLength(1);
    const merged = cli(dir, ['show', res.merged[0].id, '--json'], { env: at(NOW) }).json();
    expect(merged).toMatchObject({ confidence: 0.9, status: 'active' });
    expect(merged.tags.sort()).toEqual(['backoff', 'retry']);
    expect(merged.evidence).toHaveLength(2);
    for (const id of [a, b])
      expect(cli(dir, ['show', id, '--json'], { env: at(NOW) }).json()).toMatchObject({ status: 'superseded', superseded_by: res.merged[0].id });
    expect(git(dir, 'rev-list', '--count', `${head.trim()}..HEAD`).trim()).toBe('1');
    const log = cli(dir, ['log', 'demo', '--op', 'consolidate', '--json'], { env: at(NOW) }).json();
    expect(log).toEqual([expect.objectContaining({ agent: 'tester', changes: [{ id: res.merged[0].id, op: 'consolidate' }] })]);
    // Applying the same plan again: its members changed, nothing is done.
    const again = cli(dir, ['compact', '--apply', plan.path, '--json'], { env: at(NOW) }).json();
    expect(again).toMatchObject({ merged: [], commit: null });
    expect(again.skipped[0].reason).toMatch(/changed or is no longer active/);
    expect(cli(dir, ['compact', '--apply', 'nope.json'], { env: at(NOW) }).code).toBe(1);
  });
});

describe('compact: a review group can be accepted', () => {
  it('carries the merge it would make; changing its action to merge carries it out; a group without a result is refused (exit 1)', () => {
    const dir = gitdir();
    const pair = ['Invoice retries use exponential backoff with jitter', 'Invoice retries use exponential backoff with random jitter'];
    const r0 = cli(dir, ['apply', 'demo', '--file', '-', '--json'], {
      env: at(NOW),
      input: JSON.stringify(pair.map((summary) => ({ operation: 'create', entry: entry({ summary, content: summary, subject: 'billing.retry' }) }))),
    });
    expect(r0.json().applied).toHaveLength(2);
    const planFile = join(stateDir(dir), 'plans', 'review.json');
    expect(cli(dir, ['compact', 'demo', '--plan', planFile], { env: at(NOW) }).code).toBe(0);
    const plan = JSON.parse(readFileSync(planFile, 'utf8'));
    expect(plan.groups).toEqual([expect.objectContaining({ action: 'review', result: expect.objectContaining({ subject: 'billing.retry' }) })]);

    // Without a result, a merge cannot be made: said so, and exit 1.
    writeFileSync(planFile, JSON.stringify({ ...plan, groups: [{ ...plan.groups[0], action: 'merge', result: undefined }] }));
    const refused = cli(dir, ['compact', '--apply', planFile], { env: at(NOW) });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/skipped group 0: action merge needs a result/);

    // The edited plan may live anywhere: it is read, not written.
    const edited = join(testdir(), 'accepted-plan.json');
    writeFileSync(edited, JSON.stringify({ ...plan, groups: [{ ...plan.groups[0], action: 'merge' }] }));
    const accepted = cli(dir, ['compact', '--apply', edited, '--json'], { env: at('2026-02-01T11:00:00Z') });
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.json().merged).toHaveLength(1);
  });
});

describe('short-term memory (004)', () => {
  it('remember --short-term lives in the session only, expires, shows in query --session; session end keeps the important ones', () => {
    const dir = gitdir();
    cli(dir, ['init', 'demo'], { env: at(NOW) });
    const head = git(dir, 'rev-parse', 'HEAD');
    const long =
      'The deploy of the billing service failed because the database migration timed out; the api config needs a longer lock timeout and a retry with rollback on error.';
    const r1 = cli(dir, ['remember', 'demo', '--short-term', '--session', 's1', '--ttl', '2h', '--text', long, '--json'], { env: at(NOW) });
    expect(r1.code, r1.stderr).toBe(0);
    expect(r1.json()).toMatchObject({ short_term: true, expires_at: '2026-02-01T12:00:00.000Z' });
    cli(dir, ['remember', 'demo', '--short-term', '--session', 's1', '--ttl', '30m', '--text', 'lunch at noon'], { env: at(NOW) });
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(dir, 'status', '--porcelain')).toBe('');

    const q = cli(dir, ['query', 'billing deploy', '--session', 's1', '--json'], { env: at('2026-02-01T10:10:00Z') }).json();
    expect(q[0]).toMatchObject({ meta: { short_term: true, session: 's1' } });
    expect(cli(dir, ['query', 'lunch', '--session', 's1', '--json'], { env: at('2026-02-01T10:10:00Z') }).json()).toHaveLength(1);
    // 45 minutes later the 30-minute one is gone (and cleaned from the session file).
    expect(cli(dir, ['query', 'lunch', '--session', 's1', '--json'], { env: at('2026-02-01T10:45:00Z') }).json()).toEqual([]);
    expect(readFileSync(join(stateDir(dir), 'sessions/s1.json'), 'utf8')).not.toContain('lunch');

    const end = cli(dir, ['session', 'end', 's1', '--json'], { env: at('2026-02-01T11:00:00Z') });
    expect(end.code, end.stderr).toBe(0);
    expect(end.json()).toMatchObject({ promoted: [expect.objectContaining({ project: 'demo' })], dropped: 0 });
    const kept = cli(dir, ['show', end.json().promoted[0].id, '--json'], { env: at('2026-02-01T11:00:00Z') }).json();
    expect(kept).toMatchObject({ section: 'observations', status: 'active', lifecycle: { memory_type: 'episodic' } });
    expect(cli(dir, ['session', 'end', 's1'], { env: at(NOW) }).code).toBe(3);
    expect(cli(dir, ['remember', 'demo', '--short-term', '--session', '../x', '--text', 'y'], { env: at(NOW) }).code).toBe(2);
    expect(cli(dir, ['remember', 'demo', '--short-term', '--session', 's2', '--text', 'key sk_live_9fJ2kL7mN4pQ8rS1tU6vW3xY'], { env: at(NOW) }).code).toBe(1);
  });

  it('session end keeps what was marked important: --important, or an "Important:" note', () => {
    const dir = gitdir();
    cli(dir, ['init', 'demo'], { env: at(NOW) });
    const say = (text: string, extra: string[] = []): void => {
      const r = cli(dir, ['remember', 'demo', '--short-term', '--session', 's3', '--text', text, ...extra], { env: at(NOW) });
      expect(r.code, r.stderr).toBe(0);
    };
    say('Important: the staging database is shared with QA.');
    say('rotate the on-call pager', ['--important']);
    say('lunch at noon');
    const end = cli(dir, ['session', 'end', 's3', '--json'], { env: at('2026-02-01T10:30:00Z') });
    expect(end.code, end.stderr).toBe(0);
    expect(end.json()).toMatchObject({ dropped: 1 });
    const kept = (end.json().promoted as { id: string }[]).map((p) => cli(dir, ['show', p.id, '--json'], { env: at(NOW) }).json().summary as string);
    expect(kept.sort()).toEqual(['Important: the staging database is shared with QA.', 'rotate the on-call pager']);
  });

  it('remember without --short-term commits a draft observation', () => {
    const dir = gitdir();
    const r = cli(dir, ['remember', 'demo', '--text', 'the on-call rotation changes on Mondays', '--json'], { env: at(NOW) });
    expect(r.code, r.stderr).toBe(0);
    expect(cli(dir, ['show', r.json().id, '--json'], { env: at(NOW) }).json()).toMatchObject({
      status: 'draft',
      section: 'observations',
      summary: 'the on-call rotation changes on Mondays',
    });
  });
});

/**
 * Honest messages and repairs, on real repositories and clones: `doctor` sees entries git holds
 * unmerged and `doctor --fix` resolves them through the field-level merge; a dangling
 * `superseded_by` is repaired by `deprecate` or `doctor --fix`; re-creating a superseded or
 * deprecated fact is refused (directly and through a running daemon) unless --force; read
 * commands outside any workspace say so.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { cli, entry, firstOf, git, gitdir, seed, testdir } from '../helpers/repo.js';

const env = { BASS_AGENTS_NO_DAEMON: '1' };
const create = (dir: string, e: Record<string, unknown>, args: string[] = []): { code: number; stdout: string; stderr: string } =>
  cli(dir, ['create', 'demo', '--file', '-', ...args], { env, input: JSON.stringify(e) });

describe('repairs', () => {
  it('doctor names entries git holds unmerged and the driver it lacks; doctor --fix merges them field by field and marks them resolved', () => {
    const dir = gitdir();
    const id = create(dir, entry({ summary: 'Invoice retries stop after 3 attempts.' })).stdout.trim();
    const origin = join(testdir(), 'origin.git');
    git(dir, 'init', '-q', '--bare', '-b', 'main', origin);
    git(dir, 'remote', 'add', 'origin', origin);
    git(dir, 'push', '-q', 'origin', 'main');
    const mate = join(testdir(), 'mate');
    git(dir, 'clone', '-q', origin, mate);
    git(mate, 'config', 'user.name', 'Mate');
    git(mate, 'config', 'user.email', 'mate@example.com');
    expect(cli(mate, ['deprecate', id], { env }).code).toBe(0);
    git(mate, 'push', '-q', 'origin', 'main');
    expect(cli(dir, ['reinforce', id], { env }).code).toBe(0);
    // The driver cannot start here (as after a move of the program it names): git leaves the entry unmerged.
    git(dir, 'config', 'merge.bass-agents-memory.driver', 'bass-agents-not-installed memory merge-driver %O %A %B %P');
    expect(() => git(dir, 'pull', '--no-rebase', '-q', 'origin', 'main')).toThrow();
    const file = /\t(.+)/.exec(git(dir, 'ls-files', '-u'))?.[1] ?? ''; // the path of its first stage
    expect(file).toMatch(new RegExp(`${id}\\.json$`));

    const doctor = cli(dir, ['doctor'], { env });
    expect(doctor.code).toBe(1);
    expect(doctor.stderr).toContain(`unmerged: ${file}: is unmerged in git's index (the merge driver did not run); \`bass-agents memory doctor --fix\``);
    expect(doctor.stderr).toContain('git checkout -m <file>');
    expect(cli(dir, ['reinforce', id], { env }).stderr).toMatch(/merge is in progress/);

    const fixed = cli(dir, ['doctor', '--fix'], { env });
    expect(fixed.stderr).toContain(`fixed: ${file}: merged the two sides of its conflict`);
    expect(fixed.code, fixed.stderr + fixed.stdout).toBe(0);
    expect(git(dir, 'ls-files', '-u').trim()).toBe(''); // resolved in the index
    const merged = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    expect(merged.status).toBe('deprecated'); // theirs
    expect(merged.lifecycle.reviewed_at).toBeTruthy(); // ours
    expect(git(dir, 'config', 'merge.bass-agents-memory.driver')).toMatch(/memory merge-driver %O %A %B %P/); // registered again
    expect(git(dir, 'config', 'merge.bass-agents-memory.driver')).not.toMatch(/not-installed/);
    git(dir, 'commit', '-q', '--no-edit');
    expect(cli(dir, ['doctor'], { env }).code).toBe(0);
    // The history names the other clone's deprecate, and what the merge brought in.
    const history = cli(dir, ['show', id, '--history'], { env }).stdout;
    expect(history).toMatch(/Mate {2}changed: status {2}\[status deprecated\]/);
    expect(history).toMatch(/Test User {2}merged: status {2}\[status deprecated\]/);

    // A driver that names a program that is not there is named too.
    git(dir, 'config', 'merge.bass-agents-memory.driver', '/nowhere/node /nowhere/bass-agents.cjs memory merge-driver %O %A %B %P');
    expect(cli(dir, ['doctor'], { env }).stderr).toMatch(
      /merge driver: ai-memory\/\.gitattributes: git's merge driver runs \/nowhere\/node, which does not exist/,
    );
  });

  it('a superseded_by that names a missing entry is repaired by deprecate, and by doctor --fix', () => {
    const dir = gitdir();
    const apply = (updates: unknown[]): string[] =>
      (cli(dir, ['apply', 'demo', '--file', '-', '--json'], { env, input: JSON.stringify(updates) }).json() as { applied: { id: string }[] }).applied.map(
        (a) => a.id,
      );
    const ids = firstOf(
      apply(['one', 'two', 'three', 'four'].map((w) => ({ operation: 'create', entry: entry({ subject: `billing.${w}`, summary: `Fact ${w}.` }) }))),
      4,
    );
    expect(apply([0, 2].map((k) => ({ operation: 'supersede', target_id: ids[k], superseded_by: ids[k + 1] })))).toHaveLength(2);
    // Their successors removed by hand (a bad merge, a hand edit): the links dangle.
    for (const gone of [ids[1], ids[3]]) git(dir, 'rm', '-q', git(dir, 'ls-files', `ai-memory/demo/*/${gone}.json`).trim());
    git(dir, 'commit', '-q', '-m', 'remove two entries by hand');
    const doctor = cli(dir, ['doctor'], { env });
    expect(doctor.code).toBe(1);
    expect(doctor.stderr).toContain(`superseded_by: points at ${ids[1]}, which does not exist`);

    expect(cli(dir, ['deprecate', ids[0]], { env }).code).toBe(0);
    const first = cli(dir, ['show', ids[0], '--json'], { env }).json();
    expect(first).toMatchObject({ status: 'deprecated', superseded_by: null });
    const fixed = cli(dir, ['doctor', '--fix'], { env });
    expect(fixed.stderr).toContain(`deprecated: superseded_by named ${ids[3]}, which does not exist`);
    expect(fixed.code).toBe(0);
    expect(cli(dir, ['doctor'], { env }).code).toBe(0);
  });

  it('re-creating a superseded or deprecated fact is refused naming the old entry and its successor, also through a daemon; --force writes it', () => {
    const dir = gitdir();
    const [old, next, gone] = seed(
      dir,
      [
        entry({ summary: 'Invoice retries stop after 3 attempts.' }),
        entry({ summary: 'Invoice retries stop after 5 attempts.' }),
        entry({ subject: 'billing.cron', summary: 'Invoices are generated nightly.' }),
      ],
      env,
    );
    expect(cli(dir, ['supersede', old, '--by', next], { env }).code).toBe(0);
    const again = create(dir, entry({ summary: 'Invoice retries stop after 3 attempts' }));
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`summary: re-creates entry ${old} (superseded), which was superseded by ${next} ("Invoice retries stop after 5 attempts.")`);
    expect(cli(dir, ['deprecate', gone], { env }).code).toBe(0);
    expect(create(dir, entry({ subject: 'billing.cron', summary: 'invoices are generated nightly' })).stderr).toContain(
      `re-creates entry ${gone} (deprecated), which was deprecated`,
    );
    // Another subject, or other words, is a new fact.
    expect(create(dir, entry({ subject: 'billing.export', summary: 'Invoice retries stop after 3 attempts.' })).code).toBe(0);
    // Through a running daemon (its group commit) the same refusal; --force writes here.
    const start = cli(dir, ['daemon', 'start'], {});
    expect(start.code, start.stderr).toBe(0);
    onTestFinished(() => void cli(dir, ['daemon', 'stop'], {}));
    const viaDaemon = cli(dir, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry({ summary: 'Invoice retries stop after 3 attempts.' })) });
    expect(viaDaemon.code).toBe(1);
    expect(viaDaemon.stderr).toContain(`re-creates entry ${old} (superseded)`);
    const forced = cli(dir, ['create', 'demo', '--file', '-', '--force'], {
      input: JSON.stringify(entry({ summary: 'Invoice retries stop after 3 attempts.' })),
    });
    expect(forced.code, forced.stderr).toBe(0);
    expect(cli(dir, ['daemon', 'stop'], {}).code).toBe(0);
  });

  it('the smaller things: session notes get a subject and match their words, list --limit 0 and validate say error', () => {
    const dir = gitdir();
    expect(create(dir, entry({ subject: 'billing.invoices', summary: 'Invoices are generated nightly.' })).code).toBe(0);
    const note = (text: string): void =>
      void expect(cli(dir, ['remember', 'demo', '--short-term', '--session', 's1', '--important', '--text', text], { env }).code).toBe(0);
    note('The invoice export now runs hourly for the EU rule.');
    note('Deploys need the VPN on.');
    const hits = cli(dir, ['query', 'invoice export', '--session', 's1', '--json'], { env }).json() as { summary: string; meta: { short_term?: boolean } }[];
    expect(hits.filter((h) => h.meta.short_term).map((h) => h.summary)).toEqual(['The invoice export now runs hourly for the EU rule.']);
    const ended = cli(dir, ['session', 'end', 's1', '--json'], { env }).json() as { promoted: { id: string }[] };
    const subjects = ended.promoted.map((p) => cli(dir, ['show', p.id, '--json'], { env }).json().subject as string).sort();
    expect(subjects).toEqual(['billing.invoices', 'deploys.vpn']);
    const zero = cli(dir, ['list', '--limit', '0'], { env });
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/limit must be a whole number of at least 1 \(got 0\)/);
    const invalid = cli(dir, ['validate', '--file', '-'], { env, input: JSON.stringify(entry({ confidence: 2 })) });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^error: confidence: /);
  });

  it('outside any workspace, read commands say none was found and name memory init (exit 3, not found)', () => {
    const dir = testdir();
    rmSync(join(dir, '.git'), { recursive: true, force: true });
    for (const args of [['list'], ['query', 'invoices', '--json'], ['doctor'], ['stats']]) {
      const r = cli(dir, args, { env });
      expect(r.code, args.join(' ')).toBe(3);
      expect(r.stderr + r.stdout).toMatch(/no workspace found: no folder from .* up holds \.git or ai-memory\/; run `bass-agents memory init <project>`/);
    }
    expect(cli(dir, ['init', 'demo'], { env }).code).toBe(0); // init makes one here
    expect(cli(dir, ['list'], { env }).code).toBe(0);
  });
});

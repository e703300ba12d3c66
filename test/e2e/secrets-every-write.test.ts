// Every write command refuses a secret (exit 1) and makes no commit: the write transaction scans
// what it commits, whatever path the text came in by (an edited compaction plan included).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, entry, git, gitdir, writeJson, stateDir } from '../helpers/repo.js';

const env = { BASS_AGENTS_AGENT: 'tester', BASS_AGENTS_NO_DAEMON: '1' };
// An AWS secret access key in an assignment (documentation-shaped, not a real key).
const AWS = 'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8mEx4Rt2"';

function workspace(): { dir: string; head: () => string } {
  const dir = gitdir();
  expect(cli(dir, ['create', 'demo', '--file', writeJson(dir, 'seed.json', entry())], { env }).code).toBe(0);
  return { dir, head: () => git(dir, 'rev-parse', 'HEAD').trim() };
}

describe('a secret is refused by every write command', () => {
  it('create, apply, apply-result, import, extract, remember and an edited compaction plan', () => {
    const { dir, head } = workspace();
    const leaky = entry({ subject: 'aws.keys', summary: 'The deploy key.', content: `Deploy with ${AWS} in the env.` });
    const cases: { name: string; args: string[] }[] = [
      { name: 'create', args: ['create', 'demo', '--file', writeJson(dir, 'c.json', leaky)] },
      { name: 'apply', args: ['apply', 'demo', '--file', writeJson(dir, 'a.json', [{ operation: 'create', entry: leaky }])] },
      {
        name: 'apply-result',
        args: [
          'apply-result',
          'demo',
          '--file',
          writeJson(dir, 'r.json', { task_id: 't', status: 'success', memory_updates: [{ operation: 'create', entry: leaky }] }),
        ],
      },
      {
        name: 'import',
        args: [
          'import',
          'demo',
          writeJson(dir, 'i.json', [
            {
              ...leaky,
              id: '01JAAAAAAAAAAAAAAAAAAAAAAB',
              status: 'active',
              superseded_by: null,
              related_entries: [],
              valid_from: null,
              valid_to: null,
              created_by: 'x',
              created_at: '2026-01-01T00:00:00.000Z',
              updated_at: '2026-01-01T00:00:00.000Z',
            },
          ]),
        ],
      },
      { name: 'extract', args: ['extract', 'demo', '--text', `We decided to deploy with ${AWS} from now on.`] },
      { name: 'remember', args: ['remember', 'demo', '--text', `Remember: ${AWS}`] },
    ];
    for (const c of cases) {
      const before = head();
      const r = cli(dir, c.args, { env });
      expect(r.code, `${c.name}: ${r.stderr}`).toBe(1);
      expect(r.stderr, c.name).toMatch(/looks like a secret/);
      expect(r.stdout + r.stderr, c.name).not.toContain('wJalrXUtnFEMI');
      expect(head(), c.name).toBe(before);
    }

    // A compaction plan is a file people review and edit: an edit that adds a secret is refused.
    for (const s of ['The deploy uses the shared key.', 'The deploy uses the shared key!']) {
      cli(
        dir,
        [
          'create',
          'demo',
          '--file',
          writeJson(dir, 'd.json', entry({ subject: 'ops.deploy', scope: 'repo', summary: s, content: 'The deploy uses the shared key.' })),
        ],
        { env },
      );
    }
    const plan = cli(dir, ['compact', 'demo', '--json', '--plan', join(dir, 'plan.json')], { env }).json();
    const group = plan.groups.find((g: { action: string }) => g.action === 'merge');
    expect(group).toBeTruthy();
    const file = join(dir, 'plan.json');
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    doc.groups.find((g: { action: string }) => g.action === 'merge').result.content = `Use ${AWS}.`;
    writeFileSync(file, JSON.stringify(doc));
    const before = head();
    const r = cli(dir, ['compact', '--apply', file], { env });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/content: contains what looks like a secret/);
    expect(r.stderr).not.toContain('wJalrXUtnFEMI');
    expect(head()).toBe(before);
    expect(git(dir, 'status', '--porcelain', '--', 'ai-memory')).toBe('');
  });

  it('the writer name, created_by on import and a session in an evidence link are scanned too', () => {
    const { dir, head } = workspace();
    const token = 'ghp_Zq8Wm2Xc4Vb6Nn1Ll3Kk5Pp7Oo9Ii0Uu2Yy4T';
    const stored = {
      ...entry({ subject: 'ops.import', summary: 'Imported with a leaky writer name.' }),
      id: '01JAAAAAAAAAAAAAAAAAAAAAAC',
      status: 'active',
      superseded_by: null,
      related_entries: [],
      valid_from: null,
      valid_to: null,
      created_by: token,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    };
    const cases: { name: string; args: string[]; env?: Record<string, string> }[] = [
      { name: '--agent', args: ['create', 'demo', '--agent', token, '--file', writeJson(dir, 'a.json', entry({ summary: 'Signed by a token.' }))] },
      {
        name: 'BASS_AGENTS_AGENT',
        args: ['create', 'demo', '--file', writeJson(dir, 'b.json', entry({ summary: 'Signed by a token, env.' }))],
        env: { BASS_AGENTS_AGENT: token },
      },
      { name: 'import created_by', args: ['import', 'demo', writeJson(dir, 'i.json', [stored])] },
      {
        name: 'evidence link',
        args: [
          'create',
          'demo',
          '--file',
          writeJson(
            dir,
            'e.json',
            entry({
              summary: 'Link with a session.',
              evidence: [{ type: 'doc', uri: 'https://dash.example.com/r?session=Zq8Wm2Xc4Vb6Nn1Ll3Kk5Pp7', note: '' }],
            }),
          ),
        ],
      },
    ];
    for (const c of cases) {
      const before = head();
      const r = cli(dir, c.args, { env: { ...env, ...c.env } });
      expect(r.code, `${c.name}: ${r.stderr}`).toBe(1);
      expect(r.stderr, c.name).toMatch(/looks like a secret/);
      expect(r.stdout + r.stderr, c.name).not.toContain('Zq8Wm2Xc4Vb6Nn1Ll3Kk5');
      expect(head(), c.name).toBe(before);
    }
    expect(readFileSync(join(stateDir(dir), 'logs/operations.jsonl'), 'utf8')).not.toContain('Zq8Wm2Xc4Vb6Nn1Ll3Kk5');
  });

  it('the lock and the commit are taken in exactly one module', () => {
    const grep = (pattern: string): string[] =>
      execFileSync('grep', ['-rlE', pattern, 'src'], { cwd: join(__dirname, '../..'), encoding: 'utf8' })
        .trim()
        .split('\n')
        .sort();
    expect(grep('withLock[<(]')).toEqual(['src/service/transaction.ts', 'src/store/lock.ts']);
    expect(grep('commitPaths\\(')).toEqual(['src/service/transaction.ts', 'src/store/git.ts']);
  });
});

// Every write command refuses a secret (exit 1) and makes no commit: the write transaction scans
// what it commits, whatever path the text came in by (an edited compaction plan included).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, cleanGitEnv, cli, entry, git, gitdir, stateDir, writeJson } from '../helpers/repo.js';

const env = { BASS_AGENTS_AGENT: 'tester', BASS_AGENTS_NO_DAEMON: '1' };
// An AWS secret access key in an assignment (documentation-shaped, not a real key).
const AWS = 'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8mEx4Rt2"';

/** A stored entry (as an export holds it) made from an entry input; override any field. */
function stored(input: Record<string, unknown>, over: Record<string, unknown> = {}): Record<string, unknown> {
  const system = { status: 'active', superseded_by: null, related_entries: [], valid_from: null, valid_to: null, created_by: 'x' };
  return { ...input, ...system, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', ...over };
}

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
        args: ['import', 'demo', writeJson(dir, 'i.json', [stored(leaky, { id: '01JAAAAAAAAAAAAAAAAAAAAAAB' })])],
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
    const leaky = stored(entry({ subject: 'ops.import', summary: 'Imported with a leaky writer name.' }), {
      id: '01JAAAAAAAAAAAAAAAAAAAAAAC',
      created_by: token,
    });
    const cases: { name: string; args: string[]; env?: Record<string, string> }[] = [
      { name: '--agent', args: ['create', 'demo', '--agent', token, '--file', writeJson(dir, 'a.json', entry({ summary: 'Signed by a token.' }))] },
      {
        name: 'BASS_AGENTS_AGENT',
        args: ['create', 'demo', '--file', writeJson(dir, 'b.json', entry({ summary: 'Signed by a token, env.' }))],
        env: { BASS_AGENTS_AGENT: token },
      },
      { name: 'import created_by', args: ['import', 'demo', writeJson(dir, 'i.json', [leaky])] },
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

  it('a token as a link, a timestamp, an id, a project name or a writer name is refused and appears nowhere', async () => {
    const { dir, head } = workspace();
    const GH = 'ghp_Zq8Wm2Xc4Vb6Nn1Ll3Kk5Pp7Oo9Ii0Uu2Yy4T';
    // Lower-case, so it passes as a slug: only the scan stops it as a project name.
    const SLACK = 'xoxb-2718281828-3141592653589-q7w3e9r1t5y8u2i4o6p0a3s7';
    const seed = cli(dir, ['list', '--json'], { env }).json()[0].id as string;
    const imported = (over: Record<string, unknown>): Record<string, unknown> =>
      stored(entry({ subject: 'ops.import', summary: 'Imported.' }), { id: '01JAAAAAAAAAAAAAAAAAAAAAAD', ...over });
    const cases: { name: string; args: string[]; code: number; env?: Record<string, string> }[] = [
      { name: 'related_entries', args: ['create', 'demo', '--file', writeJson(dir, 'r.json', entry({ summary: 'Linked.', related_entries: [GH] }))], code: 1 },
      {
        name: 'lifecycle.reviewed_at',
        args: ['create', 'demo', '--file', writeJson(dir, 'l.json', entry({ summary: 'Reviewed.', lifecycle: { reviewed_at: GH } }))],
        code: 1,
      },
      { name: 'imported id', args: ['import', 'demo', writeJson(dir, 'i.json', [imported({ id: GH })])], code: 1 },
      { name: 'update target_id', args: ['apply', 'demo', '--file', writeJson(dir, 'u.json', [{ operation: 'deprecate', target_id: GH }])], code: 1 },
      { name: 'init', args: ['init', SLACK], code: 2 },
      { name: 'init (mixed case)', args: ['init', GH], code: 2 },
      { name: 'create --project', args: ['create', '--project', SLACK, '--file', writeJson(dir, 'p.json', entry({ summary: 'Where?' }))], code: 2 },
      {
        name: 'BASS_AGENTS_PROJECT',
        args: ['create', '--file', writeJson(dir, 'e.json', entry({ summary: 'Where, by env?' }))],
        env: { BASS_AGENTS_PROJECT: SLACK },
        code: 2,
      },
      { name: '--agent', args: ['deprecate', seed, '--agent', GH], code: 1 },
      { name: 'show', args: ['show', GH], code: 3 },
      { name: 'supersede', args: ['supersede', GH, '--by', seed], code: 3 },
      { name: 'link', args: ['link', seed, GH], code: 3 },
    ];
    for (const c of cases) {
      const before = head();
      const r = cli(dir, c.args, { env: { ...env, ...c.env } });
      expect(r.code, `${c.name}: ${r.stderr}`).toBe(c.code);
      expect(r.stderr, c.name).toMatch(/^(?:error|skipped \[0\]): /m);
      expect(r.stdout + r.stderr, c.name).not.toMatch(/Zq8Wm2Xc4Vb6Nn1Ll3Kk5|q7w3e9r1t5y8u2i4o6p0a3s7/);
      expect(head(), c.name).toBe(before);
    }

    // The MCP server, through the SDK's own client: a project name and ids that are tokens.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'memory', 'mcp'],
      cwd: dir,
      env: { ...(cleanGitEnv(dir) as Record<string, string>), ...env },
      stderr: 'pipe',
    });
    let mcpStderr = '';
    transport.stderr?.on('data', (d: Buffer) => (mcpStderr += d.toString()));
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(transport);
    onTestFinished(() => client.close());
    const calls: [string, Record<string, unknown>][] = [
      ['memory_create', { entry: entry({ summary: 'Into a token project.' }), project: SLACK }],
      ['memory_show', { id: GH }],
      ['memory_link', { a: seed, b: GH }],
    ];
    for (const [name, args] of calls) {
      const r = await client.callTool({ name, arguments: args });
      const text = (r.content as { text: string }[]).map((x) => x.text).join('\n');
      expect(r.isError, name).toBe(true);
      expect(text, name).not.toMatch(/Zq8Wm2Xc4Vb6Nn1Ll3Kk5|q7w3e9r1t5y8u2i4o6p0a3s7/);
    }
    await client.close();
    expect(mcpStderr).not.toMatch(/Zq8Wm2Xc4Vb6Nn1Ll3Kk5|q7w3e9r1t5y8u2i4o6p0a3s7/);

    // Nowhere on disk (local state and logs included), in no commit or object, no folder named after it.
    expect(readdirSync(join(dir, 'ai-memory'))).toEqual(expect.not.arrayContaining([SLACK]));
    // (Every file but the test's own input files at the top.)
    const files = execFileSync('find', [dir, '-type', 'f'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter((f) => !(dirname(f) === dir && f.endsWith('.json')));
    const bytes = files.map((f) => readFileSync(f).toString('latin1')).join('\n');
    const objects = execFileSync('git', ['cat-file', '--batch-all-objects', '--batch'], { cwd: dir, env: cleanGitEnv(dir) }).toString('latin1');
    for (const where of [bytes, objects, git(dir, 'log', '--all', '--format=%B%n%an%n%ae'), git(dir, 'ls-tree', '-r', '--name-only', 'HEAD')])
      expect(where).not.toMatch(/Zq8Wm2Xc4Vb6Nn1Ll3Kk5|q7w3e9r1t5y8u2i4o6p0a3s7/);
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

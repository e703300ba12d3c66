/**
 * Secrets are refused on every write path, reported by validate, and never stored anywhere.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, entry, git, gitdir, stateDir } from '../helpers/repo.js';

const env = { BASS_AGENTS_AGENT: 'tester' };
const SECRET = 'sk_live_9fJ2kL7mN4pQ8rS1tU6vW3xY';
const GH = 'ghp_Zq8Wm2Xc4Vb6Nn1Ll3Kk5Jj7Hh9Gg0Ff2Dd4S';

/** Every byte the tool wrote: files under the workspace (incl. .bass-agents and .git objects). */
function everything(dir: string): string {
  const files = execFileSync('find', [dir, '-type', 'f'], { encoding: 'utf8' }).trim().split('\n');
  return files.map((f) => readFileSync(f).toString('latin1')).join('\n');
}

describe('secrets', () => {
  it('create refuses a secret (exit 1) naming field, rule and position; the secret is nowhere', () => {
    const dir = gitdir();
    const before = git(dir, 'rev-parse', 'HEAD');
    const r = cli(dir, ['create', 'demo', '--file', '-', '--json'], { env, input: JSON.stringify(entry({ content: `Billing uses ${SECRET} for refunds.` })) });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/content: contains what looks like a secret \(rule stripe-key, line 1, column 14\)/);
    expect(r.stderr + r.stdout).not.toContain(SECRET);
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(before);
    const audit = readFileSync(join(stateDir(dir), 'logs/audit.log'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(audit).toEqual([expect.objectContaining({ event: 'secret_rejected', path: 'content', rule: 'stripe-key', line: 1, column: 14, agent: 'tester' })]);
    expect(everything(dir)).not.toContain(SECRET);
  });

  it('apply skips the update with a secret in a tag or evidence and applies the rest; validate reports it first', () => {
    const dir = gitdir();
    const updates = [
      { operation: 'create', entry: entry({ summary: 'clean one' }) },
      { operation: 'create', entry: entry({ summary: 'leaky', evidence: [{ type: 'doc', uri: 'docs/setup.md', note: `token ${GH}` }] }) },
      { operation: 'create', entry: entry({ summary: 'placeholder is fine', content: 'export GITHUB_TOKEN=[GITHUB_TOKEN]' }) },
    ];
    const v = cli(dir, ['validate', '--file', '-', '--json'], { env, input: JSON.stringify(updates) });
    expect(v.code).toBe(1);
    expect(v.json().errors).toEqual([expect.objectContaining({ path: '[1].entry.evidence[0].note' })]);
    const r = cli(dir, ['apply', 'demo', '--file', '-', '--json'], { env, input: JSON.stringify(updates) });
    expect(r.code).toBe(1); // something was skipped
    const out = r.json();
    expect(out.applied.map((a: { index: number }) => a.index)).toEqual([0, 2]);
    expect(out.skipped[0].errors[0]).toMatchObject({ path: '[1].entry.evidence[0].note' });
    expect(out.skipped[0].errors[0].message).toMatch(/rule (github-token|secretlint\/github)/);
    expect(everything(dir)).not.toContain(GH);
  });

  it('import refuses a file with a secret before writing anything; evidence URIs with credentials are refused', () => {
    const dir = gitdir();
    cli(dir, ['create', 'demo', '--file', '-'], { env, input: JSON.stringify(entry()) });
    const exported = JSON.parse(cli(dir, ['export', 'demo', '-'], { env }).stdout);
    const head = git(dir, 'rev-parse', 'HEAD');
    const bad = [{ ...exported[0], id: 'IMP1', summary: 'db', content: 'postgres://app:Hunter2Hunter2@db.internal/app' }];
    const r = cli(dir, ['import', 'demo', '-'], { env, input: JSON.stringify(bad) });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\[0\]\.content: contains what looks like a secret/);
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
    const creds = cli(dir, ['create', 'demo', '--file', '-'], {
      env,
      input: JSON.stringify(entry({ summary: 'x', evidence: [{ type: 'doc', uri: 'https://bob:tok3n@wiki.example.com/page', note: '' }] })),
    });
    expect(creds.code).toBe(1);
    expect(creds.stderr).toMatch(/evidence\[0\]\.uri/);
  });
});

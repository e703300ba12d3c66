/**
 * `memory diff`, the review view, on a real repository with a feature branch that creates,
 * supersedes, deprecates and edits entries, deletes one by hand and slips a secret into another;
 * and `git diff` / `git log -p` of entry files through the diff driver `init` registers.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, entry, git, gitdir } from '../helpers/repo.js';

const env = { BASS_AGENTS_NO_DAEMON: '1', BASS_AGENTS_AGENT: 'reviewer-test' };
const create = (dir: string, over: Record<string, unknown>): string => {
  const r = cli(dir, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry(over)), env });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
};
const fileOf = (dir: string, id: string): string => git(dir, 'ls-files', `ai-memory/demo/*/${id}.json`).trim();

describe('memory diff', () => {
  it('names each change of a branch in text, markdown and JSON, with what a reviewer must check', () => {
    const dir = gitdir();
    const old = create(dir, { summary: 'Invoices are generated nightly.' });
    const retired = create(dir, { subject: 'billing.fax', summary: 'Invoices are also faxed.' });
    const edited = create(dir, { subject: 'billing.currency', summary: 'Invoices are in EUR.', tags: ['billing'] });
    const doomed = create(dir, { subject: 'billing.pdf', summary: 'Invoices are PDFs.' });
    const leaky = create(dir, { subject: 'billing.psp', summary: 'The PSP is called over HTTPS.' });
    git(dir, 'checkout', '-q', '-b', 'feature');

    const replacement = create(dir, { summary: 'Invoices are generated hourly since the EU launch.' });
    expect(cli(dir, ['supersede', old, '--by', replacement], { env }).code).toBe(0);
    expect(cli(dir, ['deprecate', retired], { env }).code).toBe(0);
    const shaky = create(dir, { section: 'learnings', kind: 'other', subject: 'ci.flaky', summary: 'The e2e suite flakes on Mondays.', confidence: 0.4 });
    // Edited by hand (a reviewer sees fields, not JSON), one deleted by hand, one given a secret.
    const f = join(dir, fileOf(dir, edited));
    writeFileSync(f, JSON.stringify({ ...JSON.parse(readFileSync(f, 'utf8')), confidence: 0.7, tags: ['billing', 'currency'] }, null, 2) + '\n');
    rmSync(join(dir, fileOf(dir, doomed)));
    const l = join(dir, fileOf(dir, leaky));
    writeFileSync(l, JSON.stringify({ ...JSON.parse(readFileSync(l, 'utf8')), content: 'Call it with sk_live_4hK9sT2mQ8vX1bN7cR5eW3zY.' }, null, 2) + '\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'hand edits');

    const json = cli(dir, ['diff', '--format', 'json'], { env });
    expect(json.code).toBe(1); // a removed entry and a secret fail the check
    const d = json.json();
    const byId = new Map((d.changes as { id: string; change: string; fields?: { field: string; from: string; to: string }[] }[]).map((c) => [c.id, c]));
    expect(byId.get(old)).toMatchObject({ change: 'superseded', superseded_by: replacement });
    expect(byId.get(replacement)).toMatchObject({ change: 'created', kind: 'decision', confidence: 0.9, evidence_types: ['code'] });
    expect(byId.get(retired)).toMatchObject({ change: 'deprecated' });
    expect(byId.get(shaky)).toMatchObject({ change: 'created', section: 'learnings' });
    expect(byId.get(edited)).toMatchObject({ change: 'edited' });
    const fields = byId.get(edited)?.fields;
    expect(fields).toContainEqual({ field: 'confidence', from: '0.9', to: '0.7' });
    expect(fields).toContainEqual({ field: 'tags', from: '[billing]', to: '[billing, currency]' });
    expect(byId.get(doomed)).toMatchObject({ change: 'removed' });
    const warnings = d.warnings as { level: string; id: string; message: string }[];
    expect(warnings.find((w) => w.id === doomed)).toMatchObject({ level: 'error', message: expect.stringMatching(/never deleted/) });
    expect(warnings.find((w) => w.id === leaky)).toMatchObject({
      level: 'error',
      message: expect.stringMatching(/content: contains what looks like a secret \(rule stripe-key\)/),
    });
    expect(warnings.find((w) => w.id === shaky)).toMatchObject({ level: 'warning', message: expect.stringMatching(/confidence 0.4 is low/) });
    expect(json.stdout).not.toContain('4hK9sT2mQ8vX1bN7cR5eW3zY');

    const text = cli(dir, ['diff'], { env });
    expect(text.stdout).toMatch(new RegExp(`~ superseded ${old} by ${replacement}`));
    expect(text.stdout).toMatch(new RegExp(`! REMOVED BY HAND ${doomed}`));
    expect(text.stdout).toContain('confidence: 0.9 -> 0.7');
    expect(text.stdout).not.toContain('4hK9sT2mQ8vX1bN7cR5eW3zY');
    const md = cli(dir, ['diff', 'main...feature', '--format', 'markdown'], { env });
    expect(md.stdout).toMatch(/^### Memory changes \(/);
    expect(md.stdout).toContain(`| superseded by \`${replacement}\` | \`${old}\` |`);
    expect(md.stdout).toContain('❌');
    expect(md.stdout).not.toContain('4hK9sT2mQ8vX1bN7cR5eW3zY');

    // An explicit range, and the staged view.
    expect(cli(dir, ['diff', 'main..feature', '--json'], { env }).json().changes).toHaveLength(d.changes.length);
    expect(cli(dir, ['diff', 'feature..feature', '--json'], { env }).json().changes).toEqual([]);
    const staged = create(dir, { subject: 'billing.vat', summary: 'VAT is added per country.' });
    git(dir, 'reset', '-q', '--soft', 'HEAD~1');
    const st = cli(dir, ['diff', '--staged', '--json'], { env }).json();
    expect(st.changes.map((c: { id: string; change: string }) => [c.id, c.change])).toEqual([[staged, 'created']]);
    expect(cli(dir, ['diff', 'nope..HEAD'], { env }).stderr).toMatch(/nope is not a commit/);
  });

  it('git diff and git log -p show entry files one field per line', () => {
    const dir = gitdir();
    expect(cli(dir, ['init', 'demo'], { env }).code).toBe(0); // registers the merge and diff drivers
    const id = create(dir, { summary: 'Invoices are generated nightly.' });
    const f = fileOf(dir, id);
    const before = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    writeFileSync(join(dir, f), JSON.stringify({ ...before, confidence: 0.6 }, null, 2) + '\n');
    const diff = git(dir, 'diff', '--', f);
    expect(diff).toContain('-confidence: 0.9');
    expect(diff).toContain('+confidence: 0.6');
    expect(git(dir, 'log', '-p', '-1', '--', f)).toContain('+summary: Invoices are generated nightly.');
    expect(readFileSync(join(dir, 'ai-memory/.gitattributes'), 'utf8')).toContain('**/*.json diff=bass-agents-memory');
  });
});

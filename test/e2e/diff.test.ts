/**
 * `memory diff`, the review view, on a real repository with a feature branch that creates,
 * supersedes, deprecates and edits entries, deletes one by hand and slips a secret into another;
 * `git diff` / `git log -p` of entry files through the diff driver `init` registers; and the CI
 * workflow of docs/ci.md, its steps run as a script on a pull-request branch that moves, edits and
 * deletes cited code: the review view in the job summary and a comment, the `--check-cited` gate.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { BIN, cleanGitEnv, cli, entry, firstOf, git, gitdir, initdir, seed, testdir } from '../helpers/repo.js';

const ROOT = resolve(dirname(BIN), '..');

interface Step {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  if?: string;
  env?: Record<string, string>;
}

/**
 * Runs a GitHub Actions job's `run` steps in `cwd` as the runner would: bash -e, GITHUB_OUTPUT,
 * GITHUB_STEP_SUMMARY and GITHUB_PATH files, `${{ }}` expressions from `context`, `if:` on step
 * outputs, stopping at the first failing step. `uses` steps (checkout, setup-node) are what the
 * test did already; `npm` and `gh` are the machine's programs the job calls: here `npm ci` links
 * this checkout as the dev dependency and `gh` keeps the comment it was asked to post.
 */
function runJob(job: { env?: Record<string, string>; steps: Step[] }, cwd: string, context: Record<string, string>) {
  const tmp = testdir();
  const shims = join(tmp, 'bin');
  mkdirSync(shims);
  const files = { GITHUB_OUTPUT: join(tmp, 'output'), GITHUB_STEP_SUMMARY: join(tmp, 'summary'), GITHUB_PATH: join(tmp, 'path') };
  for (const f of Object.values(files)) writeFileSync(f, '');
  writeFileSync(join(shims, 'npm'), `#!/bin/sh\n[ "$1" = ci ] && mkdir -p node_modules/.bin && ln -sf '${BIN}' node_modules/.bin/bass-agents\n`);
  writeFileSync(join(shims, 'gh'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${tmp}/gh-args'\ncp "$5" '${tmp}/comment.md'\n`);
  for (const f of ['npm', 'gh']) chmodSync(join(shims, f), 0o755);
  const outputs: Record<string, Record<string, string>> = {};
  const expr = (v: string): string =>
    v.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, e: string) => {
      const [, step, name] = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(e) ?? [];
      const got = step && name ? (outputs[step]?.[name] ?? '') : context[e];
      if (got === undefined) throw new Error(`the test runner does not know \${{ ${e} }}`);
      return got;
    });
  const results: { name: string; code: number; stdout: string; stderr: string }[] = [];
  let path = `${shims}:${process.env.PATH}`;
  for (const step of job.steps) {
    if (step.uses || !step.run) continue;
    if (step.if) {
      const [, id, name, op, value] = /^steps\.([\w-]+)\.outputs\.([\w-]+) (!=|==) '([^']*)'$/.exec(step.if) ?? [];
      if (!id || !name) throw new Error(`the test runner does not know if: ${step.if}`);
      if (((outputs[id]?.[name] ?? '') === value) !== (op === '==')) continue;
    }
    const env: Record<string, string> = { ...(cleanGitEnv(cwd) as Record<string, string>), ...files, PATH: path };
    for (const [k, v] of Object.entries({ ...job.env, ...step.env })) env[k] = expr(String(v));
    writeFileSync(files.GITHUB_OUTPUT, '');
    const r = spawnSync('bash', ['-e', '-c', expr(step.run)], { cwd, env, encoding: 'utf8' });
    results.push({ name: step.name ?? step.run, code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr });
    if (step.id)
      outputs[step.id] = Object.fromEntries(
        readFileSync(files.GITHUB_OUTPUT, 'utf8')
          .split('\n')
          .filter((l) => l.includes('='))
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
    const added = readFileSync(files.GITHUB_PATH, 'utf8').split('\n').filter(Boolean);
    if (added.length) path = `${added.reverse().join(':')}:${path}`;
    writeFileSync(files.GITHUB_PATH, '');
    if (r.status !== 0) break;
  }
  const comment = (() => {
    try {
      return { body: readFileSync(join(tmp, 'comment.md'), 'utf8'), args: readFileSync(join(tmp, 'gh-args'), 'utf8') };
    } catch {
      return null;
    }
  })();
  return { results, summary: readFileSync(files.GITHUB_STEP_SUMMARY, 'utf8'), comment, ok: results.every((r) => r.code === 0) };
}

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
    // What main holds, written in one apply.
    const [old, retired, edited, doomed, leaky] = seed(
      dir,
      [
        entry({ summary: 'Invoices are generated nightly.' }),
        entry({ subject: 'billing.fax', summary: 'Invoices are also faxed.' }),
        entry({ subject: 'billing.currency', summary: 'Invoices are in EUR.', tags: ['billing'] }),
        entry({ subject: 'billing.pdf', summary: 'Invoices are PDFs.' }),
        entry({ subject: 'billing.psp', summary: 'The PSP is called over HTTPS.' }),
      ],
      env,
    );
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

    // People read whole values; only what the secret scan flags is hidden.
    const text = cli(dir, ['diff'], { env });
    expect(text.stdout).toMatch(new RegExp(`~ superseded ${old} by ${replacement}`));
    expect(text.stdout).toMatch(new RegExp(`! REMOVED BY HAND ${doomed}`));
    expect(text.stdout).toContain('confidence: 0.9 -> 0.7');
    expect(text.stdout).toContain('        Invoices are generated hourly since the EU launch.\n');
    expect(text.stdout).toContain(
      'content: Invoice generation runs as a nightly batch to avoid ledger lock contention. -> (hidden: looks like a secret, rule stripe-key)',
    );
    expect(text.stdout).not.toContain('not shown');
    expect(text.stdout).not.toContain('4hK9sT2mQ8vX1bN7cR5eW3zY');
    const md = cli(dir, ['diff', 'main...feature', '--format', 'markdown'], { env });
    expect(md.stdout).toMatch(/^### Memory changes \(/);
    expect(md.stdout).toContain(`| superseded by \`${replacement}\` | \`${old}\` |`);
    expect(md.stdout).toContain('| Invoices are generated hourly since the EU launch. |');
    expect(md.stdout).toContain('(hidden: looks like a secret, rule stripe-key)');
    expect(md.stdout).toContain('❌');
    expect(md.stdout).not.toContain('not shown');
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
    const dir = initdir(); // init registered the merge and diff drivers
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

  it('the CI workflow of docs/ci.md on a pull-request branch: the review view in the job summary and a comment, and the --check-cited gate', () => {
    const doc = readFileSync(join(ROOT, 'docs/ci.md'), 'utf8');
    const yamlText = /```yaml\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
    expect(readFileSync(join(ROOT, 'docs/examples/memory-review.yml'), 'utf8')).toContain(yamlText);
    const job = (parseYaml(yamlText) as { jobs: { memory: { env?: Record<string, string>; steps: Step[] } } }).jobs.memory;

    // main: code, and memories citing it.
    const numbered = (n: number): string => Array.from({ length: n }, (_, i) => `export const c${i + 1} = ${i + 1};`).join('\n') + '\n';
    const upstream = gitdir({
      'src/cron.ts': numbered(40),
      'src/pdf.ts': 'export function renderPdf(): string {\n  return "pdf";\n}\n',
      'src/fax.py': 'def send_fax(number):\n    return number\n',
    });
    const cites = ['src/cron.ts#L10-L12', 'src/cron.ts#L30-L31', 'src/pdf.ts', 'src/fax.py#symbol=send_fax', 'src/cron.ts#L1-L2'];
    const summaries = cites.map((u, i) => `Memory ${i} about ${u} says something a reviewer needs to read in full, well past forty characters.`);
    const made = cli(upstream, ['apply', 'demo', '--file', '-', '--json'], {
      env,
      input: JSON.stringify(
        cites.map((uri, i) => ({
          operation: 'create',
          entry: entry({ subject: `billing.m${i}`, summary: summaries[i], evidence: [{ type: 'code', uri, note: '' }] }),
        })),
      ),
    });
    expect(made.code, made.stderr).toBe(0);
    const ids = firstOf<string, 5>(
      made.json().applied.map((a: { id: string }) => a.id),
      5,
    );

    // The pull request: lines added above 10-12, line 31 edited, pdf.ts renamed, fax.py deleted.
    const work = testdir();
    git(work, 'clone', '-q', upstream, '.');
    for (const [k, v] of [
      ['user.name', 'PR Author'],
      ['user.email', 'pr@example.com'],
      ['commit.gpgsign', 'false'],
    ] as const)
      git(work, 'config', k, v);
    git(work, 'checkout', '-q', '-b', 'feature');
    const cron = readFileSync(join(work, 'src/cron.ts'), 'utf8').split('\n');
    cron[30] = 'export const c31 = 31000;';
    cron.splice(4, 0, '// a', '// b');
    writeFileSync(join(work, 'src/cron.ts'), cron.join('\n'));
    git(work, 'mv', 'src/pdf.ts', 'src/render-pdf.ts');
    git(work, 'rm', '-q', 'src/fax.py');
    git(work, 'commit', '-q', '-am', 'billing: rework');
    const context = { 'github.base_ref': 'main', 'github.token': 'test-token', 'github.event.pull_request.number': '7' };

    const first = runJob(job, work, context);
    expect(first.results.map((r) => [r.name, r.code])).toEqual([
      ['Install', 0],
      ['Check the memory', 0],
      ['Describe the change', 0],
      ['Post it on the pull request', 0],
      ['Memories whose cited code changed must be updated or re-confirmed', 1],
    ]);
    expect(first.ok).toBe(false);
    // The review view, in the job summary and as the comment, names each memory and what happened.
    expect(first.summary).toContain('#### Memories to re-check');
    for (const row of [
      `| \`${ids[0]}\` | ${summaries[0]} | \`src/cron.ts#L10-L12\` | moved to \`src/cron.ts#L12-L14\` |`,
      `| \`${ids[1]}\` | ${summaries[1]} | \`src/cron.ts#L30-L31\` | modified |`,
      `| \`${ids[2]}\` | ${summaries[2]} | \`src/pdf.ts\` | moved to \`src/render-pdf.ts\` |`,
      `| \`${ids[3]}\` | ${summaries[3]} | \`src/fax.py#symbol=send_fax\` | deleted |`,
    ])
      expect(first.summary).toContain(row);
    expect(first.summary).not.toContain(ids[4]);
    expect(first.comment?.body).toBe(first.summary);
    expect(first.comment?.args).toBe('pr\ncomment\n7\n--body-file\nmemory-diff.md\n--edit-last\n');
    const gate = first.results[4];
    expect(gate?.stdout).toContain(`${ids[1]}  demo  src/cron.ts#L30-L31: modified`);
    expect(gate?.stderr).toMatch(/4 memories cite code this change moved, modified or deleted and were not updated/);
    const json = cli(work, ['diff', 'origin/main...HEAD', '--json'], { env }).json();
    expect(json.cited_code.find((c: { id: string }) => c.id === ids[2])).toEqual({
      id: ids[2],
      project: 'demo',
      uri: 'src/pdf.ts',
      change: 'moved',
      to: 'src/render-pdf.ts',
      summary: summaries[2],
      touched: false,
    });

    // The author brings the memory along: moved evidence fixed, the edited lines re-confirmed, the
    // memory about the deleted code retired. The same job then passes.
    expect(cli(work, ['validate-evidence', '--fix', '--offline'], { env }).code).toBe(0);
    expect(cli(work, ['reinforce', ids[1]], { env }).code).toBe(0);
    expect(cli(work, ['deprecate', ids[3]], { env }).code).toBe(0);
    const second = runJob(job, work, context);
    expect(second.results.map((r) => r.code)).toEqual([0, 0, 0, 0, 0]);
    expect(second.summary).toContain(`| \`${ids[1]}\` (updated here) |`);
    expect(second.summary).toContain('deprecated');
  });
});

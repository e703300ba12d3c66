import { existsSync, mkdirSync, readFileSync, writeFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, entry, git, gitdir, initdir, seed, testdir, writeJson } from '../helpers/repo.js';

function entryFile(dir: string, project: string, section: string, id: string): string {
  return join(dir, 'ai-memory', project, section, `${id}.json`);
}

describe('memory init', () => {
  it('creates config.yaml, commits it, and is idempotent', () => {
    const dir = gitdir();
    const r = cli(dir, ['init', 'demo', '--json']);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ project: 'demo', created: true, path: 'ai-memory/demo' });
    const cfg = readFileSync(join(dir, 'ai-memory/demo/config.yaml'), 'utf8');
    expect(cfg).toMatch(/project: demo/);
    expect(cfg).toMatch(/created_at: /);
    expect(git(dir, 'log', '-1', '--format=%s')).toMatch(/^memory\(demo\): init demo/);
    expect(git(dir, 'show', '--name-only', '--format=', 'HEAD').trim().split('\n').sort()).toEqual([
      'ai-memory/.gitattributes',
      'ai-memory/.gitignore',
      'ai-memory/demo/config.yaml',
    ]);
    const again = cli(dir, ['init', 'demo', '--json']);
    expect(again.code).toBe(0);
    expect(again.json()).toMatchObject({ created: false, commit: null });
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('works for the global project and refuses names that escape', () => {
    const dir = gitdir();
    expect(cli(dir, ['init', 'global']).code).toBe(0);
    for (const bad of ['..', '../evil', 'a/b', '/abs']) {
      const r = cli(dir, ['init', bad]);
      expect(r.code, bad).toBeGreaterThan(0);
      expect(r.stderr).toMatch(/project name/);
    }
    expect(existsSync(join(dir, '..', 'evil'))).toBe(false);
  });

  it('refuses a project folder that is a symlink out of the workspace', () => {
    const dir = gitdir();
    const outside = testdir();
    mkdirSync(join(dir, 'ai-memory'));
    symlinkSync(outside, join(dir, 'ai-memory', 'linked'));
    const r = cli(dir, ['create', 'linked', '--file', writeJson(dir, 'e.json', entry())]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/outside the workspace root/);
    expect(existsSync(join(outside, 'decisions'))).toBe(false);
  });
});

describe('memory create', () => {
  it('writes one formatted file, commits only it, and leaves the user index alone', () => {
    const dir = gitdir({ 'README.md': '# x\n', 'src/app.ts': 'export {}\n' });
    cli(dir, ['init', 'demo']);
    writeFileSync(join(dir, 'staged.txt'), 'user work in progress\n');
    git(dir, 'add', 'staged.txt');
    writeFileSync(join(dir, 'src/app.ts'), 'export const changed = 1;\n');
    writeFileSync(join(dir, 'untracked.txt'), 'scratch\n');
    const before = git(dir, 'status', '--porcelain');
    const indexBefore = git(dir, 'ls-files', '-s', '--', 'staged.txt', 'src/app.ts');

    const r = cli(dir, ['create', 'demo', '--file', writeJson(testdir(), 'e.json', entry())], {
      env: { BASS_AGENTS_NOW: '2026-03-01T12:00:00Z', BASS_AGENTS_AGENT: 'agent-7' },
    });
    expect(r.code, r.stderr).toBe(0);
    const id = r.stdout.trim();
    expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);

    const text = readFileSync(entryFile(dir, 'demo', 'decisions', id), 'utf8');
    const saved = JSON.parse(text);
    expect(Object.keys(saved)).toEqual([
      'id',
      'section',
      'kind',
      'subject',
      'scope',
      'summary',
      'content',
      'tags',
      'confidence',
      'evidence',
      'status',
      'superseded_by',
      'related_entries',
      'valid_from',
      'valid_to',
      'created_by',
      'created_at',
      'updated_at',
    ]);
    expect(saved).toMatchObject({
      id,
      status: 'active',
      superseded_by: null,
      created_by: 'agent-7',
      created_at: '2026-03-01T12:00:00.000Z',
      updated_at: '2026-03-01T12:00:00.000Z',
    });
    expect(text).toBe(`${JSON.stringify(saved, null, 2)}\n`);

    expect(git(dir, 'show', '--name-only', '--format=', 'HEAD').trim()).toBe(`ai-memory/demo/decisions/${id}.json`);
    const msg = git(dir, 'log', '-1', '--format=%B');
    expect(msg.split('\n')[0]).toMatch(new RegExp(`^memory\\(demo\\): create ${id}: Invoices are generated`));
    expect(msg).toContain(`Memory-Id: ${id}`);
    expect(msg).toContain('Memory-Op: create');
    expect(msg).toContain('Memory-Agent: agent-7');

    // The user's staged file is still staged and uncommitted; nothing else moved.
    expect(git(dir, 'status', '--porcelain')).toBe(before);
    expect(git(dir, 'ls-files', '-s', '--', 'staged.txt', 'src/app.ts')).toBe(indexBefore);
    expect(git(dir, 'diff', '--cached', '--name-only').trim()).toBe('staged.txt');
    expect(git(dir, 'log', '--format=%s', '--', 'staged.txt')).toBe('');
  });

  it('reads stdin, auto-initializes, and defaults created_by to the git user', () => {
    const dir = gitdir();
    const r = cli(dir, ['create', 'fresh', '--file', '-', '--json'], { input: JSON.stringify(entry()) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().created_by).toBe('Test User');
    expect(existsSync(join(dir, 'ai-memory/fresh/config.yaml'))).toBe(true);
    expect(git(dir, 'show', '--name-only', '--format=', 'HEAD')).toContain('ai-memory/fresh/config.yaml');
  });

  it('rejects invalid input naming each field, with exit 1 and a JSON error', () => {
    const dir = initdir();
    const r = cli(dir, ['create', '--json', '--file', writeJson(dir, 'bad.json', entry({ summary: 'x'.repeat(301), scope: 'galaxy', evidence: [] }))]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: summary: must be at most 300 characters (got 301)');
    expect(r.stderr).toMatch(/error: scope: must be repo, org/);
    expect(r.stderr).toMatch(/error: evidence: needs at least one evidence object/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(
      r
        .json()
        .error.problems.map((p: { path: string }) => p.path)
        .sort(),
    ).toEqual(['evidence', 'scope', 'summary']);
    expect(git(dir, 'log', '--format=%s').split('\n')[0]).toMatch(/init demo/);
  });

  it('rejects a duplicate (subject, scope, summary), and re-creating it once superseded unless --force', () => {
    const dir = gitdir();
    const file = writeJson(dir, 'e.json', entry());
    const first = cli(dir, ['create', 'demo', '--file', file]).stdout.trim();
    const dup = cli(dir, ['create', 'demo', '--file', file]);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain(`duplicates entry ${first}`);
    const repl = cli(dir, ['create', 'demo', '--file', writeJson(dir, 'r.json', entry({ summary: 'Invoices are generated hourly.' }))]).stdout.trim();
    expect(cli(dir, ['supersede', first, '--by', repl]).code).toBe(0);
    const again = cli(dir, ['create', 'demo', '--file', file]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`re-creates entry ${first} (superseded), which was superseded by ${repl}`);
    expect(cli(dir, ['create', 'demo', '--file', file, '--force']).code).toBe(0);
    // A larger batch (the whole map is built once): a duplicate of a stored entry and one of an
    // earlier update of the same batch are both skipped; the rest apply.
    const batch = [0, 1, 2, 3].map((i) => ({ operation: 'create', entry: entry({ summary: `Batch fact ${i}` }) }));
    batch.push({ operation: 'create', entry: entry() }, { operation: 'create', entry: entry({ summary: 'Batch fact 2' }) });
    const r = cli(dir, ['apply', 'demo', '--json', '--file', writeJson(dir, 'b.json', batch)]);
    expect(r.json().applied.map((a: { index: number }) => a.index)).toEqual([0, 1, 2, 3]);
    expect(r.json().skipped.map((x: { index: number; errors: { message: string }[] }) => [x.index, x.errors[0]?.message.slice(0, 17)])).toEqual([
      [4, 'duplicates entry '],
      [5, 'duplicates entry '],
    ]);
  });

  it('bad JSON input names the file; a missing file is exit 3; usage errors are exit 2', () => {
    const dir = gitdir();
    writeFileSync(join(dir, 'broken.json'), '{"section": ');
    const r = cli(dir, ['create', 'demo', '--file', 'broken.json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/broken\.json: is not valid JSON/);
    expect(cli(dir, ['create', 'demo', '--file', 'nope.json']).code).toBe(3);
    expect(cli(dir, ['create', 'demo']).code).toBe(2);
    expect(cli(dir, ['frobnicate']).code).toBe(2);
  });

  it('works outside git with a notice, and honours git.autoCommit: false', () => {
    const plain = testdir();
    mkdirSync(join(plain, 'ai-memory'));
    const r = cli(plain, ['create', 'demo', '--file', writeJson(plain, 'e.json', entry())]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/not a git repository: memory was written, but no history is kept/);

    const dir = initdir();
    const cfg = join(dir, 'ai-memory/demo/config.yaml');
    writeFileSync(cfg, readFileSync(cfg, 'utf8').replace('autoCommit: true', 'autoCommit: false'));
    git(dir, 'commit', '-qam', 'no autocommit');
    const head = git(dir, 'rev-parse', 'HEAD');
    expect(cli(dir, ['create', '--file', writeJson(testdir(), 'e.json', entry())]).code).toBe(0);
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
  });

  it('gives up with exit 4 when another process holds the write lock', () => {
    const dir = initdir();
    mkdirSync(join(dir, '.git/bass-agents/write.lock'), { recursive: true }); // a fresh lock held by "someone" (the write lock lives in git's folder)
    const r = cli(dir, ['create', '--file', writeJson(testdir(), 'e.json', entry())], { env: { BASS_AGENTS_LOCK_TIMEOUT_MS: '300' } });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/holds the write lock/);
  });
});

describe('apply, supersede, deprecate, show', () => {
  it('applies a batch as one commit and skips invalid updates', () => {
    const dir = gitdir();
    const a = cli(dir, ['create', 'demo', '--file', writeJson(dir, 'a.json', entry())]).stdout.trim();
    const headBefore = git(dir, 'rev-parse', 'HEAD').trim();
    const updates = [
      { operation: 'create', entry: entry({ summary: 'Nightly invoices run at 02:00 UTC.' }) },
      { operation: 'create', entry: entry({ confidence: 7 }) },
      { operation: 'supersede', target_id: a, entry: entry({ summary: 'Invoices are generated hourly since March.' }) },
      { operation: 'deprecate', target_id: 'NOPE1' },
    ];
    const r = cli(dir, ['apply', 'demo', '--json', '--file', writeJson(dir, 'u.json', updates)]);
    expect(r.code).toBe(1);
    const out = r.json();
    expect(out.applied.map((x: { operation: string }) => x.operation)).toEqual(['create', 'supersede']);
    expect(out.skipped.map((s: { index: number }) => s.index)).toEqual([1, 3]);
    expect(out.skipped[0].errors[0]).toMatchObject({ path: '[1].entry.confidence' });
    expect(out.skipped[1].errors[0].message).toMatch(/no entry with id NOPE1/);
    expect(git(dir, 'rev-list', '--count', `${headBefore}..HEAD`).trim()).toBe('1');
    expect(out.commit).toBe(git(dir, 'rev-parse', 'HEAD').trim());
    const old = cli(dir, ['show', a, '--json']).json();
    expect(old.status).toBe('superseded');
    expect(old.superseded_by).toBe(out.applied[1].id);
  });

  it('supersede --by, deprecate, and refusing to supersede twice', () => {
    const dir = gitdir();
    const [a, b] = seed(dir, [entry(), entry({ summary: 'Hourly now.' })], { BASS_AGENTS_NOW: '2026-01-01T00:00:00Z' });
    const s = cli(dir, ['supersede', a, '--by', b, '--json'], { env: { BASS_AGENTS_NOW: '2026-02-01T00:00:00Z' } });
    expect(s.code, s.stderr).toBe(0);
    expect(s.json().entry).toMatchObject({
      id: a,
      status: 'superseded',
      superseded_by: b,
      updated_at: '2026-02-01T00:00:00.000Z',
      created_at: '2026-01-01T00:00:00.000Z',
    });
    const again = cli(dir, ['supersede', a, '--by', b]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already superseded/);
    expect(cli(dir, ['supersede', a, '--by', 'MISSING9']).code).toBe(3);
    const d = cli(dir, ['deprecate', b, '--json']);
    expect(d.json().entry.status).toBe('deprecated');
    expect(cli(dir, ['deprecate', b]).stdout).toMatch(/already deprecated/);
    // Never deleted (Req 5.6).
    expect(existsSync(entryFile(dir, 'demo', 'decisions', a))).toBe(true);
  });

  it('show prints every field and computed values; --history lists versions from git', () => {
    const dir = gitdir();
    const a = cli(dir, [
      'create',
      'demo',
      '--file',
      writeJson(dir, 'a.json', entry({ valid_from: '2026-01-01', valid_to: '2026-12-31', tags: ['x', 'y'] })),
    ]).stdout.trim();
    const human = cli(dir, ['show', a]);
    for (const f of [
      'id',
      'section',
      'kind',
      'subject',
      'scope',
      'summary',
      'content',
      'tags',
      'confidence',
      'evidence',
      'status',
      'superseded_by',
      'related_entries',
      'valid_from',
      'valid_to',
      'created_by',
      'created_at',
      'updated_at',
    ]) {
      expect(human.stdout, f).toMatch(new RegExp(`^${f}\\s`, 'm'));
    }
    expect(human.stdout).toContain('src/billing/cron.ts#L10-L40');
    const json = cli(dir, ['show', a, '--json'], { env: { BASS_AGENTS_NOW: '2026-12-28T00:00:00Z' } }).json();
    expect(json.computed).toMatchObject({ confidence_label: 'stated explicitly', effective_confidence: 0.9, flags: ['expiring_soon'] });
    cli(dir, ['deprecate', a]);
    const hist = cli(dir, ['show', a, '--history', '--json']).json();
    expect(hist.map((v: { entry: { status: string } }) => v.entry.status)).toEqual(['deprecated', 'active']);
    expect(cli(dir, ['show', a, '--history']).stdout).toMatch(/changed: status/);
    expect(cli(dir, ['show', 'NOSUCHID']).code).toBe(3);
    const esc = cli(dir, ['show', '../../etc/passwd']);
    expect(esc.code).toBe(1);
    expect(esc.stderr).toMatch(/looks like a path/);
  });
});

describe('memory validate', () => {
  it('checks entries, updates and arrays without writing', () => {
    const dir = initdir();
    const ok = cli(dir, ['validate', '--json', '--file', writeJson(dir, 'ok.json', entry())]);
    expect(ok.code).toBe(0);
    expect(ok.json()).toEqual({ ok: true, errors: [] });
    const bad = cli(dir, [
      'validate',
      '--json',
      '--file',
      writeJson(dir, 'bad.json', [{ operation: 'create', entry: entry({ kind: 'whim' }) }, { operation: 'deprecate' }]),
    ]);
    expect(bad.code).toBe(1);
    expect(bad.json().errors.map((e: { path: string }) => e.path)).toEqual(['[0].entry.kind', '[1].target_id']);
    expect(existsSync(join(dir, 'ai-memory/demo/decisions'))).toBe(false);
  });
});

describe('memory list', () => {
  it('shows the columns of Req 7.9 and applies the default filters', () => {
    const dir = gitdir();
    const env = { BASS_AGENTS_NOW: '2026-05-01T00:00:00Z' };
    const [hi] = seed(
      dir,
      [
        entry({ summary: 'S'.repeat(120) }),
        entry({ summary: 'low confidence', confidence: 0.3 }),
        entry({ summary: 'a draft', status: 'draft', evidence: [] }),
      ],
      env,
    );
    const r = cli(dir, ['list'], { env });
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+UPDATED\s+SECTION\s+KIND\s+SUBJECT\s+SCOPE\s+CONF\s+SUMMARY$/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(hi);
    expect(lines[1]).toContain(`${'S'.repeat(79)}…`);
    expect(lines[1]).not.toContain('S'.repeat(81));
    const all = cli(dir, ['list', '--status', 'any', '--min-confidence', '0', '--json'], { env }).json();
    expect(all).toHaveLength(3);
    expect(all[0].meta).toMatchObject({ flags: [], confidence_label: 'stated explicitly' });
    expect(all.find((e: { confidence: number }) => e.confidence === 0.3).meta.flags).toContain('low_confidence');
  });
});

describe('id prefixes', () => {
  it('show, deprecate and supersede take a unique prefix; an ambiguous one lists the candidates (exit 2)', () => {
    const dir = gitdir();
    const [a, b] = seed(dir, [entry({ summary: 'First of two.' }), entry({ summary: 'Second of two.' })]);
    let common = 0;
    while (a[common] === b[common]) common++;
    const shown = cli(dir, ['show', a.slice(0, common + 1), '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.json().id).toBe(a);
    const ambiguous = cli(dir, ['show', a.slice(0, common)]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain(a);
    expect(ambiguous.stderr).toContain(b);
    expect(cli(dir, ['show', 'ZZZZZZ']).code).toBe(3);
    expect(cli(dir, ['supersede', a.slice(0, common + 1), '--by', b.slice(0, common + 1)]).code).toBe(0);
    expect(cli(dir, ['show', a, '--json']).json()).toMatchObject({ status: 'superseded', superseded_by: b });
    expect(cli(dir, ['deprecate', b.slice(0, common + 1)]).code).toBe(0);
    expect(git(dir, 'log', '-1', '--format=%B')).toContain(`Memory-Id: ${b}`);
  });
});

describe('a bad command line', () => {
  it('is told in plain words, the error before the hint (exit 2)', () => {
    const dir = gitdir();
    const cases: [string[], RegExp][] = [
      [['show'], /^error: this command needs 1 argument and got 0/],
      [['show', 'A1B2C3', 'extra'], /^error: unexpected argument "extra"/],
      [['list', '--bogus'], /^error: unknown option --bogus/],
      [
        ['query', 'x', '--sumary-only', '--limt', '3'],
        /^error: unknown options --sumary-only \(did you mean --summary-only\?\), --limt \(did you mean --limit\?\)\n/,
      ],
      [['list', '--staus', 'any'], /^error: unknown option --staus \(did you mean --status\?\)\n/],
      [['compact', '--strategy', 'nope'], /^error: --strategy "nope" is not one of: "keep_newest"/],
    ];
    for (const [args, said] of cases) {
      const r = cli(dir, args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(said);
      expect(r.stderr.trim().split('\n').pop()).toBe('(see bass-agents memory --help)');
    }
  });
});

describe('list and query never cap silently', () => {
  it('say how many more matched than they show', () => {
    const dir = gitdir();
    seed(dir, [
      entry({ summary: 'One fact about invoices.' }),
      entry({ summary: 'Two facts about invoices.' }),
      entry({ summary: 'Three facts about invoices.' }),
    ]);
    const l = cli(dir, ['list', '--limit', '2']);
    expect(l.code).toBe(0);
    expect(l.stderr).toMatch(/^1 more match; the next page: --offset 2/m);
    expect(cli(dir, ['query', 'invoices', '--limit', '1']).stderr).toMatch(/^2 more match/m);
    expect(cli(dir, ['list']).stderr).not.toMatch(/more match/);
    // Pages: the next page holds what the first did not, and the last says nothing more.
    const ids = (args: string[]): string[] => (cli(dir, ['list', ...args, '--json']).json() as { id: string }[]).map((e) => e.id);
    const all = ids([]);
    expect([...ids(['--limit', '2']), ...ids(['--limit', '2', '--offset', '2'])]).toEqual(all);
    expect(cli(dir, ['list', '--limit', '2', '--offset', '2']).stderr).not.toMatch(/more match/);
    expect(cli(dir, ['list', '--offset', '-1']).stderr).toMatch(/offset must be a whole number/);
  });
});

describe('drafts in list and query', () => {
  it('--status draft and --status any show drafts whatever their confidence, unless --min-confidence says otherwise', () => {
    const dir = gitdir();
    const env = { BASS_AGENTS_NO_DAEMON: '1' };
    const draft = cli(dir, ['create', 'demo', '--file', '-'], {
      input: JSON.stringify({
        ...entry({ summary: 'Maybe the queue drops messages on restart.', subject: 'queue.restart' }),
        status: 'draft',
        confidence: 0.3,
        evidence: [],
      }),
      env,
    });
    expect(draft.code, draft.stderr).toBe(0);
    const id = draft.stdout.trim();
    const ids = (args: string[]): string[] => (cli(dir, ['list', ...args, '--json'], { env }).json() as { id: string }[]).map((e) => e.id);
    expect(ids([])).not.toContain(id); // active only, confidence >= 0.6
    expect(ids(['--status', 'draft'])).toContain(id);
    expect(ids(['--status', 'any'])).toContain(id);
    expect(ids(['--status', 'draft', '--min-confidence', '0.5'])).not.toContain(id);
  });
});

describe('remove-project', () => {
  it('removes a project that holds no entries in one commit, and refuses one that holds any', () => {
    const dir = gitdir();
    const env = { BASS_AGENTS_NO_DAEMON: '1' };
    expect(cli(dir, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry()), env }).code).toBe(0);
    expect(cli(dir, ['init', 'mistake'], { env }).code).toBe(0);
    // Two projects and no default: a read without --project covers both, a write needs one.
    expect(cli(dir, ['create', '--file', '-'], { input: JSON.stringify(entry({ summary: 'Where does this go?' })), env }).code).toBe(2);
    const r = cli(dir, ['remove-project', 'mistake', '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().removed).toContain('ai-memory/mistake/config.yaml');
    expect(git(dir, 'log', '-1', '--format=%s')).toMatch(/^memory\(mistake\): remove-project mistake/);
    expect(existsSync(join(dir, 'ai-memory/mistake'))).toBe(false);
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(cli(dir, ['create', '--file', '-'], { input: JSON.stringify(entry({ summary: 'Now it goes to demo.' })), env }).code).toBe(0);
    const refused = cli(dir, ['remove-project', 'demo'], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/holds 2 entries .*entries are never deleted/);
    expect(cli(dir, ['remove-project', 'nope'], { env }).code).toBe(3);
  });
});

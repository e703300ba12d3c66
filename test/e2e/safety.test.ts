/**
 * memory doctor, and paths that can never make the tool read or write outside the workspace:
 * project names, ids, sections, import/export paths, evidence paths; `..`, absolute paths, NUL,
 * symlinks, Windows separators.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, entry, git, gitdir, stateDir, testdir } from '../helpers/repo.js';

describe('memory doctor', () => {
  it('is clean on a healthy workspace and reports each kind of problem with its file', () => {
    const dir = gitdir();
    const r = cli(dir, ['apply', 'demo', '--file', '-', '--json'], {
      input: JSON.stringify([
        { operation: 'create', entry: entry({ summary: 'a' }) },
        { operation: 'create', entry: entry({ summary: 'b' }) },
      ]),
    });
    const [a, b] = r.json().applied.map((x: { id: string }) => x.id);
    expect(cli(dir, ['doctor']).code).toBe(0);
    const fileOf = (id: string): string => join(dir, git(dir, 'ls-files', `ai-memory/demo/*/${id}.json`).trim());
    const ea = JSON.parse(readFileSync(fileOf(a), 'utf8'));
    writeFileSync(fileOf(a), JSON.stringify({ ...ea, related_entries: ['GHOST1'], content: 'token ghp_Zq8Wm2Xc4Vb6Nn1Ll3Kk5Jj7Hh9Gg0Ff2Dd4SAB' }, null, 2));
    const eb = JSON.parse(readFileSync(fileOf(b), 'utf8'));
    writeFileSync(fileOf(b), JSON.stringify({ ...eb, summary: 'a' }, null, 2)); // now a duplicate of a
    writeFileSync(join(dir, 'ai-memory/demo/decisions/WRONGNAME.json'), JSON.stringify({ ...eb, id: 'OTHERID', summary: 'z' }));
    writeFileSync(join(dir, 'ai-memory/demo/decisions/BROKEN.json'), '{');
    writeFileSync(join(dir, 'ai-memory/demo/config.yaml'), 'project: demo\nquery: { slow_ms: -1 }\n');
    const d = cli(dir, ['doctor', '--json']);
    expect(d.code).toBe(1);
    const checks = d.json().problems.map((p: { check: string }) => p.check);
    for (const c of ['entry file', 'links', 'duplicates', 'secrets', 'config']) expect(checks, c).toContain(c);
    expect(d.stdout).not.toContain('ghp_Zq8Wm2Xc4Vb6Nn1Ll3Kk5Jj7Hh9Gg0Ff2Dd4SAB');
    expect(d.json().problems.find((p: { check: string; file: string }) => p.check === 'entry file' && p.file.endsWith('WRONGNAME.json')).message).toMatch(
      /file is named WRONGNAME/,
    );
    // Each problem names its file once.
    for (const line of cli(dir, ['doctor']).stderr.split('\n').filter(Boolean)) {
      const file = /(ai-memory\/\S+?\.(?:json|yaml))/.exec(line)?.[1];
      if (file) expect(line.split(file).length - 1, line).toBe(1);
    }
  });
});

describe('paths stay inside the workspace', () => {
  it('refuses project names, ids and sections that would leave ai-memory/', () => {
    const dir = gitdir();
    for (const bad of ['../x', '/etc', 'a/b', 'a\\b', '..', '.hidden']) {
      const r = cli(dir, ['init', bad]);
      expect([1, 2], bad).toContain(r.code); // rejected (unsafe path) or a usage error, never written
      expect(r.stderr, bad).toMatch(/^error: /m);
    }
    expect(
      git(dir, 'status', '--porcelain', '--ignored')
        .split('\n')
        .filter((l) => l.includes('ai-memory/')),
    ).toEqual([]);
    for (const id of ['../../etc/passwd', '/etc/passwd', 'a\\b']) expect([1, 2], id).toContain(cli(dir, ['show', id]).code);
    // NUL cannot travel in argv at all; through JSON it is refused like any unsafe id.
    const nul = cli(dir, ['apply', 'demo', '--file', '-', '--json'], { input: JSON.stringify([{ operation: 'deprecate', target_id: 'x\u0000y' }]) });
    expect(nul.code).toBe(1);
    expect(nul.json().skipped[0].errors[0].path).toMatch(/target_id/);
    const imp = cli(dir, ['import', 'demo', '-'], {
      input: JSON.stringify([
        {
          ...entry(),
          id: '../x\u0000',
          created_by: 'a',
          created_at: '2026-01-01T00:00:00Z',
          updated_at: '2026-01-01T00:00:00Z',
          status: 'active',
          superseded_by: null,
          related_entries: [],
          valid_from: null,
          valid_to: null,
        },
      ]),
    });
    expect(imp.code).toBe(1);
    expect(imp.stderr).toMatch(/\[0\]\.id/);
    // A name of this test's own, so that a folder some other program left beside the workspace cannot fail it.
    const away = `x-${basename(dir)}`;
    expect(cli(dir, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry({ section: `../../${away}` })) }).code).toBe(1);
    for (const p of [join(dir, away), join(dir, '..', away)]) expect(existsSync(p), p).toBe(false);
  });

  it('refuses evidence paths that leave the repository or name credential files', () => {
    const dir = gitdir();
    for (const uri of ['../secrets.txt', '/etc/passwd', 'src\\..\\..\\x.ts', '.env', 'config/.aws/credentials', 'home/.ssh/id_rsa']) {
      const r = cli(dir, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry({ summary: uri, evidence: [{ type: 'code', uri, note: '' }] })) });
      expect(r.code, uri).toBe(1);
      expect(r.stderr, uri).toMatch(/evidence\[0\]\.uri/);
    }
  });

  it('writes no memory outside the workspace (exports included, also through a symlink), reads what the user names anywhere, never follows symlinked entry files', () => {
    const dir = gitdir();
    cli(dir, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry()) });
    const outside = testdir();
    writeFileSync(join(outside, 'in.json'), '[]');
    symlinkSync(outside, join(dir, 'link-out'));
    expect(cli(dir, ['export', 'demo', join(outside, 'out.json')]).code).toBe(1);
    expect(cli(dir, ['export', 'demo', 'link-out/out.json']).stderr).toMatch(/outside the workspace root.*or to stdout with -/);
    expect(existsSync(join(outside, 'out.json'))).toBe(false);
    // stdout is the way out: the user redirects it where they like.
    expect(JSON.parse(cli(dir, ['export', 'demo', '-']).stdout)).toHaveLength(1);
    // Reading a file the user names is fine wherever it is: what it writes is memory, inside.
    const head = git(dir, 'rev-parse', 'HEAD');
    writeFileSync(join(outside, 'in.json'), JSON.stringify([entry({ summary: 'Imported from a file outside the repository.', subject: 'ops.import' })]));
    const imported = cli(dir, ['import', 'demo', join(outside, 'in.json')]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(git(dir, 'rev-parse', 'HEAD')).not.toBe(head);
    expect(git(dir, 'status', '--porcelain', '--', 'ai-memory')).toBe('');
    // A symlink planted inside ai-memory is never followed.
    writeFileSync(join(outside, 'ENTRY.json'), '{}');
    mkdirSync(join(dir, 'ai-memory/demo/learnings'), { recursive: true });
    symlinkSync(join(outside, 'ENTRY.json'), join(dir, 'ai-memory/demo/learnings/LINKED.json'));
    const list = cli(dir, ['list', '--json']);
    expect(list.code).toBe(0);
    expect(list.stderr).toMatch(/LINKED\.json.*symbolic link/);
  });
});

/** Every path under `dir` with what it is: a file's bytes (as hex digest), a link's target, a folder. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isSymbolicLink()) out[p] = `link ${readlinkSync(p)}`;
      else if (e.isDirectory()) {
        out[p] = 'dir';
        walk(p);
      } else out[p] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

describe('local state where no clone can plant it', () => {
  it('a clone that commits .bass-agents/ links: nothing is written through them, nothing outside the workspace and the git dir', () => {
    const outside = testdir(); // a sibling of the workspace: the victim's files
    const home = join(outside, 'home');
    mkdirSync(home);
    writeFileSync(join(home, '.bashrc'), 'export PS1=victim\n');
    mkdirSync(join(outside, 'elsewhere'));
    const origin = gitdir();
    mkdirSync(join(origin, '.bass-agents/logs'), { recursive: true });
    symlinkSync(join(home, '.bashrc'), join(origin, '.bass-agents/logs/queries.jsonl'));
    symlinkSync(join(outside, 'elsewhere'), join(origin, '.bass-agents/cache'));
    symlinkSync(join(outside, 'made-by-a-dangling-link'), join(origin, '.bass-agents/.gitignore'));
    git(origin, 'add', '-f', '.bass-agents');
    git(origin, 'commit', '-qm', 'ship links');
    const clones = testdir();
    // A path too long for the daemon's socket in the git dir: it goes to the private runtime folder.
    git(clones, 'clone', '-q', origin, 'c'.repeat(70));
    const dir = join(clones, 'c'.repeat(70));
    const runtime = testdir();
    git(dir, 'config', 'user.name', 'Cloner');
    git(dir, 'config', 'user.email', 'c@example.com');
    const before = { outside: snapshot(outside), clones: snapshot(clones) };
    const env = { HOME: home, XDG_STATE_HOME: join(home, '.local/state'), XDG_RUNTIME_DIR: runtime, BASS_AGENTS_AGENT: 'tester' };
    const run = (args: string[], input?: string): ReturnType<typeof cli> => {
      const r = cli(dir, args, { env, input });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r;
    };
    expect(run(['init', 'demo']).stderr).not.toMatch(/\.bass-agents/);
    run(['create', 'demo', '--file', '-'], JSON.stringify(entry()));
    run(['query', 'invoices $(touch pwned) nightly', '--tags', 'billing', '--subject', 'billing.invoices']);
    run(['daemon', 'start']);
    try {
      expect(run(['daemon', 'status', '--json']).json().socket).toMatch(new RegExp(`^${runtime}/bass-agents/[0-9a-f]{24}\\.sock$`));
      expect(run(['query', 'invoices nightly']).stdout).toMatch(/Invoices are generated nightly/);
    } finally {
      run(['daemon', 'stop']);
    }
    // The thin client found the daemon at that socket and had it run the query.
    expect(readFileSync(join(stateDir(dir), 'logs/daemon.log'), 'utf8')).toMatch(/"event":"cli_run","command":"query"/);
    expect(snapshot(outside)).toEqual(before.outside);
    // In the clone's folder, only the workspace changed: the .git dir and ai-memory/.
    const after = snapshot(clones);
    const added = Object.keys(after).filter((p) => !(p in before.clones));
    expect(added.filter((p) => !p.startsWith(join(dir, '.git')) && !p.startsWith(join(dir, 'ai-memory')))).toEqual([]);
    for (const p of Object.keys(before.clones).filter((p) => p.includes('.bass-agents'))) expect(after[p], p).toBe(before.clones[p]);
    expect(git(dir, 'status', '--porcelain')).toBe('');
    // The query log is in the git dir, without the query's text or filter values.
    const log = readFileSync(join(stateDir(dir), 'logs/queries.jsonl'), 'utf8');
    expect(log).toMatch(/"text_hash":"[0-9a-f]{16}"/);
    expect(log).not.toMatch(/invoices|pwned|billing/);
  });

  it('refuses a link planted inside the state folder, and a committed config.yaml that is a link out of the repository', () => {
    const outside = testdir();
    writeFileSync(join(outside, 'hosts.yml'), 'github.com:\n  oauth_token: gho_16C7e42F292c6912E7710c838347Ae178B4a\n');
    const dir = gitdir();
    expect(cli(dir, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry()) }).code).toBe(0);
    const queries = join(stateDir(dir), 'logs/queries.jsonl');
    rmSync(queries, { force: true });
    symlinkSync(join(outside, 'hosts.yml'), queries);
    const q = cli(dir, ['query', 'invoices']);
    expect(q.code).toBe(1);
    expect(q.stderr).toContain(`${queries} is a symbolic link`);
    rmSync(queries);

    rmSync(join(dir, 'ai-memory/demo/config.yaml'));
    symlinkSync(join(outside, 'hosts.yml'), join(dir, 'ai-memory/demo/config.yaml'));
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'config as a link');
    const shown: string[] = [];
    for (const args of [
      ['query', 'invoices'],
      ['create', 'demo', '--file', '-'],
    ]) {
      const r = cli(dir, args, { input: JSON.stringify(entry({ summary: 'another' })) });
      expect(r.code, args[0]).toBe(1);
      expect(r.stderr, args[0]).toMatch(/demo\/config\.yaml.* symbolic link/);
      shown.push(r.stdout, r.stderr);
    }
    expect(readFileSync(join(outside, 'hosts.yml'), 'utf8')).toContain('gho_16C7e42F292c6912E7710c838347Ae178B4a');
    const files = Object.entries(snapshot(stateDir(dir))).filter(([, what]) => what !== 'dir');
    expect([...shown, ...files.map(([p]) => readFileSync(p, 'latin1'))].join('\n')).not.toContain('gho_16C7e');
  });

  it("leaves an earlier version's .bass-agents/ in the work tree alone: never read, moved or removed", () => {
    const dir = gitdir({ '.gitignore': '.bass-agents/\n' });
    const old = join(dir, '.bass-agents');
    mkdirSync(join(old, 'state'), { recursive: true });
    mkdirSync(join(old, 'cache'));
    writeFileSync(join(old, 'state/usage.json'), '{"demo/X":{"retrievals":3,"last_accessed_at":"2026-01-01T00:00:00.000Z"}}');
    writeFileSync(join(old, 'cache/catalog.bin'), 'planted');
    mkdirSync(join(dir, 'ai-memory/demo'), { recursive: true });
    const before = snapshot(old);
    const r = cli(dir, ['list']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/bass-agents\//);
    expect(snapshot(old)).toEqual(before);
    const state = stateDir(dir);
    expect(existsSync(join(state, 'state/usage.json'))).toBe(false);
    expect(existsSync(join(state, 'cache/catalog.bin')) && readFileSync(join(state, 'cache/catalog.bin'), 'latin1')).not.toBe('planted');
  });

  it('outside git, state lives under $XDG_STATE_HOME; the query log keeps query text only when the config asks', () => {
    const dir = testdir();
    const stateHome = join(testdir(), 'state');
    const env = { XDG_STATE_HOME: stateHome };
    expect(cli(dir, ['init', 'demo'], { env }).code).toBe(0);
    expect(cli(dir, ['query', 'nightly invoices', '--subject', 'billing.invoices'], { env }).code).toBe(0);
    const [key] = readdirSync(join(stateHome, 'bass-agents'));
    expect(key).toMatch(new RegExp(`^${basename(dir)}-[0-9a-f]{12}$`));
    const log = (): string => readFileSync(join(stateHome, 'bass-agents', key ?? '', 'logs/queries.jsonl'), 'utf8');
    expect(log()).not.toMatch(/nightly|billing/);
    expect(readdirSync(dir)).toEqual(['ai-memory']);
    writeFileSync(join(dir, 'ai-memory/demo/config.yaml'), `${readFileSync(join(dir, 'ai-memory/demo/config.yaml'), 'utf8')}logging:\n  query_text: true\n`);
    expect(cli(dir, ['query', 'nightly invoices', '--subject', 'billing.invoices'], { env }).code).toBe(0);
    const kept = JSON.parse(log().trim().split('\n').pop()!);
    expect(kept).toMatchObject({ text: 'nightly invoices', subject: 'billing.invoices' });
    // The subject kept as typed is named; the other, which no entry has, is not.
    expect(cli(dir, ['stats', '--json'], { env }).json().most_queried_subjects).toEqual(
      expect.arrayContaining([
        { subject: 'billing.invoices', count: 1 },
        { subject: '(text not kept)', count: 1 },
      ]),
    );
  });
});

describe('names, earlier ids, and files that cannot be read', () => {
  it('refuses Windows device names; keeps project folders and ids of earlier versions working; never removes or writes over what it cannot read', () => {
    const dir = gitdir();
    const env = { BASS_AGENTS_NO_DAEMON: '1' };
    for (const name of ['CON', 'nul', 'Com1.txt']) {
      const r = cli(dir, ['init', name], { env });
      expect(r.code, name).toBe(2);
      expect(r.stderr, name).toMatch(/device name on Windows/);
    }
    // An earlier version's project folder (capitals) and an imported id that is not a ULID.
    const legacy = {
      ...entry({ summary: 'Kept from an earlier version.' }),
      id: 'legacy-note-1',
      status: 'active',
      superseded_by: null,
      related_entries: [],
      valid_from: null,
      valid_to: null,
      created_by: 'someone',
      created_at: '2025-01-01T00:00:00.000Z',
      updated_at: '2025-01-01T00:00:00.000Z',
    };
    mkdirSync(join(dir, 'ai-memory/Legacy/decisions'), { recursive: true });
    writeFileSync(join(dir, 'ai-memory/Legacy/decisions/legacy-note-1.json'), JSON.stringify(legacy, null, 2));
    expect(cli(dir, ['show', 'legacy-note-1', '--json'], { env }).json().summary).toBe('Kept from an earlier version.');
    expect(cli(dir, ['create', 'Legacy', '--file', '-'], { env, input: JSON.stringify(entry({ summary: 'Still writable.' })) }).code).toBe(0);
    const imported = cli(dir, ['import', 'Legacy', '-'], { env, input: JSON.stringify([{ ...legacy, id: 'legacy-note-2', summary: 'Another.' }]) });
    expect(imported.code).toBe(1);
    expect(imported.stderr).toMatch(/\[0\]\.id: is not a memory id \(a ULID\); --reassign-ids/);

    // A project whose files cannot all be read: conflict markers, a field of a newer version, an unknown file.
    expect(cli(dir, ['init', 'gone'], { env }).code).toBe(0);
    const head = git(dir, 'rev-parse', 'HEAD');
    const stored = { ...legacy, id: '01JAAAAAAAAAAAAAAAAAAAAAAE', summary: 'From the future.' };
    const files = {
      'ai-memory/gone/decisions/01JAAAAAAAAAAAAAAAAAAAAAAE.json': JSON.stringify({ ...stored, confidence_model: 'v9' }),
      'ai-memory/gone/decisions/01JAAAAAAAAAAAAAAAAAAAAAAF.json': `<<<<<<< HEAD\n${JSON.stringify({ ...stored, id: '01JAAAAAAAAAAAAAAAAAAAAAAF' })}\n=======\n{}\n>>>>>>> theirs\n`,
      'ai-memory/gone/notes.txt': 'mine\n',
    };
    mkdirSync(join(dir, 'ai-memory/gone/decisions'));
    for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
    const r = cli(dir, ['remove-project', 'gone'], { env });
    expect(r.code).toBe(1);
    for (const f of Object.keys(files)) expect(r.stderr).toContain(f);
    expect(r.stderr).toMatch(/nothing was removed/);
    for (const [f, text] of Object.entries(files)) expect(readFileSync(join(dir, f), 'utf8')).toBe(text);
    expect(existsSync(join(dir, 'ai-memory/gone/config.yaml'))).toBe(true);
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
    // An import over an id whose file cannot be read leaves the file alone.
    const over = cli(dir, ['import', 'gone', '-', '--on-conflict', 'overwrite', '--json'], { env, input: JSON.stringify([stored]) });
    expect(over.json().skipped[0].errors[0].message).toMatch(/cannot be read/);
    for (const [f, text] of Object.entries(files).slice(0, 1)) expect(readFileSync(join(dir, f), 'utf8')).toBe(text);
    // doctor names each of them, and the earlier id.
    const problems = cli(dir, ['doctor', '--json'], { env }).json().problems as { check: string; file: string }[];
    expect(problems.map((p) => `${p.check} ${p.file}`)).toEqual(
      expect.arrayContaining([
        'ids ai-memory/Legacy/decisions/legacy-note-1.json',
        'conflict ai-memory/gone/decisions/01JAAAAAAAAAAAAAAAAAAAAAAF.json',
        'entry file ai-memory/gone/decisions/01JAAAAAAAAAAAAAAAAAAAAAAE.json',
      ]),
    );
  });
});

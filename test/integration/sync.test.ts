/**
 * Git as the distribution engine: a bare remote and three clones writing concurrently, syncing
 * with `memory sync` (the merge driver merges an entry edited on two machines field by field),
 * until all three hold the same entries with nothing lost.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, cleanGitEnv, cli, entry, git, testdir } from '../helpers/repo.js';

function run(dir: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'memory', ...args], { cwd: dir, env: cleanGitEnv(dir) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.end(input ?? '');
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

function clone(remote: string, name: string): string {
  const dir = join(testdir(), name);
  git(join(dir, '..'), 'clone', '-q', remote, name);
  git(dir, 'config', 'user.name', name);
  git(dir, 'config', 'user.email', `${name}@example.com`);
  git(dir, 'config', 'commit.gpgsign', 'false');
  return dir;
}

const ids = (dir: string): string[] =>
  git(dir, 'ls-files', 'ai-memory/demo')
    .split('\n')
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.split('/').pop()!.slice(0, -5))
    .sort();

describe('memory sync across clones', () => {
  it('three clones write concurrently, sync, and end with the same entries; an entry edited on two sides merges field by field', async () => {
    const remote = join(testdir(), 'remote.git');
    git(join(remote, '..'), 'init', '-q', '--bare', '-b', 'main', remote);
    const a = clone(remote, 'alice');
    expect(cli(a, ['init', 'demo']).code).toBe(0);
    expect(readFileSync(join(a, 'ai-memory/.gitattributes'), 'utf8')).toContain('merge=bass-agents-memory');
    const shared = cli(a, ['create', 'demo', '--file', '-', '--json'], { input: JSON.stringify(entry({ summary: 'shared fact', tags: ['base'] })) }).json().id;
    git(a, 'push', '-q', 'origin', 'HEAD:main');
    const b = clone(remote, 'bob');
    const c = clone(remote, 'carol');
    for (const d of [b, c]) {
      const r = cli(d, ['init', 'demo', '--json']); // a fresh clone: registers the merge driver only
      expect(r.code, r.stderr).toBe(0);
      expect(r.json()).toMatchObject({ created: false, merge_driver: true });
      expect(git(d, 'config', '--get', 'merge.bass-agents-memory.driver')).toContain('merge-driver');
    }

    // Concurrent writes: each clone creates 3 entries in parallel processes (nine writers at once).
    const writes = [a, b, c].flatMap((d, k) =>
      Array.from({ length: 3 }, (_, i) =>
        run(d, ['create', 'demo', '--file', '-'], JSON.stringify(entry({ summary: `clone ${k} note ${i}`, subject: `billing.c${k}n${i}` }))),
      ),
    );
    for (const w of await Promise.all(writes)) expect(w.code, w.stderr).toBe(0);
    // The same entry edited on two machines: alice deprecates it, bob adds a tag (by hand, as a person would).
    expect(cli(a, ['deprecate', shared]).code).toBe(0);
    const file = join(b, git(b, 'ls-files', `ai-memory/demo/*/${shared}.json`).trim());
    const edited = { ...JSON.parse(readFileSync(file, 'utf8')), tags: ['base', 'reviewed'], updated_at: '2099-01-01T00:00:00.000Z' };
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, `${JSON.stringify(edited, null, 2)}\n`);
    git(b, 'commit', '-qam', 'tag the shared fact');

    // All three sync at the same time (pushes race; sync retries), then once more to converge.
    for (const r of await Promise.all([a, b, c].map((d) => run(d, ['sync', '--push', '--json'])))) expect(r.code, r.stderr).toBe(0);
    for (const d of [a, b, c]) expect(cli(d, ['sync', '--push']).code).toBe(0);
    const expected = ids(a);
    expect(expected).toHaveLength(10);
    expect(ids(b)).toEqual(expected);
    expect(ids(c)).toEqual(expected);
    const merged = cli(c, ['show', shared, '--json']).json();
    expect(merged.status).toBe('deprecated'); // an ending status wins over an edit
    expect(merged.tags).toEqual(['base', 'reviewed']); // arrays are unioned
    for (const d of [a, b, c]) {
      expect(git(d, 'status', '--porcelain')).toBe('');
      const markers = spawnSync('git', ['grep', '-l', '<<<<<<<', '--', 'ai-memory'], { cwd: d, encoding: 'utf8' });
      expect(markers.status, markers.stdout).toBe(1); // git grep: 1 = no match
    }
    git(a, 'fsck', '--no-progress');
    // Three clones' inits, ten writes (nine at once), two rounds of sync: a busy machine may take
    // more than the default minute, and no test here may fail for slowness.
  }, 600_000);

  it('a merge git cannot finish stops with a clear message and leaves nothing half-merged', async () => {
    const remote = join(testdir(), 'remote.git');
    git(join(remote, '..'), 'init', '-q', '--bare', '-b', 'main', remote);
    const a = clone(remote, 'alice');
    cli(a, ['init', 'demo']);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(a, 'notes.txt'), 'one\n');
    git(a, 'add', 'notes.txt');
    git(a, 'commit', '-qm', 'notes');
    git(a, 'push', '-q', 'origin', 'HEAD:main');
    const b = clone(remote, 'bob');
    cli(b, ['init', 'demo']);
    writeFileSync(join(a, 'notes.txt'), 'alice\n');
    git(a, 'commit', '-qam', 'alice notes');
    git(a, 'push', '-q', 'origin', 'HEAD:main');
    writeFileSync(join(b, 'notes.txt'), 'bob\n');
    git(b, 'commit', '-qam', 'bob notes');
    const head = git(b, 'rev-parse', 'HEAD');
    const r = cli(b, ['sync']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/sync stopped: git could not merge origin\/main.*nothing was merged/);
    expect(git(b, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(b, 'status', '--porcelain')).toBe('');
  });

  it('a plain git pull without the merge driver leaves conflict markers: doctor finds them, doctor --fix merges field by field', () => {
    const remote = join(testdir(), 'remote.git');
    git(join(remote, '..'), 'init', '-q', '--bare', '-b', 'main', 'remote.git');
    const a = clone(remote, 'a');
    git(a, 'commit', '-q', '--allow-empty', '-m', 'start');
    const id = cli(a, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry({ tags: ['billing', 'old'] })) }).stdout.trim();
    git(a, 'push', '-q', 'origin', 'main');
    const b = clone(remote, 'b');
    // A clone whose merge driver is not registered (it never ran init or any write).
    expect(spawnSync('git', ['config', '--get', 'merge.bass-agents-memory.driver'], { cwd: b, env: cleanGitEnv(b) }).status).toBe(1);
    const file = (dir: string): string => join(dir, 'ai-memory/demo/decisions', `${id}.json`);
    const edit = (dir: string, f: (e: Record<string, any>) => void, msg: string): void => {
      const e = JSON.parse(readFileSync(file(dir), 'utf8'));
      f(e);
      writeFileSync(file(dir), `${JSON.stringify(e, null, 2)}\n`);
      git(dir, 'commit', '-qam', msg);
    };
    edit(a, (e) => ((e.summary = 'Invoices are generated hourly.'), (e.updated_at = '2030-01-02T00:00:00.000Z')), 'a edits the summary');
    git(a, 'push', '-q', 'origin', 'main');
    edit(b, (e) => ((e.tags = ['billing']), (e.confidence = 0.5), (e.updated_at = '2030-01-01T00:00:00.000Z')), 'b edits tags and confidence');
    const pulled = spawnSync('git', ['pull', '-q', '--no-rebase', 'origin', 'main'], { cwd: b, env: cleanGitEnv(b), encoding: 'utf8' });
    expect(pulled.status).not.toBe(0);
    expect(readFileSync(file(b), 'utf8')).toMatch(/^<<<<<<< /m);
    const doctor = cli(b, ['doctor', '--json']);
    expect(doctor.code).toBe(1);
    // The conflict, and its cause: the driver this clone never registered.
    expect(doctor.json().problems).toEqual([
      expect.objectContaining({ check: 'merge driver', file: 'ai-memory/.gitattributes' }),
      expect.objectContaining({ check: 'conflict', file: `ai-memory/demo/decisions/${id}.json` }),
    ]);
    // During the merge: the file is merged from git's stages and left for the merge commit.
    const head = git(b, 'rev-parse', 'HEAD').trim();
    const fixed = cli(b, ['doctor', '--fix']);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(fixed.stderr).toMatch(/a merge is in progress/);
    expect(git(b, 'rev-parse', 'HEAD').trim()).toBe(head);
    const merged = JSON.parse(readFileSync(file(b), 'utf8'));
    expect(merged).toMatchObject({ summary: 'Invoices are generated hourly.', tags: ['billing'], confidence: 0.5 });
    git(b, 'add', '-A');
    git(b, 'commit', '-qm', 'merge');
    // The markers committed by hand: --fix merges the sides the markers hold, and commits.
    edit(a, (e) => ((e.content = 'A new content from a.'), (e.updated_at = '2030-02-02T00:00:00.000Z')), 'a edits content');
    git(a, 'push', '-q', 'origin', 'main');
    edit(b, (e) => ((e.content = 'Another content from b.'), (e.updated_at = '2030-02-01T00:00:00.000Z')), 'b edits content');
    // (The first fix registered the driver, which would merge this pull cleanly: take it away again.)
    expect(git(b, 'config', '--get', 'merge.bass-agents-memory.driver')).toContain('merge-driver');
    git(b, 'config', '--remove-section', 'merge.bass-agents-memory');
    const second = spawnSync('git', ['pull', '-q', '--no-rebase', 'origin', 'main'], { cwd: b, env: cleanGitEnv(b), encoding: 'utf8' });
    expect(second.status, `${second.stdout}${second.stderr}${git(b, 'status')}`).not.toBe(0);
    git(b, 'add', '-A');
    const c = spawnSync('git', ['commit', '-qm', 'commit the markers as they are'], { cwd: b, env: cleanGitEnv(b), encoding: 'utf8' });
    expect(c.status, `${second.stderr}`).toBe(0);
    expect(cli(b, ['doctor']).code).toBe(1);
    const fixed2 = cli(b, ['doctor', '--fix']);
    expect(fixed2.code, fixed2.stderr).toBe(0);
    expect(JSON.parse(readFileSync(file(b), 'utf8')).content).toBe('A new content from a.');
    expect(git(b, 'log', '-1', '--format=%s')).toMatch(/^memory\(demo\): update /);
    // And the write registered the merge driver for the next pull.
    expect(git(b, 'config', '--get', 'merge.bass-agents-memory.driver')).toContain('merge-driver');
  });

  it('pushes memory only: a code commit waiting to be pushed is named and nothing is pushed; staged memory files are named', () => {
    const remote = join(testdir(), 'remote.git');
    git(join(remote, '..'), 'init', '-q', '--bare', '-b', 'main', 'remote.git');
    const a = clone(remote, 'a');
    git(a, 'commit', '-q', '--allow-empty', '-m', 'start');
    git(a, 'push', '-q', '-u', 'origin', 'main');
    expect(cli(a, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry()) }).code).toBe(0);
    // Without --push nothing leaves the machine.
    expect(cli(a, ['sync']).code).toBe(0);
    expect(git(remote, 'rev-list', '--count', 'main').trim()).toBe('1');
    // Memory commits only: pushed.
    expect(cli(a, ['sync', '--push']).code).toBe(0);
    const pushed = git(remote, 'rev-parse', 'main').trim();
    expect(pushed).toBe(git(a, 'rev-parse', 'HEAD').trim());
    // A half-done code commit, then more memory: nothing is pushed, and the code commit is named.
    writeFileSync(join(a, 'wip.ts'), 'export const half = 1;\n');
    git(a, 'add', 'wip.ts');
    git(a, 'commit', '-qm', 'WIP: half-done code change');
    expect(cli(a, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry({ summary: 'Another fact.' })) }).code).toBe(0);
    const r = cli(a, ['sync', '--push']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not pushed: 1 unpushed commit\(s\) change more than memory/);
    expect(r.stderr).toMatch(/[0-9a-f]{12} WIP: half-done code change/);
    expect(git(remote, 'rev-parse', 'main').trim()).toBe(pushed);
    // Asked for, the whole branch goes.
    expect(cli(a, ['sync', '--push', '--force-push-branch']).code).toBe(0);
    expect(git(remote, 'rev-parse', 'main').trim()).toBe(git(a, 'rev-parse', 'HEAD').trim());
    // A memory file staged by hand: sync names it and does nothing.
    const f = git(a, 'ls-files', 'ai-memory/demo/decisions').trim().split('\n')[0] ?? '';
    writeFileSync(join(a, f), readFileSync(join(a, f), 'utf8').replace('"confidence": 0.9', '"confidence": 0.8'));
    git(a, 'add', f);
    const staged = cli(a, ['sync']);
    expect(staged.code).toBe(1);
    expect(staged.stderr).toContain(`refusing to sync: memory files are staged (${f})`);
  });
});

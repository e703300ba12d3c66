// "Never lose a byte": the user's merge, their files and every memory entry survive races,
// kills, checkouts and hostile repositories. Each test here failed before the write transaction.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryService } from '../../src/index.js';
import { applyGroup } from '../../src/service/ops/apply.js';
import { cleanGitEnv, cli, entry, git, gitdir, initdir, seed, testdir, writeJson } from '../helpers/repo.js';

const env = { BASS_AGENTS_AGENT: 'tester', BASS_AGENTS_NO_DAEMON: '1' };

function memoryFiles(dir: string): string[] {
  const root = join(dir, 'ai-memory');
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith('.json')) out.push(join(d, e.name).slice(dir.length + 1));
    }
  };
  if (existsSync(root)) walk(root);
  return out.sort();
}

describe('never lose a byte', () => {
  it('sync refuses while the user is in the middle of a merge, and leaves the resolution and the WIP alone', () => {
    const dir = gitdir({ 'a.txt': 'base\n', 'b.txt': 'base\n' });
    cli(dir, ['init', 'demo'], { env });
    git(dir, 'checkout', '-q', '-b', 'side');
    writeFileSync(join(dir, 'a.txt'), 'side\n');
    git(dir, 'commit', '-qam', 'side');
    git(dir, 'checkout', '-q', 'main');
    writeFileSync(join(dir, 'a.txt'), 'main\n');
    git(dir, 'commit', '-qam', 'main');
    try {
      git(dir, 'merge', 'side');
    } catch {
      /* the conflict the user is resolving */
    }
    writeFileSync(join(dir, 'a.txt'), 'resolved by hand\n');
    git(dir, 'add', 'a.txt');
    writeFileSync(join(dir, 'b.txt'), 'work in progress\n');
    const r = cli(dir, ['sync', '--no-push'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/refusing to sync: a merge is in progress/);
    expect(existsSync(join(dir, '.git', 'MERGE_HEAD'))).toBe(true);
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('resolved by hand\n');
    expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('work in progress\n');
    expect(git(dir, 'diff', '--cached', '--name-only').trim()).toBe('a.txt');
    // A memory write is refused too (its commit would go into the merge).
    const w = cli(dir, ['create', 'demo', '--file', writeJson(testdir(), 'e.json', entry())], { env });
    expect(w.code).toBe(1);
    expect(w.stderr).toMatch(/refusing to write memory: a merge is in progress/);
  });

  it('a journal shipped by a cloned repository is never acted on', () => {
    const origin = gitdir({ 'src/app.ts': 'export const app = 1;\n' });
    // The old journal place, committed by a hostile repository, naming the user's files.
    mkdirSync(join(origin, '.bass-agents', 'state'), { recursive: true });
    writeFileSync(join(origin, '.bass-agents', 'state', 'write-journal.json'), JSON.stringify([join('..', 'src', 'app.ts'), '.env', 'src/app.ts']));
    git(origin, 'add', '-f', '.bass-agents/state/write-journal.json');
    git(origin, 'commit', '-qm', 'ship a journal');
    const clone = testdir();
    git(clone, 'clone', '-q', origin, 'c');
    const dir = join(clone, 'c');
    git(dir, 'config', 'user.name', 'Cloner');
    git(dir, 'config', 'user.email', 'c@example.com');
    writeFileSync(join(dir, '.env'), 'SECRET_OF_THE_CLONER=1\n');
    writeFileSync(join(dir, 'src', 'app.ts'), 'export const app = 2; // my edit\n');
    // A forged journal in the new place, without this repository's token.
    mkdirSync(join(dir, '.git', 'bass-agents'), { recursive: true });
    writeFileSync(
      join(dir, '.git', 'bass-agents', 'journal'),
      `${JSON.stringify({ v: 2, token: 'f'.repeat(32), pid: 1, root: dir, head: null })}\n${JSON.stringify({ paths: ['src/app.ts', '.env', 'ai-memory/../src/app.ts'] })}\n`,
    );
    const r = cli(dir, ['create', 'demo', '--file', writeJson(testdir(), 'e.json', entry())], { env });
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, '.env'), 'utf8')).toBe('SECRET_OF_THE_CLONER=1\n');
    expect(readFileSync(join(dir, 'src', 'app.ts'), 'utf8')).toBe('export const app = 2; // my edit\n');
    expect(r.stderr).toMatch(/ignored a write journal that this repository did not write/);
    expect(existsSync(join(dir, '.git', 'bass-agents', 'journal'))).toBe(false);
  });

  it('a journal of our own that names anything but memory paths touches only the memory paths', async () => {
    const dir = gitdir({ 'src/app.ts': 'export const app = 1;\n' });
    const svc = new MemoryService({ cwd: dir, agent: 'tester', env: { HOME: dir } });
    const created = await svc.create(entry(), { project: 'demo' });
    const file = join(dir, 'ai-memory', 'demo', 'decisions', `${created.entry.id}.json`);
    const committed = readFileSync(file, 'utf8');
    writeFileSync(file, '{"torn": ');
    writeFileSync(join(dir, 'src', 'app.ts'), 'export const app = 2;\n');
    const token = readFileSync(join(dir, '.git', 'bass-agents', 'token'), 'utf8').trim();
    writeFileSync(
      join(dir, '.git', 'bass-agents', 'journal'),
      `${JSON.stringify({ v: 2, token, pid: 1, root: dir, head: null })}\n${JSON.stringify({ paths: ['src/app.ts', '../outside.txt', `ai-memory/demo/decisions/${created.entry.id}.json`] })}\n`,
    );
    const r = await svc.recoverJournal();
    expect(r).toEqual({ kept: 0, undone: 1, ignored: 2 });
    expect(readFileSync(file, 'utf8')).toBe(committed);
    expect(readFileSync(join(dir, 'src', 'app.ts'), 'utf8')).toBe('export const app = 2;\n');
  });

  it('user commits racing memory writes never delete an entry', async () => {
    const dir = gitdir({ 'user.txt': '0\n' });
    const svc = new MemoryService({ cwd: dir, agent: 'tester', env: { HOME: dir } });
    await svc.init('demo');
    // The user commits every 50 ms while memory is written (their git add/commit may find the
    // index locked, as with any concurrent git command: they just try again).
    const user = spawn(
      'bash',
      [
        '-c',
        'i=0; while [ ! -f stop ]; do i=$((i+1)); echo $i >> user.txt; git add user.txt 2>/dev/null && git commit -qm "user $i" 2>/dev/null; sleep 0.05; done',
      ],
      { cwd: dir, env: cleanGitEnv(dir), stdio: 'ignore' },
    );
    const ids: string[] = [];
    // At least 20 writes, and on until the user has committed several times among them: the race
    // happens whatever the machine's speed, and a fast machine is not kept writing for nothing.
    const userCommits = (): number => Number(git(dir, 'rev-list', '--count', '--grep=^user ', 'HEAD').trim());
    try {
      for (let i = 0; i < 20 || (userCommits() < 4 && i < 400); i++) {
        const r = await svc.create(entry({ subject: `race.${i}`, summary: `Race entry number ${i}.` }), { project: 'demo' });
        ids.push(r.entry.id);
      }
    } finally {
      writeFileSync(join(dir, 'stop'), '');
      await new Promise((r) => user.on('close', r));
    }
    expect(userCommits()).toBeGreaterThan(3);
    const tree = git(dir, 'ls-tree', '-r', '--name-only', 'HEAD', 'ai-memory/demo/decisions').trim().split('\n');
    for (const id of ids) expect(tree).toContain(`ai-memory/demo/decisions/${id}.json`);
    expect(git(dir, 'log', '--diff-filter=D', '--name-only', '--format=', '--', 'ai-memory').trim()).toBe('');
    expect(git(dir, 'status', '--porcelain', '--', 'ai-memory')).toBe('');
  });

  it('refuses to write on a detached HEAD or during a rebase unless allowed', () => {
    const dir = initdir();
    git(dir, 'checkout', '-q', '--detach');
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    const input = writeJson(testdir(), 'e.json', entry());
    const r = cli(dir, ['create', 'demo', '--file', input], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/refusing to write memory: HEAD is detached/);
    expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(head);
    expect(memoryFiles(dir)).toEqual([]);
    const ok = cli(dir, ['create', 'demo', '--file', input, '--allow-detached'], { env });
    expect(ok.code).toBe(0);
    git(dir, 'checkout', '-q', 'main');
    writeFileSync(join(dir, 'x.txt'), 'x\n');
    git(dir, 'add', 'x.txt');
    git(dir, 'commit', '-qm', 'x');
    execRebaseStoppedAtEdit(dir);
    const during = cli(dir, ['create', 'demo', '--file', writeJson(testdir(), 'f.json', entry({ summary: 'Another one.' }))], { env });
    expect(during.code).toBe(1);
    expect(during.stderr).toMatch(/a rebase is in progress/);
  });

  it('an entry cannot be superseded by an inactive one, nor in a cycle', () => {
    const dir = gitdir();
    const [a, b, c] = seed(dir, [entry({ summary: 'First.' }), entry({ summary: 'Second.' }), entry({ summary: 'Third.' })], env);
    expect(cli(dir, ['deprecate', c], { env }).code).toBe(0);
    const byDeprecated = cli(dir, ['supersede', a, '--by', c], { env });
    expect(byDeprecated.code).toBe(1);
    expect(byDeprecated.stderr).toMatch(/is deprecated: an entry can only be superseded by a live one/);
    expect(cli(dir, ['supersede', a, '--by', b], { env }).code).toBe(0);
    const back = cli(dir, ['supersede', b, '--by', a], { env });
    expect(back.code).toBe(1);
    expect(back.stderr).toMatch(/superseded: an entry can only be superseded by a live one|would make a cycle/);
  });

  it('never follows a .bass-agents symlink, leaves nothing in a folder that is not a workspace, refuses a huge query', () => {
    const dir = gitdir();
    const elsewhere = testdir();
    symlinkSync(elsewhere, join(dir, '.bass-agents'));
    const r = cli(dir, ['create', 'demo', '--file', writeJson(testdir(), 'e.json', entry())], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/\.bass-agents/);
    expect(readdirSync(elsewhere)).toEqual([]);

    const plain = testdir();
    const list = cli(plain, ['list', '--json'], { env });
    expect(list.code).toBe(3); // no workspace found here, and nothing written
    expect(readdirSync(plain)).toEqual([]);

    const ws = gitdir();
    cli(ws, ['create', 'demo', '--file', writeJson(testdir(), 'e.json', entry())], { env });
    const q = cli(ws, ['query', 'x'.repeat(100_000)], { env });
    expect(q.code).toBe(2);
    expect(q.stderr).toMatch(/query text is 100000 characters; at most 4096/);
    expect(q.stderr).not.toMatch(/internal error|\n\s+at /);
  });
});

function execRebaseStoppedAtEdit(dir: string): void {
  const e = { ...cleanGitEnv(dir), GIT_SEQUENCE_EDITOR: "sed -i 's/^pick/edit/'" };
  execFileSync('git', ['rebase', '-i', 'HEAD~1'], { cwd: dir, env: e, stdio: 'ignore' });
}

describe('signals during a large write', () => {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`${signal} stops an apply at a clean point: nothing of it is kept, exit ${code}`, async () => {
      const dir = initdir();
      const head = git(dir, 'rev-parse', 'HEAD').trim();
      const updates = Array.from({ length: 3000 }, (_, i) => ({ operation: 'create', entry: entry({ subject: `bulk.${i}`, summary: `Bulk entry ${i}.` }) }));
      const input = writeJson(testdir(), 'bulk.json', updates);
      const { BIN } = await import('../helpers/repo.js');
      const child = spawn(process.execPath, [BIN, 'memory', 'apply', 'demo', '--file', input], { cwd: dir, env: { ...cleanGitEnv(dir), ...env } });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const closed = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
      // Signal once the write phase has begun (its journal is there).
      const journal = join(dir, '.git', 'bass-agents', 'journal');
      let exited = false;
      void closed.then(() => (exited = true));
      while (!existsSync(journal) && !exited) await new Promise((r) => setTimeout(r, 5));
      child.kill(signal);
      const exit = await closed;
      if (exit === code) {
        expect(stderr).toMatch(new RegExp(`interrupted by ${signal}`));
        expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(head);
        expect(memoryFiles(dir)).toEqual([]);
      } else {
        // The write had finished its files before the signal landed: it is whole, and committed.
        expect(exit).toBe(0);
        expect(memoryFiles(dir)).toHaveLength(3000);
      }
      expect(git(dir, 'status', '--porcelain', '--', 'ai-memory')).toBe('');
      expect(existsSync(journal)).toBe(false);
    });
  }
});

describe('group commit', () => {
  it('commits several callers in one commit, each with its own result, one caller\u2019s rejection its own', async () => {
    const dir = gitdir();
    const svc = new MemoryService({ cwd: dir, agent: 'tester', env: { HOME: dir } });
    await svc.init('demo');
    const before = Number(git(dir, 'rev-list', '--count', 'HEAD').trim());
    const batches = [
      { updates: [{ operation: 'create', entry: entry({ summary: 'First caller.' }) }], opts: { project: 'demo', atomic: true, label: 'entry' } },
      {
        updates: [
          { operation: 'create', entry: entry({ summary: 'Second caller.' }) },
          { operation: 'create', entry: entry({ summary: '' }) },
        ],
        opts: { project: 'demo' },
      },
      { updates: [{ operation: 'create', entry: entry({ confidence: 7 }) }], opts: { project: 'demo', atomic: true, label: 'entry' } },
      // Sees the first caller's entry: a duplicate within the group is caught.
      { updates: [{ operation: 'create', entry: entry({ summary: 'First caller.' }) }], opts: { project: 'demo' } },
    ];
    const results = await applyGroup(
      svc.engine,
      batches.map((b) => ({ ...b, caller: svc.caller })),
    );
    expect(Number(git(dir, 'rev-list', '--count', 'HEAD').trim())).toBe(before + 1);
    const [a, b, c, d] = results as [any, any, any, any];
    expect(a.applied).toHaveLength(1);
    expect(b.applied).toHaveLength(1);
    expect(b.skipped.map((x: { index: number }) => x.index)).toEqual([1]);
    expect(a.commit).toBe(git(dir, 'rev-parse', 'HEAD').trim());
    expect(c).toBeInstanceOf(Error);
    expect(c.message).toMatch(/confidence/);
    expect(d.applied).toHaveLength(0);
    expect(d.skipped[0].errors[0].message).toMatch(/duplicates entry/);
    expect(memoryFiles(dir)).toHaveLength(2);
  });
});

describe('limits with clear errors', () => {
  it('refuses input that is not UTF-8, too many updates, and says why an MCP message is too large', async () => {
    const dir = initdir();
    const bad = join(testdir(), 'latin1.json');
    writeFileSync(bad, Buffer.concat([Buffer.from(JSON.stringify(entry()).slice(0, 40)), Buffer.from([0xe9, 0x20]), Buffer.from('"}')]));
    const r = cli(dir, ['create', 'demo', '--file', bad], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/is not valid UTF-8 \(at byte 40\)/);
    const many = writeJson(
      testdir(),
      'many.json',
      Array.from({ length: 50_001 }, () => ({ operation: 'deprecate', target_id: 'X' })),
    );
    const m = cli(dir, ['apply', 'demo', '--file', many], { env });
    expect(m.code).toBe(1);
    expect(m.stderr).toMatch(/holds 50001 updates; at most 50000 go in one batch/);
    expect(m.stderr).not.toMatch(/\n\s+at /);
    // The MCP server: a message over the limit gets a word on stderr and exit 1, not a silent exit 0.
    const { BIN } = await import('../helpers/repo.js');
    const child = spawn(process.execPath, [BIN, 'memory', 'mcp'], { cwd: dir, env: { ...cleanGitEnv(dir), BASS_AGENTS_MCP_MAX_MESSAGE_BYTES: '65536' } });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exit = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    child.stdin.on('error', () => undefined);
    child.stdin.write(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(100_000)}"}}\n`);
    child.stdin.end();
    expect(await exit).toBe(1);
    expect(stderr).toMatch(/a message over 65536 bytes cannot be read; the server stops/);
  });
});

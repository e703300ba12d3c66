// The memory commit and git's rules around it: what it commits and leaves alone (in process,
// GitRepo.commitPaths), then, through the real CLI, hooks, signing, identity, git's index lock,
// a Ctrl-C to the process group, GIT_DIR / GIT_WORK_TREE, and writes beside repack and gc.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GitRepo } from '../../src/store/git.js';
import { MemoryService } from '../../src/index.js';
import { BIN, cleanGitEnv, cli, entry, git, gitdir, initdir, testdir, writeJson } from '../helpers/repo.js';

const env = { BASS_AGENTS_AGENT: 'tester', BASS_AGENTS_NO_DAEMON: '1' };

function put(dir: string, rel: string, text: string): string {
  const abs = join(dir, rel);
  mkdirSync(join(abs, '..'), { recursive: true });
  writeFileSync(abs, text);
  return abs;
}

/** The entry files HEAD holds. */
const committed = (dir: string): string[] =>
  git(dir, 'ls-tree', '-r', '--name-only', 'HEAD', 'ai-memory')
    .split('\n')
    .filter((f) => f.endsWith('.json'));

/** A hook script in the repository. */
function hook(dir: string, name: string, body: string): void {
  put(dir, `.git/hooks/${name}`, `#!/bin/sh\n${body}\n`);
  chmodSync(join(dir, '.git', 'hooks', name), 0o755);
}

describe('GitRepo.commitPaths', () => {
  it('commits exactly its paths, skips a commit that would change nothing, removes deleted files, leaves the user\u2019s work alone', async () => {
    const dir = gitdir({ 'README.md': '# repo\n', 'src/app.ts': 'export {};\n' });
    put(dir, 'src/app.ts', 'export const changed = 1;\n'); // the user's unstaged edit
    put(dir, 'notes.txt', 'staged by the user\n');
    git(dir, 'add', 'notes.txt');
    const repo = (await GitRepo.open(dir))!;
    const a = put(dir, 'ai-memory/p/decisions/A.json', '{"a":1}\n');
    const b = put(dir, 'ai-memory/p/decisions/B.json', '{"b":1}\n');
    const first = await repo.commitPaths([a, b], 'memory(p): two\n\nMemory-Agent: agent-x\n');
    expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(first);
    expect(git(dir, 'show', '--name-only', '--format=%s|%an|%ae', 'HEAD').trim().split('\n')).toEqual([
      'memory(p): two|Test User|test@example.com',
      '',
      'ai-memory/p/decisions/A.json',
      'ai-memory/p/decisions/B.json',
    ]);
    expect(git(dir, 'status', '--porcelain').split('\n').filter(Boolean).sort()).toEqual([' M src/app.ts', 'A  notes.txt']);
    // Writing the same bytes again is not a commit.
    expect(await repo.commitPaths([a, b], 'memory(p): again')).toBeNull();
    rmSync(b);
    put(dir, 'ai-memory/p/decisions/A.json', '{"a":2}\n');
    const second = await repo.commitPaths([a, b], 'memory(p): edit and delete');
    expect(git(dir, 'rev-parse', 'HEAD~1').trim()).toBe(first);
    expect(git(dir, 'show', '--name-status', '--format=', second!).trim().split('\n')).toEqual([
      'M\tai-memory/p/decisions/A.json',
      'D\tai-memory/p/decisions/B.json',
    ]);
    expect(git(dir, 'status', '--porcelain').split('\n').filter(Boolean).sort()).toEqual([' M src/app.ts', 'A  notes.txt']);
    expect(git(dir, 'log', '-g', '--format=%gs', '-1', 'HEAD')).toMatch(/^bass-agents: memory\(p\): edit and delete/);
    // A path with spaces, quotes and backslashes (a workspace inside an oddly named folder).
    const odd = put(dir, '"we\\ird dir/ai-memory/p/learnings/A b.json', '{"odd":1}\n');
    await repo.commitPaths([odd], 'memory(p): odd path');
    expect(git(dir, 'show', 'HEAD:"we\\ird dir/ai-memory/p/learnings/A b.json')).toBe('{"odd":1}\n');
    expect(git(dir, 'fsck', '--strict', '--no-progress')).toBe('');
  });

  it('keeps git\u2019s racy-entry rules: no zero-stat entry, a same-second edit of the user\u2019s still shows', async () => {
    const dir = gitdir({ 'README.md': '# repo\n', 'same.txt': 'aaaa\n' });
    git(dir, 'config', 'core.trustctime', 'false');
    const repo = (await GitRepo.open(dir))!;
    // Clean: nothing of the user's nor of ours is reported by a command that trusts stat data.
    await repo.commitPaths([put(dir, 'ai-memory/p/learnings/A.json', '{"a":1}\n')], 'memory(p): a');
    expect(spawnSync('git', ['diff-index', '--quiet', 'HEAD'], { cwd: dir, env: cleanGitEnv(dir) }).status).toBe(0);
    expect(git(dir, 'diff-files', '--name-only')).toBe('');
    // The user changes a file without changing its size or time, in the second git last wrote
    // the index: only git's racy-entry check can see it, and it must still see it after ours.
    put(dir, 'same.txt', 'bbbb\n');
    git(dir, 'add', 'same.txt');
    const stat = git(dir, 'ls-files', '--debug', 'same.txt');
    const [, sec, nsec = ''] = /mtime: (\d+):(\d+)/.exec(stat) ?? [];
    const index = join(dir, '.git', 'index');
    writeFileSync(join(dir, 'same.txt'), 'cccc\n');
    execFileSync('touch', ['-d', `@${sec}.${nsec.padStart(9, '0')}`, join(dir, 'same.txt')]);
    utimesSync(index, Number(sec), Number(sec));
    await repo.commitPaths([put(dir, 'ai-memory/p/learnings/B.json', '{"b":1}\n')], 'memory(p): b');
    expect(git(dir, 'status', '--porcelain')).toBe('MM same.txt\n');
  });

  it('freshens an object it reuses, so that a prune beside it keeps it', async () => {
    const dir = gitdir();
    const repo = (await GitRepo.open(dir))!;
    // An unreachable copy of the bytes about to be written, three weeks old: due for pruning.
    const text = '{"reused":1}\n';
    const id = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: dir, env: cleanGitEnv(dir), input: text, encoding: 'utf8' }).trim();
    const object = join(dir, '.git', 'objects', id.slice(0, 2), id.slice(2));
    execFileSync('touch', ['-d', '3 weeks ago', object]);
    const old = statSync(object).mtimeMs;
    await repo.commitPaths([put(dir, 'ai-memory/p/learnings/R.json', text)], 'memory(p): reuse');
    expect(statSync(object).mtimeMs).toBeGreaterThan(old + 86_400_000);
    git(dir, 'prune', '--expire=2.weeks.ago');
    expect(git(dir, 'fsck', '--strict', '--no-progress')).toBe('');
  });

  it('redoes the commit on the new HEAD when a writer moved it without git\u2019s index lock', async () => {
    const dir = gitdir();
    const repo = (await GitRepo.open(dir))!;
    const exec = repo.exec.bind(repo);
    let moved = false;
    repo.exec = async (args, input, e) => {
      const out = await exec(args, input, e);
      if (args[0] === 'commit-tree' && !moved) {
        moved = true;
        const c = execFileSync('git', ['commit-tree', 'HEAD^{tree}', '-p', 'HEAD', '-m', 'moved by a script'], {
          cwd: dir,
          env: cleanGitEnv(dir),
          encoding: 'utf8',
        }).trim();
        git(dir, 'update-ref', 'HEAD', c);
      }
      return out;
    };
    const c = await repo.commitPaths([put(dir, 'ai-memory/p/learnings/A.json', '{"a":1}\n')], 'memory(p): raced');
    expect(git(dir, 'log', '--format=%s', '-3').trim().split('\n')).toEqual(['memory(p): raced', 'moved by a script', 'initial']);
    expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(c);
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('waits a bounded time for git\u2019s index lock, saying so once, then gives up with exit 4', async () => {
    const dir = gitdir();
    const repo = (await GitRepo.open(dir))!;
    writeFileSync(join(dir, '.git', 'index.lock'), '');
    const said: string[] = [];
    const err = await repo
      .commitPaths([put(dir, 'ai-memory/p/learnings/A.json', '{"a":1}\n')], 'memory(p): a', { indexLockWaitMs: 200, warn: (m) => said.push(m) })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ exitCode: 4 });
    expect((err as Error).message).toMatch(/another git process held \.git\/index\.lock \(git's index lock\) for 0\.2 s, so memory was not committed/);
    expect(said).toEqual([expect.stringMatching(/^waiting up to 0\.2 s for \.git\/index\.lock: another git process holds git's index/)]);
    expect(git(dir, 'log', '--format=%s').trim()).toBe('initial');
    expect(existsSync(join(dir, '.git', 'index.lock'))).toBe(true); // not ours to remove
  });
});

describe('git\u2019s rules through the CLI', () => {
  it('a held index.lock: the write exits 4 with nothing left behind, reads do not wait, the next write works', () => {
    const dir = initdir();
    writeFileSync(join(dir, '.git', 'index.lock'), ''); // an open commit editor
    const w = cli(dir, ['create', 'demo', '--file', writeJson(testdir(), 'e.json', entry())], { env: { ...env, BASS_AGENTS_LOCK_TIMEOUT_MS: '300' } });
    expect(w.code).toBe(4);
    expect(w.stderr.match(/waiting up to 0\.3 s for \.git\/index\.lock/g)).toHaveLength(1);
    expect(w.stderr).toMatch(/another git process held \.git\/index\.lock .* nothing was kept/);
    expect(w.stderr).not.toMatch(/internal error|bug|\n\s+at /i);
    expect(existsSync(join(dir, '.git', 'bass-agents', 'journal'))).toBe(false);
    expect(git(dir, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    const list = cli(dir, ['list', '--json'], { env });
    expect(list.code).toBe(0);
    expect(list.stderr).toBe('');
    rmSync(join(dir, '.git', 'index.lock'));
    expect(cli(dir, ['create', 'demo', '--file', writeJson(testdir(), 'e.json', entry())], { env }).code).toBe(0);
  });

  it('hooks: none by default; with commit.hooks: run, pre-commit sees exactly the commit and can refuse it, commit-msg and post-commit run', () => {
    const dir = initdir();
    hook(dir, 'pre-commit', 'git diff --cached --name-only > "$(git rev-parse --git-dir)/../pre-commit.out"\necho "policy says no" >&2\nexit 1');
    hook(dir, 'commit-msg', 'echo "Reviewed-by: the hook" >> "$1"');
    hook(dir, 'post-commit', 'touch post-commit.ran');
    expect(cli(dir, ['create', 'demo', '--file', writeJson(testdir(), 'a.json', entry({ summary: 'No hooks run.' }))], { env }).code).toBe(0);
    expect(existsSync(join(dir, 'pre-commit.out')) || existsSync(join(dir, 'post-commit.ran'))).toBe(false);
    const config = join(dir, 'ai-memory', 'demo', 'config.yaml');
    writeFileSync(config, `${readFileSync(config, 'utf8')}commit:\n  hooks: run\n`);
    git(dir, 'commit', '--no-verify', '-qam', 'run hooks');
    rmSync(join(dir, 'post-commit.ran')); // (git commit ran it)
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    const refused = cli(dir, ['create', 'demo', '--file', writeJson(testdir(), 'b.json', entry({ summary: 'Refused by the hook.' }))], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the pre-commit hook refused the memory commit.*policy says no/s);
    expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(head);
    expect(git(dir, 'status', '--porcelain')).toBe('?? pre-commit.out\n');
    const seen = readFileSync(join(dir, 'pre-commit.out'), 'utf8').trim().split('\n');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/^ai-memory\/demo\/decisions\/\w+\.json$/);
    hook(dir, 'pre-commit', 'exit 0');
    const ok = cli(dir, ['create', 'demo', '--file', writeJson(testdir(), 'c.json', entry({ summary: 'Vetted by the hook.' }))], { env });
    expect(ok.code).toBe(0);
    expect(git(dir, 'log', '-1', '--format=%B')).toMatch(/Memory-Agent: tester\n+Reviewed-by: the hook/);
    expect(existsSync(join(dir, 'post-commit.ran'))).toBe(true);
  });

  it('identity and signing are git\u2019s: --agent only in the trailer, a name with <>, useConfigOnly and a signing failure refuse with git\u2019s reason', () => {
    const dir = gitdir();
    const input = (s: string): string => writeJson(testdir(), 'e.json', entry({ summary: s }));
    git(dir, 'config', 'user.name', 'Ann <ann@x> Lee');
    expect(cli(dir, ['create', 'demo', '--file', input('By an agent.'), '--agent', 'Some Name'], { env }).code).toBe(0);
    expect(git(dir, 'log', '-1', '--format=%an|%ae|%cn|%ce')).toBe('Ann ann@x Lee|test@example.com|Ann ann@x Lee|test@example.com\n');
    expect(git(dir, 'log', '-1', '--format=%B')).toMatch(/Memory-Agent: Some Name\n/);
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    // No identity and user.useConfigOnly: git refuses, and so does the write.
    git(dir, 'config', '--unset', 'user.name');
    git(dir, 'config', '--unset', 'user.email');
    git(dir, 'config', 'user.useConfigOnly', 'true');
    const anon = cli(dir, ['create', 'demo', '--file', input('Nobody.')], { env });
    expect(anon.code).toBe(1);
    expect(anon.stderr).toMatch(/no (name|email) was given and auto-detection is disabled/);
    // commit.gpgsign with a key that cannot sign.
    git(dir, 'config', 'user.name', 'T');
    git(dir, 'config', 'user.email', 't@example.com');
    git(dir, 'config', 'commit.gpgsign', 'true');
    git(dir, 'config', 'gpg.format', 'ssh');
    git(dir, 'config', 'user.signingkey', join(dir, 'no-such-key.pub'));
    const unsigned = cli(dir, ['create', 'demo', '--file', input('Unsigned.')], { env });
    expect(unsigned.code).toBe(1);
    expect(unsigned.stderr).toMatch(/git could not make the commit: .*(no-such-key|sign)/s);
    expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(head);
    expect(committed(dir)).toHaveLength(1);
    expect(git(dir, 'status', '--porcelain', '--untracked-files=all')).toBe('');
  });

  it('a NUL in a summary is refused before anything is written; a committed config.yaml or .gitattributes is never replaced by defaults', () => {
    const dir = gitdir();
    put(dir, 'ai-memory/demo/config.yaml', 'project: demo\ncreated_at: "2026-01-01T00:00:00.000Z"\n# the team\u2019s settings\n');
    put(dir, 'ai-memory/.gitattributes', '# the team\u2019s line\n*.json text eol=lf\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'team memory settings');
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    const nul = cli(dir, ['create', 'demo', '--file', writeJson(testdir(), 'n.json', entry({ summary: 'Half\u0000a summary.' }))], { env });
    expect(nul.code).toBe(1);
    expect(nul.stderr).toMatch(/summary: must not contain a NUL character/);
    expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(head);
    expect(git(dir, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    // The user deleted both from the work tree (not staged): a write commits no default over them.
    rmSync(join(dir, 'ai-memory', 'demo', 'config.yaml'));
    rmSync(join(dir, 'ai-memory', '.gitattributes'));
    expect(cli(dir, ['create', 'demo', '--file', writeJson(testdir(), 'e.json', entry())], { env }).code).toBe(0);
    expect(git(dir, 'show', 'HEAD:ai-memory/demo/config.yaml')).toMatch(/the team’s settings/);
    expect(git(dir, 'show', 'HEAD:ai-memory/.gitattributes')).toMatch(/the team’s line/);
    expect(git(dir, 'fsck', '--strict', '--no-progress')).toBe('');
  });

  it('Ctrl-C to the process group while git makes the commit: exit 130, nothing kept', async () => {
    const dir = initdir();
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    // A git that, at write-tree, sends SIGINT to its whole process group (a Ctrl-C in a terminal).
    const wrap = testdir();
    const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeFileSync(join(wrap, 'git'), `#!/bin/sh\nfor a in "$@"; do [ "$a" = write-tree ] && kill -INT 0 && sleep 1; done\nexec "${real}" "$@"\n`);
    chmodSync(join(wrap, 'git'), 0o755);
    const child = spawn(process.execPath, [BIN, 'memory', 'create', 'demo', '--file', writeJson(testdir(), 'e.json', entry())], {
      cwd: dir,
      env: { ...cleanGitEnv(dir), ...env, PATH: `${wrap}:${process.env.PATH}` },
      detached: true, // its own process group, as a terminal gives a command
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    expect({ code, stderr }).toMatchObject({ code: 130, stderr: expect.stringMatching(/interrupted by SIGINT/) });
    expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(head);
    expect(git(dir, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(existsSync(join(dir, '.git', 'bass-agents', 'journal')) || existsSync(join(dir, '.git', 'index.lock'))).toBe(false);
  });

  it('GIT_DIR and GIT_WORK_TREE name the repository: the write commits there, from the work tree or below it', () => {
    const root = testdir();
    const gitDir = join(root, 'store.git');
    const work = join(root, 'work');
    mkdirSync(join(work, 'src'), { recursive: true });
    const genv = { GIT_DIR: gitDir, GIT_WORK_TREE: work };
    const g = (...a: string[]): string => execFileSync('git', a, { cwd: work, env: { ...cleanGitEnv(root), ...genv }, encoding: 'utf8' });
    g('init', '-q', '-b', 'main');
    g('config', 'user.name', 'T');
    g('config', 'user.email', 't@example.com');
    writeFileSync(join(work, 'src', 'app.ts'), 'export {};\n');
    g('add', '-A');
    g('commit', '-qm', 'initial');
    expect(cli(work, ['create', 'demo', '--file', writeJson(root, 'a.json', entry({ summary: 'From the top.' }))], { env: { ...env, ...genv } }).code).toBe(0);
    const below = cli(join(work, 'src'), ['create', 'demo', '--file', writeJson(root, 'b.json', entry({ summary: 'From below.' }))], {
      env: { ...env, ...genv },
    });
    expect(below.stderr).toBe('');
    expect(
      g('log', '--format=%s')
        .split('\n')
        .filter((l) => l.startsWith('memory(demo)')),
    ).toHaveLength(2);
    expect(g('status', '--porcelain')).toBe('');
    expect(existsSync(join(work, '.git'))).toBe(false);
  });

  it('with a daemon running, a caller whose git identity or index differs from the daemon\u2019s writes directly', () => {
    const dir = initdir();
    const denv = { BASS_AGENTS_AGENT: 'tester' };
    expect(cli(dir, ['daemon', 'start', '--json'], { env: denv }).json()).toMatchObject({ running: true });
    try {
      const alt = join(testdir(), 'alt-index');
      execFileSync('git', ['read-tree', 'HEAD'], { cwd: dir, env: { ...cleanGitEnv(dir), GIT_INDEX_FILE: alt } });
      const input = (s: string): string => writeJson(testdir(), 'e.json', entry({ summary: s }));
      expect(cli(dir, ['create', 'demo', '--file', input('Through the daemon.')], { env: denv }).code).toBe(0);
      expect(cli(dir, ['create', 'demo', '--file', input('Another author.')], { env: { ...denv, GIT_AUTHOR_NAME: 'Direct Writer' } }).code).toBe(0);
      expect(cli(dir, ['create', 'demo', '--file', input('Another index.')], { env: { ...denv, GIT_INDEX_FILE: alt } }).code).toBe(0);
      // The three creates (the daemon may commit a regenerated ai-context between them).
      expect(git(dir, 'log', '--format=%an %s', '-3', '--grep=^Memory-Op: create$').replace(/ create \w+:/g, '')).toBe(
        'Test User memory(demo): Another index.\nDirect Writer memory(demo): Another author.\nTest User memory(demo): Through the daemon.\n',
      );
      // The index the caller named holds its entry; the default one does not know it.
      const lastCreate = git(dir, 'log', '-1', '--format=%H', '--grep=^Memory-Op: create$').trim();
      const last = git(dir, 'show', '--name-only', '--format=', lastCreate).trim();
      expect(execFileSync('git', ['ls-files', last], { cwd: dir, env: { ...cleanGitEnv(dir), GIT_INDEX_FILE: alt }, encoding: 'utf8' }).trim()).toBe(last);
      expect(git(dir, 'ls-files', last)).toBe('');
    } finally {
      cli(dir, ['daemon', 'stop'], { env: denv });
    }
  });

  it('a repack and gc loop beside the writes loses none of them', async () => {
    const dir = gitdir();
    git(dir, 'config', 'gc.auto', '1');
    git(dir, 'config', 'gc.autoPackLimit', '1');
    git(dir, 'config', 'gc.autoDetach', 'false');
    const svc = new MemoryService({ cwd: dir, agent: 'tester', env: { HOME: dir } });
    await svc.init('demo');
    const loop = spawn('bash', ['-c', 'while [ ! -f stop ]; do git repack -adq 2>/dev/null; git gc --auto --quiet 2>/dev/null; done'], {
      cwd: dir,
      env: cleanGitEnv(dir),
      stdio: 'ignore',
    });
    const ids: string[] = [];
    try {
      for (let i = 0; i < 25; i++)
        ids.push((await svc.create(entry({ subject: `gc.${i}`, summary: `Written beside gc, number ${i}.` }), { project: 'demo' })).entry.id);
    } finally {
      writeFileSync(join(dir, 'stop'), '');
      await new Promise((r) => loop.on('close', r));
    }
    const tree = committed(dir).join('\n');
    for (const id of ids) expect(tree).toContain(id);
    expect(git(dir, 'fsck', '--strict', '--no-progress', '--no-dangling')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('?? stop\n');
  });
});

// GitRepo.commitPaths on real repositories: the fast-import write path (store/git.ts).
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GitRepo } from '../../src/store/git.js';
import { cleanGitEnv, git, gitdir, testdir } from '../helpers/repo.js';

function put(dir: string, rel: string, text: string): string {
  const abs = join(dir, rel);
  mkdirSync(join(abs, '..'), { recursive: true });
  writeFileSync(abs, text);
  return abs;
}

describe('GitRepo.commitPaths', () => {
  it('commits exactly its paths, skips a commit that would change nothing, removes deleted files, leaves no refs behind', async () => {
    const dir = gitdir({ 'README.md': '# repo\n', 'src/app.ts': 'export {};\n' });
    put(dir, 'src/app.ts', 'export const changed = 1;\n'); // the user's unstaged edit
    put(dir, 'notes.txt', 'staged by the user\n');
    git(dir, 'add', 'notes.txt');
    const repo = (await GitRepo.open(dir))!;
    const a = put(dir, 'ai-memory/p/decisions/A.json', '{"a":1}\n');
    const b = put(dir, 'ai-memory/p/decisions/B.json', '{"b":1}\n');
    const first = await repo.commitPaths([a, b], 'memory(p): two', 'agent-x');
    expect(first).toMatch(/^[0-9a-f]{40}$/);
    expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(first);
    expect(git(dir, 'show', '--name-only', '--format=%s', 'HEAD').trim().split('\n')).toEqual([
      'memory(p): two',
      '',
      'ai-memory/p/decisions/A.json',
      'ai-memory/p/decisions/B.json',
    ]);
    expect(git(dir, 'show', 'HEAD:ai-memory/p/decisions/A.json')).toBe('{"a":1}\n');
    // Only our paths moved in the user's index; their staged and unstaged work is as it was.
    expect(git(dir, 'status', '--porcelain').split('\n').filter(Boolean).sort()).toEqual([' M src/app.ts', 'A  notes.txt']);

    // Writing the same bytes again is not a commit.
    expect(await repo.commitPaths([a, b], 'memory(p): again', 'agent-x')).toBeNull();
    expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(first);

    rmSync(b);
    put(dir, 'ai-memory/p/decisions/A.json', '{"a":2}\n');
    const second = await repo.commitPaths([a, b], 'memory(p): edit and delete', 'agent-x');
    expect(git(dir, 'rev-parse', 'HEAD~1').trim()).toBe(first);
    expect(git(dir, 'show', '--name-status', '--format=', second!).trim().split('\n')).toEqual([
      'M\tai-memory/p/decisions/A.json',
      'D\tai-memory/p/decisions/B.json',
    ]);
    expect(git(dir, 'status', '--porcelain').split('\n').filter(Boolean).sort()).toEqual([' M src/app.ts', 'A  notes.txt']);
    expect(git(dir, 'for-each-ref', 'refs/bass-agents')).toBe('');
    expect(git(dir, 'log', '-g', '--format=%gs', '-1', 'HEAD')).toMatch(/^bass-agents: memory\(p\): edit and delete/);
  });

  // A commit of a few files writes its objects itself (reading HEAD's trees with cat-file); one of
  // many files runs fast-import. Either way HEAD moving before ours is caught and the commit redone.
  it.each([
    { files: 1, step: 'cat-file' },
    { files: 60, step: 'fast-import' },
  ])('redoes the commit on the new HEAD when someone commits in between ($files files: after $step)', async ({ files, step }) => {
    const dir = gitdir();
    const repo = (await GitRepo.open(dir))!;
    const paths = Array.from({ length: files }, (_, i) => put(dir, `ai-memory/p/learnings/A${i}.json`, `{"a":${i}}\n`));
    // Move HEAD between our reading of it and update-ref: commit from git's side the moment `step` has run.
    const realSpawnArgs: string[][] = [];
    const gitStdinBuffer = (
      repo as unknown as { gitStdinBuffer: (args: string[], input: string | Buffer, env?: Record<string, string>) => Promise<Buffer> }
    ).gitStdinBuffer.bind(repo);
    let moved = false;
    (repo as unknown as { gitStdinBuffer: typeof gitStdinBuffer }).gitStdinBuffer = async (args, input, env) => {
      realSpawnArgs.push(args);
      const out = await gitStdinBuffer(args, input, env);
      if (args[0] === step && !moved) {
        moved = true;
        put(dir, 'ai-memory/p/learnings/other.txt', 'someone else\n');
        git(dir, 'add', 'ai-memory/p/learnings/other.txt');
        git(dir, 'commit', '-q', '-m', 'a user commit in between');
      }
      return out;
    };
    const c = await repo.commitPaths(paths, 'memory(p): raced', 'agent-x');
    expect(git(dir, 'log', '--format=%s', '-3').trim().split('\n')).toEqual(['memory(p): raced', 'a user commit in between', 'initial']);
    expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(c);
    expect(realSpawnArgs.filter((a) => a[0] === step)).toHaveLength(2);
    // (the other way of writing objects is not used: fast-import, or cat-file --batch reading trees)
    expect(realSpawnArgs.filter((a) => (step === 'cat-file' ? a[0] === 'fast-import' : a.join(' ') === 'cat-file --batch'))).toHaveLength(0);
    // The user's file is kept in the folder both commits changed.
    expect(git(dir, 'ls-tree', '--name-only', 'HEAD', 'ai-memory/p/learnings/').split('\n').filter(Boolean)).toHaveLength(files + 1);
    expect(git(dir, 'for-each-ref', 'refs/bass-agents')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
  });

  it("writes a few files' objects itself, reading HEAD's trees once, and leaves shared repositories to fast-import", async () => {
    const dir = gitdir();
    const repo = (await GitRepo.open(dir))!;
    const spawned: string[] = [];
    const gitStdinBuffer = (repo as unknown as { gitStdinBuffer: (args: string[], input: string | Buffer) => Promise<Buffer> }).gitStdinBuffer.bind(repo);
    (repo as unknown as { gitStdinBuffer: typeof gitStdinBuffer }).gitStdinBuffer = async (args, input) => {
      spawned.push(args.slice(0, 2).join(' '));
      return gitStdinBuffer(args, input);
    };
    const a = put(dir, 'ai-memory/p/learnings/A.json', '{"a":1}\n');
    await repo.commitPaths([a], 'memory(p): a', 'agent-x', { newPathsOnly: true });
    const b = put(dir, 'ai-memory/p/learnings/B.json', '{"b":1}\n');
    await repo.commitPaths([b], 'memory(p): b', 'agent-x', { newPathsOnly: true });
    // One read of the trees, for the first commit; the second builds on the trees the first made.
    expect(spawned.filter((c) => c.startsWith('cat-file') || c.startsWith('fast-import') || c.startsWith('update-index'))).toEqual(['cat-file --batch']);
    expect(git(dir, 'ls-tree', '-r', '--name-only', 'HEAD').trim().split('\n')).toEqual([
      'README.md',
      'ai-memory/p/learnings/A.json',
      'ai-memory/p/learnings/B.json',
    ]);
    expect(git(dir, 'status', '--porcelain')).toBe('');
    // Group-writable object folders are git's to make (core.sharedRepository): fast-import writes there.
    git(dir, 'config', 'core.sharedRepository', 'group');
    spawned.length = 0;
    put(dir, 'ai-memory/p/learnings/A.json', '{"a":2}\n');
    await repo.commitPaths([a], 'memory(p): a again', 'agent-x');
    expect(spawned.filter((c) => c.startsWith('fast-import'))).toHaveLength(1);
    expect(git(dir, 'show', 'HEAD:ai-memory/p/learnings/A.json')).toBe('{"a":2}\n');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
  });

  it('works on an unborn branch and in a SHA-256 repository', async () => {
    const dir = testdir();
    execFileSync('git', ['init', '-q', '-b', 'main', '--object-format=sha256'], { cwd: dir, env: cleanGitEnv(dir) });
    git(dir, 'config', 'user.name', 'T');
    git(dir, 'config', 'user.email', 't@example.com');
    const repo = (await GitRepo.open(dir))!;
    const a = put(dir, 'ai-memory/p/learnings/A.json', '{"a":1}\n');
    const c = await repo.commitPaths([a], 'memory(p): root', 'agent-x');
    expect(c).toMatch(/^[0-9a-f]{64}$/);
    expect(await repo.commitPaths([a], 'memory(p): same', 'agent-x')).toBeNull();
    expect(git(dir, 'log', '--format=%s %an').trim()).toBe('memory(p): root T');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    // On a born branch the objects and the index are written here, with SHA-256 ids.
    put(dir, 'ai-memory/p/learnings/A.json', '{"a":2}\n');
    const b = put(dir, 'ai-memory/p/decisions/B.json', '{"b":1}\n');
    const next = await repo.commitPaths([a, b], 'memory(p): sha256', 'agent-x');
    expect(next).toMatch(/^[0-9a-f]{64}$/);
    expect(git(dir, 'show', '--name-status', '--format=', next!).trim().split('\n')).toEqual([
      'A\tai-memory/p/decisions/B.json',
      'M\tai-memory/p/learnings/A.json',
    ]);
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
  });

  it("commits from a linked worktree: objects in the common dir, the worktree's own index and HEAD", async () => {
    const dir = gitdir();
    const wt = join(testdir(), 'wt');
    git(dir, 'worktree', 'add', '-q', '-b', 'side', wt);
    const repo = (await GitRepo.open(wt))!;
    const a = put(wt, 'ai-memory/p/learnings/A.json', '{"a":1}\n');
    const c = await repo.commitPaths([a], 'memory(p): in a worktree', 'agent-x', { newPathsOnly: true });
    expect(git(dir, 'rev-parse', 'side').trim()).toBe(c);
    expect(git(dir, 'rev-parse', 'main').trim()).not.toBe(c);
    expect(git(wt, 'status', '--porcelain')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
  });

  it('commits paths with spaces, quotes and backslashes (a workspace inside an oddly named folder)', async () => {
    const dir = gitdir();
    const repo = (await GitRepo.open(dir))!;
    const rel = '"we\\ird dir/ai-memory/p/learnings/A b.json'; // starts with a quote (fast-import's docs ask for quoting then)
    const a = put(dir, rel, '{"odd":1}\n');
    const c = await repo.commitPaths([a], 'memory(p): odd path', 'agent-x');
    expect(c).toMatch(/^[0-9a-f]{40}$/);
    expect(git(dir, 'show', `HEAD:${rel}`)).toBe('{"odd":1}\n');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(await repo.commitPaths([a], 'memory(p): same', 'agent-x')).toBeNull();
  });
});

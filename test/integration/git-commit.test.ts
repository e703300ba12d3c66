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

  it('redoes the commit on the new HEAD when someone commits in between', async () => {
    const dir = gitdir();
    const repo = (await GitRepo.open(dir))!;
    const a = put(dir, 'ai-memory/p/learnings/A.json', '{"a":1}\n');
    // Move HEAD between our cat-file and update-ref: commit from git's side the moment fast-import runs.
    const realSpawnArgs: string[][] = [];
    const gitStdin = (repo as unknown as { gitStdin: (args: string[], input: string | Buffer, env?: Record<string, string>) => Promise<string> }).gitStdin.bind(
      repo,
    );
    let moved = false;
    (repo as unknown as { gitStdin: typeof gitStdin }).gitStdin = async (args, input, env) => {
      realSpawnArgs.push(args);
      const out = await gitStdin(args, input, env);
      if (args[0] === 'fast-import' && !moved) {
        moved = true;
        put(dir, 'other.txt', 'someone else\n');
        git(dir, 'add', 'other.txt');
        git(dir, 'commit', '-q', '-m', 'a user commit in between');
      }
      return out;
    };
    const c = await repo.commitPaths([a], 'memory(p): raced', 'agent-x');
    expect(git(dir, 'log', '--format=%s', '-3').trim().split('\n')).toEqual(['memory(p): raced', 'a user commit in between', 'initial']);
    expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(c);
    expect(realSpawnArgs.filter((a) => a[0] === 'fast-import')).toHaveLength(2);
    expect(git(dir, 'for-each-ref', 'refs/bass-agents')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
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

// The objects and index a memory commit writes itself (store/git-objects.ts, store/git-index.ts),
// held to what git writes for the same change: trees to `git write-tree`, blobs to `git
// hash-object`, commits to fast-import's, and the index byte for byte to `git update-index`.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { editIndex } from '../../src/store/git-index.js';
import { commitBody, foldersToRead, objectsDir, writeLooseObject, writeTrees, type PathChange } from '../../src/store/git-objects.js';
import { GitRepo } from '../../src/store/git.js';
import { cleanGitEnv, git, gitdir, testdir } from '../helpers/repo.js';

function put(dir: string, rel: string, text: string): string {
  const abs = join(dir, rel);
  mkdirSync(join(abs, '..'), { recursive: true });
  writeFileSync(abs, text);
  return abs;
}

function gitIn(dir: string, args: string[], input: string, env: Record<string, string> = {}): string {
  return execFileSync('git', args, { cwd: dir, input, env: { ...cleanGitEnv(dir), ...env }, encoding: 'utf8' });
}

/** A small seeded generator: the same cases every run. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** git's tree for HEAD with `changes` made, through a scratch index. */
function gitTree(dir: string, changes: PathChange[]): string {
  const env = { GIT_INDEX_FILE: join(dir, '.git', 'scratch-index') };
  gitIn(dir, ['read-tree', 'HEAD'], '', env);
  const input = changes.map((c) => (c.blob ? `100644 ${c.blob}\t${c.path}\0` : `0 ${'0'.repeat(40)}\t${c.path}\0`)).join('');
  gitIn(dir, ['update-index', '-z', '--index-info'], input, env);
  return gitIn(dir, ['write-tree'], '', env).trim();
}

// Names that sort differently as files and as folders ("a.json" < "a/" < "a0"), and deep paths.
const NAMES = ['a', 'a.json', 'a-b', 'a0', 'ab', 'b', 'z.json', 'x y.json'];

describe('objects written by the memory commit', () => {
  it('writes the blobs and trees git writes, over many random changes', async () => {
    const dir = gitdir({ 'README.md': '# repo\n', 'a/x.json': '1\n', 'a.json': '2\n', 'a0/y/z.json': '3\n', ab: '4\n' });
    const repo = (await GitRepo.open(dir))!;
    const objects = objectsDir(join(dir, '.git'));
    const random = rng(7);
    const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)];
    for (let round = 0; round < 30; round++) {
      const head = git(dir, 'rev-parse', 'HEAD').trim();
      const files = git(dir, 'ls-files')
        .split('\n')
        .filter((f) => f && f !== 'README.md');
      const changes = new Map<string, string | null>();
      for (let k = 0; k < 1 + Math.floor(random() * 4); k++) {
        if (files.length && random() < 0.35) changes.set(pick(files), null);
        else {
          const depth = Math.floor(random() * 3);
          const path = [...Array.from({ length: depth }, () => pick(['a0', 'a-b', 'q', 'ai-memory/p/learnings'])), pick(NAMES)].join('/');
          // A file cannot go where a folder is, nor under a file: such changes are left to fast-import.
          if (files.some((f) => f.startsWith(`${path}/`) || path.startsWith(`${f}/`))) continue;
          if ([...changes.keys()].some((f) => f.startsWith(`${path}/`) || path.startsWith(`${f}/`))) continue;
          const text = `${round}.${k}.${random()}\n`;
          const blob = writeLooseObject(objects, 'blob', Buffer.from(text), 'sha1');
          expect(blob).toBe(gitIn(dir, ['hash-object', '--stdin'], text).trim());
          changes.set(path, blob);
        }
      }
      const list = [...changes].map(([path, blob]) => ({ path, blob }));
      if (!list.length) continue;
      const trees = await repo.treesAt(head, foldersToRead(list.map((c) => c.path)));
      const { root } = writeTrees(objects, trees, list, 'sha1');
      expect(root, `round ${round}: ${JSON.stringify(list)}`).toBe(gitTree(dir, list));
      const commit = gitIn(dir, ['commit-tree', root, '-p', head, '-m', `round ${round}`], '').trim();
      git(dir, 'update-ref', 'HEAD', commit);
      git(dir, 'reset', '-q');
    }
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
  });

  it('writes the commit fast-import writes', () => {
    const dir = gitdir();
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    const tree = git(dir, 'rev-parse', 'HEAD^{tree}').trim();
    const now = new Date(1_795_000_000_000);
    const body = commitBody(tree, head, 'Agent Name', 'agent@example.com', 'memory(p): one\n\nMemory-Agent: a', now);
    const objects = objectsDir(join(dir, '.git'));
    const ours = writeLooseObject(objects, 'commit', body, 'sha1');
    const offset = -now.getTimezoneOffset();
    const tz = `${offset < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}${String(Math.abs(offset) % 60).padStart(2, '0')}`;
    const msg = 'memory(p): one\n\nMemory-Agent: a';
    const stream = `commit refs/heads/fi\ncommitter Agent Name <agent@example.com> ${now.getTime() / 1000} ${tz}\ndata ${Buffer.byteLength(msg)}\n${msg}\nfrom ${head}\n\ndone\n`;
    gitIn(dir, ['fast-import', '--quiet', '--done', '--date-format=raw'], stream);
    expect(git(dir, 'rev-parse', 'refs/heads/fi').trim()).toBe(ours);
  });
});

/** A repository whose index holds `files` (given old modification times, so none is racily clean) and a cache tree. */
function indexed(files: Record<string, string>): string {
  const dir = gitdir({ 'README.md': '# repo\n' });
  for (const [rel, text] of Object.entries(files)) put(dir, rel, text);
  const old = new Date(Date.now() - 3600_000);
  for (const rel of ['README.md', ...Object.keys(files)]) utimesSync(join(dir, rel), old, old);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'files');
  return dir;
}

/** The index `git update-index --index-info` makes of `index` with `changes`. */
function gitIndex(dir: string, index: string, changes: PathChange[]): Buffer {
  const copy = join(dir, '.git', 'git-made-index');
  copyFileSync(index, copy);
  const input = changes.map((c) => (c.blob ? `100644 ${c.blob}\t${c.path}\0` : `0 ${'0'.repeat(40)}\t${c.path}\0`)).join('');
  gitIn(dir, ['update-index', '-z', '--index-info'], input, { GIT_INDEX_FILE: copy });
  return readFileSync(copy);
}

function ours(index: string, changes: PathChange[]): Buffer | null {
  const parts = editIndex(readFileSync(index), changes, 'sha1', Math.floor(statSync(index).mtimeMs / 1000));
  return parts && Buffer.concat(parts);
}

describe('the index written by the memory commit', () => {
  const blob = (dir: string, text: string): string => gitIn(dir, ['hash-object', '-w', '--stdin'], text).trim();

  it('is byte for byte the index git update-index writes', () => {
    const dir = indexed({ 'a/x.json': '1\n', 'a.json': '2\n', 'a0/y/z.json': '3\n', 'ai-memory/p/learnings/B.json': '4\n', 'src/app.ts': '5\n' });
    const index = join(dir, '.git', 'index');
    expect(readFileSync(index).includes('TREE')).toBe(true);
    const long = Array.from({ length: 22 }, (_, i) => `${'d'.repeat(190)}${i}`).join('/'); // a name over 4,095 bytes
    const cases: PathChange[][] = [
      [{ path: 'ai-memory/p/learnings/A.json', blob: blob(dir, 'new\n') }],
      [{ path: 'ai-memory/p/learnings/B.json', blob: blob(dir, 'changed\n') }],
      [{ path: 'ai-memory/p/learnings/B.json', blob: null }],
      [{ path: 'ai-memory/p/learnings/none.json', blob: null }],
      [
        { path: 'a.json', blob: null },
        { path: 'a/w.json', blob: blob(dir, 'w\n') },
        { path: 'zz/top.json', blob: blob(dir, 'z\n') },
        { path: 'a0/y/z.json', blob: blob(dir, 'z2\n') },
      ],
      [{ path: long, blob: blob(dir, 'long\n') }],
    ];
    for (const changes of cases) {
      const made = ours(index, changes);
      expect(made, JSON.stringify(changes)).not.toBeNull();
      expect(made!.equals(gitIndex(dir, index, changes)), JSON.stringify(changes).slice(0, 200)).toBe(true);
    }
    // Installed, git reads it as its own: the new entry staged, nothing else changed.
    const changes = cases[0];
    writeFileSync(index, ours(index, changes)!);
    expect(git(dir, 'diff', '--cached', '--name-status').trim()).toBe('A\tai-memory/p/learnings/A.json');
  });

  it('is the index git writes in a SHA-256 repository too', () => {
    const dir = testdir();
    execFileSync('git', ['init', '-q', '-b', 'main', '--object-format=sha256'], { cwd: dir, env: cleanGitEnv(dir) });
    put(dir, 'a/x.json', '1\n');
    put(dir, 'b.json', '2\n');
    const old = new Date(Date.now() - 3600_000);
    for (const rel of ['a/x.json', 'b.json']) utimesSync(join(dir, rel), old, old);
    git(dir, 'add', '-A');
    gitIn(dir, ['-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'files'], '');
    const index = join(dir, '.git', 'index');
    const changes = [
      { path: 'a/y.json', blob: gitIn(dir, ['hash-object', '-w', '--stdin'], 'y\n').trim() },
      { path: 'b.json', blob: null },
    ];
    const parts = editIndex(readFileSync(index), changes, 'sha256', Math.floor(statSync(index).mtimeMs / 1000));
    expect(parts).not.toBeNull();
    const copy = join(dir, '.git', 'git-made-index');
    copyFileSync(index, copy);
    gitIn(dir, ['update-index', '-z', '--index-info'], `100644 ${changes[0].blob}\ta/y.json\x000 ${'0'.repeat(64)}\tb.json\x00`, { GIT_INDEX_FILE: copy });
    expect(Buffer.concat(parts!).equals(readFileSync(copy))).toBe(true);
  });

  it('smudges entries that are racily clean against the old index, as git does before trusting their stat data', () => {
    const dir = indexed({ 'ai-memory/p/learnings/B.json': '4\n', 'src/app.ts': '5\n' });
    const index = join(dir, '.git', 'index');
    // src/app.ts recorded with a modification time at or after the index's own: its stat data proves nothing.
    const later = new Date(Date.now() + 3600_000);
    utimesSync(join(dir, 'src/app.ts'), later, later);
    git(dir, 'update-index', '--refresh');
    const indexTime = new Date(Date.now() - 60_000);
    utimesSync(index, indexTime, indexTime);
    const changes = [{ path: 'ai-memory/p/learnings/A.json', blob: blob(dir, 'new\n') }];
    const made = ours(index, changes)!;
    const theirs = gitIndex(dir, index, changes);
    // The same, but for the racy entry's recorded size: git zeroes it only after reading the file
    // and finding it changed; this write zeroes it always (git then reads the file once more).
    const at = made.indexOf('src/app.ts') - 62;
    expect(made.readUInt32BE(at + 36)).toBe(0);
    expect(theirs.readUInt32BE(at + 36)).toBe(2);
    made.writeUInt32BE(2, at + 36);
    expect(made.subarray(0, -20).equals(theirs.subarray(0, -20))).toBe(true);
    writeFileSync(index, ours(index, changes)!);
    put(dir, 'ai-memory/p/learnings/A.json', 'new\n');
    expect(git(dir, 'status', '--porcelain').trim()).toBe('A  ai-memory/p/learnings/A.json');
  });

  it('leaves to git the kinds of index it does not handle', () => {
    const dir = indexed({ 'ai-memory/p/learnings/B.json': '4\n', 'src/app.ts': '5\n' });
    const index = join(dir, '.git', 'index');
    const add = [{ path: 'ai-memory/p/learnings/A.json', blob: blob(dir, 'new\n') }];
    expect(ours(index, add)).not.toBeNull();
    // A file where a folder is, and a file under a file.
    expect(ours(index, [{ path: 'ai-memory/p', blob: blob(dir, 'x\n') }])).toBeNull();
    expect(ours(index, [{ path: 'src/app.ts/x.json', blob: blob(dir, 'x\n') }])).toBeNull();
    // A conflict at the path.
    const save = readFileSync(index);
    const b = blob(dir, 'x\n');
    gitIn(
      dir,
      ['update-index', '-z', '--index-info'],
      `0 ${'0'.repeat(40)}\tai-memory/p/learnings/A.json\x00100644 ${b} 1\tai-memory/p/learnings/A.json\x00100644 ${b} 2\tai-memory/p/learnings/A.json\0`,
    );
    expect(ours(index, add)).toBeNull();
    writeFileSync(index, save);
    // A checksum that does not hold.
    const bad = Buffer.from(save);
    bad[bad.length - 1] ^= 1;
    expect(editIndex(bad, add, 'sha1', 0)).toBeNull();
    // Version 3 (an intent-to-add entry), the untracked cache, a split index.
    put(dir, 'later.txt', 'l\n');
    git(dir, 'add', '-N', 'later.txt');
    expect(readFileSync(index).readUInt32BE(4)).toBe(3);
    expect(ours(index, add)).toBeNull();
    writeFileSync(index, save);
    git(dir, '-c', 'core.untrackedCache=true', 'update-index', '--untracked-cache');
    git(dir, '-c', 'core.untrackedCache=true', 'status', '--porcelain');
    expect(readFileSync(index).includes('UNTR')).toBe(true);
    expect(ours(index, add)).toBeNull();
    writeFileSync(index, save);
    git(dir, 'update-index', '--split-index');
    expect(ours(index, add)).toBeNull();
  });
});

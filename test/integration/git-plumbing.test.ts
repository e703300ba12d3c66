// Memory commits held to git's own rules in the repositories people really have: create, a small
// and a large apply (past TOGETHER paths, where the commit makes its objects before it touches
// the user's index), and a supersede, in each kind of repository below. After each, `git fsck
// --strict` is clean, `git status` shows nothing of ours, and the user's staged and unstaged
// work (a staged new file, an unstaged edit) is byte for byte what it was.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryService } from '../../src/index.js';
import { TOGETHER } from '../../src/store/git-commit.js';
import { entry, testdir } from '../helpers/repo.js';

/** The large apply's size: past the batch the commit takes with the user's index at once. */
const LARGE = TOGETHER + 6;

/** git with the test's HOME and no system config, plus `env` (GIT_INDEX_FILE for that case). */
function g(cwd: string, env: Record<string, string>, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 1 << 26 });
}

const saved = { HOME: process.env.HOME, GIT_CONFIG_NOSYSTEM: process.env.GIT_CONFIG_NOSYSTEM };
let home = '';
beforeAll(() => {
  // This file's git (in process and as child processes) reads no config of the machine's.
  home = execFileSync('mktemp', ['-d'], { encoding: 'utf8' }).trim();
  process.env.HOME = home;
  process.env.GIT_CONFIG_NOSYSTEM = '1';
});
afterAll(() => {
  process.env.HOME = saved.HOME;
  if (saved.GIT_CONFIG_NOSYSTEM === undefined) delete process.env.GIT_CONFIG_NOSYSTEM;
  execFileSync('rm', ['-rf', home]);
});

/** A repository on main with a user, an app file and a README; `init` adds git init options, `configure` runs before the first commit. */
function repo(dir: string, init: string[] = [], configure?: (dir: string) => void): string {
  mkdirSync(dir, { recursive: true });
  g(dir, {}, 'init', '-q', '-b', 'main', ...init);
  g(dir, {}, 'config', 'user.name', 'Matrix User');
  g(dir, {}, 'config', 'user.email', 'matrix@example.com');
  g(dir, {}, 'config', 'gc.auto', '0');
  configure?.(dir);
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'README.md'), '# repo\n');
  writeFileSync(join(dir, 'src', 'app.ts'), 'export const app = 1;\n');
  g(dir, {}, 'add', '-A');
  g(dir, {}, 'commit', '-q', '-m', 'initial');
  return dir;
}

interface Case {
  name: string;
  /** Makes the repository; returns the workspace folder and the environment git is used with. */
  setup: (root: string) => { ws: string; env?: Record<string, string> };
  /** The writes are refused with this message (and change nothing). */
  refused?: RegExp;
  /** More checks on the result. */
  check?: (ws: string, env: Record<string, string>) => void;
}

const CASES: Case[] = [
  {
    name: 'index v4',
    setup: (root) => {
      const ws = repo(root);
      g(ws, {}, 'config', 'index.version', '4');
      g(ws, {}, 'update-index', '--index-version', '4');
      return { ws };
    },
    check: (ws) => expect(readFileSync(join(ws, '.git', 'index')).readUInt32BE(4)).toBe(4),
  },
  {
    name: 'split index',
    setup: (root) => {
      const ws = repo(root);
      g(ws, {}, 'config', 'core.splitIndex', 'true');
      g(ws, {}, 'update-index', '--split-index');
      return { ws };
    },
    check: (ws) => expect(readdirSync(join(ws, '.git')).some((f) => f.startsWith('sharedindex.'))).toBe(true),
  },
  {
    name: 'untracked cache',
    setup: (root) => {
      const ws = repo(root);
      g(ws, {}, 'config', 'core.untrackedCache', 'true');
      g(ws, {}, 'update-index', '--untracked-cache');
      g(ws, {}, 'status', '--porcelain');
      return { ws };
    },
  },
  {
    name: 'fsmonitor (a hook)',
    setup: (root) => {
      const ws = repo(root);
      const hook = join(root, 'fsmonitor.sh');
      // A monitor that knows nothing: a new token, and "everything may have changed".
      writeFileSync(hook, `#!/bin/sh\nprintf 'bass-fsmonitor-%s\\0/\\0' "$(date +%s%N)"\n`);
      chmodSync(hook, 0o755);
      g(ws, {}, 'config', 'core.fsmonitor', hook);
      g(ws, {}, 'config', 'core.fsmonitorHookVersion', '2');
      g(ws, {}, 'status', '--porcelain');
      return { ws };
    },
  },
  {
    name: 'sparse checkout with ai-memory/',
    setup: (root) => {
      const ws = repo(root);
      g(ws, {}, 'sparse-checkout', 'set', '--cone', 'ai-memory', 'docs');
      return { ws };
    },
    check: (ws) => expect(g(ws, {}, 'sparse-checkout', 'list').split('\n')).toContain('ai-memory'),
  },
  {
    name: 'sparse checkout without ai-memory/',
    setup: (root) => {
      const ws = repo(root);
      mkdirSync(join(ws, 'ai-memory', 'demo'), { recursive: true });
      writeFileSync(join(ws, 'ai-memory', 'demo', 'config.yaml'), 'project: demo\ncreated_at: "2026-01-01T00:00:00.000Z"\n# the team\'s own settings\n');
      writeFileSync(join(ws, 'ai-memory', '.gitattributes'), "# the team's line\n*.json text eol=lf\n");
      g(ws, {}, 'add', '-A');
      g(ws, {}, 'commit', '-q', '-m', 'the team\u2019s memory settings');
      g(ws, {}, 'sparse-checkout', 'set', '--cone', 'src');
      return { ws };
    },
    refused: /ai-memory\/ is outside this sparse checkout.*git sparse-checkout add ai-memory/,
    check: (ws) => {
      expect(g(ws, {}, 'show', 'HEAD:ai-memory/demo/config.yaml')).toMatch(/the team's own settings/);
      expect(g(ws, {}, 'show', 'HEAD:ai-memory/.gitattributes')).toMatch(/the team's line/);
    },
  },
  {
    name: 'SHA-256',
    setup: (root) => ({ ws: repo(root, ['--object-format=sha256']) }),
    check: (ws) => expect(g(ws, {}, 'rev-parse', 'HEAD').trim()).toMatch(/^[0-9a-f]{64}$/),
  },
  {
    name: 'a linked worktree',
    setup: (root) => {
      const main = repo(join(root, 'main'));
      g(main, {}, 'worktree', 'add', '-q', '-b', 'side', join(root, 'wt'));
      return { ws: join(root, 'wt') };
    },
    check: (ws) => {
      expect(g(ws, {}, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('side');
      expect(g(join(ws, '..', 'main'), {}, 'log', '--format=%s', 'main').trim()).toBe('initial');
      expect(g(join(ws, '..', 'main'), {}, 'status', '--porcelain')).toBe('');
    },
  },
  {
    name: 'a submodule',
    setup: (root) => {
      const sub = repo(join(root, 'sub-origin'));
      const sup = repo(join(root, 'super'));
      g(sup, {}, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'mod');
      g(sup, {}, 'commit', '-q', '-m', 'add the submodule');
      const ws = join(sup, 'mod');
      g(ws, {}, 'config', 'user.name', 'Matrix User');
      g(ws, {}, 'config', 'user.email', 'matrix@example.com');
      g(ws, {}, 'checkout', '-q', 'main');
      return { ws };
    },
    check: (ws) => expect(g(join(ws, '..'), {}, 'status', '--porcelain').trim().split('\n')).toEqual(['M mod']),
  },
  {
    name: 'SSH signing',
    setup: (root) => {
      const ws = repo(root);
      const key = join(root, 'key');
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'matrix', '-f', key]);
      writeFileSync(join(root, 'allowed'), `matrix@example.com ${readFileSync(`${key}.pub`, 'utf8')}`);
      for (const [k, v] of [
        ['gpg.format', 'ssh'],
        ['user.signingkey', `${key}.pub`],
        ['commit.gpgsign', 'true'],
        ['gpg.ssh.allowedSignersFile', join(root, 'allowed')],
      ] as const)
        g(ws, {}, 'config', k, v);
      return { ws };
    },
    check: (ws) => expect(g(ws, {}, 'log', '--format=%G?', '-4').trim().split('\n')).toEqual(['G', 'G', 'G', 'G']),
  },
  {
    name: 'a clean filter on *.json',
    setup: (root) => {
      const ws = repo(root);
      // Normalises as git stores it: runs of spaces squeezed (the files keep their indentation).
      g(ws, {}, 'config', 'filter.squeeze.clean', 'tr -s " "');
      g(ws, {}, 'config', 'filter.squeeze.smudge', 'cat');
      g(ws, {}, 'config', 'filter.squeeze.required', 'true');
      writeFileSync(join(ws, '.gitattributes'), '*.json filter=squeeze\n');
      g(ws, {}, 'add', '.gitattributes');
      g(ws, {}, 'commit', '-q', '-m', 'filter');
      return { ws };
    },
    check: (ws) => {
      const file = g(ws, {}, 'ls-files', 'ai-memory/demo/decisions').split('\n')[0] ?? '';
      const raw = readFileSync(join(ws, file), 'utf8');
      expect(raw).toMatch(/ {2}/);
      expect(g(ws, {}, 'show', `HEAD:${file}`)).toBe(raw.replace(/ +/g, ' '));
    },
  },
  {
    name: 'core.sharedRepository=group through an include',
    setup: (root) => ({
      ws: repo(root, [], (dir) => {
        writeFileSync(join(dir, '.git', 'shared.inc'), '[core]\n\tsharedRepository = group\n');
        g(dir, {}, 'config', 'include.path', 'shared.inc');
      }),
    }),
    check: (ws) => {
      // Every object folder is group-writable and keeps its group, as git makes them here.
      const objects = join(ws, '.git', 'objects');
      const dirs = readdirSync(objects).filter((d) => /^[0-9a-f]{2}$/.test(d));
      expect(dirs.length).toBeGreaterThan(20);
      for (const d of dirs) expect(statSync(join(objects, d)).mode & 0o2070, d).toBe(0o2070);
    },
  },
  {
    name: 'an orphan branch',
    setup: (root) => {
      const ws = repo(root);
      g(ws, {}, 'checkout', '-q', '--orphan', 'fresh');
      return { ws };
    },
    check: (ws) => expect(g(ws, {}, 'rev-list', '--count', 'fresh').trim()).toBe('4'),
  },
  {
    name: 'GIT_INDEX_FILE',
    setup: (root) => {
      const ws = repo(root);
      const alt = join(root, 'alt-index');
      g(ws, { GIT_INDEX_FILE: alt }, 'read-tree', 'HEAD');
      return { ws, env: { GIT_INDEX_FILE: alt } };
    },
    check: (ws, env) => {
      // The index git was told to use holds our files; `git commit -a` with it records no deletion.
      expect(g(ws, env, 'ls-files', 'ai-memory').split('\n').filter(Boolean).length).toBeGreaterThan(LARGE);
      expect(g(ws, {}, 'ls-files', 'ai-memory')).toBe('');
    },
  },
];

/** The user's work, as the user sees it. */
function userWork(ws: string, env: Record<string, string>): Record<string, string> {
  return {
    cached: g(ws, env, 'diff', '--cached', '--', '.', ':!ai-memory'),
    unstaged: g(ws, env, 'diff'),
    readme: readFileSync(join(ws, 'README.md'), 'utf8'),
    staged: readFileSync(join(ws, 'staged.txt'), 'utf8'),
    index: g(ws, env, 'ls-files', '-s', '--', '.', ':!ai-memory'),
  };
}

const creates = (n: number, tag: string): { operation: 'create'; entry: Record<string, unknown> }[] =>
  Array.from({ length: n }, (_, i) => ({ operation: 'create', entry: entry({ subject: `matrix.${tag}`, summary: `Matrix ${tag} entry number ${i}.` }) }));

describe('memory commits in every kind of repository', () => {
  it.each(CASES.map((c) => [c.name, c] as const))(`%s: create, apply (3 and ${LARGE}), supersede`, async (_name, c) => {
    const { ws, env = {} } = c.setup(join(testdir(), 'r'));
    // The user's work in progress: a staged new file and an unstaged edit.
    writeFileSync(join(ws, 'staged.txt'), 'staged by the user\n');
    g(ws, env, 'add', 'staged.txt');
    writeFileSync(join(ws, 'README.md'), '# repo\n\nAn edit the user has not staged.\n');
    const before = userWork(ws, env);
    const head = c.refused ? g(ws, env, 'rev-parse', 'HEAD').trim() : '';
    const old = { ...process.env };
    Object.assign(process.env, env);
    try {
      const svc = new MemoryService({ cwd: ws, agent: 'matrix', env: { HOME: home } });
      const ops = [
        () => svc.create(entry({ summary: 'The first matrix entry.' }), { project: 'demo' }),
        () => svc.apply(creates(3, 'small'), { project: 'demo' }),
        () => svc.apply(creates(LARGE, 'large'), { project: 'demo' }),
        async () => {
          const first = svc.exportEntries('demo').find((e) => e.summary === 'The first matrix entry.')!;
          const r = await svc.apply([{ operation: 'supersede', target_id: first.id, entry: entry({ summary: 'The first one, superseded.' }) }], {
            project: 'demo',
          });
          expect(r.applied).toHaveLength(1);
        },
      ];
      for (const op of ops) {
        if (c.refused) await expect(op()).rejects.toThrow(c.refused);
        else await op();
      }
      if (c.refused) {
        expect(() => svc.query('matrix', {})).toThrow(c.refused);
        expect(g(ws, env, 'rev-parse', 'HEAD').trim()).toBe(head);
      } else
        expect(
          g(ws, env, 'ls-tree', '-r', '--name-only', 'HEAD', 'ai-memory/demo')
            .split('\n')
            .filter((f) => f.endsWith('.json')),
        ).toHaveLength(LARGE + 5);
    } finally {
      for (const k of Object.keys(env)) delete process.env[k];
      Object.assign(process.env, old);
    }
    const fsck = execFileSync('git', ['fsck', '--strict', '--no-progress'], {
      cwd: ws,
      env: { ...process.env, ...env },
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    expect(fsck).not.toMatch(/error|warning|missing|broken|dangling/i);
    expect(
      g(ws, env, 'status', '--porcelain')
        .split('\n')
        .filter((l) => l.includes('ai-memory')),
    ).toEqual([]);
    expect(userWork(ws, env)).toEqual(before);
    c.check?.(ws, env);
  });
});

describe('signing follows the config as it is at each commit', () => {
  it('commit.gpgsign turned on and off in an included file between two writes of one process', async () => {
    const root = join(testdir(), 'r');
    const ws = repo(root);
    const key = join(root, 'key');
    const svc = new MemoryService({ cwd: ws, agent: 'matrix', env: { HOME: home } });
    const signed = async (summary: string): Promise<string> => {
      await svc.create(entry({ summary }), { project: 'demo' });
      return g(ws, {}, 'log', '--format=%G?', '-1').trim();
    };
    expect(await signed('The first write registers the merge driver (the config changes).')).toBe('N');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'matrix', '-f', key]);
    writeFileSync(join(root, 'allowed'), `matrix@example.com ${readFileSync(`${key}.pub`, 'utf8')}`);
    for (const [k, v] of [
      ['gpg.format', 'ssh'],
      ['user.signingkey', `${key}.pub`],
      ['gpg.ssh.allowedSignersFile', join(root, 'allowed')],
      ['include.path', join(root, 'signing.inc')], // absent at first
    ] as const)
      g(ws, {}, 'config', k, v);
    // Config files changed in the last 2 s are read again at every commit: past that, what git
    // read is kept until a file changes, which this checks.
    await new Promise((r) => setTimeout(r, 2100));
    expect(await signed('Written before signing was asked for.')).toBe('N');
    writeFileSync(join(root, 'signing.inc'), '[commit]\n\tgpgsign = true\n');
    expect(await signed('Written once the included file asks for signing.')).toBe('G');
    writeFileSync(join(root, 'signing.inc'), '[commit]\n\tgpgsign = false\n');
    expect(await signed('Written once it no longer does.')).toBe('N');
  });
});

/**
 * What `npm pack` ships (and so what a user installs), and the commands a new user types first.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, firstOf } from '../helpers/repo.js';

const ROOT = join(__dirname, '../..');

describe('the package', () => {
  it('ships the command, the built code, the schemas, the docs and the licence; no tests, fixtures or sources', () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const [{ files: packed }] = firstOf(JSON.parse(out) as { files: { path: string }[] }[], 1);
    const files = packed.map((f) => f.path);
    for (const f of [
      'package.json',
      'README.md',
      'LICENSE',
      'bin/bass-agents.cjs',
      'bin/bass-agents.js',
      'dist/bundle/cli.cjs',
      'dist/bundle/thin.cjs',
      'dist/index.js',
      'dist/index.d.ts',
      'docs/mcp.md',
      'docs/secrets.md',
      'rules/secrets/cloud.json',
    ])
      expect(files, f).toContain(f);
    expect(files.some((f) => f.startsWith('schemas/') && f.endsWith('.json'))).toBe(true);
    const unwanted = files.filter(
      (f) => /^(test|src|scripts|bench|ai-memory|ai-context|node_modules|\.ci)\//.test(f) || f.endsWith('.map') || /fixtures/.test(f),
    );
    expect(unwanted).toEqual([]);
    // Every document the README links to is shipped with it.
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    for (const m of readme.matchAll(/\]\((docs\/[^)#]+)\)/g)) expect(files, m[1]).toContain(m[1]);
  });

  it('answers --version and prints a shell completion script', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const version = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8' });
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toBe(pkg.version);
    const completion = spawnSync(process.execPath, [BIN, 'completion'], { encoding: 'utf8' });
    expect(completion.status).toBe(0);
    expect(completion.stdout).toMatch(/bass-agents --get-yargs-completions/);
    const words = spawnSync(process.execPath, [BIN, '--get-yargs-completions', 'bass-agents', 'memory', ''], { encoding: 'utf8' });
    expect(words.stdout.split('\n')).toEqual(expect.arrayContaining(['create', 'query', 'supersede', 'mcp']));
  });
});

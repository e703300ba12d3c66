// The CLI runs from dist/bundle/cli.cjs (scripts/bundle.js); dist/ is the library. Both must
// behave the same, and the code cache the build made must be one this Node accepts.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cli, gitdir } from '../helpers/repo.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BUNDLE = join(ROOT, 'dist/bundle/cli.cjs');

describe('the bundled CLI', () => {
  it('exists after the build, with its zod and secretlint chunks and the thin client, each with a code cache this Node accepts (the bundle two: all commands, and reads)', () => {
    const caches: [string, string][] = [
      [BUNDLE, `${BUNDLE}.cache`],
      [BUNDLE, `${BUNDLE}.read.cache`],
      [join(dirname(BUNDLE), 'zod.cjs'), join(dirname(BUNDLE), 'zod.cjs.cache')],
      [join(dirname(BUNDLE), 'secretlint.cjs'), join(dirname(BUNDLE), 'secretlint.cjs.cache')],
      [join(dirname(BUNDLE), 'thin.cjs'), join(dirname(BUNDLE), 'thin.cjs.cache')],
    ];
    for (const [file, cache] of caches) {
      expect(existsSync(file)).toBe(true);
      const probe = `
        const { Script } = require('node:vm'); const Module = require('node:module'); const fs = require('node:fs');
        const s = new Script(Module.wrap(fs.readFileSync(${JSON.stringify(file)}, 'utf8')), { filename: ${JSON.stringify(file)}, cachedData: fs.readFileSync(${JSON.stringify(cache)}) });
        process.stdout.write(String(s.cachedDataRejected));`;
      const r = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
      expect(r.stdout, cache).toBe('false');
    }
    // The reads' cache holds the bytecode of what reads run only: well under the whole.
    expect(statSync(`${BUNDLE}.read.cache`).size).toBeLessThan(0.8 * statSync(`${BUNDLE}.cache`).size);
    // zod is not in the main bundle: a read does not load it.
    expect(readFileSync(BUNDLE, 'latin1')).not.toContain('$ZodType');
  });

  it('gives the same answers as dist/ run directly, and loads no dist/ module of its own', () => {
    const dir = gitdir();
    const env = { BASS_AGENTS_NOW: '2026-03-01T00:00:00Z', BASS_AGENTS_AGENT: 'bundle-test' };
    expect(cli(dir, ['init', 'demo'], { env }).code).toBe(0);
    // No slow-query warning: whether a query takes 200 ms depends on the machine, not the bundle.
    const cfg = join(dir, 'ai-memory/demo/config.yaml');
    writeFileSync(cfg, readFileSync(cfg, 'utf8').replace('slow_ms: 200', 'slow_ms: 600000'));
    const entry = {
      section: 'decisions',
      kind: 'decision',
      subject: 'cli.startup',
      scope: 'repo',
      summary: 'The CLI runs from one bundled file',
      content: 'Bundled with esbuild, loaded with a V8 code cache.',
      tags: ['perf'],
      confidence: 0.9,
      evidence: [{ type: 'code', uri: 'scripts/bundle.js', note: '' }],
    };
    expect(cli(dir, ['create', 'demo', '--file', '-'], { env, input: JSON.stringify(entry) }).code).toBe(0);
    const bad = JSON.stringify({ ...entry, confidence: 2 });
    const runs: [string[], string?][] = [
      [['query', 'bundled startup', '--json']],
      [['list', '--json']],
      [['stats', 'demo', '--json']],
      [['validate', 'demo', '--file', '-', '--json'], bad],
      [['query', '--help']],
    ];
    for (const [args, input] of runs) {
      const bundled = cli(dir, args, { env, input });
      const plain = cli(dir, args, { env: { ...env, BASS_AGENTS_NO_BUNDLE: '1' }, input });
      expect(bundled.code, args.join(' ')).toBe(plain.code);
      expect(bundled.stdout, args.join(' ')).toBe(plain.stdout);
      expect(bundled.stderr, args.join(' ')).toBe(plain.stderr);
    }
    // The bundle serves its lazy modules itself: with NODE_DEBUG=module, no dist/*.js is loaded.
    const traced = cli(dir, ['validate', 'demo', '--file', '-', '--json'], { env: { ...env, NODE_DEBUG: 'module' }, input: bad });
    expect(traced.code).toBe(1);
    expect(traced.stdout).toContain('confidence');
    // dist/lazy.js would be the unbundled loader at work; `load "…/dist/…"` a dist/ file being loaded.
    // (dist/ paths may appear as the parent of a package require: externals resolve from there.)
    expect(traced.stderr).toMatch(/dist\/bundle\/cli\.cjs/);
    expect(traced.stderr).not.toMatch(/dist\/lazy\.js|load "[^"]*\/dist\/(?!bundle\/)/);
    // The validator's zod and the scan's secretlint come from the bundle's own chunks, not from node_modules (~60 ms each to load there).
    expect(traced.stderr).not.toMatch(/node_modules\/(zod|@secretlint)/);
    expect(traced.stderr).toMatch(/dist\/bundle\/secretlint\.cjs/);
    expect(readFileSync(BUNDLE, 'utf8').startsWith("'use strict';")).toBe(true);
  });
});

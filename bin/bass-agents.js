#!/usr/bin/env node
// Only loads the CLI: all logic lives in src/ (compiled to dist/).
//
// The CLI is run from dist/bundle/cli.cjs, one file built from dist/ with a V8 code cache
// (scripts/bundle.js), which starts ~2x faster than resolving and compiling ~90 ES modules.
// Without a bundle (BASS_AGENTS_NO_BUNDLE=1, or a build that made none) it runs dist/ directly.
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');

function loadBundle() {
  if (process.env.BASS_AGENTS_NO_BUNDLE) return null;
  const file = join(dist, 'bundle', 'cli.cjs');
  let source;
  try {
    source = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  let cachedData;
  try {
    cachedData = readFileSync(`${file}.cache`);
  } catch {
    cachedData = undefined; // compiled from source instead
  }
  const script = new Script(Module.wrap(source), { filename: file, cachedData });
  const mod = { exports: {} };
  script.runInThisContext()(mod.exports, createRequire(file), mod, file, dirname(file));
  return mod.exports;
}

const cli = loadBundle() ?? (await import('../dist/cli/main.js'));
cli.main(process.argv.slice(2));

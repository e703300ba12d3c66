#!/usr/bin/env node
// `npm run build` step 3 (run by scripts/bundle.js): the bundle's V8 code cache, made *after*
// the everyday commands have run, so that it holds the bytecode of the functions they call.
//
// A cache made right after compiling holds little more than the top level: every function a
// command calls is compiled again at every start (~20-40 ms of a cold `list` at 10K entries).
// Here the bundle is compiled and run exactly as bin/bass-agents.cjs does (same file name, same
// source text, same wrapper), on a scratch repository in the temp folder: init, create, apply,
// list, query, show. The cache is then taken from that same script, and each chunk's (zod) from
// the script the bundle's own loader made. Output is not shown; any failure leaves the plain
// caches scripts/bundle.js wrote before, and says why.
'use strict';
const { execFileSync } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const Module = require('node:module');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');
const { Script } = require('node:vm');

/** Runs a bundled file as the bin does, but compiled afresh (no cache yet): its exports and its script. */
function load(path) {
  const script = new Script(Module.wrap(readFileSync(path, 'latin1')), { filename: path });
  const mod = { exports: {} };
  script.runInThisContext()(mod.exports, Module.createRequire(path), mod, path, join(path, '..'));
  return { exports: mod.exports, script };
}
// The bundle's chunks are loaded the same way (see loadCached in the bin).
globalThis.__bassAgentsLoadCached = load;
const file = resolve(process.argv[2]);
const { exports: cli, script } = load(file);

const entry = (i) => ({
  section: i % 2 ? 'decisions' : 'learnings',
  kind: i % 2 ? 'decision' : 'other',
  subject: `warm.part${i}`,
  scope: 'repo',
  summary: `Warm-up entry ${i}: invoices are retried with backoff after a timeout`,
  content: `Entry ${i} exists only while the build makes the code cache.`,
  tags: ['build'],
  confidence: 0.8,
  evidence: [{ type: 'code', uri: 'README.md', note: '' }],
});

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bass-agents-warm-'));
  const env = { GIT_AUTHOR_NAME: 'build', GIT_AUTHOR_EMAIL: 'build@localhost', GIT_COMMITTER_NAME: 'build', GIT_COMMITTER_EMAIL: 'build@localhost' };
  Object.assign(process.env, env, { BASS_AGENTS_NO_DAEMON: '1', BASS_AGENTS_AGENT: 'build', BASS_AGENTS_SEMANTIC: 'off' });
  const cwd = process.cwd();
  try {
    execFileSync('git', ['init', '-q', dir]);
    writeFileSync(join(dir, 'README.md'), 'warm-up\n');
    process.chdir(dir);
    const stdin = (value) => Buffer.from(JSON.stringify(value));
    const runs = [
      [['memory', 'init', 'warm']],
      [['memory', 'create', 'warm', '--file', '-'], stdin(entry(0))],
      [['memory', 'apply', 'warm', '--file', '-'], stdin([1, 2, 3].map((i) => ({ operation: 'create', entry: entry(i) })))],
      [['memory', 'list', 'warm', '--json']],
      [['memory', 'list', 'warm']],
      [['memory', 'query', 'invoice retry timeout', '--project', 'warm', '--json']],
      [['memory', 'query', 'backoff', '--project', 'warm']],
    ];
    for (const [argv, input] of runs) {
      printed = '';
      await cli.main(argv, input ? { stdin: input } : {});
      if (process.exitCode) throw new Error(`${argv.join(' ')} exited with ${process.exitCode}`);
    }
    printed = '';
    await cli.main(['memory', 'list', 'warm', '--json']);
    const id = JSON.parse(printed)[0].id;
    for (const flags of [['--json'], []]) await cli.main(['memory', 'show', id, ...flags]);
    if (process.exitCode) throw new Error(`show exited with ${process.exitCode}`);
  } finally {
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
  }
  writeFileSync(`${file}.cache`, script.createCachedData());
  // The chunks the run loaded (scripts/bundle.js), each beside the bundle with its own cache.
  for (const [name, chunk] of Object.entries(globalThis.__bassAgentsScripts ?? {})) writeFileSync(join(file, '..', `${name}.cjs.cache`), chunk.createCachedData());
}

// What the commands print is kept only until the next command; the build prints one line.
let printed = '';
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk) => ((printed += String(chunk)), true);
process.stderr.write = () => true;
main().then(
  () => {
    write(`code cache: ${Math.round(readFileSync(`${file}.cache`).length / 1024)} KB, made after a warm-up run\n`);
    process.exit(0);
  },
  (err) => {
    write(`code cache: no warm-up (${err instanceof Error ? err.message : String(err)}); the plain cache stays\n`);
    process.exit(0);
  },
);

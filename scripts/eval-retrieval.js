#!/usr/bin/env node
// `npm run eval:retrieval -- --data PATH [options]`: retrieval quality and latency on a
// LoCoMo-shaped file (https://github.com/snap-research/LoCoMo, data/locomo10.json), measured
// through the CLI as an agent would use it. Not part of `npm test`.
//
// The data is licensed CC BY-NC 4.0: fetch it yourself, keep it outside this repository, and
// never commit it or anything derived from it. The temporary workspace is deleted afterwards.
//
// Ingest (fixed: checks outside the project use the same shape): one `memory apply` per
// conversation, one create per turn in dialog order, section observations, kind other, subject
// `<conversation>.session_<n>`, scope repo, summary `Speaker: text` (300 characters at most),
// content `(session date) Speaker: text`, tag `dia-<id>`, confidence 0.8, evidence
// `{type: log, uri: transcripts/<conversation>.json, note: <dia_id>}`.
//
// Questions: every question outside category 5 (adversarial, no evidence), asked with
// `memory query <question> --json --limit 10 --min-confidence 0`. recall@k is the share of a
// question's evidence turns in its first k results, averaged over questions; hit@k the share of
// questions with at least one; MRR the mean of 1 / rank of the first evidence turn.
//
// Options:
//   --data PATH         the LoCoMo-shaped JSON file (required)
//   --split dev|held|all  dev: the first five conversations (develop on these only); held: the
//                       other five; all (default: dev)
//   --mode cli|api      cli (default): every question through `memory query` with the daemon
//                       warm, then a sample without it; api: in this process through the
//                       TypeScript API (seconds instead of minutes, for development; no latency)
//   --semantic on|off   cli mode: turn semantic search on or off in the workspace (default: the
//                       project default); api mode: on fuses semantic similarity in (default off)
//   --sample N          questions timed without the daemon (default 100)
//                       (cli mode sets each p50 beside the p50 of `node -e 0` run between the queries)
//   --shuffle           ingest each conversation's turns in a seeded random order (a store is
//                       not written in conversation order; no ranking signal may depend on it)
//   --seed N            the shuffle's seed (default 1)
//   --limit N           only the first N questions (development)
//   --json FILE         also write the figures as JSON
//   --keep              keep the temporary workspace
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

const HERE = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(HERE, '../bin/bass-agents.cjs');
const CATEGORY = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };
const PROJECT = 'locomo';

function parseArgs(argv) {
  const o = { split: 'dev', mode: 'cli', sample: 100, limit: Infinity, semantic: undefined, keep: false, shuffle: false, seed: 1 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--data') o.data = next();
    else if (a === '--split') o.split = next();
    else if (a === '--mode') o.mode = next();
    else if (a === '--semantic') o.semantic = next();
    else if (a === '--sample') o.sample = Number(next());
    else if (a === '--limit') o.limit = Number(next());
    else if (a === '--json') o.json = next();
    else if (a === '--keep') o.keep = true;
    else if (a === '--shuffle') o.shuffle = true;
    else if (a === '--seed') o.seed = Number(next());
    else throw new Error(`unknown option ${a}`);
  }
  if (!o.data) throw new Error('--data PATH is required (a LoCoMo-shaped JSON file, e.g. data/locomo10.json from snap-research/LoCoMo)');
  if (!['dev', 'held', 'all'].includes(o.split)) throw new Error('--split is dev, held or all');
  if (!['cli', 'api'].includes(o.mode)) throw new Error('--mode is cli or api');
  if (o.semantic !== undefined && !['on', 'off'].includes(o.semantic)) throw new Error('--semantic is on or off');
  return o;
}

const env = { ...process.env, BASS_AGENTS_AGENT: 'eval' };
for (const k of Object.keys(env)) if (k.startsWith('GIT_') || (k.startsWith('BASS_AGENTS_') && k !== 'BASS_AGENTS_AGENT')) delete env[k];

function cli(cwd, args, extraEnv = {}) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, 'memory', ...args], { cwd, env: { ...env, ...extraEnv }, encoding: 'utf8', maxBuffer: 1 << 28 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`memory ${args.slice(0, 2).join(' ')} … exited ${r.status}: ${r.stderr.trim()}`);
  return { out: r.stdout, ms };
}

/** A seeded random order (mulberry32, Fisher-Yates): the same seed gives the same order. */
export function shuffled(items, seed) {
  let t = seed >>> 0;
  const rand = () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** The Memory_Updates of one conversation: one create per turn, in dialog order. */
export function updatesOf(conv) {
  const c = conv.conversation;
  const out = [];
  for (let n = 1; c[`session_${n}`] !== undefined || c[`session_${n}_date_time`] !== undefined; n++) {
    const turns = c[`session_${n}`];
    if (!Array.isArray(turns)) continue;
    const date = c[`session_${n}_date_time`] ?? '';
    for (const t of turns) {
      const line = `${t.speaker}: ${t.text}`;
      out.push({
        operation: 'create',
        entry: {
          section: 'observations',
          kind: 'other',
          subject: `${conv.sample_id}.session_${n}`,
          scope: 'repo',
          summary: line.slice(0, 300),
          content: `(${date}) ${line}`,
          tags: [`dia-${t.dia_id}`],
          confidence: 0.8,
          evidence: [{ type: 'log', uri: `transcripts/${conv.sample_id}.json`, note: t.dia_id }],
        },
      });
    }
  }
  return out;
}

export function questionsOf(conv) {
  return conv.qa
    .filter((q) => q.category !== 5 && Array.isArray(q.evidence) && q.evidence.length)
    .map((q) => ({
      conv: conv.sample_id,
      text: String(q.question),
      category: CATEGORY[q.category] ?? String(q.category),
      evidence: new Set(q.evidence.flatMap((e) => String(e).split(/[;,\s]+/)).filter(Boolean)),
    }));
}

/** Evidence turn ids of a result list (entries or summary-only hits), by conversation. */
function turnsOf(results) {
  return results.map((r) => {
    const conv = String(r.subject ?? '').split('.session_')[0];
    const tag = (r.tags ?? []).find((t) => t.startsWith('dia-'));
    return tag ? `${conv}/${tag.slice(4)}` : '';
  });
}

function score(q, turns) {
  const want = [...q.evidence].map((e) => `${q.conv}/${e}`);
  const rankOf = want.map((w) => turns.indexOf(w)).filter((r) => r >= 0);
  const first = rankOf.length ? Math.min(...rankOf) : -1;
  const at = (k) => rankOf.filter((r) => r < k).length / want.length;
  return { r5: at(5), r10: at(10), h5: first >= 0 && first < 5 ? 1 : 0, h10: first >= 0 && first < 10 ? 1 : 0, rr: first >= 0 ? 1 / (first + 1) : 0 };
}

const pct = (x) => Math.round(x * 1000) / 10;
const quantile = (xs, p) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};

function summarize(rows) {
  const agg = (rs) => {
    const n = rs.length || 1;
    const sum = (f) => rs.reduce((a, r) => a + r[f], 0) / n;
    return { n: rs.length, recall_at_5: pct(sum('r5')), recall_at_10: pct(sum('r10')), hit_at_5: pct(sum('h5')), hit_at_10: pct(sum('h10')), mrr: Math.round(sum('rr') * 1000) / 1000 };
  };
  const by = {};
  for (const c of Object.values(CATEGORY)) by[c] = agg(rows.filter((r) => r.category === c));
  return { overall: agg(rows), by_category: by };
}

/** One `node -e 0` (ms): the floor a CLI query's time is set beside. */
function nodeOnce() {
  const t0 = performance.now();
  execFileSync(process.execPath, ['-e', '0']);
  return performance.now() - t0;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const data = JSON.parse(readFileSync(o.data, 'utf8'));
  if (!Array.isArray(data)) throw new Error(`${o.data}: expected a JSON array of conversations`);
  const convs = o.split === 'dev' ? data.slice(0, 5) : o.split === 'held' ? data.slice(5) : data;
  const dir = mkdtempSync(join(tmpdir(), 'bass-agents-eval-'));
  const log = (s) => process.stderr.write(`${s}\n`);
  try {
    const git = (...a) => execFileSync('git', a, { cwd: dir, env, encoding: 'utf8' });
    git('init', '-q', '-b', 'main');
    git('config', 'user.name', 'Eval');
    git('config', 'user.email', 'eval@example.com');
    git('config', 'gc.auto', '0');
    cli(dir, ['init', PROJECT]);
    if (o.semantic) {
      // The project's switch (config.yaml `query.semantic`), committed like any setting.
      const file = join(dir, 'ai-memory', PROJECT, 'config.yaml');
      const cfg = YAML.parse(readFileSync(file, 'utf8'));
      cfg.query = { ...(cfg.query ?? {}), semantic: o.semantic };
      writeFileSync(file, YAML.stringify(cfg));
      git('commit', '-qam', 'eval: semantic search ' + o.semantic);
    }
    // Ingest.
    let turns = 0;
    let skipped = 0;
    const t0 = performance.now();
    for (const conv of convs) {
      const updates = o.shuffle ? shuffled(updatesOf(conv), o.seed + convs.indexOf(conv)) : updatesOf(conv);
      const file = join(dir, '.bass-agents-eval-input.json');
      writeFileSync(file, JSON.stringify(updates));
      const r = JSON.parse(cli(dir, ['apply', PROJECT, '--file', file, '--json'], { BASS_AGENTS_NO_DAEMON: '1' }).out);
      rmSync(file);
      turns += r.applied.length;
      skipped += r.skipped.length;
      for (const s of r.skipped.slice(0, 3)) log(`  skipped ${conv.sample_id} #${s.index}: ${JSON.stringify(s.errors).slice(0, 200)}`);
    }
    const ingestS = (performance.now() - t0) / 1000;
    log(`ingested ${turns} turns of ${convs.length} conversations in ${ingestS.toFixed(1)} s (${skipped} skipped)`);
    const questions = convs.flatMap(questionsOf).slice(0, o.limit);
    log(`${questions.length} questions`);
    const rows = [];
    const latency = { daemon: [], direct: [], floor: [], directFloor: [] };
    let semanticStatus = null;
    if (o.mode === 'api') {
      const { MemoryService } = await import('../dist/index.js');
      const svc = new MemoryService({ cwd: dir, env, longLived: true });
      for (const q of questions) {
        // With `--semantic on`, every entry is embedded in this process first (as `query --semantic` would, without its cap).
        const semantic = o.semantic === 'on' ? await svc.semanticFor(q.text, true, Infinity) : undefined;
        const res = svc.query(q.text, { minConfidence: 0 }, { limit: 10, record: false, semantic });
        rows.push({ category: q.category, ...score(q, turnsOf(res.results.map((h) => h.entry))) });
      }
    } else {
      cli(dir, ['daemon', 'start']);
      try {
        // Warm: wait until the daemon answers (and, with semantic search, holds every vector).
        const deadline = Date.now() + 30 * 60_000;
        for (;;) {
          const st = JSON.parse(cli(dir, ['daemon', 'status', '--json']).out);
          semanticStatus = st.semantic ?? null;
          const sem = semanticStatus;
          const ready = st.running && (!sem || sem.state === 'off' || sem.state === 'unavailable' || sem.state === 'failed' || (sem.state === 'ready' && sem.vectors_current >= sem.entries));
          if (ready || Date.now() > deadline) break;
          await new Promise((r) => setTimeout(r, 2000));
        }
        cli(dir, ['query', 'warm up', '--json', '--limit', '1']);
        let i = 0;
        for (const q of questions) {
          // The floor is sampled between the queries (every fourth): on a shared machine the load moves within a
          // minute, and a ratio must set like beside like.
          if (i % 4 === 0) latency.floor.push(nodeOnce());
          const r = cli(dir, ['query', q.text, '--json', '--limit', '10', '--min-confidence', '0']);
          latency.daemon.push(r.ms);
          rows.push({ category: q.category, ...score(q, turnsOf(JSON.parse(r.out))) });
          if (++i % 200 === 0) log(`  ${i}/${questions.length}`);
        }
      } finally {
        cli(dir, ['daemon', 'stop']);
      }
      for (const [j, q] of questions.slice(0, o.sample).entries()) {
        if (j % 4 === 0) latency.directFloor.push(nodeOnce());
        latency.direct.push(cli(dir, ['query', q.text, '--json', '--limit', '10', '--min-confidence', '0'], { BASS_AGENTS_NO_DAEMON: '1' }).ms);
      }
    }
    const floor = o.mode === 'cli' ? quantile(latency.floor, 0.5) : NaN;
    const lat = (xs, floors) => (xs.length ? { p50_ms: Math.round(quantile(xs, 0.5)), p95_ms: Math.round(quantile(xs, 0.95)), p50_vs_node: Math.round((quantile(xs, 0.5) / quantile(floors, 0.5)) * 100) / 100 } : null);
    const result = {
      data: o.data,
      split: o.split,
      order: o.shuffle ? `shuffled (seed ${o.seed})` : 'conversation',
      conversations: convs.map((c) => c.sample_id),
      mode: o.mode,
      turns,
      skipped,
      questions: questions.length,
      ...summarize(rows),
      semantic: semanticStatus,
      latency: o.mode === 'cli' ? { node_e0_p50_ms: Math.round(floor), daemon: lat(latency.daemon, latency.floor), direct: lat(latency.direct, latency.directFloor) } : null,
    };
    const s = result.overall;
    process.stdout.write(`split ${o.split} (${result.conversations.join(', ')}), ${result.questions} questions, mode ${o.mode}, ingest order ${result.order}\n`);
    process.stdout.write(`overall      R@5 ${s.recall_at_5}  R@10 ${s.recall_at_10}  hit@10 ${s.hit_at_10}  MRR ${s.mrr}\n`);
    for (const [c, v] of Object.entries(result.by_category)) process.stdout.write(`${c.padEnd(12)} R@5 ${v.recall_at_5}  R@10 ${v.recall_at_10}  (n=${v.n})\n`);
    if (result.latency) {
      const l = result.latency;
      process.stdout.write(`latency      node -e 0 p50 ${l.node_e0_p50_ms} ms; daemon p50 ${l.daemon?.p50_ms} ms (${l.daemon?.p50_vs_node}×) p95 ${l.daemon?.p95_ms}; without daemon p50 ${l.direct?.p50_ms} ms (${l.direct?.p50_vs_node}×) p95 ${l.direct?.p95_ms}\n`);
    }
    if (semanticStatus) process.stdout.write(`semantic     ${JSON.stringify(semanticStatus)}\n`);
    if (o.json) writeFileSync(o.json, JSON.stringify(result, null, 2) + '\n');
  } finally {
    if (!o.keep) rmSync(dir, { recursive: true, force: true });
    else process.stderr.write(`workspace kept: ${dir}\n`);
  }
}

main().catch((e) => {
  process.stderr.write(`eval-retrieval: ${e.message}\n`);
  process.exit(1);
});

#!/usr/bin/env node
// `npm run bench:peer [-- --sizes 1000 --json]`
//
// A peer side by side on the same data: the official MCP memory server
// (@modelcontextprotocol/server-memory) and `bass-agents memory mcp`, both as real server
// processes driven through the MCP SDK client over stdio. Each gets the same generated entries
// (theirs as entities with observations, ours as Memory_Update creates), written in batches of
// 100, then the same searches. Reported: write time per batch, search latency (p50, p99) and how
// many results each search returned.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN, env, makeEntry } from './data.js';

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const asJson = args.includes('--json');
const sizesArg = args.includes('--sizes') ? args[args.indexOf('--sizes') + 1] : '1000';
const sizes = sizesArg.split(',').map(Number);
const QUERIES = ['invoice retry', 'kafka offset', 'cache latency', 'deploy rollback canary', 'auth token session', 'flaky test', 'postgres migration schema', 'memory leak'];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const round = (x) => Math.round(x * 100) / 100;

async function connect(command, cmdArgs, cwd, extraEnv) {
  const client = new Client({ name: 'bench-peer', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command, args: cmdArgs, cwd, env: { ...env, ...extraEnv }, stderr: 'ignore' }));
  return client;
}

async function timeCall(client, name, a) {
  const t = performance.now();
  const r = await client.callTool({ name, arguments: a });
  if (r.isError) throw new Error(`${name}: ${r.content?.[0]?.text}`);
  return { ms: performance.now() - t, r };
}

const results = [];
for (const n of sizes) {
  const entries = Array.from({ length: n }, (_, i) => makeEntry(i));
  // --- the official MCP memory server
  {
    const dir = mkdtempSync(join(tmpdir(), 'bass-agents-peer-'));
    const server = require.resolve('@modelcontextprotocol/server-memory/dist/index.js');
    const c = await connect(process.execPath, [server], dir, { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') });
    const writes = [];
    for (let i = 0; i < n; i += 100) {
      const batch = entries.slice(i, i + 100).map((e) => ({ name: e.id, entityType: e.section, observations: [e.summary, e.content] }));
      writes.push((await timeCall(c, 'create_entities', { entities: batch })).ms);
    }
    const searches = [];
    const counts = [];
    for (let k = 0; k < 24; k++) {
      const { ms, r } = await timeCall(c, 'search_nodes', { query: QUERIES[k % QUERIES.length] });
      searches.push(ms);
      const graph = r.structuredContent ?? JSON.parse(r.content[0].text);
      counts.push(graph.entities.length);
    }
    await c.close();
    rmSync(dir, { recursive: true, force: true });
    results.push({ size: n, server: '@modelcontextprotocol/server-memory', write_batch_of_100_ms_p50: round(pct(writes, 50)), write_total_ms: round(writes.reduce((a, b) => a + b, 0)), search_ms_p50: round(pct(searches, 50)), search_ms_p99: round(pct(searches, 99)), results_per_search_p50: pct(counts, 50), note: 'substring match on names, types and observations; every match, unranked' });
  }
  // --- bass-agents memory mcp
  {
    const dir = mkdtempSync(join(tmpdir(), 'bass-agents-peer-'));
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir, env });
    execFileSync('git', ['config', 'user.name', 'Bench'], { cwd: dir, env });
    execFileSync('git', ['config', 'user.email', 'bench@example.com'], { cwd: dir, env });
    const c = await connect(process.execPath, [BIN, 'memory', 'mcp', '--project', 'bench'], dir, {});
    const writes = [];
    for (let i = 0; i < n; i += 100) {
      const updates = entries.slice(i, i + 100).map((e) => ({
        operation: 'create',
        entry: { section: e.section, kind: e.kind, subject: e.subject, scope: e.scope, summary: e.summary, content: e.content, tags: e.tags, confidence: e.confidence, evidence: e.evidence },
      }));
      writes.push((await timeCall(c, 'memory_apply', { updates })).ms);
    }
    const searches = [];
    const counts = [];
    for (let k = 0; k < 24; k++) {
      const { ms, r } = await timeCall(c, 'memory_query', { query: QUERIES[k % QUERIES.length], status: 'any', min_confidence: 0, limit: 50, max_chars: 1_000_000 });
      searches.push(ms);
      counts.push(r.structuredContent.total);
    }
    await c.close();
    rmSync(dir, { recursive: true, force: true });
    results.push({ size: n, server: 'bass-agents memory mcp', write_batch_of_100_ms_p50: round(pct(writes, 50)), write_total_ms: round(writes.reduce((a, b) => a + b, 0)), search_ms_p50: round(pct(searches, 50)), search_ms_p99: round(pct(searches, 99)), results_per_search_p50: pct(counts, 50), note: 'validated, secret-scanned, one git commit per batch; ranked, at most 50 results' });
  }
}

if (asJson) console.log(JSON.stringify({ results }, null, 2));
else {
  const header = ['size', 'server', 'write 100 (p50)', 'write all', 'search p50', 'search p99', 'results/search'];
  const rows = results.map((r) => [String(r.size), r.server, `${r.write_batch_of_100_ms_p50} ms`, `${r.write_total_ms} ms`, `${r.search_ms_p50} ms`, `${r.search_ms_p99} ms`, String(r.results_per_search_p50)]);
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const r of [header, ...rows]) console.log(r.map((c, i) => c.padEnd(w[i])).join('  '));
}

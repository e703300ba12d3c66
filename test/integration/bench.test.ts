import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The benchmark harness itself is tested: a --quick run must produce every figure. It asserts
// nothing about timings (speed is measured, never asserted), so a store of 200 entries serves as
// well as the 1,000 of a quick run by hand: every figure is taken the same way at any size.
describe('npm run bench -- --quick', () => {
  it('produces every figure with its floor', () => {
    const r = spawnSync(process.execPath, [resolve(__dirname, '../../bench/run.js'), '--quick', '--sizes', '200', '--json'], {
      encoding: 'utf8',
      timeout: 600_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const { machine, results } = JSON.parse(r.stdout);
    expect(machine.cpus).toBeGreaterThan(0);
    const figures = results.map((x: { figure: string }) => x.figure);
    for (const f of [
      'node -e 0',
      'floor: read+parse all entry files',
      'floor: substring scan of all files',
      'floor: bare git commit (plumbing)',
      'floor: git add + git commit of one file',
      'index build (in process)',
      'index snapshot load (in process)',
      'query end to end, cold process (p50)',
      'query warm in process p50',
      'query warm in process p99',
      'create one entry end to end (p50)',
      'apply 100 updates end to end',
      'stats warm in process (incremental, p50)',
      'stats with a date range (scan, p50)',
      'floor: read+parse all entry files, new process end to end',
      'decay pass, all entries (in process, p50)',
      'daemon start to first answer',
      'daemon start to start-up jobs done',
      'query end to end through the daemon (p50)',
      'create one entry through the daemon (p50)',
      'edit -> searchable through the daemon (p50)',
      'edit -> searchable through the daemon (p99)',
      'daemon resident memory',
      'daemon peak resident memory, first start with no local state (index build, vectors, start-up jobs)',
      'daemon peak resident memory, start with local state',
      'embedding throughput, static table (in process)',
      'daemon start to a vector for every entry (default settings)',
      'query end to end through the daemon, semantic on (p50)',
      'daemon resident memory, semantic on (every vector held; peak while embedding)',
    ]) {
      expect(figures, f).toContain(f);
    }
    // Concurrent writers: every acknowledged write is in the tree.
    expect(figures.find((f: string) => f.startsWith('writes/s, 8 writers through the daemon'))).toMatch(/\(32 writes, 0 lost\)/);
    for (const x of results) expect(Number.isFinite(x.value), x.figure).toBe(true);
    // The harness bounds its own run; no limit here that a busy machine could break.
  }, 600_000);
});

describe('npm run bench:peer', () => {
  it('measures both servers on the same data', () => {
    const r = spawnSync(process.execPath, [resolve(__dirname, '../../bench/peer.js'), '--sizes', '200', '--json'], { encoding: 'utf8', timeout: 600_000 });
    expect(r.status, r.stderr).toBe(0);
    const { results } = JSON.parse(r.stdout);
    expect(results.map((x: { server: string }) => x.server)).toEqual(['@modelcontextprotocol/server-memory', 'bass-agents memory mcp']);
    for (const x of results) for (const k of ['write_batch_of_100_ms_p50', 'search_ms_p50', 'search_ms_p99']) expect(Number.isFinite(x[k]), k).toBe(true);
    // The harness bounds its own run; no limit here that a busy machine could break.
  }, 600_000);
});

// Local usage: the retrieval log is folded into usage.json by the reader that finds it large,
// one process at a time, and no count is lost on the way.
import { existsSync, mkdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageStore } from '../../src/store/usage.js';
import { Workspace } from '../../src/store/workspace.js';
import { testdir, stateDir } from '../helpers/repo.js';

describe('UsageStore', () => {
  it('folds a large retrieval log into the snapshot when reading, keeping every count', () => {
    const dir = testdir();
    mkdirSync(join(dir, 'ai-memory')); // a workspace: its local state may be written
    const ws = new Workspace(dir);
    const usage = new UsageStore(ws);
    const keys = Array.from({ length: 50 }, (_, i) => `p/ENTRY${String(i).padStart(22, '0')}`);
    // ~2,000 queries' worth of lines (each names 50 results): past the fold threshold.
    for (let q = 0; q < 200; q++) usage.recordRetrievals(keys, `2026-01-01T00:00:${String(q % 60).padStart(2, '0')}Z`);
    const log = join(stateDir(dir), 'state/retrievals.jsonl');
    expect(statSync(log).size).toBeGreaterThan(256 * 1024);
    const got = new UsageStore(ws).load();
    expect(existsSync(log)).toBe(false);
    const key = keys[7]!; // one of 50
    expect(got.get(key)).toEqual({ retrievals: 200, last_accessed_at: '2026-01-01T00:00:59Z' });
    // Later lines fold over the snapshot as before.
    usage.recordRetrievals([key], '2026-01-02T00:00:00Z');
    expect(new UsageStore(ws).load().get(key)).toEqual({ retrievals: 201, last_accessed_at: '2026-01-02T00:00:00Z' });
  });

  it('leaves the log alone while another process holds the fold lock, and takes over a stale lock', () => {
    const dir = testdir();
    mkdirSync(join(dir, 'ai-memory')); // a workspace: its local state may be written
    const ws = new Workspace(dir);
    const usage = new UsageStore(ws);
    usage.recordRetrievals(['p/A'], '2026-01-01T00:00:00Z');
    const lock = join(stateDir(dir), 'state/usage.lock');
    writeFileSync(lock, '');
    expect(usage.compact()).toBe(false);
    expect(existsSync(join(stateDir(dir), 'state/retrievals.jsonl'))).toBe(true);
    expect(usage.load().get('p/A')?.retrievals).toBe(1);
    // A lock left by a process that died: the next attempt clears it, the one after folds.
    const old = new Date(Date.now() - 120_000);
    utimesSync(lock, old, old);
    expect(usage.compact()).toBe(false);
    expect(existsSync(lock)).toBe(false);
    expect(usage.compact()).toBe(true);
    expect(new UsageStore(ws).load().get('p/A')?.retrievals).toBe(1);
  });
});

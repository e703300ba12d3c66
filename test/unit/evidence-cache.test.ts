// The evidence cache: stale keys read alone by one-shot queries, anchor records found by binary search.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EvidenceCache } from '../../src/store/evidence-cache.js';
import { Workspace } from '../../src/store/workspace.js';
import { testdir, stateDir } from '../helpers/repo.js';

describe('EvidenceCache', () => {
  it('answers staleKeys from its own small file; a file of another version or a corrupt one is not believed', () => {
    const dir = testdir();
    const ws = new Workspace(dir);
    const check = { status: 'stale' as const, reason: 'gone', checked_at: '2026-01-01T00:00:00Z' };
    new EvidenceCache(ws).save({ checks: { 'src/a.ts': check }, stale: { 'p/A': ['src/a.ts: gone'], 'p/B': ['src/a.ts: gone'] } });
    const small = join(stateDir(dir), 'cache/evidence-stale.json');
    expect(Object.keys(JSON.parse(readFileSync(small, 'utf8')).stale)).toEqual(['p/A', 'p/B']);
    expect([...new EvidenceCache(ws).staleKeys()].sort()).toEqual(['p/A', 'p/B']);
    expect(new EvidenceCache(ws).load().checks).toEqual({ 'src/a.ts': check });

    writeFileSync(small, JSON.stringify({ of: '1:2', keys: ['p/C'] })); // an earlier layout: rewritten by the next check
    expect([...new EvidenceCache(ws).staleKeys()]).toEqual([]);
    writeFileSync(small, '{ broken');
    expect([...new EvidenceCache(ws).staleKeys()]).toEqual([]);
    rmSync(small);
    expect([...new EvidenceCache(ws).staleKeys()]).toEqual([]);
    expect(new EvidenceCache(ws).load().checks).toEqual({ 'src/a.ts': check });
  });

  it('one long-lived instance reads the summary once per version of the cache, and sees a new version', () => {
    const dir = testdir();
    const ws = new Workspace(dir);
    const check = { status: 'stale' as const, reason: 'gone', checked_at: '2026-01-01T00:00:00Z' };
    const writer = new EvidenceCache(ws);
    writer.save({ checks: { 'src/a.ts': check }, stale: { 'p/A': ['gone'] } });
    const reader = new EvidenceCache(ws);
    const first = reader.staleKeys();
    expect([...first]).toEqual(['p/A']);
    expect(reader.staleKeys()).toBe(first); // no re-read while evidence.json is unchanged
    writer.save({ checks: { 'src/a.ts': check, 'src/b.ts': check }, stale: { 'p/A': ['gone'], 'p/B': ['gone too'] } });
    expect([...reader.staleKeys()].sort()).toEqual(['p/A', 'p/B']);
  });

  it('finds the anchor records of each entry by binary search over the sorted file, and sees a new version', () => {
    const ws = new Workspace(testdir());
    const rec = (uri: string) => ({ uri, status: 'current' as const, path: uri });
    const keys = Array.from({ length: 200 }, (_, i) => `p${i % 3}/${String((i * 7919) % 1000).padStart(4, '0')}`);
    new EvidenceCache(ws).saveAnchors(new Map(keys.map((k) => [k, [rec(`src/${k}.ts`)]])));
    const reader = new EvidenceCache(ws);
    for (const k of keys) expect(reader.anchorsOf(k)?.get(`src/${k}.ts`)).toEqual(rec(`src/${k}.ts`));
    for (const k of ['p0/', 'p9/0001', '', 'zzz']) expect(reader.anchorsOf(k)).toBeUndefined();
    new EvidenceCache(ws).saveAnchors(new Map([['p0/x', [rec('a.ts')]]]));
    expect(reader.anchorsOf(keys[0]!)).toBeUndefined();
    expect(reader.anchorsOf('p0/x')?.get('a.ts')).toEqual(rec('a.ts'));
  });
});

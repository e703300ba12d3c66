import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SearchIndex, reachableTerms } from '../../src/index/search-index.js';
import type { MemoryEntry } from '../../src/core/schema.js';

const WORDS = 'invoice invoices invoicing retry retries retried kafka offset offsets cache cached latency deploy deployment rollback canary auth token tokens session sessions flaky test tests postgres migration migrations schema memory leak ledger billing'.split(' ');
let seed = 7;
const rand = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const words = (n: number): string => Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');

function doc(i: number, version = 0): { key: string; stamp: string; load: () => MemoryEntry } {
  const e = {
    id: `E${i}`, section: 'learnings', kind: 'other', subject: `billing.part${i % 5}`, scope: 'repo', summary: words(8), content: words(40),
    tags: [WORDS[i % WORDS.length]!], confidence: 0.8, evidence: [], status: 'active', superseded_by: null, related_entries: [],
    valid_from: null, valid_to: null, created_by: 't', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z',
  } as unknown as MemoryEntry;
  return { key: `p/E${i}`, stamp: `s${i}:${version}`, load: () => e };
}

const QUERIES = ['invoice retry', 'kafka', 'invoicing', 'invoise', 'migrations schema', 'tok', 'leak memory ledger', 'nothing-here', 'deploymnet rollback'];

const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'bass-agents-index-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('SearchIndex snapshot', () => {
  it('a partial load for one text gives exactly the scores of the whole index, also after changes', () => {
    const dir = tempDir();
    const file = join(dir, 'index.bin');
    const docs = Array.from({ length: 300 }, (_, i) => doc(i));
    const full = SearchIndex.empty();
    full.sync(docs);
    expect(full.save(file)).toBe(true);
    // Files changed after the snapshot: 5 replaced, 3 removed, 4 added.
    const later = [...docs.slice(0, 295).map((d, i) => (i < 5 ? doc(i, 1) : d)).filter((_, i) => i < 290 || i > 292), ...Array.from({ length: 4 }, (_, i) => doc(1000 + i))];
    const whole = SearchIndex.load(file).index;
    whole.sync(later);
    for (const q of QUERIES) {
      const partial = SearchIndex.loadFor(file, q)!;
      expect(partial.partial).toBe(true);
      expect(partial.drift(later)).toBe(5 + 5 + 4 + 3);
      partial.sync(later);
      const a = [...partial.search(q)].sort();
      const b = [...whole.search(q)].sort();
      expect(a.length, q).toBe(b.length);
      for (let i = 0; i < a.length; i++) {
        expect(a[i]![0]).toBe(b[i]![0]);
        expect(a[i]![1]).toBeCloseTo(b[i]![1], 10);
      }
      expect(partial.save(file)).toBe(false);
    }
  });

  it('reaches exact, prefix and fuzzy terms by the index rules', () => {
    const terms = ['cache', 'cached', 'caches', 'invoice', 'invoices', 'invoicing', 'retry', 'tok', 'token', 'tokens'].sort();
    const got = (q: string): string[] => [...reachableTerms(terms, q)].map((i) => terms[i]!).sort();
    expect(got('tok')).toEqual(['tok', 'token', 'tokens']);
    expect(got('to')).toEqual([]); // no prefix search under 3 characters, no exact term
    expect(got('invoise')).toEqual(['invoice']); // fuzzy within round(7 × 0.15) = 1 edit; invoices is 2 away
    expect(got('Cache')).toEqual(['cache', 'cached', 'caches']);
  });

  it('treats a corrupt or foreign snapshot as missing', () => {
    const dir = tempDir();
    const file = join(dir, 'index.bin');
    writeFileSync(file, '{ not a snapshot');
    expect(SearchIndex.loadFor(file, 'x')).toBeNull();
    expect(SearchIndex.load(file).loaded).toBe(false);
    writeFileSync(file, 'BASS-AGENTS-INDEX\n99999\n{}');
    expect(SearchIndex.loadFor(file, 'x')).toBeNull();
    expect(SearchIndex.load(file).loaded).toBe(false);
    // A real snapshot cut short (a full disk, a crash mid-copy) is refused too, never half-read.
    const idx = SearchIndex.empty();
    idx.sync(Array.from({ length: 50 }, (_, i) => doc(i)));
    idx.save(file, true);
    expect(SearchIndex.load(file).loaded).toBe(true);
    truncateSync(file, readFileSync(file).length - 100);
    expect(SearchIndex.loadFor(file, 'invoice')).toBeNull();
    expect(SearchIndex.load(file).loaded).toBe(false);
  });

  it('streams the postings from MiniSearch\'s maps: the same bytes as through its toJSON', () => {
    const dir = tempDir();
    const idx = SearchIndex.empty();
    idx.sync(Array.from({ length: 200 }, (_, i) => doc(i)));
    idx.sync([...Array.from({ length: 190 }, (_, i) => doc(i, i < 7 ? 1 : 0))]); // replaced and discarded documents too
    idx.save(join(dir, 'a.bin'), true);
    idx.save(join(dir, 'b.bin'), true, { viaToJSON: true });
    expect(readFileSync(join(dir, 'a.bin')).equals(readFileSync(join(dir, 'b.bin')))).toBe(true);
    const back = SearchIndex.load(join(dir, 'a.bin'));
    expect(back.loaded).toBe(true);
    expect(back.index.size).toBe(190);
    expect([...back.index.search('invoice retry')]).toEqual([...idx.search('invoice retry')]);
  });

  it('rawHits gives the scores of search, addressed by the internal document numbers', () => {
    const idx = SearchIndex.empty();
    idx.sync(Array.from({ length: 200 }, (_, i) => doc(i)));
    idx.sync(Array.from({ length: 190 }, (_, i) => doc(i, i < 9 ? 1 : 0)));
    for (const q of QUERIES) {
      const viaSearch = idx.search(q);
      const raw = idx.rawHits(q)!;
      expect(raw.length, q).toBe(viaSearch.size);
      const byKey = new Map(Array.from({ length: 1000 }, (_, i) => `p/E${i}`).map((k) => [idx.sidOf(k), k] as const));
      for (const h of raw) expect(h.score, q).toBe(viaSearch.get(byKey.get(h.sid)!));
    }
  });
});

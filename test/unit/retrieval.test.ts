// The parts of text relevance before the priors: the analyzer, score fusion, the context lift,
// and the vector cache.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CONTEXT_LIFT, contextLifts, episodeKey, fuse } from '../../src/core/retrieval.js';
import { SearchIndex } from '../../src/index/search-index.js';
import { processTerm, queryTokenize } from '../../src/index/options.js';
import { VectorStore, textHash } from '../../src/index/vectors.js';
import type { MemoryEntry } from '../../src/core/schema.js';
import { storedEntry } from '../helpers/stored.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const entry = (id: string, summary: string): MemoryEntry => storedEntry({ id, summary });

function indexOf(summaries: Record<string, string>): SearchIndex {
  const ix = SearchIndex.empty();
  ix.sync(Object.entries(summaries).map(([id, s]) => ({ key: `p/${id}`, stamp: id, load: () => entry(id, s) })));
  return ix;
}

describe('the analyzer', () => {
  it('drops stopwords from a query, unless nothing else is left', () => {
    expect(queryTokenize('What did the team decide about caching?')).toEqual(['team', 'decide', 'caching']);
    expect(queryTokenize('what is this')).toEqual(['what', 'is', 'this']);
  });

  it('stems English words on both sides, and keeps identifiers with digits as they are', () => {
    expect(processTerm('Deploying')).toBe(processTerm('deployed'));
    expect(processTerm('deploys')).toBe(processTerm('deploying'));
    expect(processTerm('retries')).toBe(processTerm('retry'));
    expect(processTerm('v2api')).toBe('v2api');
    expect(processTerm('a')).toBeNull();
    expect(processTerm('7')).toBe('7');
    const ix = indexOf({ A: 'we deployed the billing service on Fridays', B: 'the the the of of and to is' });
    expect([...ix.search('deploying billing').keys()]).toEqual(['p/A']);
  });

  it('scores by content words: an entry full of function words does not win', () => {
    const ix = indexOf({
      A: 'the cache of the service is where the team did what they had to do',
      B: 'cache eviction uses LRU',
    });
    const hits = [...ix.search('what did the team use for the cache eviction').entries()].sort((a, b) => b[1] - a[1]);
    expect(hits[0][0]).toBe('p/B');
  });
});

describe('score fusion', () => {
  it('weighs the scaled similarity and the lexical score; an entry without a vector keeps its lexical score', () => {
    expect(fuse(1, 0.9, 0.1, 0.9)).toBeCloseTo(1);
    expect(fuse(0, 0.5, 0.1, 0.9)).toBeCloseTo(0.25);
    expect(fuse(0.4, undefined, 0.1, 0.9)).toBe(0.4);
    expect(fuse(0.4, 0.3, 0.3, 0.3)).toBeCloseTo(0.2); // one similarity: no spread to scale by
  });
});

describe('the context lift', () => {
  const items = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
  const rel: Record<string, number> = { a: 0, b: 0, c: 0, d: 1, e: 0.1, f: 0, g: 0, h: 0.2 };
  const r = (i: number): number => rel[items[i]];
  const episode = items.slice(0, 7); // h is in another episode
  const ep = (hits: readonly string[]): (readonly string[] | undefined)[] => hits.map((h) => (h === 'h' ? ['h'] : episode));

  it('lifts the neighbours within two places of the best hits, each by its best lift', () => {
    const lifts = contextLifts(items, r, ep, (x) => rel[x]);
    const by = Object.fromEntries(lifts.map((l) => [l.item, [l.relevance, l.by]]));
    expect(Object.keys(by).sort()).toEqual(['b', 'c', 'd', 'e', 'f', 'g']);
    expect(by.d[0]).toBeCloseTo(1 + CONTEXT_LIFT * 0.1); // hits next to each other lift each other
    expect(by.c[0]).toBeCloseTo(CONTEXT_LIFT);
    expect(by.e[0]).toBeCloseTo(0.1 + CONTEXT_LIFT);
    expect(by.c[1]).toBe('d');
    expect(by.a).toBeUndefined(); // three places away
    // e itself lifts its neighbours too, less than d does
    expect(by.g[0]).toBeCloseTo(CONTEXT_LIFT * 0.1);
  });

  it('an episode of one entry lifts nothing; an episode is one batch of one subject', () => {
    expect(
      contextLifts(
        ['x'],
        () => 1,
        () => [['x']],
        () => 1,
      ),
    ).toEqual([]);
    const a = { subject: 's', created_at: '2026-01-01T00:00:00.000Z' };
    expect(episodeKey(a, 'p')).toBe(episodeKey({ ...a }, 'p'));
    expect(episodeKey(a, 'p')).not.toBe(episodeKey({ ...a, created_at: '2026-01-01T00:00:00.001Z' }, 'p'));
    expect(episodeKey(a, 'p')).not.toBe(episodeKey(a, 'q'));
  });
});

describe('the vector cache', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bass-agents-vectors-'));
  dirs.push(dir);
  const file = join(dir, 'vectors.bin');
  const unit = (i: number): Float32Array => {
    const v = new Float32Array(4);
    v[i % 4] = 1;
    return v;
  };

  it('saves and loads rows; a row is current by stamp, or by the hash of its text after the stamp moved', () => {
    const s = new VectorStore('m', 4);
    for (let i = 0; i < 100; i++) s.put(`p/${i}`, `s${i}`, textHash(`text ${i}`), unit(i));
    s.retain((k) => k !== 'p/5');
    expect(s.save(file)).toBe(true);
    expect(s.save(file)).toBe(false); // nothing changed
    const t = VectorStore.load(file, 'm', 4);
    expect(t.size).toBe(99);
    expect(t.has('p/5')).toBe(false);
    expect(t.similarity(unit(2))('p/6')).toBe(1);
    expect(t.similarity(unit(2))('p/7')).toBe(0);
    expect(t.similarity(unit(2))('p/5')).toBeUndefined();
    expect(t.isCurrent('p/6', 's6', () => 'never asked')).toBe(true);
    expect(t.isCurrent('p/6', 'moved', () => textHash('text 6'))).toBe(true);
    expect(t.isCurrent('p/6', 'moved again', () => textHash('new text'))).toBe(false);
  });

  it('ignores a file of another model, another size, or a broken one', () => {
    expect(VectorStore.load(file, 'other', 4).size).toBe(0);
    expect(VectorStore.load(file, 'm', 8).size).toBe(0);
    writeFileSync(join(dir, 'broken.bin'), 'BASS-AGENTS-VECTORS-1\n000000000099\n{"model":');
    expect(VectorStore.load(join(dir, 'broken.bin'), 'm', 4).size).toBe(0);
    expect(VectorStore.load(join(dir, 'missing.bin'), 'm', 4).size).toBe(0);
    expect(() => new VectorStore('m', 4).put('k', 's', 'h', new Float32Array(3))).toThrow(/3 dimensions/);
  });
});

import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import MiniSearch from 'minisearch';
import { INDEX_OPTIONS, SearchIndex, reachableTerms } from '../../src/index/search-index.js';
import { processTerm } from '../../src/index/options.js';
import { PostingScorer } from '../../src/index/scorer.js';
import type { MemoryEntry } from '../../src/core/schema.js';
import { storedEntry } from '../helpers/stored.js';

const WORDS =
  'invoice invoices invoicing retry retries retried kafka offset offsets cache cached latency deploy deployment rollback canary auth token tokens session sessions flaky test tests postgres migration migrations schema memory leak ledger billing'.split(
    ' ',
  );
let seed = 7;
const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const words = (n: number): string => Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');

function doc(i: number, version = 0): { key: string; stamp: string; load: () => MemoryEntry } {
  const e = storedEntry({
    id: `E${i}`,
    subject: `billing.part${i % 5}`,
    summary: words(8),
    content: words(40),
    tags: [WORDS[i % WORDS.length]],
  });
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
    const later = [
      ...docs
        .slice(0, 295)
        .map((d, i) => (i < 5 ? doc(i, 1) : d))
        .filter((_, i) => i < 290 || i > 292),
      ...Array.from({ length: 4 }, (_, i) => doc(1000 + i)),
    ];
    const whole = SearchIndex.load(file).index;
    whole.sync(later);
    for (const q of QUERIES) {
      const partial = SearchIndex.loadFor(file, q)!;
      expect(partial.partial).toBe(true);
      expect(partial.drift(later)).toBe(5 + 5 + 4 + 3);
      partial.sync(later);
      // What a one-shot query reads: rawHits of the partial index, keyed back.
      const raw = partial.rawHits(q)!;
      const viaRaw = new Map([...raw.sids].map((sid, i) => [partial.keyOf(sid)!, raw.scores[i]]));
      expect(viaRaw, q).toEqual(partial.search(q));
      const a = [...partial.search(q)].sort();
      const b = [...whole.search(q)].sort();
      expect(a.length, q).toBe(b.length);
      for (let i = 0; i < a.length; i++) {
        expect(a[i][0]).toBe(b[i][0]);
        expect(a[i][1]).toBeCloseTo(b[i][1], 10);
      }
      expect(partial.save(file)).toBe(false);
    }
  });

  it('reaches exact, prefix and fuzzy terms by the index rules', () => {
    // The vocabulary holds stems (cach, invoic, retri, tok, token), as the index does.
    const terms = [...new Set(['cache', 'cached', 'invoice', 'invoicing', 'retry', 'tok', 'tokens', 'tokenizer'].map((w) => processTerm(w)!))].sort();
    const got = (q: string): string[] => [...reachableTerms(terms, q)].map((i) => terms[i]).sort();
    expect(got('tok')).toEqual(['tok', 'token']);
    expect(got('to')).toEqual([]); // no prefix search under 3 characters, no exact term
    expect(got('invoise')).toEqual(['invoic']); // stem invois: fuzzy within round(6 × 0.15) = 1 edit
    expect(got('Caches')).toEqual(['cach']);
    expect(got('the retries')).toEqual(['retri']); // the stopword is not searched
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

  it("streams the postings from MiniSearch's maps: the same bytes as through its toJSON", () => {
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

  it('rawHits gives the scores of search, addressed by the internal document numbers', async () => {
    const idx = SearchIndex.empty();
    idx.sync(Array.from({ length: 200 }, (_, i) => doc(i)));
    idx.sync(Array.from({ length: 190 }, (_, i) => doc(i, i < 9 ? 1 : 0)));
    const byKey = new Map(Array.from({ length: 1000 }, (_, i) => `p/E${i}`).map((k) => [idx.sidOf(k), k] as const));
    const check = (): void => {
      for (const q of QUERIES) {
        const viaSearch = idx.search(q);
        const raw = idx.rawHits(q)!;
        expect(raw.sids.length, q).toBe(viaSearch.size);
        raw.sids.forEach((sid, i) => expect(raw.scores[i], q).toBe(viaSearch.get(byKey.get(sid)!)));
      }
    };
    check();
    // With a vacuum deferred, discarded documents still have postings (MiniSearch drops them a
    // little at each search, so two of its searches can score differently): rawHits gives at once
    // the scores of the vacuumed index, and queries change nothing.
    idx.sync(
      Array.from({ length: 180 }, (_, i) => doc(i, i < 3 ? 2 : i < 9 ? 1 : 0)),
      undefined,
      { deferVacuum: true },
    );
    for (let i = 0; i < 180; i++) byKey.set(idx.sidOf(`p/E${i}`), `p/E${i}`);
    const before = QUERIES.map((q) => idx.rawHits(q)!);
    expect(QUERIES.map((q) => idx.rawHits(q)!)).toEqual(before);
    expect(idx.vacuumIfDeferred()).toBe(true);
    await new Promise((r) => setImmediate(r)); // queued behind the vacuum of the sync above, in the same tick
    expect(QUERIES.map((q) => idx.rawHits(q)!)).toEqual(before);
    check();
  });
});

describe('PostingScorer', () => {
  const docs = Array.from({ length: 400 }, (_, i) => {
    const d = doc(i).load();
    return {
      key: `p/E${i}`,
      summary: d.summary,
      content: `${d.content} v${i % 13} 42 x`,
      subject: d.subject,
      tags: d.tags.join(' '),
      kind: d.kind,
      scope: d.scope,
    };
  });
  const shapes = [
    ...QUERIES,
    'cache cache latency', // a repeated term counts once in "terms matched", twice in the score
    'invoic invoices', // prefix and fuzzy reach the same derived terms
    'retr tok ses', // prefixes only
    'deploymnet', // fuzzy only
    'v7 42 x', // digits pass term processing; single letters do not
    'billing.part3 learnings other repo', // subject, kind, scope fields
    '',
    'zzzz qqqq',
  ];

  it("gives bit for bit the scores of MiniSearch's own query, and the same hits", () => {
    const ms = new MiniSearch(INDEX_OPTIONS);
    ms.addAll(docs);
    for (let i = 0; i < 40; i++) ms.replace({ ...docs[i], content: `${docs[i].content} invoice invoice retry` });
    for (let i = 40; i < 60; i++) ms.discard(docs[i].key);
    void ms.vacuum({ batchSize: Number.POSITIVE_INFINITY }); // synchronous up to its end with one batch
    const scorer = new PostingScorer();
    const inner = ms as unknown as { executeQuery: (q: string, o: object) => Map<number, { score: number; terms: string[] }> };
    for (const q of shapes) {
      const got = scorer.score(ms as unknown as MiniSearch<unknown>, q);
      expect(got, q).not.toBeNull();
      const want = inner.executeQuery(q, {});
      expect(got!.sids.length, q).toBe(want.size);
      got!.sids.forEach((sid, i) => {
        const w = want.get(sid)!;
        expect(w, q).toBeDefined();
        expect(got!.scores[i], q).toBe(w.score * w.terms.length);
      });
    }
    // Without the field-length table (a one-shot query's partial index), the same bits.
    for (const q of shapes) {
      const dense = scorer.score(ms as unknown as MiniSearch<unknown>, q)!;
      const mapped = new PostingScorer().score(ms as unknown as MiniSearch<unknown>, q, { denseLengths: false })!;
      expect([...mapped.sids], q).toEqual([...dense.sids]);
      expect([...mapped.scores], q).toEqual([...dense.scores]);
    }
    // Work arrays are reused from one query to the next without leaking scores.
    const again = scorer.score(ms as unknown as MiniSearch<unknown>, 'kafka')!;
    const fresh = new PostingScorer().score(ms as unknown as MiniSearch<unknown>, 'kafka')!;
    expect([...again.scores]).toEqual([...fresh.scores]);
  });

  it('scores around discarded postings as the vacuumed index will; declines term boosts, AND, many terms', () => {
    const ms = new MiniSearch(INDEX_OPTIONS);
    ms.addAll(docs);
    for (const i of [5, 17, 200]) ms.discard(docs[i].key); // not vacuumed: their postings are still there
    const scorer = new PostingScorer();
    const unvacuumed = shapes.map((q) => scorer.score(ms as unknown as MiniSearch<unknown>, q)!);
    void ms.vacuum({ batchSize: Number.POSITIVE_INFINITY });
    const vacuumed = shapes.map((q) => new PostingScorer().score(ms as unknown as MiniSearch<unknown>, q)!);
    expect(unvacuumed).toEqual(vacuumed);
    expect(vacuumed.some((h) => h.sids.length > 100)).toBe(true);
    // Discarded documents whose postings a text does not reach do not get in its way.
    const other = new MiniSearch(INDEX_OPTIONS);
    other.addAll([...docs.slice(0, 30), ...docs.slice(30, 60).map((d) => ({ ...d, content: `${d.content} zebra` }))]);
    other.discard(docs[3].key);
    const z = scorer.score(other as unknown as MiniSearch<unknown>, 'zebra')!;
    expect(z.sids.length).toBe(30);
    const zm = (other as unknown as { executeQuery: (q: string, o: object) => Map<number, { score: number; terms: string[] }> }).executeQuery('zebra', {});
    z.sids.forEach((sid, i) => expect(z.scores[i]).toBe(zm.get(sid)!.score));
    const many = Array.from({ length: 32 }, (_, i) => `w${i}`).join(' ');
    expect(scorer.score(ms as unknown as MiniSearch<unknown>, many)).toBeNull();
    for (const extra of [{ boostTerm: () => 2 }, { combineWith: 'AND' as const }, { boostDocument: () => 1 }]) {
      const other = new MiniSearch({ ...INDEX_OPTIONS, searchOptions: { ...INDEX_OPTIONS.searchOptions, ...extra } });
      other.addAll(docs.slice(0, 20));
      expect(scorer.score(other as unknown as MiniSearch<unknown>, 'invoice')).toBeNull();
    }
  });
});

import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import MiniSearch, { type SearchOptions } from 'minisearch';
import { SearchIndex } from '../../src/index/search-index.js';
import { boundedDistance, reachableTerms, withinOneEdit } from '../../src/index/reachable.js';
import { INDEX_OPTIONS, processTerm } from '../../src/index/options.js';
import { PostingIndex } from '../../src/index/postings.js';
import type { MemoryEntry } from '../../src/core/schema.js';
import { storedEntry } from '../helpers/stored.js';
import { searchOf } from '../helpers/search.js';

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
    tags: [WORDS[i % WORDS.length]!],
  });
  return { key: `p/E${i}`, stamp: `s${i}:${version}`, load: () => e };
}

const QUERIES = [
  'invoice retry',
  'kafka',
  'invoicing',
  'invoise',
  'migrations schema',
  'tok',
  'leak memory ledger',
  'nothing-here',
  'deploymnet rollback',
] as const;

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
    searchOf(whole, QUERIES[0], true); // its forward table made before the sync: the sync's documents are counted in and out of it
    whole.sync(later);
    for (const q of QUERIES) {
      const partial = SearchIndex.loadFor(file, q)!;
      expect(partial.partial).toBe(true);
      expect(partial.plan(later).size).toBe(5 + 5 + 4 + 3);
      partial.sync(later);
      // With feedback too: the partial index reads its best hits' summary terms from the snapshot, and counts the synced documents in and out.
      for (const feedback of [false, true]) {
        const a = [...searchOf(partial, q, feedback)].sort();
        const b = [...searchOf(whole, q, feedback)].sort();
        expect(a.length, q).toBe(b.length);
        for (let i = 0; i < a.length; i++) {
          const [[ka, sa], [kb, sb]] = [a[i]!, b[i]!]; // i < a.length, the length of b (above)
          expect(ka).toBe(kb);
          expect(sa).toBeCloseTo(sb, 10);
        }
      }
      expect(partial.save(file)).toBe(false);
    }
  });

  it('feedback: the words the best hits share raise the weaker hits that hold them too, in a whole and a partial index alike', () => {
    const dir = tempDir();
    const file = join(dir, 'index.bin');
    const entry = (i: number, summary: string): { key: string; stamp: string; load: () => MemoryEntry } => {
      const e = storedEntry({ id: `F${i}`, subject: `s${i}`, summary, content: summary, tags: [] });
      return { key: `p/F${i}`, stamp: 's', load: () => e };
    };
    const summaries = ['kafka offset commit rebalance', 'kafka offset commit lag', 'kafka topic commit', 'kafka topic partition'];
    const fillers = [
      'postgres migration schema',
      'auth token session',
      'cache latency budget',
      'deploy canary rollback',
      'memory leak heap',
      'flaky test retry',
    ];
    const ix = SearchIndex.empty();
    ix.sync([...summaries, ...fillers].map((s, i) => entry(i, s)));
    expect(ix.save(file, true)).toBe(true);
    const q = 'kafka offset';
    const plain = searchOf(ix, q);
    expect(plain.get('p/F2')).toBe(plain.get('p/F3')); // the first pass cannot tell them apart
    for (const index of [ix, SearchIndex.load(file).index, SearchIndex.loadFor(file, q)!]) {
      const fed = searchOf(index, q, true);
      expect(fed.get('p/F2')!).toBeGreaterThan(fed.get('p/F3')!); // "commit": in both best hits' summaries
      expect(fed.get('p/F3')).toBeCloseTo(plain.get('p/F3')!, 10); // no feedback word: as it was
      expect([...fed.keys()].sort()).toEqual([...plain.keys()].sort()); // it re-scores hits, it adds none
    }
  });

  it('a snapshot saved from a catalog content is current for exactly that content: no stamps read', () => {
    const dir = tempDir();
    const file = join(dir, 'index.bin');
    const docs = Array.from({ length: 200 }, (_, i) => doc(i));
    const full = SearchIndex.empty();
    full.sync(docs);
    // The catalog's entries in another order than the index's documents, one of them not there.
    const entries = docs.map((d) => d.key).reverse();
    entries.splice(10, 1);
    expect(full.save(file, false, { id: 'content-a', posOf: (k) => (entries.includes(k) ? entries.indexOf(k) : undefined) })).toBe(true);
    const current = SearchIndex.loadFor(file, QUERIES[0], ['content-a'])!;
    expect(current.inSync).toBe(true);
    expect(current.plan([]).size).toBe(0); // no stamps: nothing to compare with
    expect(searchOf(current, QUERIES[0])).toEqual(searchOf(full, QUERIES[0]));
    const raw = current.rawHits(QUERIES[0]);
    expect(raw.sids.length).toBeGreaterThan(10);
    for (const sid of raw.sids) {
      const at = current.entryAt(sid);
      if (current.keyOf(sid) === docs[189]!.key)
        expect(at).toBeUndefined(); // the one of 200 spliced out above
      else expect(entries[at!]).toBe(current.keyOf(sid));
    }
    // Also current for a catalog known to hold the same entries as the one it was saved from.
    expect(SearchIndex.loadFor(file, QUERIES[0], ['content-z', 'content-a'])!.inSync).toBe(true);
    for (const other of [['content-b'], []]) {
      const behind = SearchIndex.loadFor(file, QUERIES[0], other)!;
      expect(behind.inSync).toBe(false);
      expect(behind.entryAt(behind.rawHits(QUERIES[0]).sids[0]!)).toBeUndefined(); // more than 10 hits, above
      expect(behind.plan(docs).size).toBe(0);
      expect(behind.plan(docs.slice(1)).size).toBe(1);
    }
    // Saved without one: never current by id.
    full.sync([...docs, doc(500)]);
    expect(full.save(file)).toBe(true);
    expect(SearchIndex.loadFor(file, QUERIES[0], ['content-a'])!.inSync).toBe(false);
  });

  it('reaches exact, prefix and fuzzy terms by the index rules', () => {
    // The vocabulary holds stems (cach, invoic, retri, tok, token), as the index does.
    const terms = [...new Set(['cache', 'cached', 'invoice', 'invoicing', 'retry', 'tok', 'tokens', 'tokenizer'].map((w) => processTerm(w)!))].sort();
    const got = (q: string): string[] => [...reachableTerms(terms, q)].map((i) => terms[i]!).sort(); // places of terms
    expect(got('tok')).toEqual(['tok', 'token']);
    expect(got('to')).toEqual([]); // no prefix search under 3 characters, no exact term
    expect(got('invoise')).toEqual(['invoic']); // stem invois: fuzzy within round(6 × 0.15) = 1 edit
    expect(got('Caches')).toEqual(['cach']);
    expect(got('the retries')).toEqual(['retri']); // the stopword is not searched
  });

  it('bounds the edit distance exactly as the plain dynamic programme does, one-edit shortcut included', () => {
    const levenshtein = (a: string, b: string): number => {
      // `!`: d is (a.length + 1) x (b.length + 1), and the loops stay inside it.
      const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
      for (let i = 1; i <= a.length; i++)
        for (let j = 1; j <= b.length; j++) d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      return d[a.length]![b.length]!;
    };
    let seed = 3;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const word = (): string => Array.from({ length: Math.floor(rand() * 9) }, () => 'abc'[Math.floor(rand() * 3)]).join('');
    for (let round = 0; round < 3000; round++) {
      const a = word();
      // Often a small edit of a, so that the bound is near.
      const b =
        rand() < 0.5 ? word() : a.slice(0, Math.floor(rand() * (a.length + 1))) + (rand() < 0.5 ? 'b' : '') + a.slice(Math.floor(rand() * (a.length + 1)));
      const d = levenshtein(a, b);
      for (const max of [1, 2, 3]) expect(boundedDistance(a, b, max), `${a} ${b} ${max}`).toBe(d <= max ? d : max + 1);
      expect(withinOneEdit(a, b)).toBe(d <= 1);
    }
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

  it('a snapshot round trip keeps every document, stamp and score; a cut or out-of-range file is refused', () => {
    const dir = tempDir();
    const file = join(dir, 'a.bin');
    const idx = SearchIndex.empty();
    idx.sync(Array.from({ length: 200 }, (_, i) => doc(i)));
    idx.sync(
      Array.from({ length: 190 }, (_, i) => doc(i, i < 7 ? 1 : 0)),
      undefined,
      { deferCompact: true },
    ); // replaced and discarded documents too
    const before = new Map(QUERIES.map((q) => [q, searchOf(idx, q)]));
    expect(idx.save(file, true)).toBe(true);
    const back = SearchIndex.load(file);
    expect(back.loaded).toBe(true);
    expect(back.index.size).toBe(190);
    expect(back.index.plan(Array.from({ length: 190 }, (_, i) => doc(i, i < 7 ? 1 : 0))).size).toBe(0);
    for (const q of QUERIES) expect(searchOf(back.index, q), q).toEqual(before.get(q));
    // A posting naming a document past the end (a flipped byte) makes the file unusable, not a crash.
    const bytes = readFileSync(file);
    // The postings start at the first multiple of 8 after the magic line, the head's length and the head.
    const head = Number(bytes.subarray(18, 30).toString('latin1'));
    bytes.writeUInt32LE(0xfffffff0, (31 + head + 7) & ~7);
    writeFileSync(file, bytes);
    expect(SearchIndex.load(file).loaded).toBe(false);
    expect(SearchIndex.loadFor(file, 'invoice retry kafka offset cache latency deploy rollback canary auth token session flaky test')).toBeNull();
  });

  it('compaction renumbers documents and bumps the generation; scores stay the same', () => {
    const idx = SearchIndex.empty();
    idx.sync(Array.from({ length: 120 }, (_, i) => doc(i)));
    idx.sync(
      Array.from({ length: 100 }, (_, i) => doc(i, i % 3 === 0 ? 1 : 0)),
      undefined,
      { deferCompact: true },
    );
    const before = new Map(QUERIES.map((q) => [q, searchOf(idx, q)]));
    const gen = idx.generation;
    expect(idx.next).toBe(120 + 34);
    idx.save(join(tempDir(), 'x.bin')); // a save compacts first
    expect(idx.generation).toBe(gen + 1);
    expect(idx.next).toBe(100);
    for (let i = 0; i < 100; i++) expect(idx.keyOf(idx.docOf(`p/E${i}`)!)).toBe(`p/E${i}`);
    expect(idx.docOf('p/E110')).toBeUndefined();
    for (const q of QUERIES) expect(searchOf(idx, q), q).toEqual(before.get(q));
  });
});

describe('PostingIndex against MiniSearch', () => {
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
    Array.from({ length: 34 }, (_, i) => `${WORDS[i % WORDS.length]}${i > 29 ? i : ''}`).join(' '), // more than 31 distinct terms
    '',
    'zzzz qqqq',
  ];
  type Exec = { executeQuery: (q: string, o: object) => Map<number, { score: number; terms: string[] }> };
  /** MiniSearch's scores by key, as `search` gives them. */
  const reference = (ms: MiniSearch, q: string, o: SearchOptions = {}): Map<string, number> => {
    const ids = (ms as unknown as { _documentIds: Map<number, string> })._documentIds;
    const out = new Map<string, number>();
    for (const [sid, r] of (ms as unknown as Exec).executeQuery(q, o)) out.set(ids.get(sid)!, r.score * r.terms.length);
    return out;
  };
  const ours = (ix: PostingIndex, q: string, o: SearchOptions = {}): Map<string, number> => {
    const { sids, scores } = ix.score(q, o);
    return new Map([...sids].map((sid, i) => [ix.keyOf(sid)!, scores[i]!])); // one score per sid
  };

  it("gives bit for bit MiniSearch's scores, with discarded documents pending, after compaction and after a snapshot round trip", async () => {
    const ms = new MiniSearch(INDEX_OPTIONS);
    const ix = new PostingIndex(INDEX_OPTIONS);
    for (const d of docs) {
      ms.add(d);
      ix.add(d);
    }
    for (const d0 of docs.slice(0, 40)) {
      const d = { ...d0, content: `${d0.content} invoice invoice retry` };
      ms.replace(d);
      ix.discard(d.key);
      ix.add(d);
    }
    for (const { key } of docs.slice(40, 60)) {
      ms.discard(key);
      ix.discard(key);
    }
    void ms.vacuum({ batchSize: Number.POSITIVE_INFINITY }); // synchronous up to its end with one batch
    // Term boosts (a query's names weigh more: namedTerms) on exact, prefix and typo matches alike.
    const boosted: SearchOptions = { boostTerm: (t) => (t === 'invoic' || t === 'kafka' ? 2 : t === 'retr' ? 0.5 : 1) };
    const check = (label: string): void => {
      for (const [q, o] of [
        ...shapes.map((q) => [q, {}] as const),
        ...['kafka invoic retr', 'invoic tok', 'deploymnet kafka'].map((q) => [q, boosted] as const),
      ]) {
        const want = reference(ms, q, o);
        const got = ours(ix, q, o);
        expect(got.size, `${label}: ${q}`).toBe(want.size);
        for (const [k, v] of want) expect(got.get(k), `${label}: ${q} ${k}`).toBe(v);
      }
    };
    expect(ix.pending.dead).toBe(60);
    check('pending');
    ix.compact();
    expect(ix.pending).toMatchObject({ delta: 0, dead: 0 });
    check('compacted');
    // Work arrays are reused from one query to the next without leaking scores.
    const { docs: tables, base } = ix.tables();
    const fresh = new PostingIndex(INDEX_OPTIONS);
    fresh.takeTables({ ...tables, keys: [...tables.keys], lens: tables.lens.slice() }, base);
    expect(ours(ix, 'kafka')).toEqual(ours(fresh, 'kafka'));
    // Documents added and replaced after a compaction (term numbers changed under the token cache).
    for (const [k, d0] of docs.slice(60, 70).entries()) {
      const d = { ...d0, key: `p/N${60 + k}`, summary: `${d0.summary} Invoice INVOICE fresh${60 + k}` };
      ms.add(d);
      ix.add(d);
    }
    for (const d0 of docs.slice(100, 101)) {
      ms.replace({ ...d0, content: 'kafka kafka offsets' });
      ix.discard(d0.key);
      ix.add({ ...d0, content: 'kafka kafka offsets' });
    }
    await new Promise((r) => setImmediate(r)); // MiniSearch queues a vacuum asked for while its last one settles
    void ms.vacuum({ batchSize: Number.POSITIVE_INFINITY });
    check('after compaction');
    // Through the file: the same bits (MiniSearch's running field-length averages are stored as they are).
    const file = join(tempDir(), 'ix.bin');
    const si = SearchIndex.empty();
    si.sync(docs.slice(0, 380).map((d, i) => ({ key: d.key, stamp: 's', load: () => doc(i).load() })));
    si.save(file);
    const back = SearchIndex.load(file).index;
    for (const q of shapes) expect(searchOf(back, q), q).toEqual(searchOf(si, q));
  });

  it("discarded documents do not count in a term's document frequency, whether or not the text reaches them", () => {
    const ms = new MiniSearch(INDEX_OPTIONS);
    const ix = new PostingIndex(INDEX_OPTIONS);
    const set = [...docs.slice(0, 30), ...docs.slice(30, 60).map((d) => ({ ...d, content: `${d.content} zebra` }))];
    ms.addAll(set);
    for (const d of set) ix.add(d);
    for (const k of ['p/E3', 'p/E31']) {
      ms.discard(k);
      ix.discard(k);
    }
    void ms.vacuum({ batchSize: Number.POSITIVE_INFINITY });
    expect(ours(ix, 'zebra').size).toBe(29);
    expect(ours(ix, 'zebra')).toEqual(reference(ms, 'zebra'));
    for (const d of set.slice(0, 1)) expect(() => ix.add(d)).toThrow(/duplicate/);
  });
});

// The parts of text relevance before the priors: the analyzer, score fusion, the context writers
// state (subject focus, links), the static embedding table, and the vector cache.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  LINK_SHARE,
  SEMANTIC_WEIGHT,
  SUBJECT_DOC_SHARE,
  SUBJECT_SHARE,
  SUBJECT_SIM_SHARE,
  TIME_CUE_SHARE,
  addTimeCue,
  focusSubjects,
  fuse,
  liftBySubjectDocs,
  linkLifts,
  subjectGroups,
  subjectNearness,
  groupsByCode,
  timeCue,
  timeCueHits,
  weighByLength,
  LENGTH_PRIOR,
} from '../../src/core/retrieval.js';
import { StaticEmbedding, basicTokens } from '../../src/index/static-embedding.js';
import { SearchIndex } from '../../src/index/search-index.js';
import { NAME_BOOST, namedTerms, processTerm, queryTokenize } from '../../src/index/options.js';
import { VectorStore, textHash } from '../../src/index/vectors.js';
import { embeddedText } from '../../src/service/semantic.js';
import type { MemoryEntry } from '../../src/core/schema.js';
import { entryMeta } from '../../src/core/meta.js';
import { filterParts } from '../../src/core/query-filters.js';
import type { StoredEntry } from '../../src/store/catalog.js';
import { textCandidates, type Reach } from '../../src/service/ops/query-text.js';
import { storedEntry } from '../helpers/stored.js';
import { searchOf } from '../helpers/search.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const entry = (id: string, summary: string): MemoryEntry => storedEntry({ id, summary });

function indexOf(summaries: Record<string, string>): SearchIndex {
  const ix = SearchIndex.empty();
  ix.sync(Object.entries(summaries).map(([id, s]) => ({ key: `p/${id}`, stamp: id, load: () => entry(id, s) })));
  return ix;
}

/** textCandidates over in-memory rows: each row's word score (`lex`, 0: no word match) and similarity, by subject. */
function fusedCandidates(rows: { id: string; subject: string; lex: number; sim: number }[]): ReturnType<typeof textCandidates>['cands'] {
  const metas = rows.map((r) => entryMeta(storedEntry({ id: r.id, subject: r.subject })));
  const reach: Reach = {
    count: rows.length,
    meta: (j) => metas[j]!,
    project: () => 'p',
    entry: (j) => ({ project: 'p', key: `p/${rows[j]!.id}`, meta: metas[j]! }) as unknown as StoredEntry,
    key: (j) => `p/${rows[j]!.id}`,
    list: () => rows.map((r) => ({ key: `p/${r.id}` })),
    byId: () => undefined,
  };
  const hits = rows.flatMap((r, j) => (r.lex ? [j] : []));
  return textCandidates(reach, (i) => hits[i], {
    scores: hits.map((j) => rows[j]!.lex),
    parts: filterParts({}, Date.parse('2026-02-01')),
    accept: () => true,
    staleKeys: new Set(),
    nowMs: Date.parse('2026-02-01'),
    limit: 10,
    semantic: { similarity: () => Float64Array.from(rows, (r) => r.sim) },
  }).cands;
}

describe('the analyzer', () => {
  it('drops stopwords from a query, unless nothing else is left', () => {
    expect(queryTokenize('What did the team decide about caching?')).toEqual(['team', 'decide', 'caching']);
    expect(queryTokenize('what is this')).toEqual(['what', 'is', 'this']);
    expect(queryTokenize('What did we ship in May 2024?')).toEqual(['ship', 'May', '2024']); // the month
    expect(queryTokenize('May I ask what may break the cache')).toEqual(['ask', 'break', 'cache']);
  });

  it('stems English words on both sides, and keeps identifiers with digits as they are', () => {
    expect(processTerm('Deploying')).toBe(processTerm('deployed'));
    expect(processTerm('deploys')).toBe(processTerm('deploying'));
    expect(processTerm('retries')).toBe(processTerm('retry'));
    expect(processTerm('v2api')).toBe('v2api');
    expect(processTerm('a')).toBeNull();
    expect(processTerm('7')).toBe('7');
    const ix = indexOf({ A: 'we deployed the billing service on Fridays', B: 'the the the of of and to is' });
    expect([...searchOf(ix, 'deploying billing').keys()]).toEqual(['p/A']);
  });

  it('brings irregular verb forms and plurals to their base, on both sides', () => {
    expect(['built', 'builds', 'building'].map(processTerm)).toEqual(Array(3).fill(processTerm('build')));
    expect([processTerm('went'), processTerm('gone'), processTerm('Children')]).toEqual(['go', 'go', 'child']);
    expect(processTerm('won')).toBe('won'); // as in won't: left as it is
    const ix = indexOf({ A: 'we built the parser in a week', B: 'the build script needs node 20' });
    expect([...searchOf(ix, 'what did we build the parser with').keys()].sort()).toEqual(['p/A', 'p/B']);
    expect([...searchOf(indexOf({ A: 'two children asked' }), 'child').keys()]).toEqual(['p/A']);
  });

  it('scores by content words: an entry full of function words does not win', () => {
    const ix = indexOf({
      A: 'the cache of the service is where the team did what they had to do',
      B: 'cache eviction uses LRU',
    });
    const hits = [...searchOf(ix, 'what did the team use for the cache eviction').entries()].sort((a, b) => b[1] - a[1]);
    expect(hits[0]?.[0]).toBe('p/B');
  });

  it("weighs a question's names twice: words written with a capital letter anywhere but at a sentence's start", () => {
    expect([...namedTerms('What did Alice decide about Redis? The cache. Bob left')]).toEqual([processTerm('Alice'), processTerm('Redis')]);
    expect(namedTerms('Alice fixed it. Then it broke. I saw The end')).toEqual(new Set()); // sentence starts, a letter, a stopword
    expect(NAME_BOOST).toBe(2);
    const ix = indexOf({ A: 'alice wrote the notes', B: 'fix the parser', C: 'alice and the parser fix' });
    const plain = searchOf(ix, 'what did alice fix');
    const named = searchOf(ix, 'what did Alice fix');
    expect(named.get('p/A')).toBeCloseTo(NAME_BOOST * plain.get('p/A')!, 12);
    expect(named.get('p/B')).toBe(plain.get('p/B'));
    expect(named.get('p/C')! / plain.get('p/C')!).toBeGreaterThan(1);
    expect(searchOf(ix, 'Alice fix')).toEqual(plain); // the first word of a sentence: no telling a name from a capital
  });

  it('leaves out of a document and its vector a name that addresses someone (the vocative): a name finds what is said by or about that person', () => {
    const ix = indexOf({
      A: 'Thanks, Gina! The store is doing great.',
      B: 'Hey Gina, how is the store going?',
      C: 'Way to go, Gina.',
      D: 'Gina opened the store in May, Bob said.',
      E: 'hi Alice and Gina',
    });
    expect([...searchOf(ix, 'what did Gina do').keys()].sort()).toEqual(['p/D', 'p/E']);
    expect([...searchOf(ix, 'store').keys()].sort()).toEqual(['p/A', 'p/B', 'p/D']); // the rest of the text stays
    expect([...searchOf(ix, 'Bob').keys()]).toEqual(['p/D']); // after a comma, but not ending the sentence: it stays
    expect(embeddedText({ summary: 'Thanks, Gina! The store is doing great.' })).toBe('Thanks, ! The store is doing great.'); // the vector's text too
  });
});

describe('the time cue', () => {
  it('asks only of a question that asks when, and raises only what the question reached, by its time words', () => {
    expect(timeCue('When did we move the build to pnpm?')).toBeDefined();
    expect(timeCue('how long did the migration take')).toBeDefined();
    expect(timeCue('what did we decide about the build')).toBeUndefined();
    expect(timeCue('why is the build slow when cold')).toBeUndefined();
    const ix = indexOf({ A: 'we moved the build to pnpm last month', B: 'the build moved to pnpm then', C: 'lunch last week was good' });
    const text = 'When did we move the build to pnpm?';
    const { sids, scores } = ix.rawHits(text);
    const before = new Map([...sids].map((sid, i) => [ix.keyOf(sid), scores[i]!]));
    addTimeCue(sids, scores, timeCueHits(ix.rawHits(timeCue(text)!)));
    const after = new Map([...sids].map((sid, i) => [ix.keyOf(sid), scores[i]!]));
    expect([...after.keys()].sort()).toEqual(['p/A', 'p/B']); // C says when, but not about the question
    expect(after.get('p/B')).toBe(before.get('p/B'));
    const best = Math.max(...before.values());
    const gain = after.get('p/A')! - before.get('p/A')!;
    expect(gain).toBeGreaterThan(0);
    expect(gain).toBeLessThanOrEqual(TIME_CUE_SHARE * best);
    // It now ranks first, as the entry that says when.
    expect(after.get('p/A')).toBeGreaterThan(after.get('p/B')!);
    expect(before.get('p/A')).toBeLessThan(before.get('p/B')!);
  });
});

describe('score fusion', () => {
  it('weighs the scaled similarity and the lexical score; an entry without a vector keeps its lexical score', () => {
    expect(fuse(1, 0.9, 0.1, 0.9)).toBeCloseTo(1);
    expect(fuse(0, 0.5, 0.1, 0.9)).toBeCloseTo(SEMANTIC_WEIGHT / 2);
    expect(fuse(0.4, undefined, 0.1, 0.9)).toBe(0.4);
    expect(fuse(0.4, 0.3, 0.3, 0.3)).toBeCloseTo(0.4 * (1 - SEMANTIC_WEIGHT)); // one similarity: no spread to scale by
  });

  it('the subjects to focus on are chosen by words, before similarity is fused in', () => {
    // "cabin" is the best match by words; "lodge" holds the closest entry by meaning (it shares no
    // word) and a weak match. The cabin's other match goes above the lodge's: a meaning-only match
    // does not choose a subject for the words' matches.
    const rows = [
      { id: 'A', subject: 'cabin', lex: 10, sim: 0.1 },
      { id: 'A2', subject: 'cabin', lex: 2, sim: 0.1 },
      { id: 'M', subject: 'lodge', lex: 0, sim: 1 },
      { id: 'W', subject: 'lodge', lex: 2.5, sim: 0.1 },
      { id: 'F', subject: 'misc', lex: 0, sim: 0 },
    ];
    const cands = fusedCandidates(rows);
    const ranked = [...cands].sort((a, b) => (b.relevance ?? 0) - (a.relevance ?? 0)).map((c) => c.entry.id);
    expect(ranked).toEqual(['A', 'M', 'A2', 'W']);
  });

  it("similarity's own subject focus: after fusion, the matches of a subject whose nearest entry is nearest gain", () => {
    // Each subject's nearest entry over the range among subjects, cubed; no vector (NaN) is left out.
    const near = subjectNearness([0.2, 0.9, NaN, 0.5, 0.1], [0, 0, 1, 1, 2], 3);
    expect([...near].map((x) => +x.toFixed(6))).toEqual([1, 0.125, 0]);
    // "garden" and "kitchen" each hold a match of the same words and nearness; a turn of the garden session says
    // what the question asks in other words: the garden's match goes first, the kitchen's keeps its fused score.
    const rows = [
      { id: 'K', subject: 'kitchen', lex: 5, sim: 0.3 },
      { id: 'G', subject: 'garden', lex: 5, sim: 0.3 },
      { id: 'N', subject: 'garden', lex: 0, sim: 0.9 },
      { id: 'F', subject: 'kitchen', lex: 0, sim: 0.1 },
    ];
    const cands = fusedCandidates(rows);
    const rel = new Map(cands.map((c) => [c.entry.id, c.relevance ?? 0]));
    const fused = fuse(1, 0.3, 0.1, 0.9);
    expect(rel.get('K')).toBeCloseTo(fused); // the kitchen's nearest entry is the least near of the subjects: no gain
    expect(rel.get('G')).toBeCloseTo(fused * (1 + SUBJECT_SIM_SHARE));
    expect(rel.get('G')).toBeGreaterThan(rel.get('K')!);
  });
});

describe('the context writers state', () => {
  const bySubject = { meta: (subject: string) => ({ subject }), project: () => '' };
  it('subject focus: matches about the subject of a best hit gain a share of its relevance; nothing else, and no lone match, gains', () => {
    const subjects = ['auth', 'auth', 'billing', 'auth', 'ui', 'ui', 'ops'];
    const rel = [1, 0.2, 0.9, 0.1, 0.5, 0.45, 0.3];
    focusSubjects(rel, subjectGroups(subjects, bySubject));
    expect(rel[0]).toBeCloseTo(1 + SUBJECT_SHARE);
    expect(rel[1]).toBeCloseTo(0.2 + SUBJECT_SHARE); // auth, matched: now above the ops entry
    expect(rel[2]).toBe(0.9); // the only billing match: its subject says nothing its words did not
    expect(rel[4]).toBeCloseTo(0.5 + SUBJECT_SHARE * 0.5); // third best hit: its subject counts too
    expect(rel[5]).toBeCloseTo(0.45 + SUBJECT_SHARE * 0.5);
    expect(rel[6]).toBe(0.3); // no best hit is about ops
    const none = [0, 0];
    focusSubjects(none, subjectGroups(['s', 's'], bySubject));
    expect(none).toEqual([0, 0]);
    // Equals are all among the best: none is picked over another by its place.
    const ties = [0.5, 0.5, 0.5, 0.5, 0.5, 0.2];
    focusSubjects(ties, subjectGroups(['s0', 's1', 's2', 's3', 'late', 'late'], bySubject));
    expect(ties[5]).toBeCloseTo(0.2 + SUBJECT_SHARE * 0.5);
    // By the entries' subject codes (the daemon's way): the same group numbers, in the order met.
    const codes = { of: Int32Array.from(subjects, (s) => ['ops', 'ui', 'billing', 'auth'].indexOf(s)), count: 4 };
    const order = [6, 3, 0, 4, 2, 5, 1];
    expect([...groupsByCode(order, codes)]).toEqual([
      ...subjectGroups(
        order.map((j) => subjects[j]!),
        bySubject,
      ),
    ]);
  });

  it('subjects as documents: a subject whose entries hold the query terms between them lifts its matches; a one-term query does not', () => {
    // Terms as bits: 1 and 2. Subject "trip" holds both across two entries, "work" both in one, "misc" only term 1 once.
    const subjects = ['trip', 'trip', 'work', 'misc'];
    const rel = [0.5, 0.5, 1, 0.55];
    liftBySubjectDocs(rel, [1, 2, 3, 1], subjectGroups(subjects, bySubject));
    const top = 1 + SUBJECT_DOC_SHARE; // "work" and "trip" score alike (each term once): the best subject; "work" the best match, now 1
    expect(rel[2]).toBeCloseTo(1);
    expect(rel[0]).toBeCloseTo((0.5 * top) / top);
    // IDF among the 3 subjects reached: term 1 all three hold, term 2 two.
    const idf = (df: number): number => Math.log(1 + (3 - df + 0.5) / (df + 0.5));
    expect(rel[3]).toBeCloseTo((0.55 * (1 + (SUBJECT_DOC_SHARE * idf(3)) / (idf(3) + idf(2)))) / top);
    expect(rel[0]).toBeGreaterThan(rel[3]!); // below "misc" before
    // One subject name in two projects is two subjects.
    expect([...subjectGroups(['p', 'q', 'p'], { meta: () => ({ subject: 's' }), project: (p: string) => p })]).toEqual([0, 1, 0]);
    const one = [0.4, 0.2];
    liftBySubjectDocs(one, [1, 1], subjectGroups(['s', 's'], bySubject));
    expect(one).toEqual([0.4, 0.2]);
  });

  it('subjects as documents: a term every subject reached holds (the name they are all about) tells them apart by little, however often one holds it', () => {
    // "chat": eight matches holding only term 1 (the name); "trip": one holding both. Term 1's IDF among the 2 subjects: log(1 + 0.5 / 2.5).
    const rel = [...Array<number>(8).fill(0.5), 0.5];
    liftBySubjectDocs(rel, [...Array<number>(8).fill(1), 3], subjectGroups([...Array<string>(8).fill('chat'), 'trip'], bySubject));
    const [name, other] = [Math.log(1 + 0.5 / 2.5), Math.log(1 + 1.5 / 1.5)];
    const chat = (name * 8 * 2.2) / (8 + 1.2) / (name + other); // its score over the best ("trip"'s), under a half
    expect(chat).toBeLessThan(0.5);
    expect(rel[8]).toBeCloseTo(1);
    expect(rel[0]).toBeCloseTo((1 + SUBJECT_DOC_SHARE * chat) / (1 + SUBJECT_DOC_SHARE));
  });

  it('length prior (after the focus, before fusion): a long match of the same words that BM25 put below a short one rises above it', () => {
    const others = Object.fromEntries(['red', 'blue', 'green', 'gray', 'pink', 'teal', 'gold', 'navy'].map((c) => [c, `a ${c} door`]));
    const ix = indexOf({ ...others, short: 'glass window', long: 'the glass window I made for the local church with my sister over the winter' });
    const { sids, scores, lengths } = ix.rawHits('glass window', true);
    const at = (id: string): number => [...sids].findIndex((sid) => ix.keyOf(sid) === `p/${id}`);
    const rel = Array.from(scores, (s) => s / Math.max(...scores));
    expect(rel[at('short')]).toBe(1);
    expect([lengths![at('long')], lengths![at('short')]]).toEqual([13, 2]); // distinct words of each summary
    weighByLength(rel, [...lengths!]);
    expect(rel[at('long')]).toBe(1);
    expect(rel[at('short')]).toBeCloseTo((scores[at('short')]! / scores[at('long')]!) * (2 / 13) ** LENGTH_PRIOR);
    expect(rel[at('short')]).toBeLessThan(1);
  });

  it('links: an entry a best hit links to gains a share of its relevance, keeping the best raise', () => {
    const rel = new Map([
      ['a', 1],
      ['b', 0.6],
      ['c', 0.1],
    ]);
    const lifts = linkLifts(
      [
        { item: 'a', relevance: 1, links: ['c', 'x', 'a'] },
        { item: 'b', relevance: 0.6, links: ['c'] },
      ],
      (t) => rel.get(t) ?? 0,
    );
    expect([...lifts.keys()].sort()).toEqual(['c', 'x']); // never itself
    expect(lifts.get('c')).toEqual({ relevance: 0.1 + LINK_SHARE, by: 'a' });
    expect(lifts.get('x')!.relevance).toBeCloseTo(LINK_SHARE);
    expect(linkLifts([{ item: 'a', relevance: 0, links: ['c'] }], (t) => rel.get(t) ?? 0).size).toBe(0);
  });
});

describe('the static embedding table', () => {
  const table = StaticEmbedding.load();

  it('splits text as BERT does and gives deterministic unit vectors, without the model', () => {
    expect(basicTokens("Héllo, Wörld! don't 東京")).toEqual(['hello', ',', 'world', '!', 'don', "'", 't', '東', '京']);
    // Format and control characters dropped inside a word, any white space splits, symbols and astral ideographs stand alone.
    expect(basicTokens('a\u200bb\tc\u00a0d$e\x7ff\u{20001}g\ufffd。')).toEqual(['ab', 'c', 'd', '$', 'ef', '\u{20001}', 'g', '。']);
    expect(table.model).toBe('minilm-l6-v2-static-128-fit');
    const a = table.embed('Deploys to production happen every Tuesday afternoon');
    const b = StaticEmbedding.load().embed('Deploys to production happen every Tuesday afternoon');
    expect(a).toEqual(b);
    expect(Math.hypot(...a)).toBeCloseTo(1, 5);
    expect(table.embed('').every((x) => x === 0)).toBe(true);
    const dot = (x: Float32Array, y: Float32Array): number => x.reduce((s, v, k) => s + v * y[k]!, 0); // vectors of one length
    const q = table.embed('which weekday are releases shipped');
    // Closer in meaning with no word in common than an unrelated sentence.
    expect(dot(q, a)).toBeGreaterThan(dot(q, table.embed('The cat sleeps on the sofa all day')) + 0.2);
  });

  it('refuses a file that is not a table', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bass-agents-static-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'x.bin'), 'BASS-STATIC-1\n000000000002\n{}');
    expect(() => StaticEmbedding.load(join(dir, 'x.bin'))).toThrow(/not a static embedding table/);
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
    expect([...t.similarity(unit(2))(['p/6', 'p/7', 'p/5', 'p/10', 'p/98'].map((key) => ({ key })))]).toEqual([1, 0, NaN, 1, 1]);
    expect(t.isCurrent('p/6', 's6', () => 'never asked')).toBe(true);
    expect(t.isCurrent('p/6', 'moved', () => textHash('text 6'))).toBe(true);
    expect(t.isCurrent('p/6', 'moved again', () => textHash('new text'))).toBe(false);
  });

  it('is addressed by content: a text that comes back (a branch switch, a re-clone, another id) needs no new vector', () => {
    const s = new VectorStore('m', 4);
    s.put('p/a', 'main-1', textHash('on main'), unit(0));
    // The branch changes the entry's text: a new vector is computed...
    expect(s.isCurrent('p/a', 'branch-1', () => textHash('on the branch'))).toBe(false);
    s.put('p/a', 'branch-1', textHash('on the branch'), unit(1));
    s.save(file);
    // ...and back on main (a new stamp), the first text's vector is still there, also after a reload.
    const t = VectorStore.load(file, 'm', 4);
    expect(t.isCurrent('p/a', 'main-2', () => textHash('on main'))).toBe(true);
    expect(t.similarity(unit(0))([{ key: 'p/a' }])[0]).toBe(1);
    // Another entry with the same text (an import under new ids, a fresh clone's stamps) shares it.
    expect(t.isCurrent('p/b', 'clone-1', () => textHash('on the branch'))).toBe(true);
    expect(t.bytes).toBe(2 * 4 * 4); // two vectors of four dimensions
  });

  it('ignores a file of another model, another size, or a broken one', () => {
    expect(VectorStore.load(file, 'other', 4).size).toBe(0);
    expect(VectorStore.load(file, 'm', 8).size).toBe(0);
    writeFileSync(join(dir, 'broken.bin'), 'BASS-AGENTS-VECTORS-2\n000000000099\n{"model":');
    expect(VectorStore.load(join(dir, 'broken.bin'), 'm', 4).size).toBe(0);
    expect(VectorStore.load(join(dir, 'missing.bin'), 'm', 4).size).toBe(0);
    expect(() => new VectorStore('m', 4).put('k', 's', 'h', new Float32Array(3))).toThrow(/3 dimensions/);
  });
});

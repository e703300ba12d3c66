// A snapshot that is the catalog cache as loaded makes its entries on demand, and `list` filters
// and orders them from the cache's columns (src/store/cached-entries.ts). Checked here against
// the plain path on the same files: every filter, the no-text order and the results of a whole
// `list`, on randomized entries in three projects and four sections, with unusable files among them.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVIDENCE_TYPES, KINDS, SECTIONS } from '../../src/core/constants.js';
import { serializeEntry } from '../../src/core/entry.js';
import { filterParts, filtersOf, firstByPriors, rankEntries, type QueryFilters } from '../../src/core/query.js';
import type { MemoryEntry } from '../../src/core/schema.js';
import { Catalog } from '../../src/store/catalog.js';
import { Workspace } from '../../src/store/workspace.js';
import { MemoryService } from '../../src/service/memory-service.js';
import { storedEntry } from '../helpers/stored.js';
import { testdir } from '../helpers/repo.js';

/** A small deterministic generator (mulberry32), so that a failure can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NOW = Date.parse('2026-06-01T00:00:00.000Z');
const DAY = 86_400_000;
const PROJECTS = ['p', 'p-b', 'q']; // `p-b/` sorts before `p/`: the folder runs must not mix them
const SCOPES = ['repo', 'org', 'customer', 'service:billing', 'service:auth', 'environment:prod'];
const SUBJECTS = ['billing.retry', 'auth.tokens', 'search', 'deploy'];
const TAGS = ['a', 'b', 'c'];
const STATUSES = ['active', 'active', 'active', 'deprecated', 'draft', 'archived'] as const;

/** A time as toISOString writes it (most often), or the same time written another way. */
function variant(iso: string, x: number): string {
  return x < 0.8 ? iso : x < 0.88 ? iso.replace('.000Z', 'Z') : x < 0.94 ? iso.replace('.000Z', '.5Z') : iso.replace('Z', '+00:00');
}

const WORDS = ['invoice', 'retry', 'backoff', 'timeout', 'token', 'deploy', 'cache', 'queue'];
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID whose random part is `n`: entries written one after another in a batch count up by one. */
function ulid(n: number): string {
  let tail = '';
  for (let k = 0; k < 16; k++, n = Math.floor(n / 32)) tail = CROCKFORD[n % 32] + tail;
  return `01J0000000${tail}`;
}

/** `texts`: ULID ids, a few words from WORDS in each summary, and links between some entries. */
function randomWorkspace(seed: number, count: number, texts = false): { ws: Workspace; dir: string } {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!; // r() < 1: a place of xs (never empty here)
  const dir = testdir();
  const iso = (ms: number): string => new Date(ms).toISOString();
  const ids = new Map<string, string[]>();
  for (let i = 0; i < count; i++) {
    const project = pick(PROJECTS);
    const earlier = ids.get(project) ?? [];
    const section = pick(SECTIONS);
    const id = texts ? ulid(i) : `E${String(i).padStart(5, '0')}`;
    const bounds = r();
    const e: MemoryEntry = storedEntry({
      id,
      section,
      kind: pick(KINDS),
      subject: pick(SUBJECTS),
      scope: pick(SCOPES),
      summary: texts ? `entry ${i}: ${pick(WORDS)} ${pick(WORDS)}` : `entry ${i}`,
      content: `what entry ${i} says`,
      tags: TAGS.filter(() => r() < 0.4),
      related_entries: texts && earlier.length && r() < 0.5 ? [pick(earlier)] : [],
      confidence: pick([0.3, 0.5, 0.6, 0.65, 0.8, 0.8, 0.95]),
      evidence: Array.from({ length: 1 + Math.floor(r() * 2) }, () => pick(EVIDENCE_TYPES)).map((type) => ({
        type,
        uri: type === 'ticket' ? 'https://github.com/o/r/issues/1' : 'src/a.ts',
        note: '',
      })),
      status: pick(STATUSES),
      // Expired, expiring within a week, valid later, or no bounds (most).
      valid_to: bounds < 0.1 ? iso(NOW - 3 * DAY) : bounds < 0.2 ? iso(NOW + 3 * DAY) : bounds < 0.25 ? iso(NOW + 90 * DAY) : null,
      valid_from: bounds > 0.92 ? iso(NOW + 5 * DAY) : bounds > 0.85 ? iso(NOW - 5 * DAY) : null,
      // Few distinct times: many ties for the id to break. Most as toISOString writes them; some
      // not (the cache orders those by their text, as the entries do).
      updated_at: variant(iso(NOW - Math.floor(r() * 6) * DAY), r()),
      created_at: iso(NOW - 30 * DAY - Math.floor(r() * (texts ? 2 : 4)) * DAY),
    });
    ids.set(project, [...earlier, id]);
    const sdir = join(dir, 'ai-memory', project, section);
    mkdirSync(sdir, { recursive: true });
    writeFileSync(join(sdir, `${id}.json`), i % 97 === 5 ? '{ not json' : serializeEntry(e));
  }
  return { ws: new Workspace(dir), dir };
}

function randomFilters(r: () => number): QueryFilters {
  const some = <T>(xs: readonly T[]): T[] | undefined => (r() < 0.3 ? xs.filter(() => r() < 0.5) : undefined);
  const f: QueryFilters = {};
  if (r() < 0.3) f.projects = PROJECTS.filter(() => r() < 0.5);
  f.sections = some(SECTIONS);
  f.kinds = some(KINDS);
  if (r() < 0.3) f.scope = SCOPES[Math.floor(r() * SCOPES.length)];
  if (r() < 0.2) f.subject = r() < 0.8 ? SUBJECTS[Math.floor(r() * SUBJECTS.length)] : 'nobody.has.this';
  if (r() < 0.15) f.tags = TAGS.filter(() => r() < 0.5);
  if (r() < 0.3) f.status = r() < 0.3 ? 'any' : (['active', 'draft', 'archived'] as const).filter(() => r() < 0.6);
  if (r() < 0.4) f.minConfidence = [0, 0.5, 0.65, 0.9][Math.floor(r() * 4)];
  if (r() < 0.2) f.since = variant(new Date(NOW - Math.floor(r() * 6) * DAY).toISOString(), r());
  if (r() < 0.2) f.until = variant(new Date(NOW - Math.floor(r() * 6) * DAY).toISOString(), r());
  if (r() < 0.2) f.dateField = r() < 0.5 ? 'created_at' : 'updated_at';
  if (r() < 0.2) f.includeExpired = true;
  return f;
}

describe('entries made from the catalog cache on demand', () => {
  it('filter and order exactly as the entries do, for randomized filters', () => {
    const { ws } = randomWorkspace(7, 600);
    new Catalog(ws).refresh();
    const snap = new Catalog(ws).refresh();
    const ce = snap.cached!;
    expect(ce).toBeDefined();
    expect(snap.bad.length).toBeGreaterThan(0);
    // The same entries, in the same order, as the objects a plain refresh makes.
    const plain = new Catalog(ws, { noteWrites: false });
    const all = snap.entries;
    expect(all.length).toBe(ce.count);
    expect(all.map((se) => se.file)).toEqual(plain.refresh().entries.map((se) => se.file));
    expect(all.map((se) => [se.project, se.key])).toEqual(all.map((_, j) => [ce.projectOf(j), ce.keyOf(j)]));
    expect(all.length).toBeGreaterThan(350); // the rest are unusable: invalid, or evidence their kind does not accept
    const e123 = all[123]!; // more than 350, above
    expect(ce.at(ce.byId(e123.project, e123.meta.id)!)).toBe(e123);
    expect(ce.numberOf(e123.file)).toBe(123);
    expect(ce.numberOf('ai-memory/nowhere/decisions/X.json')).toBeUndefined();
    const r = rng(11);
    for (let round = 0; round < 300; round++) {
      const f = randomFilters(r);
      const accept = filtersOf(filterParts(f, NOW));
      const expected = all.flatMap((se, j) => (accept(se.meta, se.project) ? [j] : []));
      const passed = ce.passing(filterParts(f, NOW), accept);
      expect(passed, JSON.stringify(f)).toEqual(expected);
      const stale = new Set(all.filter((_, j) => j % 5 === 0).map((se) => se.key));
      const staleAt = (j: number): boolean => stale.has(ce.keyOf(j));
      for (const n of [1, 10, 50, passed.length + 3]) {
        const want = firstByPriors(
          passed.map((j) => ({ entry: all[j]!.meta, stale: staleAt(j) })),
          n,
          NOW,
        );
        const got = ce.firstInOrder(passed, n, NOW, staleAt);
        expect(got, JSON.stringify(f)).toEqual(want);
      }
    }
  });

  it('a whole `list` returns what ranking every entry returns', () => {
    const { dir } = randomWorkspace(3, 400);
    // The file the evidence cites exists: no evidence is stale here, at a check or at read time.
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'src/a.ts'), 'export const a = 1;\n');
    const service = (now = NOW): MemoryService =>
      new MemoryService({ root: dir, env: { HOME: dir, XDG_STATE_HOME: process.env.XDG_STATE_HOME }, clock: () => new Date(now) });
    service().query('', {}, { record: false }); // the cache is saved: later refreshes find it unchanged
    const r = rng(5);
    let matched = 0;
    let filters: QueryFilters = {};
    // The window a process saves serves the next one only while the validity bounds stand where they stood: the times cross some.
    const times = [NOW, NOW + 2 * DAY, NOW - 4 * DAY, NOW - 4 * DAY + 1, NOW + 6 * DAY, NOW + 100 * DAY];
    for (let round = 0; round < 120; round++) {
      const f = round % 3 === 0 ? (round % 2 ? randomFilters(r) : {}) : undefined;
      if (f) filters = f;
      const now = times[round % times.length]!;
      const svc = service(now);
      const got = svc.query('', filters, { limit: 50, record: false });
      // Every entry made, filtered and ranked (no evidence is stale here; decay only labels).
      const snap = new Catalog(new Workspace(dir), { noteWrites: false }).refresh();
      expect(snap.cached, 'the cache was used').toBeDefined();
      const accept = filtersOf(filterParts(filters, now));
      const cands = snap.entries.filter((se) => accept(se.meta, se.project)).map((se) => ({ project: se.project, entry: se.meta }));
      const want = rankEntries(cands, now, false, 50);
      expect(
        got.results.map((h) => `${h.project}/${h.entry.id}`),
        `${JSON.stringify(filters)} at ${now}`,
      ).toEqual(want.map((h) => `${h.project}/${h.entry.id}`));
      expect(
        got.results.map((h) => [h.score, h.flags]),
        `${JSON.stringify(filters)} at ${now}`,
      ).toEqual(want.map((h) => [h.score, h.flags]));
      expect(got.stats.entries_matched_filters).toBe(cands.length);
      matched += cands.length;
      expect(got.stats.entries_scanned).toBe(snap.entries.length);
    }
    expect(matched).toBeGreaterThan(500);
  });

  it('a text query by entry number (a one-shot command) returns what one over the entries returns (a long-lived one), with and without stale evidence', async () => {
    const { dir } = randomWorkspace(9, 500, true);
    const service = (longLived = false): MemoryService => new MemoryService({ root: dir, env: { HOME: dir }, clock: () => new Date(NOW), longLived });
    service().query('entry', {}, { record: false }); // the cache and index are saved
    const r = rng(13);
    let linked = 0;
    let hits = 0;
    let staleHits = 0;
    for (const phase of ['fresh', 'stale'] as const) {
      // Evidence pointing at files that do not exist here is found stale: it demotes those hits.
      if (phase === 'stale') {
        await service().validateEvidence(undefined, { offline: true });
        expect(service().engine.evidenceCache.staleKeys().size).toBeGreaterThan(100);
      }
      const held = service(true);
      for (let round = 0; round < 40; round++) {
        const f = round % 3 === 0 ? {} : randomFilters(r);
        const text = WORDS.filter(() => r() < 0.3).join(' ') || WORDS[round % WORDS.length]!;
        const limit = [5, 20, 50][round % 3];
        const oneShot = service();
        const got = oneShot.query(text, f, { limit, record: false });
        const want = held.query(text, f, { limit, record: false });
        const view = (q: typeof got): unknown[] => q.results.map((h) => [`${h.project}/${h.entry.id}`, h.score, h.flags]);
        expect(view(got), `${phase}: ${text} ${JSON.stringify(f)}`).toEqual(view(want));
        expect(got.stats.entries_matched_filters).toBe(want.stats.entries_matched_filters);
        expect(got.stats.linked).toEqual(want.stats.linked);
        linked += got.stats.linked.length;
        hits += got.results.length;
        staleHits += got.results.filter((h) => h.flags.includes('stale_evidence')).length;
      }
    }
    expect(hits).toBeGreaterThan(300);
    expect(linked).toBeGreaterThan(0);
    expect(staleHits).toBeGreaterThan(50);
  });
});

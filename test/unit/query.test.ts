// rankEntries with a limit prunes candidates that cannot reach the top (query.ts): the result
// must be exactly the first `limit` of the unpruned ranking, ties and all.
import { describe, expect, it } from 'vitest';
import { STRENGTH_WEIGHT, firstByPriorKeys, nthLargest, priorKeys, rankEntries, textFloor, textWeight, type Candidate } from '../../src/core/query.js';
import type { MemoryEntry } from '../../src/core/schema.js';
import { EVIDENCE_QUALITY } from '../../src/core/constants.js';
import { canonicalMs } from '../../src/core/time.js';

/** A fully decayed entry scores this share of its base at most. */
const CUT = 1 - STRENGTH_WEIGHT;

let seed = 5;
const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = <T>(a: T[]): T => a[Math.floor(rand() * a.length)]!; // rand() < 1: a place of a (never empty here)
const NOW = Date.parse('2026-06-01T00:00:00Z');

function cand(i: number): Candidate<MemoryEntry> & { k: number } {
  const validTo = rand() < 0.1 ? new Date(NOW + Math.floor(rand() * 20) * 86_400_000).toISOString() : null;
  const entry = {
    id: `E${String(i).padStart(5, '0')}`,
    section: 'learnings',
    kind: 'other',
    subject: 's',
    scope: 'repo',
    summary: 's',
    content: 'c',
    tags: [],
    confidence: pick([0.4, 0.6, 0.7, 0.8, 0.9, 1]),
    evidence: [{ type: pick(['code', 'artifact', 'ticket', 'doc', 'log', 'assumption']), uri: 'x', note: '' }],
    status: 'active',
    superseded_by: null,
    related_entries: [],
    valid_from: null,
    valid_to: validTo,
    created_by: 't',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: `2026-0${1 + Math.floor(rand() * 5)}-01T00:00:00.000Z`,
  } as MemoryEntry;
  // Coarse relevances so that equal scores (and tie-breaks) happen often.
  return { project: 'p', entry, relevance: Math.round(rand() * 20) / 20, stale: rand() < 0.05, k: i };
}

describe('rankEntries', () => {
  it('with a limit gives exactly the head of the full ranking (text, decay, ties)', () => {
    for (let round = 0; round < 20; round++) {
      const cands = Array.from({ length: 300 + Math.floor(rand() * 1500) }, (_, i) => cand(i));
      const strengths = cands.map(() => (rand() < 0.3 ? Math.round(rand() * 4) / 4 : 1));
      // `!`: strengths holds one number per candidate (c.k).
      const lifecycle = (c: { k: number; entry: MemoryEntry }): { strength: number; effective_confidence: number } => ({
        strength: strengths[c.k]!,
        effective_confidence: c.entry.confidence * strengths[c.k]!,
      });
      const copy = (): typeof cands => cands.map((c) => ({ ...c }));
      for (const limit of [1, 10, 50]) {
        const full = rankEntries(copy(), NOW, true, Infinity, lifecycle).slice(0, limit);
        const pruned = rankEntries(copy(), NOW, true, limit, lifecycle);
        expect(
          pruned.map((r) => [r.entry.id, r.score]),
          `round ${round}, limit ${limit}`,
        ).toEqual(full.map((r) => [r.entry.id, r.score]));
      }
    }
  });

  it('without text: demoted last, then confidence, evidence, newest, id; a page is the head of the whole order', () => {
    for (let round = 0; round < 10; round++) {
      // Ids repeat across projects, so that some candidates tie on every key but their place.
      const cands = Array.from({ length: 200 + Math.floor(rand() * 1200) }, (_, i) => ({ ...cand(i % 400), project: `p${Math.floor(i / 400)}` }));
      // Expiring within a week: x0.7; stale evidence: x0.6.
      const demotion = (c: (typeof cands)[number]): number =>
        (c.entry.valid_to !== null && Date.parse(c.entry.valid_to) - NOW <= 7 * 86_400_000 ? 0.7 : 1) * (c.stale ? 0.6 : 1);
      const want = cands
        .map((c, at) => ({ c, at }))
        .sort(
          (a, b) =>
            demotion(b.c) - demotion(a.c) ||
            b.c.entry.confidence - a.c.entry.confidence ||
            EVIDENCE_QUALITY[b.c.entry.evidence[0]!.type] - EVIDENCE_QUALITY[a.c.entry.evidence[0]!.type] ||
            b.c.entry.updated_at.localeCompare(a.c.entry.updated_at) ||
            a.c.entry.id.localeCompare(b.c.entry.id) ||
            a.at - b.at,
        )
        .map(({ c }) => `${c.project}/${c.entry.id}`);
      for (const limit of [1, 10, 50, Infinity]) {
        const got = rankEntries(cands, NOW, false, limit).map((r) => `${r.project}/${r.entry.id}`);
        expect(got, `round ${round}, limit ${limit}`).toEqual(want.slice(0, limit));
      }
    }
  });
});

describe('priors with text', () => {
  it('break near-ties but never push a text match 25 % stronger below a weaker one', () => {
    for (let i = 0; i < 500; i++) {
      const a = cand(2 * i);
      const b = cand(2 * i + 1);
      // a: the worst priors there are (low confidence, an assumption, stale, near expiry, fully decayed)
      a.entry.confidence = 0.1;
      a.entry.evidence = [{ type: 'assumption', uri: 'x', note: '' }];
      a.entry.valid_to = new Date(NOW + 86_400_000).toISOString();
      a.stale = true;
      a.relevance = 1;
      b.relevance = 1 / 1.25 - 1e-3;
      const strength = (c: { k: number }): { strength: number; effective_confidence: number } => ({ strength: c.k === a.k ? 0 : 1, effective_confidence: 0.5 });
      const ranked = rankEntries([b, a], NOW, true, Infinity, strength);
      expect(ranked[0]?.entry.id).toBe(a.entry.id);
    }
    // ...and between equally relevant entries the priors decide (Req 15.8 order).
    const hi = cand(9001);
    const lo = cand(9002);
    Object.assign(hi, { relevance: 1, stale: false });
    Object.assign(lo, { relevance: 1, stale: false });
    hi.entry.confidence = 1;
    lo.entry.confidence = 0.6;
    hi.entry.valid_to = lo.entry.valid_to = null;
    expect(rankEntries([lo, hi], NOW, true)[0]?.entry.id).toBe(hi.entry.id);
  });
});

describe('textFloor', () => {
  it('drops only raw hits that cannot reach the first `limit`: the same ranking as from all of them', () => {
    let dropped = 0;
    for (let round = 0; round < 24; round++) {
      // Raw scores as MiniSearch gives them (any scale); the service divides by the largest.
      const scale = 0.5 + rand() * 30;
      const cands = Array.from({ length: 300 + Math.floor(rand() * 1500) }, (_, i) => cand(i));
      const weights = cands.map((c) => textWeight(c.entry, NOW, c.stale));
      for (const limit of [1, 10, 50]) {
        let raw: number[];
        let strengths: number[];
        if (round % 3 === 0) {
          // The worst case for the cut: the 2 x limit best bases have fully decayed (x CUT), the
          // next `limit` bases lie within a few rounding steps of CUT of theirs at full
          // strength, so the first `limit` are decided right at the cut, by the rounding of the
          // scores and the tie-breaks; the rest lie well below.
          const target = (i: number): number => (i < 2 * limit ? 1 : i < 3 * limit ? CUT + (rand() - 0.5) * 6e-4 : 0.5 + rand() * 0.2);
          raw = weights.map((w, i) => (target(i) * scale) / w);
          strengths = cands.map((_, i) => (i < 2 * limit ? 0 : 1));
        } else {
          // Coarse relevances (ties) or continuous ones, random decay.
          raw = cands.map((c) => (round % 3 === 1 ? c.relevance! : rand()) * scale);
          strengths = cands.map(() => (rand() < 0.5 ? Math.round(rand() * 4) / 4 : 1));
        }
        // `!`: strengths, weights, raw and bases hold one number per candidate (c.k, i).
        const lifecycle = (c: { k: number; entry: MemoryEntry }): { strength: number; effective_confidence: number } => ({
          strength: strengths[c.k]!,
          effective_confidence: c.entry.confidence * strengths[c.k]!,
        });
        const max = Math.max(...raw);
        const bases = Float64Array.from(cands, (_, i) => raw[i]! * weights[i]!);
        const normalized = (keep: (i: number) => boolean): typeof cands => cands.flatMap((c, i) => (keep(i) ? [{ ...c, relevance: raw[i]! / max }] : []));
        const floor = textFloor(bases, limit, max);
        const all = rankEntries(
          normalized(() => true),
          NOW,
          true,
          limit,
          lifecycle,
        );
        const kept = normalized((i) => bases[i]! >= floor);
        dropped += cands.length - kept.length;
        const some = rankEntries(kept, NOW, true, limit, lifecycle);
        expect(
          some.map((r) => [r.entry.id, r.score]),
          `round ${round}, limit ${limit}`,
        ).toEqual(all.map((r) => [r.entry.id, r.score]));
      }
    }
    expect(dropped).toBeGreaterThan(10_000); // it does drop most hits
  });

  it('keeps everything when there are few hits, no limit or no relevance', () => {
    const b = Float64Array.from([3, 2, 1, 0.5, 0.1]);
    expect(textFloor(b, 3, 3)).toBe(-Infinity); // 5 hits <= 2 x 3: too few to be worth it
    expect(textFloor(b, Infinity, 3)).toBe(-Infinity);
    expect(textFloor(b, 0, 3)).toBe(-Infinity);
    expect(textFloor(b, 1, 0)).toBe(-Infinity);
    expect(textFloor(b, 1, 3)).toBeCloseTo(CUT * 3 - 3e-4, 6);
  });

  it('nthLargest is the n-th value of a descending sort', () => {
    for (let round = 0; round < 50; round++) {
      const v = Float64Array.from({ length: 1 + Math.floor(rand() * 400) }, () => Math.round(rand() * 50));
      const sorted = [...v].sort((a, b) => b - a);
      for (const n of [1, 2, 7, 50, v.length]) expect(nthLargest(v, n)).toBe(n <= v.length ? sorted[n - 1] : -Infinity);
    }
  });

  it('the no-text order of sort keys is the head of a stable sort, ties in position order', () => {
    for (let round = 0; round < 50; round++) {
      // Few distinct keys and ids, so most comparisons tie and only the positions tell entries apart.
      const m = Math.floor(rand() * 300);
      const keys = priorKeys(m);
      const ids: string[] = [];
      const texts: string[] = [];
      for (let i = 0; i < m; i++) {
        keys.d[i] = pick([1, 0.7, 0.6]);
        keys.conf[i] = pick([0.6, 0.8]);
        keys.q[i] = Math.floor(rand() * 3);
        // As toISOString writes it (compared as a number), or not (compared as text).
        const day = `2026-01-0${1 + Math.floor(rand() * 3)}`;
        const text = pick([`${day}T00:00:00.000Z`, `${day}T00:00:00.000Z`, `${day}T00:00:00Z`, `${day}T00:00:00.5Z`]);
        texts[i] = text;
        keys.updMs[i] = canonicalMs(text);
        keys.flags[i] = [];
        ids.push(`E${Math.floor(rand() * 20)}`);
      }
      // `!`: i, j < m, and every key array and list here holds m items.
      const order = (i: number, j: number): number =>
        keys.d[j]! - keys.d[i]! ||
        keys.conf[j]! - keys.conf[i]! ||
        keys.q[j]! - keys.q[i]! ||
        (texts[j]! < texts[i]! ? -1 : texts[j]! > texts[i]! ? 1 : 0) ||
        (ids[i]! < ids[j]! ? -1 : ids[i]! > ids[j]! ? 1 : 0);
      const sorted = Array.from({ length: m }, (_, i) => i).sort(order);
      for (const n of [0, 1, 3, 20, m, m + 5])
        expect(
          firstByPriorKeys(
            keys,
            n,
            (i) => ids[i]!,
            (i) => texts[i]!,
          ).map((p) => p.at),
        ).toEqual(sorted.slice(0, n));
    }
  });
});

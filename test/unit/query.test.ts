// rankEntries with a limit prunes candidates that cannot reach the top (query.ts): the result
// must be exactly the first `limit` of the unpruned ranking, ties and all.
import { describe, expect, it } from 'vitest';
import { rankEntries, type Candidate } from '../../src/core/query.js';
import type { MemoryEntry } from '../../src/core/schema.js';

let seed = 5;
const rand = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const pick = <T>(a: T[]): T => a[Math.floor(rand() * a.length)]!;
const NOW = Date.parse('2026-06-01T00:00:00Z');

function cand(i: number): Candidate<MemoryEntry> & { k: number } {
  const validTo = rand() < 0.1 ? new Date(NOW + Math.floor(rand() * 20) * 86_400_000).toISOString() : null;
  const entry = {
    id: `E${String(i).padStart(5, '0')}`, section: 'learnings', kind: 'other', subject: 's', scope: 'repo', summary: 's', content: 'c', tags: [],
    confidence: pick([0.4, 0.6, 0.7, 0.8, 0.9, 1]), evidence: [{ type: pick(['code', 'artifact', 'ticket', 'doc', 'log', 'assumption']), uri: 'x', note: '' }],
    status: 'active', superseded_by: null, related_entries: [], valid_from: null, valid_to: validTo, created_by: 't',
    created_at: '2026-01-01T00:00:00.000Z', updated_at: `2026-0${1 + Math.floor(rand() * 5)}-01T00:00:00.000Z`,
  } as MemoryEntry;
  // Coarse relevances so that equal scores (and tie-breaks) happen often.
  return { project: 'p', entry, relevance: Math.round(rand() * 20) / 20, stale: rand() < 0.05, k: i };
}

describe('rankEntries', () => {
  it('with a limit gives exactly the head of the full ranking (text, decay, ties)', () => {
    for (let round = 0; round < 20; round++) {
      const cands = Array.from({ length: 300 + Math.floor(rand() * 1500) }, (_, i) => cand(i));
      const strengths = cands.map(() => (rand() < 0.3 ? Math.round(rand() * 4) / 4 : 1));
      const lifecycle = (c: { k: number; entry: MemoryEntry }): { strength: number; effective_confidence: number } => ({ strength: strengths[c.k]!, effective_confidence: c.entry.confidence * strengths[c.k]! });
      const copy = (): typeof cands => cands.map((c) => ({ ...c }));
      for (const limit of [1, 10, 50]) {
        const full = rankEntries(copy(), NOW, true, Infinity, lifecycle).slice(0, limit);
        const pruned = rankEntries(copy(), NOW, true, limit, lifecycle);
        expect(pruned.map((r) => [r.entry.id, r.score]), `round ${round}, limit ${limit}`).toEqual(full.map((r) => [r.entry.id, r.score]));
      }
    }
  });
});

// renderContext's budget: the largest number of top-ranked entries that fits, as the plain
// "drop the lowest-ranked one and re-render" loop would find, without its quadratic cost.
import { describe, expect, it } from 'vitest';
import { isContextWorthy, renderContextOf } from '../../src/core/context.js';
import { compareByPriors } from '../../src/core/query.js';
import type { MemoryEntry } from '../../src/core/schema.js';
import { storedEntry } from '../helpers/stored.js';

/** The context of whole entries, each read as it is. */
const renderContext = (project: string, entries: MemoryEntry[], now: number, budget: number) =>
  renderContextOf(
    project,
    entries.map((e) => ({ meta: e, entry: () => e })),
    now,
    budget,
  );

let seed = 11;
const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = <T>(a: T[]): T => a[Math.floor(rand() * a.length)]!; // rand() < 1: a place of a (never empty here)

function entry(i: number): MemoryEntry {
  return storedEntry({
    id: `E${String(i).padStart(5, '0')}`,
    section: pick(['decisions', 'observations', 'learnings']),
    subject: pick(['billing.retry', 'auth.tokens', 'search.index', 'deploy.canary']),
    scope: pick(['repo', 'org', 'service:billing']),
    summary: `Entry ${i} ${'word '.repeat(Math.floor(rand() * 30))}`.trim(),
    content: 'c',
    confidence: 0.8 + Math.floor(rand() * 20) / 100,
    evidence: [{ type: pick(['code', 'artifact']), uri: `src/f${i}.ts`, note: '' }],
    updated_at: `2026-01-${String(1 + (i % 28)).padStart(2, '0')}T00:00:00.000Z`,
  });
}

/**
 * The reference, the plain loop: drop the lowest-ranked entry until the text fits. The text for
 * the top k is what renderContext gives for just those k entries with no budget, plus the note.
 */
function reference(project: string, entries: MemoryEntry[], now: number, budget: number): { included: number; text: string } {
  const worthy = entries.filter((e) => isContextWorthy(e, now)).sort(compareByPriors);
  for (let kept = worthy.length; ; kept--) {
    const omitted = worthy.length - kept;
    const note =
      omitted > 0
        ? `\n_${omitted} lower-ranked ${omitted === 1 ? 'entry was' : 'entries were'} left out to stay within the ${budget}-character budget._\n`
        : '';
    const text = `${renderContext(project, worthy.slice(0, kept), now, Number.MAX_SAFE_INTEGER).text}${note}`;
    if (text.length <= budget || kept === 0) return { included: kept, text };
  }
}

describe('renderContext', () => {
  it('keeps the most top-ranked entries that fit the budget, with the note counting the rest', () => {
    const now = Date.parse('2026-02-01T00:00:00Z');
    const entries = Array.from({ length: 400 }, (_, i) => entry(i));
    const all = renderContext('p', entries, now, 1e12);
    expect(all.omitted).toBe(0);
    for (const budget of [300, 1_000, 4_000, 12_000, all.text.length, all.text.length - 1]) {
      const r = renderContext('p', entries, now, budget);
      if (r.included > 0) expect(r.text.length, `budget ${budget}`).toBeLessThanOrEqual(budget);
      expect(r.included + r.omitted).toBe(all.included);
      const ref = reference('p', entries, now, budget);
      expect(r.included, `budget ${budget}`).toBe(ref.included);
      expect(r.text).toBe(ref.text);
      if (r.omitted > 0) expect(r.text).toContain(`_${r.omitted} lower-ranked ${r.omitted === 1 ? 'entry was' : 'entries were'} left out`);
    }
  });

  it('reads only the top-ranked entries that can fit, from metadata ranking', () => {
    const now = Date.parse('2026-02-01T00:00:00Z');
    const entries = Array.from({ length: 2000 }, (_, i) => entry(i));
    let reads = 0;
    const items = entries.map((e) => ({ meta: e, entry: () => (reads++, e) }));
    for (const budget of [2_000, 12_000]) {
      reads = 0;
      const lazy = renderContextOf('p', items, now, budget);
      expect(lazy).toEqual(renderContext('p', entries, now, budget));
      expect(lazy.omitted).toBeGreaterThan(1000);
      expect(reads).toBeLessThanOrEqual(lazy.included + 40);
    }
  });
});

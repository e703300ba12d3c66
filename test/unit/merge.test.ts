import { describe, expect, it } from 'vitest';
import { mergeEntry } from '../../src/core/merge.js';
import type { MemoryEntry } from '../../src/core/schema.js';

const base: MemoryEntry = {
  id: 'E1',
  section: 'decisions',
  kind: 'decision',
  subject: 'a.b',
  scope: 'repo',
  summary: 'base',
  content: 'c',
  tags: ['x'],
  confidence: 0.8,
  evidence: [{ type: 'code', uri: 'src/a.ts', note: '' }],
  status: 'active',
  superseded_by: null,
  related_entries: [],
  valid_from: null,
  valid_to: null,
  created_by: 'a',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
};

describe('three-way merge of one entry', () => {
  it('takes a field changed on one side only, and the later side when both changed', () => {
    const ours = { ...base, summary: 'ours', updated_at: '2026-01-02T00:00:00.000Z' };
    const theirs = { ...base, content: 'theirs', updated_at: '2026-01-03T00:00:00.000Z' };
    expect(mergeEntry(base, ours, theirs)).toMatchObject({ summary: 'ours', content: 'theirs', updated_at: '2026-01-03T00:00:00.000Z' });
    const both = mergeEntry(base, { ...ours, content: 'ours too' }, theirs);
    expect(both.content).toBe('theirs'); // later updated_at wins the field both changed
  });
  it('unions arrays and lets an ending status win over an edit', () => {
    const ours = { ...base, status: 'superseded' as const, superseded_by: 'E2', updated_at: '2026-01-02T00:00:00.000Z' };
    const theirs = {
      ...base,
      tags: ['x', 'y'],
      evidence: [...base.evidence, { type: 'doc' as const, uri: 'docs/a.md', note: '' }],
      updated_at: '2026-01-05T00:00:00.000Z',
    };
    const m = mergeEntry(base, ours, theirs);
    expect(m).toMatchObject({ status: 'superseded', superseded_by: 'E2', tags: ['x', 'y'] });
    expect(m.evidence).toHaveLength(2);
  });
  it('merges two sides added without a common base', () => {
    const m = mergeEntry(null, { ...base, tags: ['a'] }, { ...base, tags: ['b'], updated_at: '2026-02-01T00:00:00.000Z' });
    expect(m.tags).toEqual(['a', 'b']);
    expect(m.updated_at).toBe('2026-02-01T00:00:00.000Z');
  });
  it('merges tags, evidence and links against the ancestor: a removal on one side is kept', () => {
    const b = { ...base, tags: ['billing', 'old', 'batch'], related_entries: ['R1', 'R2'] };
    const ours = { ...b, tags: ['billing', 'batch', 'mine'], related_entries: ['R1'], updated_at: '2026-01-02T00:00:00.000Z' };
    const theirs = { ...b, tags: ['billing', 'old', 'batch', 'theirs'], evidence: [], updated_at: '2026-01-03T00:00:00.000Z' };
    const m = mergeEntry(b, ours, theirs);
    expect(m.tags).toEqual(['billing', 'batch', 'mine', 'theirs']); // 'old' removed by ours stays removed
    expect(m.related_entries).toEqual(['R1']); // R2 unlinked by ours
    expect(m.evidence).toEqual([]); // evidence dropped by theirs, untouched by ours
    // Both removed the same item, both added the same one: once each.
    const twice = mergeEntry(b, { ...b, tags: ['billing', 'new'] }, { ...b, tags: ['new', 'billing'] });
    expect(twice.tags).toEqual(['billing', 'new']);
  });
});

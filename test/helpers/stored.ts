import type { MemoryEntry } from '../../src/core/schema.js';

/**
 * A stored entry for unit tests of pure code and the index, without a repository: an active
 * learning with no evidence, written 2026-01-01, with `over` on top.
 */
export function storedEntry(over: Partial<MemoryEntry> & { id: string }): MemoryEntry {
  return {
    section: 'learnings',
    kind: 'other',
    subject: 'svc',
    scope: 'repo',
    summary: 's',
    content: '',
    tags: [],
    confidence: 0.8,
    evidence: [],
    status: 'active',
    superseded_by: null,
    related_entries: [],
    valid_from: null,
    valid_to: null,
    created_by: 't',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

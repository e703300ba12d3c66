/** One catalog row: an entry's metadata as a JSON array in a fixed field order (smaller and faster to parse than an object), and back. */
import type { EntryMeta } from '../core/meta.js';

export const META_KEYS = [
  'id',
  'section',
  'kind',
  'subject',
  'scope',
  'tags',
  'confidence',
  'evidence',
  'status',
  'superseded_by',
  'related_entries',
  'valid_from',
  'valid_to',
  'review_interval',
  'created_by',
  'created_at',
  'updated_at',
  'lifecycle',
  'dup',
  'importance0',
] as const satisfies readonly (keyof EntryMeta)[];

export function metaRow(m: EntryMeta): unknown[] {
  return META_KEYS.map((k) => (k === 'evidence' ? m.evidence.map((e) => e.type) : (m[k] ?? null)));
}

export function metaFromRow(v: unknown[]): EntryMeta {
  // One literal with every key, in META_KEYS order, so V8 gives all metas one fast shape.
  const m = {
    id: v[0],
    section: v[1],
    kind: v[2],
    subject: v[3],
    scope: v[4],
    tags: v[5],
    confidence: v[6],
    evidence: (v[7] as string[]).map((type) => ({ type })),
    status: v[8],
    superseded_by: v[9],
    related_entries: v[10],
    valid_from: v[11],
    valid_to: v[12],
    review_interval: v[13] ?? undefined,
    created_by: v[14],
    created_at: v[15],
    updated_at: v[16],
    lifecycle: v[17] ?? undefined,
    dup: v[18],
    importance0: v[19],
  };
  return m as unknown as EntryMeta;
}

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
  // Every key set, in META_KEYS order, so that all metas share one shape; only the optional fields read null as absent.
  const m: Record<string, unknown> = {};
  META_KEYS.forEach((k, i) => {
    const x = v[i];
    m[k] = k === 'evidence' ? (x as string[]).map((type) => ({ type })) : x === null && (k === 'review_interval' || k === 'lifecycle') ? undefined : x;
  });
  return m as unknown as EntryMeta;
}

/** The part of an entry that filters, ranking and statistics need: without summary or content, so the catalog loads it fast. */
import { memo } from '../try.js';
import { nodeCrypto } from '../node-crypto.js';
import { ENTRY_KEY_ORDER, type EvidenceType } from './constants.js';
import { initialImportance } from './lifecycle.js';
import type { MemoryEntry } from './schema.js';

/** Fields every pure decision (filters, ranking, stats, lifecycle) may read: all but the texts and evidence's. */
export type MetaFields = Exclude<keyof MemoryEntry, 'summary' | 'content' | 'evidence'>;

/** What pure code needs of an entry: a full MemoryEntry satisfies it. */
export type EntryLike = Pick<MemoryEntry, MetaFields> & { evidence: readonly { type: EvidenceType }[] };

export interface EntryMeta extends EntryLike {
  /** Hash of the duplicate key, so duplicates are found without reading summaries. */
  dup: string;
  /** Initial importance from content analysis, for the lifecycle math. */
  importance0: number;
}

/** The duplicate key: same subject, scope and summary (case and spacing ignored). */
export function duplicateKey(e: { subject: string; scope: string; summary: string }): string {
  const norm = (s: string): string => s.trim().replace(/\s+/g, ' ').toLowerCase();
  return `${norm(e.subject)}\u0000${norm(e.scope)}\u0000${norm(e.summary)}`;
}

/** Digests by the raw fields: a write computes each new entry's several times (its checks, the catalog). */
const digestOf = memo((raw: string) => nodeCrypto().createHash('sha1').update(raw).digest('base64url').slice(0, 16), 10_000);

/** A short digest of the duplicate key (collisions would need 2^64 entries). */
export const duplicateHash = (e: { subject: string; scope: string; summary: string }): string => digestOf(duplicateKey(e));

export function entryMeta(e: MemoryEntry): EntryMeta {
  const m: Record<string, unknown> = {};
  // Every field but the texts, in the files' order; of evidence only the types.
  for (const k of ENTRY_KEY_ORDER) if (k !== 'summary' && k !== 'content' && e[k] !== undefined) m[k] = e[k];
  m.evidence = e.evidence.map((ev) => ({ type: ev.type }));
  m.dup = duplicateHash(e);
  m.importance0 = initialImportance(e);
  return m as unknown as EntryMeta;
}

/** Constants of the data model without zod, so the read path need not load the schema library; `schema.ts` re-exports them. */
export const SECTIONS = ['decisions', 'state', 'observations', 'learnings'] as const;
export const KINDS = ['decision', 'requirement', 'invariant', 'incident', 'metric', 'hypothesis', 'runbook_step', 'other'] as const;
/** `archived` is set only by forgetting (the lifecycle); agents create `active` or `draft`. */
export const STATUSES = ['active', 'superseded', 'deprecated', 'draft', 'archived'] as const;
export const CREATE_STATUSES = ['active', 'draft'] as const;
export const EVIDENCE_TYPES = ['artifact', 'code', 'log', 'screenshot', 'assumption', 'ticket', 'doc'] as const;
export const OPERATIONS = ['create', 'supersede', 'deprecate'] as const;
export const MEMORY_TYPES = ['semantic', 'episodic', 'procedural'] as const;
export const DECAY_POLICIES = ['none', 'standard', 'aggressive'] as const;

export type Section = (typeof SECTIONS)[number];
export type Kind = (typeof KINDS)[number];
export type Status = (typeof STATUSES)[number];
export type EvidenceType = (typeof EVIDENCE_TYPES)[number];
export type Operation = (typeof OPERATIONS)[number];

export const SUMMARY_MAX = 300;
export const CONTENT_MAX = 2000;
export const TAG_MAX = 64;
export const SUBJECT_MAX = 200;
export const EVIDENCE_NOTE_MAX = 2000;
export const EVIDENCE_URI_MAX = 2048;

/** A memory id: a ULID, 26 Crockford base32 characters (the first 0-7: 48 bits of time). Every new entry has one. */
export const ULID_PATTERN = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
/** An id of a stored entry: a ULID, or one an earlier import kept (safe as a file name); those stay readable, `doctor` reports them, none is new. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Key order of an entry file: the schema order, so every file reads the same and diffs stay small. */
export const ENTRY_KEY_ORDER = [
  'id',
  'section',
  'kind',
  'subject',
  'scope',
  'summary',
  'content',
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
] as const;

/** Evidence quality rank: code/artifact > ticket/doc > log/screenshot > assumption. */
export const EVIDENCE_QUALITY: Record<EvidenceType, number> = {
  code: 3,
  artifact: 3,
  ticket: 2,
  doc: 2,
  log: 1,
  screenshot: 1,
  assumption: 0,
};

/** Best evidence quality of an entry (0 when it has none). */
export function evidenceQuality(entry: { evidence: readonly { type: EvidenceType }[] }): number {
  let best = 0;
  for (const e of entry.evidence) best = Math.max(best, EVIDENCE_QUALITY[e.type] ?? 0);
  return best;
}

export const STRATEGIES = ['keep_newest', 'keep_oldest', 'keep_highest_importance', 'merge_content'] as const;

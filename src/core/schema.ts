/**
 * The data model as zod schemas: the shape and each field's own limits (their messages are what users see); rules
 * across fields or needing the store live in `validate.ts`. `schemas/` is generated from these.
 */
import { z } from 'zod';

export * from './constants.js';
import {
  CONTENT_MAX,
  CREATE_STATUSES,
  DECAY_POLICIES,
  ENTRY_KEY_ORDER,
  EVIDENCE_NOTE_MAX,
  EVIDENCE_URI_MAX,
  ID_PATTERN,
  EVIDENCE_TYPES,
  KINDS,
  MEMORY_TYPES,
  OPERATIONS,
  SECTIONS,
  STATUSES,
  SUBJECT_MAX,
  SUMMARY_MAX,
  TAG_MAX,
} from './constants.js';
import { durationMs } from './freshness.js';
import { shown } from './redact.js';
import { scopeProblem } from './query-filters.js';
import { normalizeTimestamp } from './time.js';

/** The limit of a text, and the length of one over it. */
const atMost = (max: number) => ({ error: (i: { input: unknown }) => `must be at most ${max} characters (got ${String(i.input).length})` });
/** A rule checked only while the ones before it hold: a blank value is "required", not also malformed. */
const first = (error: string | ((i: { input: unknown }) => string)) => ({ error, abort: true });
const notBlank = (v: string): boolean => v.trim() !== '';

const timestamp = z.string().refine((v) => normalizeTimestamp(v) !== null, {
  error: (i) => `must be an ISO 8601 timestamp such as 2026-01-31T00:00:00Z (got ${shown(i.input)})`,
});
const nullableTimestamp = timestamp.nullable();
const memoryId = z.string().regex(ID_PATTERN, 'is not a memory id');
const tag = z
  .string()
  .refine(notBlank, first('must not be empty'))
  .refine((v) => !v.includes(','), first('must not contain a comma'))
  .max(TAG_MAX, atMost(TAG_MAX));
const confidenceRange = { error: (i: { input: unknown }) => `must be a number from 0.0 to 1.0 (got ${shown(i.input)})` };

const confidence = z.number().min(0, confidenceRange).max(1, confidenceRange);
const reviewInterval = z
  .string()
  .refine((v) => durationMs(v) !== null, { error: (i) => `must be an ISO 8601 duration such as P30D (got ${shown(i.input)})` })
  .nullable()
  .optional();

/** The fields a person or agent writes first, with their limits: shared by a create's input and a stored entry (key order is the files'). */
const written = {
  section: z.enum(SECTIONS),
  kind: z.enum(KINDS),
  subject: z
    .string()
    .refine(notBlank, first('is required (a canonical entity key such as "billing.invoices")'))
    .refine(
      (v) => !/\s/.test(v),
      first((i) => `must be a canonical entity key without spaces, such as "billing.invoices" (got ${shown(i.input)})`),
    )
    .max(SUBJECT_MAX, atMost(SUBJECT_MAX)),
  scope: z.string().superRefine((v, ctx) => {
    const problem = scopeProblem(v);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
  summary: z
    .string()
    .refine(notBlank, first('is required (1-2 sentences)'))
    .refine((v) => !v.includes('\0'), first('must not contain a NUL character (the summary goes into the commit message)'))
    .max(SUMMARY_MAX, atMost(SUMMARY_MAX)),
  content: z.string().refine(notBlank, first('is required')).max(CONTENT_MAX, atMost(CONTENT_MAX)),
};

export const EvidenceSchema = z
  .object({
    type: z.enum(EVIDENCE_TYPES),
    uri: z.string().min(1, 'must not be empty').max(EVIDENCE_URI_MAX, atMost(EVIDENCE_URI_MAX)),
    note: z.string().max(EVIDENCE_NOTE_MAX, atMost(EVIDENCE_NOTE_MAX)),
  })
  .strict();
export type Evidence = z.infer<typeof EvidenceSchema>;

/** Committed lifecycle parameters (DESIGN.md "Committed = knowledge; local = usage"). */
export const LifecycleSchema = z
  .object({
    memory_type: z.enum(MEMORY_TYPES).optional(),
    decay_policy: z.enum(DECAY_POLICIES).optional(),
    protected: z.boolean().optional(),
    /** Hours until strength falls to the curve's reference point (1/e, or 90 % recall for fsrs6). */
    stability: z.number().positive().optional(),
    importance: z.number().min(0).max(1).optional(),
    /** FSRS difficulty (1-10), kept once an entry has been reinforced under the fsrs6 curve. */
    difficulty: z.number().min(1).max(10).optional(),
    /** When the entry was last explicitly re-memorized (`memory reinforce`): strength is 1 then. */
    reviewed_at: timestamp.optional(),
  })
  .strict();
export type Lifecycle = z.infer<typeof LifecycleSchema>;

/** The `entry` part of a create: what an agent or person writes. System fields are not allowed. */
export const EntryInputSchema = z
  .object({
    ...written,
    tags: z.array(tag).optional(),
    confidence,
    evidence: z.array(EvidenceSchema).optional(),
    status: z.enum(CREATE_STATUSES).optional(),
    valid_from: nullableTimestamp.optional(),
    valid_to: nullableTimestamp.optional(),
    related_entries: z.array(memoryId).optional(),
    review_interval: reviewInterval,
    lifecycle: LifecycleSchema.optional(),
  })
  .strict();
export type EntryInput = z.infer<typeof EntryInputSchema>;

/** A stored Memory_Entry: every field of Memory_Entry Schema, plus two optional extensions. */
export const MemoryEntrySchema = z
  .object({
    id: z.string().regex(ID_PATTERN, 'is not a memory id (a ULID)'),
    ...written,
    tags: z.array(tag),
    confidence,
    evidence: z.array(EvidenceSchema),
    status: z.enum(STATUSES),
    superseded_by: memoryId.nullable(),
    related_entries: z.array(memoryId),
    valid_from: nullableTimestamp,
    valid_to: nullableTimestamp,
    review_interval: reviewInterval,
    created_by: z.string().min(1),
    created_at: timestamp,
    updated_at: timestamp,
    lifecycle: LifecycleSchema.optional(),
  })
  .strict();
export type MemoryEntry = z.infer<typeof MemoryEntrySchema>;

export const MemoryUpdateSchema = z
  .object({
    operation: z.enum(OPERATIONS),
    entry: z.record(z.string(), z.unknown()).optional(),
    target_id: z.string().optional(),
    /** Extension: supersede `target_id` by an entry that already exists (instead of a new `entry`). */
    superseded_by: z.string().optional(),
  })
  .strict();
export type MemoryUpdate = z.infer<typeof MemoryUpdateSchema>;

/** AgentTask Extension: other AgentTask fields pass through untouched. */
export const AgentTaskSchema = z
  .object({
    memory_enabled: z.boolean().optional(),
    memory_context: z.array(z.unknown()).max(10).optional(),
    project: z.string().optional(),
    goal: z.string().optional(),
    scope: z.string().optional(),
    subject: z.string().optional(),
  })
  .passthrough();
export type AgentTask = z.infer<typeof AgentTaskSchema>;

/** AgentResult Extension. */
export const AgentResultSchema = z
  .object({
    memory_updates: z.array(z.unknown()).optional(),
    agent: z.string().optional(),
    agent_id: z.string().optional(),
    project: z.string().optional(),
  })
  .passthrough();
export type AgentResult = z.infer<typeof AgentResultSchema>;

// Every key in the on-disk order is a MemoryEntry field (checked here, where the type exists).
void (ENTRY_KEY_ORDER satisfies readonly (keyof MemoryEntry)[]);

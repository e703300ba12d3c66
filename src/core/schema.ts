/**
 * The data model of Data Schemas as zod schemas. These describe *shape* only; the rules
 * that need more than one field or the store (write policy, evidence URI forms, duplicates) live
 * in `validate.ts`. JSON Schema files in `schemas/` are generated from these (scripts/gen-schemas.js).
 */
import { z } from 'zod';

export * from './constants.js';
import {
  CREATE_STATUSES,
  DECAY_POLICIES,
  ENTRY_KEY_ORDER,
  ID_PATTERN,
  EVIDENCE_TYPES,
  KINDS,
  MEMORY_TYPES,
  OPERATIONS,
  SECTIONS,
  STATUSES,
} from './constants.js';

const isoTimestamp = z.string().min(1);
const nullableTimestamp = isoTimestamp.nullable();

export const EvidenceSchema = z
  .object({
    type: z.enum(EVIDENCE_TYPES),
    uri: z.string().min(1, 'must not be empty'),
    note: z.string(),
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
    reviewed_at: isoTimestamp.optional(),
  })
  .strict();
export type Lifecycle = z.infer<typeof LifecycleSchema>;

/** The `entry` part of a create: what an agent or person writes. System fields are not allowed. */
export const EntryInputSchema = z
  .object({
    section: z.enum(SECTIONS),
    kind: z.enum(KINDS),
    subject: z.string(),
    scope: z.string(),
    summary: z.string(),
    content: z.string(),
    tags: z.array(z.string()).optional(),
    confidence: z.number(),
    evidence: z.array(EvidenceSchema).optional(),
    status: z.enum(CREATE_STATUSES).optional(),
    valid_from: nullableTimestamp.optional(),
    valid_to: nullableTimestamp.optional(),
    related_entries: z.array(z.string()).optional(),
    review_interval: z.string().nullable().optional(),
    lifecycle: LifecycleSchema.optional(),
  })
  .strict();
export type EntryInput = z.infer<typeof EntryInputSchema>;

/** A stored Memory_Entry: every field of Memory_Entry Schema, plus two optional extensions. */
export const MemoryEntrySchema = z
  .object({
    id: z.string().regex(ID_PATTERN, 'is not a memory id (a ULID)'),
    section: z.enum(SECTIONS),
    kind: z.enum(KINDS),
    subject: z.string(),
    scope: z.string(),
    summary: z.string(),
    content: z.string(),
    tags: z.array(z.string()),
    confidence: z.number(),
    evidence: z.array(EvidenceSchema),
    status: z.enum(STATUSES),
    superseded_by: z.string().nullable(),
    related_entries: z.array(z.string()),
    valid_from: nullableTimestamp,
    valid_to: nullableTimestamp,
    review_interval: z.string().nullable().optional(),
    created_by: z.string().min(1),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
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
const _keyOrderCheck: readonly (keyof MemoryEntry)[] = ENTRY_KEY_ORDER;
void _keyOrderCheck;

/** JSON Schema documents generated from the zod schemas (under schemas/, kept current by `npm run schemas` and a test), and the Statistics schema. */
import { z } from 'zod';
import { AgentResultSchema, AgentTaskSchema, EntryInputSchema, MemoryEntrySchema, MemoryUpdateSchema } from './schema.js';
import { EVIDENCE_TYPES, KINDS, SECTIONS, STATUSES } from './constants.js';
import { CONFIDENCE_BUCKETS } from './stats.js';

const count = z.number().int().min(0);
const counts = <K extends string>(keys: readonly K[]) => z.object(Object.fromEntries(keys.map((k) => [k, count])) as Record<K, typeof count>).strict();
const series = z.array(z.object({ date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/), count }).strict());
const nullableTime = z.string().nullable();

export const StatisticsSchema = z
  .object({
    project: z.string().nullable().describe('the project, or null for all projects'),
    date_range: z.object({ start_date: nullableTime, end_date: nullableTime }).strict(),
    total_entries: count,
    entries_by_section: counts(SECTIONS),
    entries_by_status: counts(STATUSES),
    entries_by_kind: counts(KINDS),
    avg_confidence: z.number().min(0).max(1),
    confidence_distribution: counts(CONFIDENCE_BUCKETS),
    entries_created_over_time: series,
    entries_superseded_over_time: series,
    evidence_type_distribution: counts(EVIDENCE_TYPES),
    low_confidence_count: count,
    stale_evidence_count: count,
    entries_by_agent: z.record(z.string(), count),
    most_active_agents: z.array(z.object({ agent: z.string(), count }).strict()).max(10),
    recent_operations: z.array(z.object({ time: z.string(), op: z.string(), id: z.string(), project: z.string(), agent: z.string() }).passthrough()).max(20),
    most_queried_subjects: z.array(z.object({ subject: z.string(), count }).strict()).max(10),
    most_queried_scopes: z.array(z.object({ scope: z.string(), count }).strict()).max(10),
    query_frequency_over_time: series,
    superseded_percentage: z.number().min(0).max(100),
    entries_approaching_expiry: z.array(z.object({ id: z.string(), subject: z.string(), valid_to: z.string(), days_left: z.number() }).strict()),
    compaction_candidates: z.object({ count, ids: z.array(z.string()) }).strict(),
  })
  .strict();

const BASE = 'https://bass-agents.dev/schemas';

function doc(id: string, title: string, schema: z.ZodType): string {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return `${JSON.stringify({ $id: `${BASE}/${id}`, title, ...json }, null, 2)}\n`;
}

export function renderSchemas(): Record<string, string> {
  return {
    'memory-entry.schema.json': doc('memory-entry.schema.json', 'Memory_Entry', MemoryEntrySchema),
    'memory-entry-input.schema.json': doc('memory-entry-input.schema.json', 'Memory_Entry input (the entry of a create)', EntryInputSchema),
    'memory-update.schema.json': doc('memory-update.schema.json', 'Memory_Update', MemoryUpdateSchema),
    'agent-task.schema.json': doc('agent-task.schema.json', 'AgentTask memory extension', AgentTaskSchema),
    'agent-result.schema.json': doc('agent-result.schema.json', 'AgentResult memory extension', AgentResultSchema),
    'statistics.schema.json': doc('statistics.schema.json', 'Statistics', StatisticsSchema),
  };
}

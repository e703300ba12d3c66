/**
 * JSON Schema documents generated from the zod schemas (checked in under schemas/, kept current
 * by `npm run schemas` and a test).
 */
import { z } from 'zod';
import { AgentResultSchema, AgentTaskSchema, EntryInputSchema, MemoryEntrySchema, MemoryUpdateSchema } from './schema.js';
import { StatisticsSchema } from './stats-schema.js';

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

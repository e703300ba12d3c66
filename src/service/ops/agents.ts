/** `memory prepare-task`: an AgentTask's `memory_context` (at most 10 entries) from what its goal finds, when `memory_enabled`. */
import { evidenceQuality } from '../../core/constants.js';
import { ValidationError } from '../../core/errors.js';
import type { QueryFilters } from '../../core/query.js';
import type { AgentTask } from '../../core/schema.js';
import { modules, type Engine } from '../engine.js';
import type { Caller } from '../caller.js';
import { recordDelivered } from './entries.js';
import { query } from './query.js';

export function prepareTask(engine: Engine, caller: Caller, task: unknown, opts: { project?: string; full?: boolean; refresh?: boolean } = {}): AgentTask {
  const parsed = modules.validation().parseWith(modules.schemas().AgentTaskSchema, task);
  if (!parsed.ok) throw new ValidationError(parsed.errors, 'AgentTask');
  const t = parsed.value;
  if (t.memory_enabled !== true) return t;
  const projects = caller.readProjects(engine, opts.project ?? t.project);
  const filters: QueryFilters = { projects, status: ['active'], scope: t.scope, subject: t.subject };
  const text = t.goal ?? '';
  // Only what goes into memory_context counts as retrieved, not every candidate.
  let hits = query(engine, caller, text, filters, { limit: 30, refresh: opts.refresh, record: false }).results;
  if (hits.length === 0 && text) hits = query(engine, caller, '', filters, { limit: 30, refresh: opts.refresh, record: false }).results;
  hits.sort((a, b) => b.entry.confidence - a.entry.confidence || evidenceQuality(b.entry) - evidenceQuality(a.entry) || b.score - a.score);
  const chosen = hits.slice(0, 10);
  recordDelivered(engine, caller, chosen);
  const context = chosen.map((h) => {
    const meta = { evidence_status: h.evidence_status };
    if (opts.full) return { ...h.entry, meta };
    // Summaries keep the task small; `bass-agents memory show <id>` has the content.
    const { content: _content, ...rest } = h.entry;
    return { ...rest, meta };
  });
  return { ...t, memory_context: context };
}

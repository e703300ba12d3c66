/** The read tools. Answers never flood an agent's context: summaries by default, pages, and a character budget. */
import { z } from 'zod';
import { parseFilters } from '../../core/filters.js';
import { hitJson, summaryOnly, type QueryFilters } from '../../core/query.js';
import type { Caller } from '../../service/caller.js';
import type { Engine } from '../../service/engine.js';
import type { QueryOptions } from '../../service/ops/query.js';
import { semanticFor } from '../../service/semantic.js';
import * as uc from '../../service/use-cases.js';
import { READ, projectArg, type Tool } from '../tool.js';

/** Default character budget of one `memory_query` answer (about 2K tokens). */
export const DEFAULT_MAX_CHARS = 8000;

const oneOrMore = z.union([z.string(), z.array(z.string())]).optional();
const queryArgs = {
  query: z.string().optional().describe('search text; omit to browse by confidence and evidence'),
  project: projectArg,
  section: oneOrMore.describe('decisions, state, observations, learnings'),
  kind: oneOrMore,
  scope: z.string().optional().describe('e.g. service:billing (repo and org always included)'),
  subject: z.string().optional(),
  tags: z.array(z.string()).optional(),
  status: oneOrMore.describe('default active; "any" for all'),
  min_confidence: z.number().optional().describe('default 0.6'),
  since: z.string().optional().describe('ISO 8601 or an age: 12h, 7d'),
  until: z.string().optional(),
  limit: z.number().int().min(1).max(50).optional().describe('default 10'),
  offset: z.number().int().min(0).optional(),
  summary_only: z.boolean().optional().describe('default true'),
  include_related: z.boolean().optional(),
  max_chars: z.number().int().min(200).optional().describe(`answer budget (default ${DEFAULT_MAX_CHARS})`),
};
type QueryArgs = { [K in keyof typeof queryArgs]?: z.infer<(typeof queryArgs)[K]> };

/** One page of hits (no text: browse), within the budget; a search's delivered page counts as retrieved. */
function pageOf(engine: Engine, caller: Caller, a: QueryArgs, semantic?: QueryOptions['semantic']): Record<string, unknown> {
  const text = a.query?.trim() ?? '';
  // The CLI's own parser, so a bad filter is refused in the same words.
  const filters: QueryFilters = {
    ...parseFilters({ ...a, minConfidence: a.min_confidence }, caller.now()),
    projects: caller.readProjects(engine, a.project),
  };
  const r = uc.query(engine, caller, text, filters, {
    includeRelated: a.include_related,
    record: false,
    semantic,
    ...(engine.watched ? { refresh: false } : {}),
  });
  if (text) uc.logQuery(engine, caller, { text, filters, result_count: r.results.length, execution_ms: r.stats.execution_ms });
  const offset = a.offset ?? 0;
  const budget = a.max_chars ?? DEFAULT_MAX_CHARS;
  const page = r.results.slice(offset, offset + (a.limit ?? 10));
  const results: Record<string, unknown>[] = [];
  let used = 0;
  for (const h of page) {
    const item = hitJson(h, a.summary_only !== false);
    const size = JSON.stringify(item).length;
    if (results.length > 0 && used + size > budget) break;
    results.push(item);
    used += size;
  }
  if (text) uc.recordDelivered(engine, caller, page.slice(0, results.length));
  const next = offset + results.length;
  return { results, total: r.results.length, offset, next_offset: next < r.results.length ? next : null, truncated_by_budget: results.length < page.length };
}

export const readTools: Tool[] = [
  {
    name: 'memory_query',
    config: {
      title: 'Search memory',
      description:
        'Search (or, without query, browse) memory entries. Defaults: active, confidence >= 0.6, valid now; summaries, paged by offset/limit within max_chars.',
      inputSchema: queryArgs,
      outputSchema: z.looseObject({ results: z.array(z.record(z.string(), z.unknown())), total: z.number(), next_offset: z.number().nullable() }),
      annotations: READ,
    },
    async body(engine, caller, a: QueryArgs) {
      // Meaning too, once the engine's model is ready.
      const semantic = a.query?.trim() ? await semanticFor(engine, caller, a.query).catch(() => undefined) : undefined;
      return pageOf(engine, caller, a, semantic);
    },
  },
  {
    name: 'memory_show',
    config: {
      title: 'Show one entry',
      description: 'Every field of one entry (an id or unique prefix), values computed as of now; related adds linked and similar entries.',
      inputSchema: { id: z.string(), project: projectArg, related: z.boolean().optional() },
      annotations: READ,
    },
    body(engine, caller, a: { id: string; project?: string; related?: boolean }) {
      const shown = uc.show(engine, caller, a.id, { project: a.project });
      if (!a.related) return { ...shown };
      const related = uc
        .related(engine, caller, shown.entry.id, { project: shown.project })
        .map((r) => ({ ...summaryOnly(r.entry), relation: r.relation, score: r.score }));
      return { ...shown, related };
    },
  },
];

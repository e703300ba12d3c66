/**
 * `bass-agents memory mcp`: the memory over the Model Context Protocol (stdio), for Claude Code,
 * Cursor and every MCP client. Every tool calls the same MemoryService as the CLI; errors come
 * back as tool errors with the CLI's messages (one line per problem, naming the field). Nothing
 * but protocol is written to stdout: warnings go to stderr.
 *
 * Reads never flood an agent's context: `memory_query` returns summaries by default, pages with
 * `offset`/`limit`, and stops adding results at a character budget (`max_chars`), saying where
 * to continue.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { KINDS, SECTIONS, STATUSES } from '../core/constants.js';
import { MemoryError, UsageError, formatProblem } from '../core/errors.js';
import { parseFilters, parseWhen, pickAgent } from '../core/filters.js';
import { summaryOnly, type QueryFilters } from '../core/query.js';
import { hitJson } from '../core/query.js';
import { MemoryService, type QueryOptions } from '../service/memory-service.js';

export interface McpOptions {
  root?: string;
  project?: string;
  agent?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

const VERSION = '0.1.0';

/** What the server tells an agent when it connects: when to read, what to write, how to replace. */
export const INSTRUCTIONS = `This server is the repository's durable memory: decisions, learnings, observations and state that other agents and people rely on, each entry a JSON file committed to git.

Read before you act: call memory_query with the task's words (and subject or scope filters when you know them) before changing code, answering a question about this project, or writing memory. Results are summaries; memory_show gives one entry whole. Prefer high-confidence entries with code or ticket evidence; treat low confidence as a hint.

Write what a teammate would need next time, not a diary: one fact per entry; subject is a canonical key such as billing.invoices; summary is one or two plain sentences; content says why and how you know; confidence is honest (0.9 checked in code, 0.6 inferred); evidence points at code paths, tickets, docs or logs. Decisions need code, artifact, ticket or doc evidence. Never write secrets: write where they live, or a placeholder such as [API_KEY].

When something you find contradicts an entry, do not create a second one: memory_supersede it (by an existing entry, or with a new entry in the same call). When a fact stops holding, memory_deprecate it. Use memory_create for one new entry and memory_apply for a batch. The write-memory prompt has the full guide.`;

/** The write guide, served as the `write-memory` prompt. */
const WRITE_GUIDE = `How to write a memory entry

Fields of a create: section (decisions | state | observations | learnings), kind (decision, requirement, invariant, incident, metric, hypothesis, runbook_step, other), subject (a canonical key: billing.invoices, not "the invoice thing"), scope (repo, org, customer, service:<name>, environment:prod|staging), summary (one or two sentences a reader can act on), content (why it holds, how you know, what would change it), confidence (0 to 1), tags, evidence [{type: code|artifact|ticket|doc|log|screenshot|assumption, uri, note}].

Good: {"section": "decisions", "kind": "decision", "subject": "billing.retries", "scope": "service:billing", "summary": "Invoice retries stop after 3 attempts with exponential backoff.", "content": "Chosen after the May incident: a 4th retry double-charged customers when the PSP timed out. See RetryPolicy.", "confidence": 0.9, "evidence": [{"type": "code", "uri": "src/billing/retry.ts", "note": "MAX_ATTEMPTS = 3"}]}

Not good: a summary that narrates ("I looked at the code and..."), a subject with spaces, confidence 1.0 on a guess, evidence of type assumption for a decision, a second entry that restates an existing one (supersede it instead), any key, token or password (write [API_KEY] or where it is stored).

State entries (section state) need valid_from and valid_to. Drafts (status draft) may omit evidence; they are promoted once confirmed.`;
/** Default character budget of one `memory_query` answer (about 2K tokens). */
export const DEFAULT_MAX_CHARS = 8000;

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

function errorResult(err: unknown): CallToolResult {
  if (err instanceof MemoryError) {
    const lines = err.problems.length ? err.problems.map((p) => formatProblem(p)) : [err.message];
    return { isError: true, content: [{ type: 'text', text: lines.join('\n') }], _meta: { code: err.code, exit_code: err.exitCode } };
  }
  return { isError: true, content: [{ type: 'text', text: `internal error: ${(err as Error)?.message ?? String(err)}` }] };
}

function ok(structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(structured, null, 2) }], structuredContent: structured };
}

/** Runs a tool body, turning thrown MemoryErrors into MCP tool errors with the CLI's wording. */
async function guard(fn: () => Record<string, unknown> | Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    return ok(await fn());
  } catch (err) {
    return errorResult(err);
  }
}

const entryShape = z.record(z.string(), z.unknown());
// NOTE: every output schema is a loose object: a client validates structuredContent against the
// listed schema, and a result that carries more than the listed fields (statistics' date_range,
// decay's forget_threshold...) must not fail there (McpError -32602 in the official client).

/** Builds the server (not yet connected): tools and resources over one MemoryService. */
export function createMcpServer(opts: McpOptions = {}): { server: McpServer; service: MemoryService } {
  const service = new MemoryService({ root: opts.root, cwd: opts.cwd, env: opts.env, longLived: true }, (m) => process.stderr.write(`warning: ${m}\n`));
  const server = new McpServer({ name: 'bass-agents-memory', version: VERSION }, { capabilities: { logging: {} }, instructions: INSTRUCTIONS });
  const project = (p?: string): string | undefined => p ?? opts.project;
  /** created_by: --agent, then BASS_AGENTS_AGENT, then the MCP client's name, then the git user. */
  const agent = async (): Promise<string> =>
    pickAgent(opts.agent, (opts.env ?? process.env).BASS_AGENTS_AGENT, server.server.getClientVersion()?.name) ?? (await service.agent());

  /** The filters of memory_query and memory_list: plain strings, checked by the CLI's own parser (its words). */
  const filterSchema = {
    project: z.string().optional(),
    section: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .describe(`one or more of: ${SECTIONS.join(', ')}`),
    kind: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .describe(`one or more of: ${KINDS.join(', ')}`),
    scope: z.string().optional().describe('repo, org, customer, service:<name>, environment:<env>; repo and org are always included'),
    subject: z.string().optional(),
    tags: z.array(z.string()).optional().describe('entries must carry every tag'),
    status: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .describe(`"any", or one or more of: ${STATUSES.join(', ')}`),
    min_confidence: z.number().optional().describe('0 to 1 (default 0.6; 0 when status is any or names draft)'),
    since: z.string().optional().describe('ISO 8601, or an age: 30m, 12h, 7d, 2w'),
    until: z.string().optional().describe('ISO 8601, or an age: 30m, 12h, 7d, 2w'),
    limit: z.number().int().min(1).max(50).optional().describe('results per page (default 10)'),
    offset: z.number().int().min(0).optional(),
    summary_only: z.boolean().optional().describe('default true; false returns full content'),
    include_related: z.boolean().optional(),
    max_chars: z.number().int().min(200).optional().describe(`character budget of the answer (default ${DEFAULT_MAX_CHARS})`),
  };
  const pageSchema = z.looseObject({
    results: z.array(entryShape),
    total: z.number(),
    offset: z.number(),
    next_offset: z.number().nullable(),
    truncated_by_budget: z.boolean(),
  });
  type FilterArgs = { [K in keyof typeof filterSchema]?: z.infer<(typeof filterSchema)[K]> };

  /** One page of hits for `text` (empty: browse), within the character budget; a search's delivered page counts as retrieved. */
  const pageOf = (text: string, a: FilterArgs, search: boolean, semantic?: QueryOptions['semantic']): Record<string, unknown> => {
    const filters: QueryFilters = {
      ...parseFilters(
        {
          section: a.section,
          kind: a.kind,
          scope: a.scope,
          subject: a.subject,
          tags: a.tags,
          status: a.status,
          minConfidence: a.min_confidence,
          since: a.since,
          until: a.until,
        },
        service.now(),
      ),
      projects: service.readProjects(project(a.project)),
    };
    // Only the page this answer delivers counts as retrieved (below), not every hit.
    const r = service.query(text, filters, { includeRelated: a.include_related, record: false, semantic });
    if (search) service.logQuery({ text, filters, result_count: r.results.length, execution_ms: r.stats.execution_ms });
    const offset = a.offset ?? 0;
    const limit = a.limit ?? 10;
    const budget = a.max_chars ?? DEFAULT_MAX_CHARS;
    const page = r.results.slice(offset, offset + limit);
    const results: Record<string, unknown>[] = [];
    let used = 0;
    let truncated = false;
    for (const h of page) {
      const item = hitJson(h, a.summary_only !== false);
      const size = JSON.stringify(item).length;
      if (results.length > 0 && used + size > budget) {
        truncated = true;
        break;
      }
      results.push(item);
      used += size;
    }
    if (search) service.recordDelivered(page.slice(0, results.length));
    const next = offset + results.length;
    return { results, total: r.results.length, offset, next_offset: next < r.results.length ? next : null, truncated_by_budget: truncated };
  };

  server.registerTool(
    'memory_query',
    {
      title: 'Search memory',
      description:
        'Find memory entries by text and filters. Defaults: status active, confidence >= 0.6, valid now; summaries only. ' +
        'Results are paged (offset/limit) and capped by max_chars; next_offset says where to continue. Use memory_show for one full entry.',
      inputSchema: { query: z.string().describe('search text; empty lists by priors (confidence, evidence quality, recency)'), ...filterSchema },
      outputSchema: pageSchema,
      annotations: READ,
    },
    async (a) => {
      // Meaning too, once the model (started with the server, in a worker thread) is ready.
      const semantic = await service.semanticFor(a.query).catch(() => undefined);
      return guard(() => pageOf(a.query, a, true, semantic));
    },
  );

  server.registerTool(
    'memory_list',
    {
      title: 'List entries',
      description:
        'Browse entries with the same filters as memory_query and no search text, highest confidence first (summaries, paged). Browsing does not count as a retrieval.',
      inputSchema: filterSchema,
      outputSchema: pageSchema,
      annotations: READ,
    },
    async (a) => guard(() => pageOf('', a, false)),
  );

  server.registerTool(
    'memory_show',
    {
      title: 'Show one entry',
      description: 'Every field of one entry, plus values computed as of now (strength, effective confidence, flags).',
      inputSchema: { id: z.string(), project: z.string().optional() },
      outputSchema: z.looseObject({ entry: entryShape, project: z.string(), file: z.string(), computed: entryShape }),
      annotations: READ,
    },
    async (a) => guard(() => ({ ...service.show(a.id, { project: project(a.project) }) })),
  );

  server.registerTool(
    'memory_apply',
    {
      title: 'Write memory',
      description:
        'Apply Memory_Update objects ({operation: create|supersede|deprecate, entry?, target_id?, superseded_by?}) as one git commit. ' +
        'Invalid updates are reported in skipped and the rest are applied. Entries need evidence unless status is draft; secrets are refused.',
      inputSchema: { updates: z.array(z.record(z.string(), z.unknown())).min(1), project: z.string().optional() },
      outputSchema: z.looseObject({
        applied: z.array(entryShape),
        skipped: z.array(z.object({ index: z.number(), errors: z.array(z.object({ path: z.string(), message: z.string() })) })),
        commit: z.string().nullable(),
        project: z.string(),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (a) => guard(async () => ({ ...(await service.apply(a.updates, { project: project(a.project), agent: await agent() })) })),
  );

  const WRITE_ONE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;
  const appliedSchema = z.looseObject({
    applied: z.array(entryShape),
    skipped: z.array(entryShape),
    commit: z.string().nullable(),
    project: z.string(),
  });

  server.registerTool(
    'memory_create',
    {
      title: 'Create one entry',
      description:
        'Create one entry (one commit). Required: section, kind, subject (a key such as billing.invoices), scope, summary (1-2 sentences), content, confidence (0-1), ' +
        'and evidence [{type, uri, note}] unless status is draft. Look first with memory_query: if an entry already says this, supersede it instead.',
      inputSchema: { entry: z.record(z.string(), z.unknown()), project: z.string().optional() },
      outputSchema: z.looseObject({ entry: entryShape, commit: z.string().nullable(), project: z.string() }),
      annotations: WRITE_ONE,
    },
    async (a) => guard(async () => ({ ...(await service.create(a.entry, { project: project(a.project), agent: await agent() })) })),
  );

  server.registerTool(
    'memory_supersede',
    {
      title: 'Replace an entry',
      description:
        'Mark an entry superseded (kept in history, out of default results), either by an existing entry (`by`) or by a new one (`entry`, created in the same commit). Ids may be unique prefixes.',
      inputSchema: {
        id: z.string().describe('the entry that no longer holds'),
        by: z.string().optional().describe('an existing entry that replaces it'),
        entry: z.record(z.string(), z.unknown()).optional().describe('a new entry that replaces it'),
        project: z.string().optional(),
      },
      outputSchema: appliedSchema,
      annotations: WRITE_ONE,
    },
    async (a) =>
      guard(async () => {
        if ((a.by === undefined) === (a.entry === undefined)) throw new UsageError('give exactly one of by (an existing entry) or entry (a new one)');
        if (a.by !== undefined) return { ...(await service.supersede(a.id, a.by, { project: project(a.project) })) };
        const target = service.locate(a.id, project(a.project));
        return {
          ...(await service.apply([{ operation: 'supersede', target_id: target.entry.id, entry: a.entry }], {
            project: target.project,
            agent: await agent(),
            atomic: true,
            label: 'supersede',
          })),
        };
      }),
  );

  server.registerTool(
    'memory_deprecate',
    {
      title: 'Deprecate an entry',
      description: 'Mark an entry deprecated: no longer true, kept in history, out of default results. Deprecating a deprecated entry changes nothing.',
      inputSchema: { id: z.string(), project: z.string().optional() },
      outputSchema: appliedSchema,
      annotations: { ...WRITE_ONE, idempotentHint: true },
    },
    async (a) => guard(async () => ({ ...(await service.deprecate(a.id, { project: project(a.project) })) })),
  );

  server.registerTool(
    'memory_link',
    {
      title: 'Link two entries',
      description: 'Record that two entries of one project are related (both list each other in related_entries; one commit). Linking twice changes nothing.',
      inputSchema: {
        a: z.string(),
        b: z.string(),
        type: z.string().optional().describe('what kind of relation, for the operation log'),
        project: z.string().optional(),
      },
      outputSchema: z.looseObject({ project: z.string(), entries: z.array(entryShape), commit: z.string().nullable() }),
      annotations: { ...WRITE_ONE, idempotentHint: true },
    },
    async (a) => guard(async () => ({ ...(await service.link(a.a, a.b, { project: project(a.project), type: a.type })) })),
  );

  server.registerTool(
    'memory_sync_context',
    {
      title: 'Regenerate ai-context',
      description: "Write ai-context/<project>.md from the project's high-confidence, evidenced, active entries (committed when it changes).",
      inputSchema: { project: z.string().optional(), budget: z.number().int().min(200).optional().describe('character budget of the file') },
      outputSchema: z.looseObject({ path: z.string(), changed: z.boolean(), included: z.number(), omitted: z.number(), commit: z.string().nullable() }),
      annotations: { ...WRITE_ONE, idempotentHint: true },
    },
    async (a) => guard(async () => ({ ...(await service.syncContext(service.project(project(a.project)), { budget: a.budget })) })),
  );

  server.registerTool(
    'memory_validate',
    {
      title: 'Validate without writing',
      description: 'Check one entry (the entry part of a create) or one Memory_Update against the schema and the write policy; nothing is written.',
      inputSchema: {
        entry: z.record(z.string(), z.unknown()).optional(),
        update: z.record(z.string(), z.unknown()).optional(),
        project: z.string().optional(),
      },
      outputSchema: z.looseObject({ ok: z.boolean(), errors: z.array(z.object({ path: z.string(), message: z.string() })) }),
      annotations: READ,
    },
    async (a) =>
      guard(async () => {
        if ((a.entry === undefined) === (a.update === undefined)) throw new UsageError('give exactly one of entry or update');
        return { ...(await service.validate(a.entry ?? a.update, { project: project(a.project) })) };
      }),
  );

  server.registerTool(
    'memory_check_freshness',
    {
      title: 'Freshness check',
      description: 'Active entries past their valid_to, expiring within `days` (default 7), or due for review (review_interval elapsed).',
      inputSchema: { project: z.string().optional(), days: z.number().min(0).optional() },
      outputSchema: z.looseObject({ items: z.array(entryShape) }),
      annotations: READ,
    },
    async (a) => guard(() => ({ items: service.checkFreshness({ project: project(a.project), days: a.days }) })),
  );

  server.registerTool(
    'memory_stats',
    {
      title: 'Statistics',
      description:
        'The statistics document of one project or all (entries by section, status and confidence, expiry, active agents, queries), optionally within a date range.',
      inputSchema: { project: z.string().optional(), since: z.string().optional(), until: z.string().optional() },
      outputSchema: z.looseObject({
        project: z.string().nullable(),
        total_entries: z.number(),
        entries_by_section: z.record(z.string(), z.number()),
        entries_by_status: z.record(z.string(), z.number()),
        avg_confidence: z.number(),
        confidence_distribution: z.record(z.string(), z.number()),
        low_confidence_count: z.number(),
        superseded_percentage: z.number(),
        entries_approaching_expiry: z.array(entryShape),
        most_active_agents: z.array(entryShape),
      }),
      annotations: READ,
    },
    async (a) =>
      guard(() => ({
        ...service.getStatistics(project(a.project), {
          start_date: parseWhen(a.since, 'since', service.now()),
          end_date: parseWhen(a.until, 'until', service.now()),
        }),
      })),
  );

  const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;

  server.registerTool(
    'memory_reinforce',
    {
      title: 'Re-memorize',
      description: 'Explicit re-memorize of entries: strength back to 1 and stability up (committed); optionally boost importance.',
      inputSchema: {
        ids: z.array(z.string()).min(1),
        project: z.string().optional(),
        boost_type: z.enum(['additive', 'multiplicative', 'set_value']).optional(),
        amount: z.number().min(0).max(1).optional(),
      },
      outputSchema: z.looseObject({ project: z.string(), entries: z.array(entryShape), commit: z.string().nullable() }),
      annotations: WRITE,
    },
    async (a) => guard(async () => ({ ...(await service.reinforce(a.ids, { project: project(a.project), boostType: a.boost_type, amount: a.amount })) })),
  );

  server.registerTool(
    'memory_extract',
    {
      title: 'Extract memories from text',
      description: 'Find decisions, fixes, notes and patterns in free text; store them as drafts (one commit) unless dry_run. Known ones are skipped.',
      inputSchema: {
        text: z.string().min(1),
        project: z.string().optional(),
        dry_run: z.boolean().optional(),
        min_confidence: z.number().min(0).max(1).optional(),
      },
      outputSchema: z.looseObject({
        project: z.string(),
        candidates: z.number(),
        stored: z.number(),
        deduplicated_count: z.number(),
        dry_run: z.boolean(),
        extractions: z.array(entryShape),
        commit: z.string().nullable(),
      }),
      annotations: WRITE,
    },
    async (a) =>
      guard(async () => ({ ...(await service.extract(project(a.project), a.text, { dryRun: a.dry_run, minConfidence: a.min_confidence, source: 'mcp' })) })),
  );

  server.registerTool(
    'memory_related',
    {
      title: 'Related entries',
      description: 'Entries related to one: explicit links first, then lexically similar ones (summaries only).',
      inputSchema: { id: z.string(), project: z.string().optional(), limit: z.number().int().min(1).max(50).optional() },
      outputSchema: z.looseObject({ related: z.array(entryShape) }),
      annotations: READ,
    },
    async (a) =>
      guard(() => ({
        related: service
          .related(a.id, { project: project(a.project), limit: a.limit })
          .map((r) => ({ ...summaryOnly(r.entry), relation: r.relation, score: r.score })),
      })),
  );

  server.registerTool(
    'memory_decay',
    {
      title: 'Decay preview',
      description: "Dry run of decay: each live entry's strength or confidence now vs the last run, and what would be forgotten. Changes nothing.",
      inputSchema: { project: z.string().optional(), curve: z.enum(['exponential', 'half-life', 'periodic', 'fsrs6']).optional() },
      outputSchema: z.looseObject({
        project: z.string(),
        curve: z.string(),
        analyzed: z.number(),
        changed: z.number(),
        forgotten: z.number(),
        dry_run: z.boolean(),
        entries: z.array(entryShape),
      }),
      annotations: READ,
    },
    async (a) => guard(async () => ({ ...(await service.decay(project(a.project), { overrides: a.curve ? { curve: a.curve } : undefined })) })),
  );

  server.registerPrompt(
    'write-memory',
    { title: 'How to write memory', description: 'The write guide: the fields of an entry, a good example, what to avoid, when to supersede.' },
    () => ({ messages: [{ role: 'user', content: { type: 'text', text: WRITE_GUIDE } }] }),
  );

  server.registerResource(
    'ai-context',
    new ResourceTemplate('ai-context://{project}', {
      list: async () => ({
        resources: service.ws.listProjects().map((p) => ({ uri: `ai-context://${p}`, name: `ai-context/${p}.md`, mimeType: 'text/markdown' })),
      }),
    }),
    {
      title: 'Project context',
      description: 'The generated ai-context summary of a project (high-confidence, evidenced, active entries).',
      mimeType: 'text/markdown',
    },
    async (uri, vars) => {
      const r = service.renderContext(String(vars.project));
      return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: r.text }] };
    },
  );

  server.registerResource(
    'entry',
    new ResourceTemplate('memory://{project}/{id}', {
      list: async () => {
        const hits = service.query('', { status: ['active'], minConfidence: 0 }, { record: false }).results;
        return {
          resources: hits.map((h) => ({ uri: `memory://${h.project}/${h.entry.id}`, name: h.entry.summary.slice(0, 80), mimeType: 'application/json' })),
        };
      },
    }),
    { title: 'Memory entry', description: 'One memory entry as JSON: memory://<project>/<id>.', mimeType: 'application/json' },
    async (uri, vars) => {
      const shown = service.show(String(vars.id), { project: String(vars.project) });
      return {
        contents: [{ uri: uri.href, mimeType: 'application/json', text: `${JSON.stringify({ ...shown.entry, computed: shown.computed }, null, 2)}\n` }],
      };
    },
  );

  return { server, service };
}

/** Serves on stdio until the client closes the stream. */
export async function serveStdio(opts: McpOptions = {}): Promise<void> {
  const { server, service } = createMcpServer(opts);
  // A message over this size cannot be read (the stream cannot be resynchronized after it): the
  // server says so on stderr and exits 1, rather than stopping without a word.
  const maxBytes = Number(process.env.BASS_AGENTS_MCP_MAX_MESSAGE_BYTES) || MAX_MCP_MESSAGE_BYTES;
  const transport = new StdioServerTransport(process.stdin, process.stdout, { maxBufferSize: maxBytes });
  let failed = false;
  transport.onerror = (err) => {
    process.stderr.write(`bass-agents mcp: ${err.message}\n`);
    if (/exceeded maximum size/.test(err.message)) {
      process.stderr.write(`bass-agents mcp: a message over ${maxBytes} bytes cannot be read; the server stops\n`);
      failed = true;
      process.exitCode = 1;
    }
  };
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
  });
  service.startSemantic();
  await server.connect(transport);
  process.stdin.on('end', () => void server.close());
  await closed;
  await service.closeSemantic().catch(() => undefined);
  // While serving, the index snapshot is saved only once it drifted far (a save holds the process
  // for the whole write); when the client goes, it is brought up to date for the next command.
  if (!failed) service.flushIndex();
}

/** The largest JSON-RPC message the stdio server reads. */
export const MAX_MCP_MESSAGE_BYTES = 64 * 1024 * 1024;

/** The resources and the `write-memory` prompt, read with the server's own engine (they are rare). */
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { MemoryError, NotFoundError } from '../core/errors.js';
import * as uc from '../service/use-cases.js';
import type { Caller } from '../service/caller.js';
import type { Engine } from '../service/engine.js';

const RESOURCE_NOT_FOUND = -32002;

const WRITE_GUIDE = `How to write a memory entry

Fields of a create: section (decisions | state | observations | learnings), kind (decision, requirement, invariant, incident, metric, hypothesis, runbook_step, other), subject (a canonical key: billing.invoices, not "the invoice thing"), scope (repo, org, customer, service:<name>, environment:prod|staging), summary (one or two sentences a reader can act on), content (why it holds, how you know, what would change it), confidence (0 to 1), tags, evidence [{type: code|artifact|ticket|doc|log|screenshot|assumption, uri, note}].

Good: {"section": "decisions", "kind": "decision", "subject": "billing.retries", "scope": "service:billing", "summary": "Invoice retries stop after 3 attempts with exponential backoff.", "content": "Chosen after the May incident: a 4th retry double-charged customers when the PSP timed out. See RetryPolicy.", "confidence": 0.9, "evidence": [{"type": "code", "uri": "src/billing/retry.ts", "note": "MAX_ATTEMPTS = 3"}]}

Not good: a summary that narrates ("I looked at the code and..."), a subject with spaces, confidence 1.0 on a guess, evidence of type assumption for a decision, a second entry that restates an existing one (supersede it instead), any key, token or password (write [API_KEY] or where it is stored).

State entries (section state) need valid_from and valid_to. Drafts (status draft) may omit evidence; they are promoted once confirmed.`;

/** Runs a resource read: a missing resource is resource-not-found, a malformed one invalid params. */
function read<T>(uri: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof NotFoundError) throw new McpError(RESOURCE_NOT_FOUND, `${uri}: ${err.message}`, { uri });
    if (err instanceof MemoryError) throw new McpError(ErrorCode.InvalidParams, `${uri}: ${err.message}`, { uri });
    throw err;
  }
}

export function registerResources(server: McpServer, local: () => [Engine, Caller]): void {
  server.registerPrompt(
    'write-memory',
    { title: 'How to write memory', description: 'The write guide: the fields of an entry, a good example, what to avoid, when to supersede.' },
    () => ({ messages: [{ role: 'user', content: { type: 'text', text: WRITE_GUIDE } }] }),
  );

  server.registerResource(
    'ai-context',
    new ResourceTemplate('ai-context://{project}', {
      list: async () => ({
        resources: local()[0]
          .ws.listProjects()
          .map((p) => ({ uri: `ai-context://${p}`, name: `ai-context/${p}.md`, mimeType: 'text/markdown' })),
      }),
    }),
    { title: 'Project context', description: 'The context summary of a project (high-confidence, evidenced, active entries).', mimeType: 'text/markdown' },
    async (uri, vars) =>
      read(uri.href, () => {
        const [engine, caller] = local();
        const project = caller.project(engine, String(vars.project), true);
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: uc.renderContext(engine, caller, project).text }] };
      }),
  );

  server.registerResource(
    'entry',
    new ResourceTemplate('memory://{project}/{id}', {
      list: async () => {
        const hits = uc.query(...local(), '', { status: ['active'], minConfidence: 0 }, { record: false }).results;
        return {
          resources: hits.map((h) => ({ uri: `memory://${h.project}/${h.entry.id}`, name: h.entry.summary.slice(0, 80), mimeType: 'application/json' })),
        };
      },
    }),
    { title: 'Memory entry', description: 'One memory entry as JSON: memory://<project>/<id>.', mimeType: 'application/json' },
    async (uri, vars) =>
      read(uri.href, () => {
        const shown = uc.show(...local(), String(vars.id), { project: String(vars.project) });
        return {
          contents: [{ uri: uri.href, mimeType: 'application/json', text: `${JSON.stringify({ ...shown.entry, computed: shown.computed }, null, 2)}\n` }],
        };
      }),
  );
}

/**
 * The MCP server as a real process, driven by the SDK's own Client over stdio.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, cleanGitEnv, cli, entry, firstOf, git, gitdir, initdir, seed, stateDir } from '../helpers/repo.js';

/** The MCP server process of each client (for its resident memory). */
const serverPid = new WeakMap<Client, number>();

async function connect(dir: string, args: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'memory', 'mcp', ...args],
    cwd: dir,
    env: { ...(cleanGitEnv(dir) as Record<string, string>), BASS_AGENTS_NOW: '2026-06-01T12:00:00Z' },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(transport);
  if (transport.pid) serverPid.set(client, transport.pid);
  onTestFinished(() => client.close());
  return client;
}

type Structured = Record<string, any>;
const call = async (c: Client, name: string, args: Record<string, unknown>): Promise<{ isError: boolean; data: Structured; text: string }> => {
  const r = await c.callTool({ name, arguments: args });
  const text = (r.content as { type: string; text: string }[]).map((x) => x.text).join('\n');
  return { isError: Boolean(r.isError), data: r.structuredContent ?? {}, text };
};

describe('memory mcp', () => {
  it('lists six short tools (tools/list within 10,000 characters) and says when to query and when to record', async () => {
    const dir = gitdir();
    const c = await connect(dir);
    const listed = await c.listTools();
    expect(JSON.stringify(listed).length).toBeLessThanOrEqual(10_000);
    const byName = new Map(listed.tools.map((t) => [t.name, t]));
    expect([...byName.keys()].sort()).toEqual(['memory_apply', 'memory_create', 'memory_deprecate', 'memory_maintain', 'memory_query', 'memory_show']);
    for (const t of listed.tools) expect(t.description!.length, t.name).toBeLessThanOrEqual(400);
    // What an agent is told when it connects, and the write guide as a prompt.
    const instructions = c.getInstructions()!;
    expect(instructions).toMatch(/Query before you act: call memory_query/);
    expect(instructions).toMatch(/Record when you learned something/);
    expect(instructions).toMatch(/supersedes/);
    const guide = await c.getPrompt({ name: 'write-memory' });
    expect((guide.messages[0]?.content as { text: string } | undefined)?.text).toMatch(/subject/);
    const q = byName.get('memory_query')!;
    expect(Object.keys(q.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining([
        'query',
        'project',
        'section',
        'kind',
        'scope',
        'subject',
        'tags',
        'status',
        'min_confidence',
        'limit',
        'summary_only',
        'include_related',
      ]),
    );
    expect(q.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.get('memory_apply')!.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    expect(Object.keys(byName.get('memory_create')!.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['entry', 'supersedes', 'force']));
  });

  it('creates, queries with paging and a budget, shows, supersedes; created_by is the client name', async () => {
    const dir = gitdir();
    const c = await connect(dir, ['--project', 'demo']);
    const updates = Array.from({ length: 6 }, (_, i) => ({
      operation: 'create',
      entry: entry({ summary: `Invoices retry ${i} times before alerting the billing team`, subject: `billing.retry${i}`, content: 'x'.repeat(1500) }),
    }));
    const applied = await call(c, 'memory_apply', { updates });
    expect(applied.isError, applied.text).toBe(false);
    expect(applied.data.applied).toHaveLength(6);
    expect(applied.data.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(git(dir, 'log', '-1', '--format=%B')).toContain('Memory-Agent: test-agent');

    const page1 = await call(c, 'memory_query', { query: 'invoices retry', limit: 4 });
    expect(page1.isError, page1.text).toBe(false);
    expect(page1.data.total).toBe(6);
    expect(page1.data.results).toHaveLength(4);
    expect(page1.data.results[0]).not.toHaveProperty('content'); // summaries by default
    expect(page1.data.results[0].meta.confidence_label).toBeDefined();
    expect(page1.data.next_offset).toBe(4);
    const page2 = await call(c, 'memory_query', { query: 'invoices retry', limit: 4, offset: 4 });
    expect(page2.data.results).toHaveLength(2);
    expect(page2.data.next_offset).toBeNull();
    const ids = [...page1.data.results, ...page2.data.results].map((r: Structured) => r.id);
    expect(new Set(ids).size).toBe(6);

    const full = await call(c, 'memory_query', { query: 'invoices retry', summary_only: false, max_chars: 2500 });
    expect(full.data.results).toHaveLength(1); // each full entry is ~2 KB: the budget stops after one
    expect(full.data.results[0].content).toHaveLength(1500);
    expect(full.data.truncated_by_budget).toBe(true);
    expect(full.data.next_offset).toBe(1);

    const shown = await call(c, 'memory_show', { id: ids[0] });
    expect(shown.data.entry.created_by).toBe('test-agent');
    expect(shown.data.computed.confidence_label).toBeDefined();

    const sup = await call(c, 'memory_create', { entry: entry({ summary: 'Invoices retry 8 times now', subject: 'billing.retry-new' }), supersedes: ids[0] });
    expect(sup.isError, sup.text).toBe(false);
    expect(sup.data).toMatchObject({ superseded: ids[0], entry: { summary: 'Invoices retry 8 times now' } });
    const after = await call(c, 'memory_show', { id: ids[0] });
    expect(after.data.entry.status).toBe('superseded');
    expect(after.data.entry.superseded_by).toBe(sup.data.entry.id);
    // Re-creating the fact that was superseded is refused, naming the old entry and its successor; force writes it.
    const old = page1.data.results.find((r: Structured) => r.id === ids[0]).summary as string;
    const again = await call(c, 'memory_create', { entry: entry({ summary: old, subject: shown.data.entry.subject }) });
    expect(again.isError).toBe(true);
    expect(again.text).toContain(`re-creates entry ${ids[0]} (superseded), which was superseded by ${sup.data.entry.id}`);
    const forced = await call(c, 'memory_create', { entry: entry({ summary: old, subject: shown.data.entry.subject }), force: true });
    expect(forced.isError, forced.text).toBe(false);
    // Browsing (no text) pages the same way.
    const browse = await call(c, 'memory_query', { limit: 2 });
    expect(browse.data.results).toHaveLength(2);
    expect(browse.data.next_offset).toBe(2);
    // The CLI sees what the MCP server wrote.
    expect(cli(dir, ['show', ids[0], '--json']).json().status).toBe('superseded');
    // When the client goes, the server leaves an index snapshot the CLI can load as it is.
    await c.close();
    const q = cli(dir, ['query', 'invoices retry', '--json', '--debug']);
    expect(q.json()).toHaveLength(7);
    expect(q.stderr).toContain('snapshot loaded (+0 ~0 -0)');
  });

  it('answers through the daemon when one runs (one engine and model for every session), and by itself once it stops', async () => {
    const dir = initdir();
    const env = { BASS_AGENTS_NOW: '2026-06-01T12:00:00Z' };
    expect(cli(dir, ['daemon', 'start', '--json'], { env }).json()).toMatchObject({ running: true, started: true });
    onTestFinished(() => void cli(dir, ['daemon', 'stop']));
    const c = await connect(dir, ['--project', 'demo']);
    const made = await call(c, 'memory_create', { entry: entry({ summary: 'Ledger exports run nightly through the daemon' }) });
    expect(made.isError, made.text).toBe(false);
    expect(made.data.entry.created_by).toBe('test-agent');
    const found = await call(c, 'memory_query', { query: 'ledger exports' });
    expect(found.data.results.map((r: Structured) => r.id)).toEqual([made.data.entry.id]);
    const missing = await call(c, 'memory_show', { id: '01ZZZZZZZZZZZZZZZZZZZZZZZZ' });
    expect(missing.isError).toBe(true);
    const runs = readFileSync(join(stateDir(dir), 'logs/daemon.log'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"event":"cli_run","command":"mcp-call"'));
    expect(runs).toHaveLength(3);
    // Beside a daemon the server holds no engine or model of its own: it stays small.
    const status = `/proc/${serverPid.get(c)}/status`;
    if (existsSync(status)) expect(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(status, 'utf8'))?.[1]) / 1024).toBeLessThan(100);
    // Without the daemon, the server's own engine gives the same answers.
    expect(cli(dir, ['daemon', 'stop']).code).toBe(0);
    expect((await call(c, 'memory_query', { query: 'ledger exports' })).data).toEqual(found.data);
    expect(await call(c, 'memory_show', { id: '01ZZZZZZZZZZZZZZZZZZZZZZZZ' })).toEqual(missing);
  });

  it('reports validation problems, refused secrets and errors with the CLI wording', async () => {
    const dir = gitdir();
    const c = await connect(dir, ['--project', 'demo']);
    const v = await call(c, 'memory_maintain', { action: 'validate', entry: entry({ confidence: 2, evidence: [] }) });
    expect(v.isError).toBe(false);
    expect(v.data.ok).toBe(false);
    expect(v.data.errors.map((e: Structured) => e.path)).toEqual(expect.arrayContaining(['confidence']));
    const both = await call(c, 'memory_maintain', { action: 'validate' });
    expect(both.isError).toBe(true);
    expect(both.text).toMatch(/exactly one of entry or update/);
    const skipped = await call(c, 'memory_apply', {
      updates: [
        { operation: 'create', entry: entry({ summary: '' }) },
        { operation: 'create', entry: entry() },
      ],
    });
    expect(skipped.data.applied).toHaveLength(1);
    expect(skipped.data.skipped[0].errors[0].path).toMatch(/summary/);
    const head = git(dir, 'rev-parse', 'HEAD');
    const secret = await call(c, 'memory_apply', {
      updates: [{ operation: 'create', entry: entry({ summary: 'deploy key', content: 'use xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx' }) }],
    });
    expect(secret.data.applied).toHaveLength(0);
    expect(secret.data.skipped[0].errors[0]).toMatchObject({ path: '[0].entry.content' });
    expect(secret.data.skipped[0].errors[0].message).toMatch(/looks like a secret \(rule (slack-token|secretlint\/slack)/);
    expect(secret.text).not.toContain('AbCdEfGhIjKlMnOpQrStUvWx');
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
    const missing = await call(c, 'memory_show', { id: '01HZZZZZZZZZZZZZZZZZZZZZZZ' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toMatch(/no memory entry with id 01HZZZZZZZZZZZZZZZZZZZZZZZ/);
  });

  it('serves ai-context and entries as resources, and freshness and stats as tools', async () => {
    const dir = gitdir();
    const state = entry({ section: 'state', summary: 'Feature flag new-checkout is on', valid_from: '2026-05-01T00:00:00Z', valid_to: '2026-06-03T00:00:00Z' });
    seed(dir, [entry({ summary: 'Payments use idempotency keys', confidence: 0.95 }), state]);
    const c = await connect(dir);
    const { resources } = await c.listResources();
    expect(resources.map((r) => r.uri)).toContain('ai-context://demo');
    const entryUri = resources.find((r) => r.uri.startsWith('memory://demo/'))!.uri;
    const ctx = await c.readResource({ uri: 'ai-context://demo' });
    expect((ctx.contents[0] as { text: string }).text).toContain('Payments use idempotency keys');
    const one = await c.readResource({ uri: entryUri });
    expect(JSON.parse((one.contents[0] as { text: string }).text).id).toBe(entryUri.split('/').pop());
    const fresh = await call(c, 'memory_maintain', { action: 'check_freshness', days: 7 });
    expect(fresh.data.items).toEqual([expect.objectContaining({ state: 'expiring', summary: 'Feature flag new-checkout is on' })]);
    const stats = await call(c, 'memory_maintain', { action: 'stats', project: 'demo' });
    expect(stats.data.total_entries).toBe(2);
    const ids = (await call(c, 'memory_query', { query: 'idempotency', project: 'demo' })).data.results.map((r: Structured) => r.id);
    const re = await call(c, 'memory_maintain', { action: 'reinforce', ids, project: 'demo' });
    expect(re.isError, re.text).toBe(false);
    expect(re.data.entries[0].lifecycle.reviewed_at).toBe('2026-06-01T12:00:00.000Z');
    const ex = await call(c, 'memory_maintain', {
      action: 'extract',
      text: 'We decided to use idempotency keys for every payment request.',
      project: 'demo',
      dry_run: true,
    });
    expect(ex.data).toMatchObject({ candidates: 1, stored: 0, dry_run: true });
    const rel = await call(c, 'memory_show', { id: ids[0], related: true });
    expect(rel.isError, rel.text).toBe(false);
    expect(Array.isArray(rel.data.related)).toBe(true);
    const decay = await call(c, 'memory_maintain', { action: 'decay', project: 'demo' });
    expect(decay.data).toMatchObject({ analyzed: 2, dry_run: true });
    const needs = await call(c, 'memory_maintain', { action: 'link', id: ids[0] });
    expect(needs.isError).toBe(true);
    expect(needs.text).toBe('link needs other');
    // A resource that does not exist is "resource not found" saying which, never an internal error.
    for (const uri of ['memory://demo/01HZZZZZZZZZZZZZZZZZZZZZZZ', 'ai-context://nope']) {
      const err = await c.readResource({ uri }).then(
        () => null,
        (e: { code: number; message: string }) => e,
      );
      expect(err?.code, uri).toBe(-32002);
      expect(err?.message).toContain(uri);
    }
  });

  it('refuses a bad filter with the same words as the CLI, and takes the same relative ages', async () => {
    const dir = gitdir();
    expect(cli(dir, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry()) }).code).toBe(0);
    const c = await connect(dir, ['--project', 'demo']);
    const cases: { cli: string[]; mcp: Record<string, unknown> }[] = [
      { cli: ['--scope', 'bogus-scope'], mcp: { scope: 'bogus-scope' } },
      { cli: ['--section', 'nope'], mcp: { section: 'nope' } },
      { cli: ['--kind', 'decision,nope'], mcp: { kind: ['decision', 'nope'] } },
      { cli: ['--status', 'gone'], mcp: { status: 'gone' } },
      { cli: ['--min-confidence', '3'], mcp: { min_confidence: 3 } },
      { cli: ['--since', 'yesterday'], mcp: { since: 'yesterday' } },
    ];
    for (const k of cases) {
      const viaCli = cli(dir, ['query', 'invoices', ...k.cli], { env: { BASS_AGENTS_NOW: '2026-06-01T12:00:00Z' } });
      expect(viaCli.code, k.cli.join(' ')).toBe(2);
      const message = viaCli.stderr
        .split('\n')
        .find((l) => l.startsWith('error: '))!
        .slice('error: '.length);
      const viaMcp = await call(c, 'memory_query', { query: 'invoices', ...k.mcp });
      expect(viaMcp.isError, JSON.stringify(k.mcp)).toBe(true);
      expect(viaMcp.text).toBe(message);
    }
    const aged = await call(c, 'memory_query', { query: 'invoices', since: '7d', min_confidence: 0 });
    expect(aged.isError, aged.text).toBe(false);
    expect(cli(dir, ['query', 'invoices', '--since', '30m', '--json'], { env: { BASS_AGENTS_NOW: '2026-06-01T12:00:00Z' } }).code).toBe(0);
  });

  it('every tool, called after listing the tools (as real clients do), returns what its output schema says', async () => {
    const dir = gitdir();
    expect(cli(dir, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry()) }).code).toBe(0);
    const c = await connect(dir, ['--project', 'demo']);
    const { tools } = await c.listTools();
    const { Ajv } = await import('ajv');
    const ajv = new Ajv({ strict: false });
    const created = await call(c, 'memory_apply', {
      updates: ['refunds', 'payouts', 'ledger', 'dunning', 'taxes'].map((s) => ({
        operation: 'create',
        entry: entry({ summary: `The ${s} job runs nightly at 02:00 UTC.`, subject: `billing.${s}` }),
      })),
    });
    expect(created.isError, created.text).toBe(false);
    const [id, id2, id3, id4, id5] = (created.data.applied as { id: string }[]).map((x) => x.id);
    const args: Record<string, Record<string, unknown>> = {
      memory_query: { query: 'invoices' },
      memory_show: { id, related: true },
      memory_apply: { updates: [{ operation: 'deprecate', target_id: id2 }] },
      memory_create: { entry: entry({ summary: 'The ledger job runs hourly since June.', subject: 'billing.ledger' }), supersedes: id3 },
      memory_deprecate: { id: id4 },
      memory_maintain: { action: 'link', id, other: id5, type: 'same-schedule' },
    };
    for (const t of tools) {
      const a = args[t.name];
      expect(a, `a test call for ${t.name}`).toBeDefined();
      // The SDK client itself checks structuredContent against the listed schema (McpError -32602).
      const r = await c.callTool({ name: t.name, arguments: a });
      expect(r.isError, `${t.name}: ${JSON.stringify(r.content)}`).toBeFalsy();
      if (t.outputSchema) {
        const validate = ajv.compile(t.outputSchema);
        expect(validate(r.structuredContent), `${t.name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      }
    }
  });

  it('the one-entry tools refuse bad arguments with the CLI words, and docs/mcp.md lists exactly the tools the server lists', async () => {
    const dir = gitdir();
    expect(cli(dir, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry()) }).code).toBe(0);
    const c = await connect(dir, ['--project', 'demo']);
    const { tools } = await c.listTools();
    const listed = cli(dir, ['list', '--json']).json() as { id: string }[];
    const [{ id }] = firstOf(listed, 1);

    const self = await call(c, 'memory_apply', { updates: [{ operation: 'supersede', target_id: id, superseded_by: id }] });
    expect(self.data.skipped[0].errors[0].message).toMatch(/cannot supersede itself/);
    const gone = await call(c, 'memory_create', { entry: entry({ summary: 'x' }), supersedes: '01ZZZZZZZZZZZZZZZZZZZZZZZZ' });
    expect(gone.isError).toBe(true);
    expect(gone.text).toMatch(/no memory entry with id/);
    const bad = await call(c, 'memory_create', { entry: { ...entry(), subject: 'has spaces' } });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/^subject: must be a canonical entity key without spaces/);
    const viaCli = cli(dir, ['list', '--section', 'bogus']);
    const viaMcp = await call(c, 'memory_query', { section: 'bogus' });
    expect(viaMcp.isError).toBe(true);
    expect(`error: ${viaMcp.text}`).toBe(viaCli.stderr.split('\n')[0]);
    const missing = await call(c, 'memory_deprecate', { id: '01ZZZZZZZZZZZZZZZZZZZZZZZZ' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toMatch(/no memory entry with id/);

    // The tool table of docs/mcp.md: one row per listed tool, its arguments exactly the tool's own.
    const doc = readFileSync(join(__dirname, '../../docs/mcp.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `(memory_\w+)` \| ([^|]*) \|/gm)].map(([, name, args = '']) => ({ name, args }));
    expect(rows.map((r) => r.name).sort()).toEqual(tools.map((t) => t.name).sort());
    for (const t of tools) {
      const row = rows.find((r) => r.name === t.name)!;
      const props = Object.keys(t.inputSchema.properties ?? {});
      const required = new Set(t.inputSchema.required ?? []);
      const said = [...row.args.matchAll(/`([^`]*)`/g)].flatMap(([, said = '']) => said.split(/,\s*/)).filter(Boolean);
      expect(said.map((a) => a.replace(/\?$/, '')).sort(), t.name).toEqual(props.sort());
      for (const a of said) expect(a.endsWith('?'), `${t.name} ${a}`).toBe(!required.has(a.replace(/\?$/, '')));
    }
  });

  it('counts as retrieved only the page it delivers, not every hit', async () => {
    const dir = gitdir();
    seed(
      dir,
      [1, 2, 3].map((k) => entry({ summary: `Invoices fact number ${k}.`, subject: `billing.f${k}` })),
    );
    const c = await connect(dir, ['--project', 'demo']);
    const r = await call(c, 'memory_query', { query: 'invoices', limit: 1 });
    expect(r.isError, r.text).toBe(false);
    expect(r.data.total).toBe(3);
    const fs = await import('node:fs');
    const path = await import('node:path');
    const lines = fs
      .readFileSync(path.join(stateDir(dir), 'state/retrievals.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { k: string[] });
    expect(lines.flatMap((l) => l.k)).toEqual([`demo/${r.data.results[0].id}`]);
  });
});

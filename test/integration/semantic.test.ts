/**
 * Semantic search with the default settings (the static table distilled from all-MiniLM-L6-v2,
 * shipped in the package): a daemon embeds entries in the background; a query in other words
 * finds the entry; the vectors are cached and reused; a one-shot `--semantic` works without a
 * daemon; a project can turn it off; the MCP server ranks by meaning too.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { Engine } from '../../src/service/engine.js';
import { BIN, cleanGitEnv, cli, entry, git, gitdir, writeJson, stateDir } from '../helpers/repo.js';

const ON = { BASS_AGENTS_SEMANTIC: 'auto' };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function seed(dir: string): { db: string; ci: string } {
  const r = cli(dir, [
    'apply',
    'demo',
    '--json',
    '--file',
    writeJson(dir, 'seed.json', [
      { operation: 'create', entry: entry({ subject: 'storage', summary: 'User accounts live in PostgreSQL with row-level security' }) },
      { operation: 'create', entry: entry({ subject: 'ci', summary: 'Integration tests time out on two-core runners' }) },
      { operation: 'create', entry: entry({ subject: 'ui', summary: 'Buttons use the brand blue from the design tokens' }) },
    ]),
  ]);
  expect(r.code, r.stderr).toBe(0);
  const [db, ci] = r.json().applied.map((a: { id: string }) => a.id);
  return { db, ci };
}

async function daemonStatus(dir: string): Promise<Record<string, any>> {
  const r = cli(dir, ['daemon', 'status', '--json'], { env: ON });
  expect(r.code, r.stderr).toBe(0);
  return r.json();
}

async function untilReady(dir: string, entries: number): Promise<Record<string, any>> {
  const end = Date.now() + 60_000;
  for (;;) {
    const s = await daemonStatus(dir);
    if (s.semantic?.state === 'ready' && s.semantic.vectors_current >= entries) return s;
    if (s.semantic?.state === 'failed' || s.semantic?.state === 'unavailable') throw new Error(`semantic search did not start: ${JSON.stringify(s.semantic)}`);
    if (Date.now() > end) throw new Error(`timed out: ${JSON.stringify(s.semantic)}`);
    await sleep(200);
  }
}

// "Which database holds our customers?" shares no word (or stem) with the PostgreSQL entry.
const QUESTION = 'which database holds our customers';

describe('semantic search', () => {
  it('a daemon embeds entries in the background and finds an entry by meaning; the vectors are cached', async () => {
    const dir = gitdir();
    const { db } = seed(dir);
    // Lexical alone does not find it.
    expect(cli(dir, ['query', QUESTION, '--json']).json()).toEqual([]);
    expect(cli(dir, ['daemon', 'start'], { env: ON }).code).toBe(0);
    onTestFinished(() => void cli(dir, ['daemon', 'stop']));
    const st = await untilReady(dir, 3);
    expect(st.semantic).toMatchObject({ enabled: true, model: 'minilm-l6-v2-static-128-fit', entries: 3, vectors_current: 3 });
    expect(st.rss_bytes).toBeGreaterThan(0);
    // With a daemon, the CLI's query (--semantic too) is the daemon's: no table or model of its own.
    const r = cli(dir, ['query', QUESTION, '--json', '--debug', '--semantic'], { env: ON });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()[0].id).toBe(db);
    expect(r.stderr).toContain('answered by the daemon');
    expect(r.stderr).toContain('semantic search on');
    // A new entry is embedded without a restart.
    const [late] = cli(
      dir,
      [
        'apply',
        'demo',
        '--json',
        '--file',
        writeJson(dir, 'late.json', [
          { operation: 'create', entry: entry({ subject: 'release', summary: 'Deploys to production happen every Tuesday afternoon' }) },
        ]),
      ],
      {
        env: ON,
      },
    )
      .json()
      .applied.map((a: { id: string }) => a.id);
    await untilReady(dir, 4);
    expect(cli(dir, ['query', 'which weekday are releases shipped', '--json'], { env: ON }).json()[0].id).toBe(late);
    expect(cli(dir, ['daemon', 'stop']).code).toBe(0);
    expect(existsSync(join(stateDir(dir), 'cache/vectors.bin'))).toBe(true);
    expect(git(dir, 'status', '--porcelain', '--untracked-files=all')).not.toMatch(/vectors|\.bass-agents/);
    // doctor counts the cached vectors without embedding anything.
    const doc = cli(dir, ['doctor', '--json']).json();
    expect(doc.semantic).toMatchObject({ model_installed: true, entries: 4, vectors_current: 4, projects_off: [] });
    expect(cli(dir, ['doctor']).stdout).toContain('4 of 4 entries have a current vector');
    // Without a daemon: lexical unless asked; --semantic loads the table here and uses the cache.
    expect(cli(dir, ['query', QUESTION, '--json']).json()).toEqual([]);
    const one = cli(dir, ['query', QUESTION, '--json', '--semantic', '--debug']);
    expect(one.code, one.stderr).toBe(0);
    expect(one.json()[0].id).toBe(db);
    expect(one.stderr).toContain('semantic search on');
  }, 120_000);

  it('background work waits while a caller is served, at most a while, and goes on once none is', async () => {
    const engine = new Engine({ root: gitdir(), longLived: true });
    let release = (): void => undefined;
    const served = engine.serve(() => new Promise<void>((r) => (release = r)));
    let quiet = false;
    void engine.quiet(60_000).then(() => (quiet = true));
    await sleep(50);
    expect(quiet).toBe(false);
    // A steady stream of callers only slows it down: each wait ends after `maxMs`.
    await engine.quiet(10);
    release();
    await served;
    await sleep(0);
    expect(quiet).toBe(true);
  });

  it('a one-shot --semantic embeds at most 64 missing entries, says how many are left, and exits', () => {
    const dir = gitdir();
    const updates = Array.from({ length: 70 }, (_, i) => ({
      operation: 'create',
      entry: entry({ subject: `notes.n${i}`, summary: `Note number ${i} about the release train` }),
    }));
    expect(cli(dir, ['apply', 'demo', '--file', writeJson(dir, 'many.json', updates)]).code).toBe(0);
    const r = cli(dir, ['query', 'shipping schedule', '--json', '--semantic']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('6 of 70 entries have no vector yet');
    // The process ended after its 64; the cache holds exactly those.
    expect(cli(dir, ['doctor', '--json']).json().semantic).toMatchObject({ entries: 70, vectors_current: 64 });
  }, 120_000);

  it('query.semantic: off keeps a project lexical; BASS_AGENTS_SEMANTIC=off keeps the daemon lexical', async () => {
    const dir = gitdir();
    seed(dir);
    const cfg = join(dir, 'ai-memory/demo/config.yaml');
    writeFileSync(cfg, readFileSync(cfg, 'utf8').replace('slow_ms: 200', 'slow_ms: 200\n  semantic: "off"'));
    expect(cli(dir, ['daemon', 'start'], { env: ON }).code).toBe(0);
    onTestFinished(() => void cli(dir, ['daemon', 'stop']));
    await sleep(300);
    const st = await daemonStatus(dir);
    expect(st.semantic.state).toBe('off');
    expect(cli(dir, ['daemon', 'status'], { env: ON }).stdout).toMatch(/semantic search\s+off/);
    expect(cli(dir, ['query', QUESTION, '--json'], { env: ON }).json()).toEqual([]);
    expect(cli(dir, ['daemon', 'stop']).code).toBe(0);
    expect(cli(dir, ['doctor', '--json']).json().semantic.projects_off).toEqual(['demo']);
    // The environment switch, with the project on again.
    writeFileSync(cfg, readFileSync(cfg, 'utf8').replace('\n  semantic: "off"', ''));
    expect(cli(dir, ['daemon', 'start'], { env: { BASS_AGENTS_SEMANTIC: 'off' } }).code).toBe(0);
    await sleep(300);
    expect((await daemonStatus(dir)).semantic.state).toBe('off');
  }, 60_000);

  it('the MCP server ranks by meaning once its entries are embedded', async () => {
    const dir = gitdir();
    const { db } = seed(dir);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'memory', 'mcp'],
      cwd: dir,
      env: { ...(cleanGitEnv(dir) as Record<string, string>), ...ON },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(transport);
    onTestFinished(() => client.close());
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('memory_query');
    const end = Date.now() + 60_000;
    let ids: string[] = [];
    while (Date.now() < end) {
      const r = await client.callTool({ name: 'memory_query', arguments: { query: QUESTION } });
      ids = ((r.structuredContent as { results: { id: string }[] }).results ?? []).map((h) => h.id);
      if (ids.length) break;
      await sleep(300); // lexical (nothing) until the entries are embedded
    }
    expect(ids[0]).toBe(db);
  }, 90_000);
});

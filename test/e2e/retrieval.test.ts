import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryService } from '../../src/index.js';
import { cleanGitEnv, cli, entry, firstOf, git, gitdir, idsFor, writeJson, stateDir, type IdsOf } from '../helpers/repo.js';

const NOW = '2026-06-15T00:00:00Z';
const env = { BASS_AGENTS_NOW: NOW };

/**
 * Applies entries as one batch, in process: what these tests check is how entries are found and
 * shown (through the CLI), not how they are written (test/e2e/cli-core.test.ts drives that), and a
 * CLI process per batch cost this file a third of its time. Returns their ids in order.
 */
async function seed<const E extends readonly Record<string, unknown>[]>(dir: string, entries: E, project = 'demo', at = NOW): Promise<IdsOf<E>> {
  const svc = new MemoryService({ cwd: dir, env: { ...cleanGitEnv(dir), BASS_AGENTS_NOW: at } });
  const r = await svc.apply(
    entries.map((e) => ({ operation: 'create', entry: e })),
    { project },
  );
  expect(r.skipped, JSON.stringify(r.skipped)).toEqual([]);
  return idsFor(entries, r.applied);
}

const ids = (r: { json: () => { id: string }[] }) => r.json().map((e) => e.id);

describe('query filters and scope rules (Req 4, 15.6-15.7, 17)', () => {
  it('a service scope sees itself plus repo and org; no scope sees all', async () => {
    const dir = gitdir();
    const [svc, repo, org, other, prod, cust] = await seed(dir, [
      entry({ scope: 'service:billing', summary: 'billing service fact' }),
      entry({ scope: 'repo', summary: 'repo fact' }),
      entry({ scope: 'org', summary: 'org fact' }),
      entry({ scope: 'service:search', summary: 'search service fact' }),
      entry({ scope: 'environment:prod', summary: 'prod fact' }),
      entry({ scope: 'customer', summary: 'customer fact' }),
    ]);
    expect(ids(cli(dir, ['list', '--scope', 'service:billing', '--json'], { env })).sort()).toEqual([svc, repo, org].sort());
    expect(ids(cli(dir, ['list', '--scope', 'environment:prod', '--json'], { env })).sort()).toEqual([prod, repo, org].sort());
    expect(ids(cli(dir, ['list', '--scope', 'customer', '--json'], { env })).sort()).toEqual([cust, repo, org].sort());
    expect(ids(cli(dir, ['list', '--json'], { env }))).toHaveLength(6);
    expect(ids(cli(dir, ['query', 'fact', '--scope', 'service:search', '--json'], { env })).sort()).toEqual([other, repo, org].sort());
    expect(cli(dir, ['list', '--scope', 'planet'], { env }).code).toBe(2);
  });

  it('section, kind, subject, tags (all of them), confidence, status and dates', async () => {
    const dir = gitdir();
    const [a, b, c] = await seed(dir, [
      entry({ summary: 'a', tags: ['x', 'y'], subject: 'svc.a' }),
      entry({ summary: 'b', tags: ['x'], section: 'learnings', kind: 'incident', confidence: 0.65 }),
      entry({ summary: 'c', tags: ['y'], status: 'draft', evidence: [] }),
    ]);
    const [late] = await seed(dir, [entry({ summary: 'later one', confidence: 0.4 })], 'demo', '2026-06-20T00:00:00Z');
    const q = (...args: string[]) => ids(cli(dir, ['list', '--json', ...args], { env: { BASS_AGENTS_NOW: '2026-06-21T00:00:00Z' } }));
    expect(q('--tags', 'x,y')).toEqual([a]);
    expect(q('--tags', 'x').sort()).toEqual([a, b].sort());
    expect(q('--section', 'learnings')).toEqual([b]);
    expect(q('--kind', 'incident')).toEqual([b]);
    expect(q('--subject', 'svc.a')).toEqual([a]);
    expect(q('--min-confidence', '0.7')).toEqual([a]);
    expect(q('--status', 'draft')).toEqual([c]);
    // `any` asks for everything: the confidence default no longer applies (the 0.4 one is back).
    expect(q('--status', 'any').sort()).toEqual([a, b, c, late].sort());
    expect(q('--status', 'any', '--min-confidence', '0.6').sort()).toEqual([a, b, c].sort());
    expect(q('--min-confidence', '0', '--since', '2026-06-19T00:00:00Z')).toEqual([late]);
    expect(q('--min-confidence', '0', '--until', '2026-06-16T00:00:00Z').sort()).toEqual([a, b].sort());
    expect(q('--min-confidence', '0', '--since', '2d')).toEqual([late]);
    expect(cli(dir, ['list', '--status', 'gone']).code).toBe(2);
    expect(cli(dir, ['query', 'nothing-matches-this-zzz', '--json'], { env }).json()).toEqual([]);
  });
});

describe('state freshness and ranking (Req 15.2-15.4, 15.8, 19.2-19.5)', () => {
  it('expired state is excluded, near-expiry is flagged and down-ranked', async () => {
    const dir = gitdir();
    const st = (summary: string, to: string, confidence = 0.9) =>
      entry({
        section: 'state',
        kind: 'metric',
        summary,
        valid_from: '2026-01-01T00:00:00Z',
        valid_to: to,
        confidence,
        evidence: [{ type: 'artifact', uri: 'https://ci.example.com/1', note: '' }],
      });
    const [expired, soon, fresh] = await seed(dir, [
      st('expired state', '2026-06-01T00:00:00Z'),
      st('expiring state', '2026-06-18T00:00:00Z', 0.95),
      st('fresh state', '2026-12-01T00:00:00Z', 0.7),
    ]);
    const list = cli(dir, ['list', '--section', 'state', '--json'], { env }).json();
    expect(list.map((e: { id: string }) => e.id)).toEqual([fresh, soon]);
    expect(list[1].meta.flags).toContain('expiring_soon');
    const q = cli(dir, ['query', 'state', '--section', 'state', '--json'], { env }).json();
    expect(q.map((e: { id: string }) => e.id)).toEqual([fresh, soon]);
    expect(ids(cli(dir, ['list', '--include-expired', '--json'], { env }))).toContain(expired);
    const human = cli(dir, ['query', 'state'], { env }).stdout;
    expect(human).toContain('[expiring_soon]');
  });

  it('without text: confidence, then evidence quality, then recency', async () => {
    const dir = gitdir();
    const ev = (type: string, uri: string) => [{ type, uri, note: '' }];
    const [low] = await seed(
      dir,
      [entry({ summary: 'low', confidence: 0.7, kind: 'other', evidence: ev('code', 'src/a.ts') })],
      'demo',
      '2026-06-01T00:00:00Z',
    );
    const [assume, older] = await seed(
      dir,
      [
        entry({ summary: 'assumption', kind: 'other', evidence: ev('assumption', 'we believe') }),
        entry({ summary: 'older code', kind: 'other', evidence: ev('code', 'src/b.ts') }),
      ],
      'demo',
      '2026-06-02T00:00:00Z',
    );
    const [newer, ticket] = await seed(
      dir,
      [
        entry({ summary: 'newer code', kind: 'other', evidence: ev('artifact', 'build/x.zip') }),
        entry({ summary: 'ticket', kind: 'other', evidence: ev('ticket', 'https://github.com/o/r/issues/1') }),
      ],
      'demo',
      '2026-06-03T00:00:00Z',
    );
    expect(ids(cli(dir, ['list', '--json'], { env }))).toEqual([newer, older, ticket, assume, low]);
  });

  it('with text: relevance first, summary and subject count more than content', async () => {
    const dir = gitdir();
    const [inContent, inSummary] = await seed(dir, [
      entry({ summary: 'Retry policy for webhooks', content: 'Mentions kafka once in passing.' }),
      entry({ summary: 'Kafka consumers commit offsets after processing', content: 'Offsets are committed after the handler succeeds.', confidence: 0.7 }),
    ]);
    const r = cli(dir, ['query', 'kafka', '--json'], { env }).json();
    expect(r.map((e: { id: string }) => e.id)).toEqual([inSummary, inContent]);
    expect(r[0].meta.score).toBeGreaterThan(r[1].meta.score);
  });
});

describe('retrieval beyond exact words', () => {
  it('a question in other words and other forms finds the entry: stopwords dropped, words stemmed', async () => {
    const dir = gitdir();
    const [deploy] = await seed(dir, [
      entry({ summary: 'Deployments to production are frozen on Fridays', subject: 'release.policy', content: 'Agreed after two incidents.' }),
      entry({ summary: 'What we did was the thing that they had to do there', subject: 'misc.notes', content: 'It is what it is.' }),
    ]);
    const r = cli(dir, ['query', 'what did they decide about deploying on a friday?', '--json'], { env }).json();
    expect(r[0].id).toBe(deploy);
  });

  it('context comes from what writers state: a link and a supersede raise their entries; a batch of unrelated learnings does not', async () => {
    const dir = gitdir();
    const chat = (summary: string, subject: string, more: Record<string, unknown> = {}) =>
      entry({ summary, subject, section: 'observations', kind: 'other', ...more });
    // Written in an order unrelated to the questions, one batch: no entry is another's context.
    const [cats, flaky, dog] = await seed(dir, [
      chat('Alice: the cat sleeps on the sofa all day', 'chat.pets'),
      entry({ summary: 'Flaky integration tests come from the shared Redis instance', subject: 'ci.flaky', section: 'learnings', kind: 'incident' }),
      chat('Alice: I finally adopted a dog last weekend', 'chat.dog'),
    ]);
    const unrelated = cli(dir, ['query', 'adopted dog', '--json'], { env }).json() as { id: string }[];
    expect(unrelated.map((h) => h.id)).toEqual([dog]);
    // The reply names what it answers: "What breed is it?" shares no word with the question.
    const [breed] = await seed(dir, [chat('Bob: a golden retriever named Max', 'chat.breed', { related_entries: [dog] })]);
    const [ask] = await seed(dir, [chat('Alice: so my adopted dog is a golden one?', 'chat.q', { related_entries: [breed] })]);
    const r = cli(dir, ['query', 'adopted dog', '--json', '--debug'], { env });
    const got = (r.json() as { id: string }[]).map((h) => h.id);
    expect(got.slice(0, 2).sort()).toEqual([ask, dog].sort());
    expect(got).toContain(breed);
    expect(got).not.toContain(cats);
    expect(got).not.toContain(flaky);
    expect(r.stderr).toContain(`${breed} raised by a link from ${ask}`);
    // A superseded entry still matches the words of its time: its replacement is raised.
    const [mysql] = await seed(dir, [entry({ summary: 'User accounts are stored in MySQL', subject: 'storage' })]);
    const [pg] = await seed(dir, [entry({ summary: 'Moved the user accounts to PostgreSQL in March', subject: 'storage.v2' })]);
    expect(cli(dir, ['supersede', mysql, '--by', pg], { env }).code).toBe(0);
    expect(ids(cli(dir, ['query', 'mysql', '--json'], { env }))).toEqual([pg]);
    // Filters still apply to what a link raises.
    expect(cli(dir, ['query', 'adopted dog', '--json', '--section', 'decisions'], { env }).json()).toEqual([]);
  });
});

describe('result shape (Req 4.8-4.12, 3.10, 11.3)', () => {
  it('caps at 50, honours --limit, summary-only, low-confidence flag, related entries', async () => {
    const dir = gitdir();
    const many = await seed(
      dir,
      Array.from({ length: 55 }, (_, i) => entry({ summary: `fact number ${i}`, kind: 'other', confidence: 0.6 + (i % 4) / 10 })),
    );
    expect(cli(dir, ['list', '--json'], { env }).json()).toHaveLength(50);
    expect(cli(dir, ['query', 'fact', '--json', '--limit', '3'], { env }).json()).toHaveLength(3);
    const so = cli(dir, ['query', 'fact', '--json', '--summary-only', '--limit', '1'], { env }).json()[0];
    expect(Object.keys(so).sort()).toEqual(['confidence', 'id', 'kind', 'meta', 'scope', 'subject', 'summary']);
    const [lowc] = await seed(dir, [entry({ summary: 'shaky', kind: 'hypothesis', confidence: 0.4 })]);
    const low = cli(dir, ['query', 'shaky', '--min-confidence', '0', '--json'], { env }).json();
    expect(low[0]).toMatchObject({ id: lowc, meta: { flags: ['low_confidence'], confidence_label: 'uncertain' } });
    const [withRel] = await seed(dir, [entry({ summary: 'points elsewhere zebra', related_entries: [many[0], lowc] })]);
    const rel = cli(dir, ['query', 'zebra', '--include-related', '--json'], { env }).json();
    expect(rel.map((e: { id: string }) => e.id)).toEqual([withRel, many[0]]); // lowc is below the confidence default
    expect(rel[1].meta.score).toBeGreaterThan(0); // raised by the link of the best hit, ranked rather than appended
    // Beyond the best hits' links, --include-related appends the related entries of every result.
    const [second] = await seed(dir, [entry({ summary: 'zebra zebra crossing', related_entries: [many[1]] })]);
    const more = cli(dir, ['query', 'zebra', '--include-related', '--json', '--limit', '3'], { env }).json();
    expect(
      more
        .map((e: { id: string }) => e.id)
        .slice(0, 2)
        .sort(),
    ).toEqual([second, withRel].sort());
  });

  it('--debug prints time and counts; the index snapshot is reused and rebuilt when corrupt', async () => {
    const dir = gitdir();
    await seed(dir, [entry({ summary: 'alpha' })]);
    await seed(dir, [entry({ summary: 'beta' })]);
    const first = cli(dir, ['query', 'alpha', '--debug'], { env });
    expect(first.stderr).toMatch(
      /debug: execution time [\d.]+ ms, entries scanned 2, matched filters 1, entries returned 1, semantic search off, index: built \(\+2/,
    );
    const second = cli(dir, ['query', 'alpha', '--debug'], { env });
    expect(second.stderr).toMatch(/index: snapshot loaded \(\+0 ~0 -0\)/);
    await seed(dir, [entry({ summary: 'gamma alpha' })]);
    expect(cli(dir, ['query', 'alpha', '--debug'], { env }).stderr).toMatch(/snapshot loaded \(\+1 ~0 -0\)/);
    writeFileSync(join(stateDir(dir), 'cache/index.bin'), '{ not json');
    const rebuilt = cli(dir, ['query', 'alpha', '--json', '--debug'], { env });
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.json()).toHaveLength(2);
    expect(rebuilt.stderr).toMatch(/index: built/);
    const log = readFileSync(join(stateDir(dir), 'logs/queries.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(log.length).toBeGreaterThanOrEqual(4);
    expect(JSON.parse(log[0]!)).toMatchObject({ text_hash: expect.stringMatching(/^[0-9a-f]{16}$/), result_count: 1 });
    expect(log.join('\n')).not.toContain('alpha'); // no query text unless the config asks (logging.query_text)
    expect(git(dir, 'status', '--porcelain', '--untracked-files=all')).not.toMatch(/bass-agents|queries/);
  });

  it('a hand-broken entry file is reported with its path and skipped', async () => {
    const dir = gitdir();
    const [good, bad] = await seed(dir, [entry({ summary: 'good one' }), entry({ summary: 'to be broken' })]);
    const badFile = join(dir, 'ai-memory/demo/decisions', `${bad}.json`);
    writeFileSync(badFile, readFileSync(badFile, 'utf8').replace('"confidence": 0.9', '"confidence": "high"'));
    const r = cli(dir, ['list', '--json'], { env });
    expect(r.code).toBe(0);
    expect(ids(r)).toEqual([good]);
    expect(r.stderr).toMatch(new RegExp(`warning: skipping ai-memory/demo/decisions/${bad}\\.json: confidence`));
  });
});

describe('AgentTask / AgentResult (Req 8, 9)', () => {
  it('prepare-task fills at most 10 entries, best first, summaries only; untouched when disabled', async () => {
    const dir = gitdir();
    await seed(
      dir,
      Array.from({ length: 14 }, (_, i) =>
        entry({
          summary: `billing rule ${i}`,
          kind: 'other',
          confidence: 0.6 + i / 50,
          evidence: [{ type: i % 2 ? 'code' : 'log', uri: `src/r${i}.ts`, note: '' }],
        }),
      ),
    );
    await seed(dir, [entry({ summary: 'billing draft', status: 'draft', evidence: [] })]);
    const task = { goal: 'fix a billing rule', memory_enabled: true, project: 'demo', extra: { keep: true } };
    const r = cli(dir, ['prepare-task', '--file', writeJson(dir, 't.json', task)], { env });
    expect(r.code, r.stderr).toBe(0);
    const out = r.json();
    expect(out.extra).toEqual({ keep: true });
    expect(out.memory_context).toHaveLength(10);
    const conf = out.memory_context.map((e: { confidence: number }) => e.confidence);
    expect(conf).toEqual([...conf].sort((a: number, b: number) => b - a));
    expect(out.memory_context[0].content).toBeUndefined();
    expect(out.memory_context.every((e: { status: string }) => e.status === 'active')).toBe(true);
    const off = cli(dir, ['prepare-task', '--file', writeJson(dir, 'off.json', { goal: 'x', memory_enabled: false })], { env }).json();
    expect(off.memory_context).toBeUndefined();
  });

  it('apply-result applies valid updates as one commit, skips invalid ones, auto-initializes', async () => {
    const dir = gitdir();
    const result = {
      agent_id: 'reviewer-bot',
      memory_updates: [
        { operation: 'create', entry: entry({ summary: 'from an agent run' }) },
        { operation: 'create', entry: { summary: 'missing everything' } },
      ],
    };
    const r = cli(dir, ['apply-result', 'newproj', '--json', '--file', writeJson(dir, 'r.json', result)]);
    expect(r.code).toBe(1);
    const out = r.json();
    expect(out.applied).toHaveLength(1);
    expect(out.skipped[0].index).toBe(1);
    expect(existsSync(join(dir, 'ai-memory/newproj/config.yaml'))).toBe(true);
    expect(cli(dir, ['show', out.applied[0].id, '--json']).json().created_by).toBe('reviewer-bot');
    expect(git(dir, 'log', '-1', '--format=%B')).toContain('Memory-Agent: reviewer-bot');
  });
});

describe('sync-context and stats', () => {
  it('sync-context is deterministic and selects confident, code-evidenced, active entries', async () => {
    const dir = gitdir();
    await seed(dir, [
      entry({ summary: 'strong fact', confidence: 0.9 }),
      entry({ summary: 'weak fact', confidence: 0.7 }),
      entry({ summary: 'doc only fact', evidence: [{ type: 'doc', uri: 'docs/a.md', note: '' }] }),
    ]);
    const first = cli(dir, ['sync-context', 'demo', '--json'], { env }).json();
    expect(first).toMatchObject({ path: 'ai-context/demo.md', changed: true, included: 1 });
    const text = readFileSync(join(dir, 'ai-context/demo.md'), 'utf8');
    expect(text).toMatch(/^<!-- Generated by bass-agents/);
    expect(text).toContain('strong fact');
    expect(text).not.toContain('weak fact');
    expect(text).not.toContain('doc only fact');
    const second = cli(dir, ['sync-context', 'demo', '--json'], { env: { BASS_AGENTS_NOW: '2026-06-16T00:00:00Z' } }).json();
    expect(second).toMatchObject({ changed: false, commit: null });
    expect(readFileSync(join(dir, 'ai-context/demo.md'), 'utf8')).toBe(text);
  });

  it('stats returns every Req 22 field', async () => {
    const dir = gitdir();
    await seed(dir, [entry({ summary: 'one' }), entry({ summary: 'two', confidence: 0.3, kind: 'hypothesis' })]);
    cli(dir, ['query', 'one', '--subject', 'billing.invoices'], { env });
    const s = cli(dir, ['stats', 'demo', '--json'], { env }).json();
    for (const k of [
      'total_entries',
      'entries_by_section',
      'entries_by_status',
      'entries_by_kind',
      'avg_confidence',
      'confidence_distribution',
      'entries_created_over_time',
      'entries_superseded_over_time',
      'evidence_type_distribution',
      'low_confidence_count',
      'stale_evidence_count',
      'entries_by_agent',
      'most_active_agents',
      'recent_operations',
      'most_queried_subjects',
      'most_queried_scopes',
      'query_frequency_over_time',
      'superseded_percentage',
      'entries_approaching_expiry',
      'compaction_candidates',
    ]) {
      expect(s, k).toHaveProperty(k);
    }
    expect(s.total_entries).toBe(2);
    expect(s.confidence_distribution).toEqual({ '0.0-0.2': 0, '0.2-0.4': 1, '0.4-0.6': 0, '0.6-0.8': 0, '0.8-1.0': 1 });
    expect(s.low_confidence_count).toBe(1);
    expect(s.most_queried_subjects).toEqual([{ subject: 'billing.invoices', count: 1 }]);
    expect(s.recent_operations).toHaveLength(2);
  });
});

describe('a duplicated entry file', () => {
  it('an id in two files of a project: queries keep working, the second file is reported by name', async () => {
    const dir = gitdir();
    const [id] = await seed(dir, [entry({ summary: 'original retry fact', section: 'learnings', kind: 'other' })]);
    // A hand copy into another section (or a move merged with an edit).
    const text = readFileSync(join(dir, `ai-memory/demo/learnings/${id}.json`), 'utf8').replace('"section": "learnings"', '"section": "decisions"');
    mkdirSync(join(dir, 'ai-memory/demo/decisions'), { recursive: true });
    writeFileSync(join(dir, `ai-memory/demo/decisions/${id}.json`), text);
    const q = cli(dir, ['query', 'retry', '--json'], { env });
    expect(q.code, q.stderr).toBe(0);
    expect(ids(q)).toEqual([id]);
    expect(q.json()[0].section).toBe('decisions'); // the file whose path sorts first keeps the id
    const doc = cli(dir, ['doctor', '--json'], { env });
    expect(doc.code).toBe(1);
    expect(doc.json().problems).toContainEqual(
      expect.objectContaining({
        file: `ai-memory/demo/learnings/${id}.json`,
        message: `has id ${id}, which ai-memory/demo/decisions/${id}.json already has; ids must be unique within a project (this file is skipped)`,
      }),
    );
  });
});

describe('one engine for every front end', () => {
  it('a long-lived service (daemon, MCP) ranks exactly as a one-shot query, also after edits', async () => {
    const { MemoryService } = await import('../../src/service/memory-service.js');
    const dir = gitdir();
    const words = ['invoice', 'retry', 'ledger', 'kafka', 'offset', 'cache', 'latency', 'deploy', 'canary', 'token'];
    const made = await seed(
      dir,
      Array.from({ length: 60 }, (_, i) =>
        entry({
          subject: `area.${words[i % words.length]}`,
          summary: `${words[i % 10]} ${words[(i * 3) % 10]} ${words[(i * 7) % 10]} note ${i}`,
          content: `${words[(i * 5) % 10]} details for note ${i}`,
          confidence: 0.6 + (i % 5) / 10,
        }),
      ),
    );
    const [m0, m1] = firstOf(made, 2);
    const svcEnv = { ...process.env, BASS_AGENTS_NOW: NOW };
    const longLived = new MemoryService({ cwd: dir, env: svcEnv, longLived: true });
    const compare = (): void => {
      // Small limits make the long-lived path drop most hits before ranking (textFloor).
      for (const q of ['invoice retry', 'kafka', 'latency canary', 'ledger token deploy', 'offsets', 'note details', 'not'])
        for (const limit of [undefined, 3, 10]) {
          const one = new MemoryService({ cwd: dir, env: svcEnv }).query(q, {}, { record: false, limit });
          const long = longLived.query(q, {}, { record: false, limit });
          const ids = (r: typeof one): unknown[] =>
            r.results.map((h: { entry: { id: string }; score: number; flags: string[] }) => [h.entry.id, h.score, h.flags]);
          expect(ids(long).length, q).toBeGreaterThan(0);
          expect(ids(long), `${q} limit ${limit}`).toEqual(ids(one));
          expect(long.stats.entries_matched_filters, q).toBe(one.stats.entries_matched_filters);
        }
    };
    compare();
    // Edits change documents' internal numbers in the long-lived index: still the same answers.
    const sup = cli(dir, ['supersede', m0, '--by', m1], { env });
    expect(sup.code, sup.stderr).toBe(0);
    await seed(dir, [entry({ summary: 'invoice retry kafka latency added later', subject: 'area.late' })]);
    compare();
  });

  it('a daemon-style service following watcher batches (refreshPaths) answers as a fresh one-shot query', async () => {
    const { MemoryService } = await import('../../src/service/memory-service.js');
    const dir = gitdir();
    const words = ['invoice', 'retry', 'ledger', 'kafka', 'offset', 'cache', 'latency', 'deploy', 'canary', 'token'];
    const made = await seed(
      dir,
      Array.from({ length: 40 }, (_, i) => entry({ summary: `${words[i % 10]} ${words[(i * 3) % 10]} note ${i}`, content: `${words[(i * 7) % 10]} details` })),
    );
    const [m0, m1, m2, m3, m4] = firstOf(made, 5);
    const svcEnv = { ...process.env, BASS_AGENTS_NOW: NOW };
    const daemonLike = new MemoryService({ cwd: dir, env: svcEnv, longLived: true, watched: true });
    daemonLike.engine.rm.refresh();
    const view = (r: { results: { entry: { id: string }; score: number; flags: string[] }[]; stats: { entries_matched_filters: number } }): unknown => [
      r.results.map((h) => [h.entry.id, h.score, h.flags]),
      r.stats.entries_matched_filters,
    ];
    const compare = (step: number): void => {
      for (const q of ['invoice retry', 'kafka', 'note', 'details cache'])
        for (const limit of [undefined, 3]) {
          const fresh = new MemoryService({ cwd: dir, env: svcEnv }).query(q, {}, { record: false, limit });
          expect(view(daemonLike.query(q, {}, { record: false, limit, refresh: false })), `step ${step}: ${q} ${limit}`).toEqual(view(fresh));
        }
    };
    compare(0);
    const file = (id: string, section = 'decisions'): string => `ai-memory/demo/${section}/${id}.json`;
    mkdirSync(join(dir, 'ai-memory/demo/learnings'), { recursive: true });
    const original = (id: string): string => readFileSync(join(dir, file(id)), 'utf8');
    const steps: [string[], () => void][] = [
      [[file(m0)], () => writeFileSync(join(dir, file(m0)), original(m0).replace('note 0', 'note 0 kafka kafka rewritten'))],
      [[file(m1)], () => writeFileSync(join(dir, file(m1)), '{ broken by hand')],
      // A copy into learnings/ sorts after decisions/: skipped as a duplicate; then the original
      // goes and the copy takes over its id; then the copy goes too.
      [
        [file(m2, 'learnings')],
        () =>
          writeFileSync(
            join(dir, file(m2, 'learnings')),
            original(m2)
              .replace('"section": "decisions"', '"section": "learnings"')
              .replace('"kind": "decision"', '"kind": "other"')
              .replace('note 2', 'note 2 copy invoice'),
          ),
      ],
      [[file(m2)], () => rmSync(join(dir, file(m2)))],
      [[file(m2, 'learnings')], () => rmSync(join(dir, file(m2, 'learnings')))],
      [
        [file(m3), file('01ZZZZZZZZZZZZZZZZZZZZZZZZ')],
        () => {
          rmSync(join(dir, file(m3)));
          writeFileSync(
            join(dir, file('01ZZZZZZZZZZZZZZZZZZZZZZZZ')),
            original(m4).replaceAll(m4, '01ZZZZZZZZZZZZZZZZZZZZZZZZ').replace('note 4', 'brand new canary'),
          );
        },
      ],
    ];
    steps.forEach(([paths, act], i) => {
      act();
      daemonLike.engine.rm.refresh({ paths });
      compare(i + 1);
    });
  });
});

import { describe, expect, it } from 'vitest';
import { buildPlan, mergedEntry } from '../../src/core/consolidate.js';
import { candidateEntry, extractCandidates, findSimilar, scoreConfidence } from '../../src/core/extract.js';
import { decide, similarity, vectorize } from '../../src/core/similarity.js';
import type { MemoryEntry } from '../../src/core/schema.js';
import { firstOf } from '../helpers/repo.js';

describe('extract (001 §3)', () => {
  it('finds each pattern type with its base confidence adjusted by content quality', () => {
    const text = [
      'After a long debate we decided to use Postgres advisory locks for the billing scheduler jobs.',
      'Important: never run the migration during business hours because the invoices table locks.',
      'The fix was to raise the HTTP client timeout to 30 seconds in the config.',
      'The bug was a race between two workers updating the same ledger row.',
      'Remember that the staging database is reset every Sunday night.',
      'The trick is to warm the cache before switching traffic to the canary.',
    ].join('\n');
    const c = extractCandidates(text);
    expect(c.map((x) => x.type)).toEqual(['decision', 'important', 'solution', 'error', 'explicit', 'pattern']);
    expect(c[0]).toMatchObject({ text: 'to use Postgres advisory locks for the billing scheduler jobs', confidence: 0.9 }); // 0.8 + 10 words
    expect(c[2]?.confidence).toBe(1); // 0.85 + 12 words 0.1 + technical (config) 0.05
  });
  it('scores: +0.1 for 10+ words, -0.1 under 5, +0.05 technical, +0.1 code; clamps to [0, 1]', () => {
    expect(scoreConfidence('one two three', 0.8)).toBe(0.7);
    expect(scoreConfidence('a b c d e f g h i j', 0.8)).toBe(0.9);
    expect(scoreConfidence('the api config is wrong here', 0.8)).toBe(0.85);
    expect(scoreConfidence('use ```x``` now and then and here', 0.95)).toBe(1);
  });
  it('drafts: the whole sentence as summary, a subject from its own words, confidence at most 0.9; fixes and root causes found', () => {
    const text =
      'Deploys were flaky all week. After a long debate we decided to use Postgres advisory locks for the billing scheduler jobs. Later we fixed the retry loop in src/billing/retry.ts by adding jitter. The root cause was a shared connection pool in ledger.writer.';
    const c = extractCandidates(text);
    const entries = c.map((x) => candidateEntry(x, 'notes.md'));
    expect(entries.map((e) => e.summary)).toEqual([
      'After a long debate we decided to use Postgres advisory locks for the billing scheduler jobs.',
      'Later we fixed the retry loop in src/billing/retry.ts by adding jitter.',
      'The root cause was a shared connection pool in ledger.writer.',
    ]);
    expect(entries.map((e) => e.subject)).toEqual(['long.debate', 'billing.retry', 'ledger.writer']);
    expect(entries.map((e) => e.kind)).toEqual(['decision', 'runbook_step', 'incident']);
    for (const e of entries) expect(e.confidence as number).toBeLessThanOrEqual(0.9);
    expect(
      candidateEntry(firstOf(extractCandidates('Remember that the staging database is reset every Sunday night by the api cron job.'), 1)[0], 'x').confidence,
    ).toBe(0.9);
  });

  it('overlapping matches keep the most confident; low confidence is dropped; drafts with assumption evidence', () => {
    const c = extractCandidates('Note: remember that retries must be idempotent.');
    expect(c).toHaveLength(1);
    expect(extractCandidates('Remember that x is y.', 0.99)).toEqual([]);
    const [c0] = firstOf(c, 1);
    const e = candidateEntry(c0, 'notes.md');
    expect(e).toMatchObject({
      status: 'draft',
      evidence: [{ type: 'assumption', uri: expect.stringMatching(/^extract:notes\.md#/) }],
      tags: ['extracted', c0.type],
    });
    expect(findSimilar('retries must be idempotent', [{ id: 'X', summary: 'Retries must be idempotent' }])).toBe('X');
    expect(findSimilar('retries must be idempotent', [{ id: 'X', summary: 'retries are cheap' }])).toBeUndefined();
  });
});

const mk = (id: string, summary: string, over: Partial<MemoryEntry> = {}): MemoryEntry => ({
  id,
  section: 'learnings',
  kind: 'other',
  subject: 'billing.retry',
  scope: 'repo',
  summary,
  content: summary,
  tags: [],
  confidence: 0.8,
  evidence: [{ type: 'code', uri: `src/${id}.ts`, note: '' }],
  status: 'active',
  superseded_by: null,
  related_entries: [],
  valid_from: null,
  valid_to: null,
  created_by: 'a',
  created_at: `2026-01-0${id.length}T00:00:00.000Z`,
  updated_at: '2026-01-05T00:00:00.000Z',
  ...over,
});

describe('consolidation (001 §4)', () => {
  it('combined similarity and the merge / review / link thresholds', () => {
    const v = vectorize([
      { id: 'a', text: 'invoice retries use exponential backoff' },
      { id: 'b', text: 'invoice retries use exponential backoff' },
      { id: 'c', text: 'dashboards load slowly' },
    ]);
    expect(similarity(v, 'a', 'b').combined).toBeCloseTo(1, 10);
    expect(decide(similarity(v, 'a', 'b'))).toBe('merge');
    expect(decide(similarity(v, 'a', 'c'))).toBe('separate');
    expect(decide({ combined: 0.85, overlap: 0.9 })).toBe('review');
    expect(decide({ combined: 0.92, overlap: 0.4 })).toBe('review');
    expect(decide({ combined: 0.77, overlap: 0 })).toBe('link');
  });
  it('groups near-duplicates by union-find and builds the merged entry by strategy', () => {
    const entries = [
      mk('a', 'Invoice retries use exponential backoff with jitter', { tags: ['x'] }),
      mk('bb', 'invoice retries use exponential backoff with jitter.', { tags: ['y'], confidence: 0.9 }),
      mk('ccc', 'Invoice retries use exponential backoff with jitter!', { updated_at: '2026-02-01T00:00:00.000Z' }),
      mk('dddd', 'The dashboard is slow on Mondays', { subject: 'ui.dash' }),
      mk('eeeee', 'old', { status: 'superseded', superseded_by: 'a' }),
    ];
    const plan = buildPlan('demo', entries, { now: '2026-03-01T00:00:00.000Z', importance: (e) => (e.id === 'bb' ? 0.9 : 0.3) });
    const merge = plan.groups.find((g) => g.action === 'merge')!;
    expect(merge.members.map((m) => m.id)).toEqual(['a', 'bb', 'ccc']);
    expect(merge.kept).toBe('bb');
    expect(merge.result).toMatchObject({ confidence: 0.9, tags: ['y', 'x'] });
    expect(plan.superseded_candidates).toEqual(['eeeee']);
    expect(mergedEntry(entries.slice(0, 3), 'keep_newest', () => 0).kept.id).toBe('ccc');
    expect(mergedEntry(entries.slice(0, 3), 'keep_oldest', () => 0).kept.id).toBe('a');
    expect(String(mergedEntry(entries.slice(0, 3), 'merge_content', () => 0).entry.content)).toContain('jitter!');
  });
  it('summarizes a subject with many entries (004)', () => {
    const many = Array.from({ length: 4 }, (_, i) =>
      mk(`s${i}`, `distinct fact number ${i} about ${['alpha', 'beta', 'gamma', 'delta'][i]}`, { subject: 'team.onboarding' }),
    );
    const plan = buildPlan('demo', many, { now: '2026-03-01T00:00:00.000Z', summarizeAt: 4, importance: () => 0.5 });
    const sum = plan.groups.find((g) => g.action === 'summarize')!;
    expect(sum.subject).toBe('team.onboarding');
    expect(sum.result).toMatchObject({ summary: 'Summary of 4 entries about team.onboarding', related_entries: expect.arrayContaining(['s0', 's3']) });
  });
});

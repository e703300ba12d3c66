// Every write the service offers, run in process on a real git repository with a fixed clock:
// what each one commits (paths, subject, trailers) and logs is pinned by a snapshot, so moving the
// write path into one transaction (and the service into use-case modules) cannot change it.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryService } from '../../src/index.js';
import { entry, firstOf, git, gitdir, stateDir } from '../helpers/repo.js';

/** Replaces ULIDs and commit ids by stable placeholders, in order of first appearance. */
function normalizer(): (s: string) => string {
  const seen = new Map<string, string>();
  return (s) =>
    s.replace(/\b[0-9A-HJKMNP-TV-Z]{26}\b|\b[0-9a-f]{40}\b/g, (m) => {
      let v = seen.get(m);
      if (!v) seen.set(m, (v = /^[0-9a-f]{40}$/.test(m) ? `<commit${seen.size}>` : `<id${seen.size}>`));
      return v;
    });
}

/**
 * Ids of one batch are random after their time part, so git lists a commit's files, and a
 * consolidation its members (trailers and log lines), in an order that changes from run to run: each run of file lines and
 * of Memory-Id/Memory-Op pairs is put in placeholder order.
 */
function inIdOrder(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length;) {
    const pair = (k: number): boolean => /^Memory-Id: /.test(lines[k] ?? '') && /^Memory-Op: /.test(lines[k + 1] ?? '');
    const run = [/^[AMD]\t/, /^op .*"op":"supersede"/].find((re) => re.test(lines[i] ?? ''));
    if (run) {
      let j = i;
      while (run.test(lines[j] ?? '')) j++;
      out.push(...lines.slice(i, j).sort());
      i = j;
    } else if (pair(i)) {
      const pairs: string[] = [];
      while (pair(i)) {
        pairs.push(`${lines[i]}\n${lines[i + 1]}`);
        i += 2;
      }
      out.push(...pairs.sort());
    } else out.push(lines[i++]!); // i < lines.length
  }
  return out.join('\n');
}

describe('the write path of every write command', () => {
  it('commits the same paths, messages and operation log as before', async () => {
    const dir = gitdir();
    let now = Date.parse('2026-03-01T10:00:00.000Z');
    const svc = new MemoryService({ cwd: dir, agent: 'snap-agent', env: { HOME: dir }, clock: () => new Date(now) });
    const norm = normalizer();
    const opsFile = join(stateDir(dir), 'logs', 'operations.jsonl');
    let opsSeen = 0;
    const steps: string[] = [];
    let last = git(dir, 'rev-parse', 'HEAD').trim();
    const step = async (name: string, run: () => Promise<unknown>): Promise<void> => {
      await run();
      now += 60_000;
      const head = git(dir, 'rev-parse', 'HEAD').trim();
      const lines: string[] = [`## ${name}`];
      if (head === last) lines.push('(no commit)');
      else {
        const count = git(dir, 'rev-list', '--count', `${last}..${head}`).trim();
        lines.push(`commits: ${count}`);
        lines.push(git(dir, 'log', '-1', '--format=%B', head).trim());
        lines.push(...git(dir, 'show', '--name-status', '--format=', head).trim().split('\n'));
      }
      last = head;
      let ops: string[] = [];
      try {
        ops = readFileSync(opsFile, 'utf8').split('\n').filter(Boolean);
      } catch {
        /* no log yet */
      }
      for (const l of ops.slice(opsSeen)) lines.push(`op ${l}`);
      opsSeen = ops.length;
      steps.push(inIdOrder(norm(lines.join('\n'))));
    };

    await step('init', () => svc.init('demo'));
    let a = '';
    let b = '';
    await step('create', async () => {
      a = (await svc.create(entry({ summary: 'Invoices are generated nightly.' }), { project: 'demo' })).entry.id;
    });
    await step('apply', async () => {
      const r = await svc.apply(
        [
          {
            operation: 'create',
            entry: entry({ section: 'learnings', kind: 'other', subject: 'ci.cache', scope: 'repo', summary: 'The CI cache key includes the lockfile hash.' }),
          },
          { operation: 'create', entry: entry({ subject: 'billing.tax', summary: 'Tax is computed at checkout.' }) },
          { operation: 'create', entry: entry({ subject: 'x', summary: '' }) },
        ],
        { project: 'demo' },
      );
      b = firstOf(r.applied, 1)[0].id;
    });
    const ids = (): string[] => svc.exportEntries('demo').map((e) => e.id);
    await step('supersede by a new entry', () =>
      svc.apply([{ operation: 'supersede', target_id: a, entry: entry({ summary: 'Invoices are generated hourly.' }) }], { project: 'demo' }),
    );
    const live = (): string[] => svc.exportEntries('demo', { status: ['active'] }).map((e) => e.id);
    const [c, d] = firstOf(
      live().filter((x) => x !== b),
      2,
    );
    await step('supersede --by', () => svc.supersede(c, d, { project: 'demo' }));
    await step('deprecate', () => svc.deprecate(b, { project: 'demo' }));
    await step('apply-result', () =>
      svc.applyResult(
        {
          task_id: 't1',
          status: 'success',
          agent_id: 'result-agent',
          memory_updates: [{ operation: 'create', entry: entry({ subject: 'api.auth', summary: 'Tokens expire after one hour.' }) }],
        },
        { project: 'demo' },
      ),
    );
    const [e, f] = firstOf(live(), 2);
    await step('link', () => svc.link(e, f, { project: 'demo' }));
    await step('reinforce', () => svc.reinforce([e], { project: 'demo' }));
    await step('promote', () => svc.promote(f, { project: 'demo' }).catch(() => undefined));
    await step('import', () =>
      svc.importEntries('demo', [
        {
          ...entry({ subject: 'imported.one', summary: 'An imported decision.' }),
          id: '01JAAAAAAAAAAAAAAAAAAAAAAA',
          status: 'active',
          superseded_by: null,
          related_entries: [],
          valid_from: null,
          valid_to: null,
          created_by: 'elsewhere',
          created_at: '2026-01-01T00:00:00.000Z',
          updated_at: '2026-01-01T00:00:00.000Z',
        },
      ]),
    );
    await step('extract', () =>
      svc.extract(
        'demo',
        'We decided to use PostgreSQL for the ledger because it supports serializable transactions.\nNote: the staging database is reset every night.',
        { source: 'notes' },
      ),
    );
    await step('remember', () => svc.remember('demo', 'The release train leaves on Thursdays.'));
    await step('remember short-term', () => svc.remember('demo', 'scratch note', { shortTerm: true, session: 's1' }));
    await step('session end', () => svc.sessionEnd('s1', { threshold: 0 }));
    await step('apply (near-duplicates)', () =>
      svc.apply(
        [
          {
            operation: 'create',
            entry: entry({
              subject: 'ops.deploys',
              scope: 'repo',
              summary: 'Deploys run from the main branch only, every weekday.',
              content: 'Deploys run from the main branch only, every weekday.',
            }),
          },
          {
            operation: 'create',
            entry: entry({
              subject: 'ops.deploys',
              scope: 'repo',
              summary: 'Deploys run from the main branch only, every weekday!',
              content: 'Deploys run from the main branch only, every weekday.',
            }),
          },
        ],
        { project: 'demo' },
      ),
    );
    const plan = svc.compactPlan('demo', { file: join(dir, 'plan.json'), summarizeAt: 2 });
    await step('compact --apply', () => svc.applyPlan(join(dir, plan.path)));
    await step('sync-context', () => svc.syncContext('demo'));
    now += 400 * 86_400_000;
    await step('decay --apply (archive)', () => svc.decay('demo', { apply: true, overrides: { forget_threshold: 0.99 } }));
    const archived = svc.exportEntries('demo', { status: ['archived'] }).map((x) => x.id);
    await step('restore', () => (archived[0] ? svc.restore(archived[0], { project: 'demo' }) : Promise.resolve()));
    writeFileSync(join(dir, 'ai-memory', 'demo', 'config.yaml'), readFileSync(join(dir, 'ai-memory', 'demo', 'config.yaml'), 'utf8'));
    await step('init again', () => svc.init('demo'));
    expect(ids().length).toBeGreaterThan(5);
    expect(steps.join('\n\n')).toMatchSnapshot();
    // Nothing but memory paths was ever committed, and the user's tree is clean.
    expect(
      git(dir, 'status', '--porcelain')
        .split('\n')
        .filter((l) => l && !l.includes('plan.json')),
    ).toEqual([]);
  });

  it('ids created in one batch differ right after their time part, so short prefixes stay unique', async () => {
    const dir = gitdir();
    const svc = new MemoryService({ cwd: dir, agent: 'ids', env: { HOME: dir }, clock: () => new Date('2026-03-01T10:00:00.000Z') });
    await svc.init('demo');
    const r = await svc.apply(
      Array.from({ length: 30 }, (_, i) => ({
        operation: 'create',
        entry: entry({ subject: `topic.n${i}`, summary: `Fact number ${i} about the billing service.` }),
      })),
      { project: 'demo' },
    );
    const ids = r.applied.map((a) => a.id);
    expect(new Set(ids.map((id) => id.slice(0, 10))).size).toBe(1); // one millisecond
    expect(new Set(ids.map((id) => id.slice(0, 16))).size).toBe(30); // ULID's monotonic counter would differ only in the last one or two
  });
});

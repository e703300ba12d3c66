/**
 * validate-evidence (002 Req 18.5-18.7): files and line ranges, git permalinks of this repository,
 * URLs against a real local HTTP server, an unreachable host; stale entries flagged and down-ranked.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { cli, cliAsync, entry, git, gitdir } from '../helpers/repo.js';

async function server(): Promise<string> {
  const s = createServer((req, res) => {
    if (req.url === '/ok') res.writeHead(200).end('fine');
    else if (req.url === '/no-head' && req.method === 'HEAD') res.writeHead(405).end();
    else if (req.url === '/no-head') res.writeHead(200).end('fine');
    else res.writeHead(404).end('gone');
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  onTestFinished(() => new Promise<void>((r) => s.close(() => r())));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

describe('validate-evidence', () => {
  it('checks files, line ranges, permalinks and URLs; flags stale entries, which rank lower and count in stats', async () => {
    const dir = gitdir({ 'README.md': '# demo\n', 'src/billing/cron.ts': Array.from({ length: 50 }, (_, i) => `// line ${i + 1}`).join('\n') });
    git(dir, 'remote', 'add', 'origin', 'git@github.com:Acme/Demo.git');
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    const base = await server();
    const ev = (type: string, uri: string): Record<string, unknown> => ({ evidence: [{ type, uri, note: '' }] });
    const docs: [string, Record<string, unknown>][] = [
      ['fresh file', ev('code', 'src/billing/cron.ts#L10-L40')],
      ['missing file', ev('code', 'src/billing/gone.ts')],
      ['range past the end', ev('code', 'src/billing/cron.ts#L40-L90')],
      ['good permalink', ev('code', `https://github.com/acme/demo/blob/${head}/README.md`)],
      ['permalink to a missing path', ev('code', `https://github.com/acme/demo/blob/${head}/src/nope.ts`)],
      ['url ok', ev('doc', `${base}/ok`)],
      ['url without HEAD', ev('doc', `${base}/no-head`)],
      ['url gone', ev('doc', `${base}/gone`)],
      ['url unreachable', ev('doc', 'http://127.0.0.1:9/x')],
    ];
    const r = cli(dir, ['apply', 'demo', '--file', '-', '--json'], {
      input: JSON.stringify(
        docs.map(([summary, over], i) => ({ operation: 'create', entry: entry({ summary: `ledger note: ${summary}`, subject: `billing.n${i}`, ...over }) })),
      ),
    });
    expect(r.code, r.stderr).toBe(0);
    const ids = r.json().applied.map((a: { id: string }) => a.id);
    // Async: the HTTP server lives in this process and must keep answering while the CLI runs.
    const v = await cliAsync(dir, ['validate-evidence', 'demo', '--timeout', '2000', '--json']);
    expect(v.code, v.stderr).toBe(0);
    const rep = v.json();
    const byId = new Map(rep.entries.map((e: { id: string }) => [e.id, e]));
    const st = (i: number): string => (byId.get(ids[i]) as { evidence: { status: string }[] }).evidence[0].status;
    expect(docs.map((_, i) => st(i))).toEqual(['ok', 'stale', 'stale', 'ok', 'stale', 'ok', 'ok', 'stale', 'unknown']);
    expect(rep).toMatchObject({ checked: 9, ok: 4, stale: 4, unknown: 1 });
    expect((byId.get(ids[2]) as { evidence: { reason: string }[] }).evidence[0].reason).toMatch(/has 50 lines; the evidence cites line 90/);

    // Stale entries are flagged and come after the fresh ones in a text query with equal relevance.
    const hits = cli(dir, ['query', 'ledger note', '--json']).json();
    const flagged = hits.filter((h: { meta: { flags: string[] } }) => h.meta.flags.includes('stale_evidence')).map((h: { id: string }) => h.id);
    expect(flagged.sort()).toEqual([ids[1], ids[2], ids[4], ids[7]].sort());
    const lastFresh = Math.max(...hits.map((h: { id: string }, i: number) => (flagged.includes(h.id) ? -1 : i)));
    const firstStale = Math.min(...hits.map((h: { id: string }, i: number) => (flagged.includes(h.id) ? i : 99)));
    expect(lastFresh).toBeLessThan(firstStale);
    expect(cli(dir, ['stats', 'demo', '--json']).json().stale_evidence_count).toBe(4);
    expect(cli(dir, ['show', ids[1], '--json']).json().computed.flags).toContain('stale_evidence');

    // --offline leaves URLs unknown and never marks them stale; fixing a file clears its flag.
    const off = cli(dir, ['validate-evidence', 'demo', '--offline', '--json']).json();
    expect(off.unknown).toBeGreaterThanOrEqual(1);
    const human = cli(dir, ['validate-evidence', 'demo', '--offline']);
    expect(human.stdout).toMatch(/stale entries are flagged stale_evidence/);
  });
});

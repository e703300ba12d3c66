/**
 * validate-evidence (002 Req 18.5-18.7): files and line ranges, git permalinks of this repository,
 * URLs against a real local HTTP server, an unreachable host; stale entries flagged and down-ranked.
 * Evidence that follows the code: renames with and without edits, shifts above and edits inside a
 * cited range, deletions, symbols moved or gone; `--fix` in one commit; `meta.evidence_status` in
 * list, query and prepare-task, also for uncommitted edits; the session context marks entries.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { cli, cliAsync, entry, firstOf, git, gitdir } from '../helpers/repo.js';

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
        docs.map(([what, over], i) => ({
          operation: 'create',
          entry: entry({ summary: `ledger note ${i}`, content: what, subject: `billing.n${i}`, ...over }),
        })),
      ),
    });
    expect(r.code, r.stderr).toBe(0);
    const ids = r.json().applied.map((a: { id: string }) => a.id);
    // Async: the HTTP server lives in this process and must keep answering while the CLI runs.
    const v = await cliAsync(dir, ['validate-evidence', 'demo', '--timeout', '2000', '--json']);
    expect(v.code, v.stderr).toBe(0);
    const rep = v.json();
    const byId = new Map(rep.entries.map((e: { id: string }) => [e.id, e]));
    const st = (i: number): string | undefined => (byId.get(ids[i]) as { evidence: { status: string }[] }).evidence[0]?.status;
    expect(docs.map((_, i) => st(i))).toEqual(['ok', 'stale', 'stale', 'ok', 'stale', 'ok', 'ok', 'stale', 'unknown']);
    expect(rep).toMatchObject({ checked: 9, ok: 4, stale: 4, unknown: 1 });
    expect((byId.get(ids[2]) as { evidence: { reason: string }[] }).evidence[0]?.reason).toMatch(/has 50 lines; the evidence cites line 90/);

    // Stale entries are flagged and come after the fresh ones in a text query with equal relevance (summaries alike: no feedback word).
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

  it('follows renames, shifts, edits, deletions and symbols; --fix rewrites what moved in one commit; reads tell the status', () => {
    const numbered = (n: number, tag: string): string =>
      Array.from({ length: n }, (_, i) => `export const ${tag}${i + 1} = ${i + 1}; // ${tag} line ${i + 1}`).join('\n') + '\n';
    const dir = gitdir({
      'src/a.ts': numbered(40, 'a'),
      'src/b.ts': 'export function scheduleInvoices(): number {\n  return 1;\n}\n',
      'src/d.ts': numbered(12, 'd'),
      'src/gone.ts': 'export const gone = 1;\n',
      'src/c.py': 'def charge(amount):\n    return amount\n\n\ndef refund(amount):\n    return -amount\n',
    });
    const env = { BASS_AGENTS_NO_DAEMON: '1' };
    const cites: [string, string][] = [
      ['shifted by lines added above', 'src/a.ts#L10-L12'],
      ['edited inside', 'src/a.ts#L20-L22'],
      ['above every edit', 'src/a.ts#L1-L2'],
      ['a symbol whose file was renamed', 'src/b.ts#symbol=scheduleInvoices'],
      ['a range in a file renamed and edited', 'src/d.ts:3-5'],
      ['a deleted file', 'src/gone.ts'],
      ['a symbol moved down its file', 'src/c.py#symbol=charge'],
      ['a symbol removed', 'src/c.py#symbol=refund'],
    ];
    const r = cli(dir, ['apply', 'demo', '--file', '-', '--json'], {
      env,
      input: JSON.stringify(
        cites.map(([what, uri], i) => ({
          operation: 'create',
          entry: entry({ summary: `Ledger anchor: ${what}.`, subject: `ledger.a${i}`, evidence: [{ type: 'code', uri, note: '' }] }),
        })),
      ),
    });
    expect(r.code, r.stderr).toBe(0);
    const ids = firstOf<string, 8>(
      r.json().applied.map((a: { id: string }) => a.id),
      8,
    );

    // The code moves on: two lines above 10-12, line 21 edited, b.ts renamed as it is, d.ts renamed
    // with a line added at its top, gone.ts deleted, charge moved down, refund removed.
    const a = readFileSync(join(dir, 'src/a.ts'), 'utf8').split('\n');
    a[20] = 'export const a21 = 21000; // edited';
    a.splice(4, 0, '// added 1', '// added 2');
    writeFileSync(join(dir, 'src/a.ts'), a.join('\n'));
    git(dir, 'mv', 'src/b.ts', 'src/billing.ts');
    git(dir, 'mv', 'src/d.ts', 'src/e.ts');
    writeFileSync(join(dir, 'src/e.ts'), `// moved here\n${readFileSync(join(dir, 'src/e.ts'), 'utf8')}`);
    rmSync(join(dir, 'src/gone.ts'));
    writeFileSync(join(dir, 'src/c.py'), 'import os\n\n\ndef charge(amount):\n    return amount\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'code moves on');

    const statusOf = (hits: { id: string; meta: { evidence_status: string } }[]): string[] =>
      ids.map((id) => hits.find((h) => h.id === id)?.meta.evidence_status ?? '?');
    const list = (): { id: string; meta: { evidence_status: string; flags: string[] }; evidence: { uri: string }[] }[] =>
      cli(dir, ['list', 'demo', '--json'], { env }).json();
    // Before any check, a read tells presence only.
    expect(statusOf(list())).toEqual(['current', 'current', 'current', 'missing', 'missing', 'missing', 'current', 'missing']);

    const before = git(dir, 'rev-parse', 'HEAD').trim();
    const fix = cli(dir, ['validate-evidence', 'demo', '--fix', '--offline', '--json'], { env });
    expect(fix.code, fix.stderr).toBe(0);
    const rep = fix.json();
    expect(rep.anchors).toEqual({ current: 2, moved: 3, changed: 1, missing: 2 });
    expect(rep.fixed.map((f: { id: string; to: string }) => [ids.indexOf(f.id), f.to])).toEqual(
      expect.arrayContaining([
        [0, 'src/a.ts#L12-L14'],
        [3, 'src/billing.ts#symbol=scheduleInvoices'],
        [4, 'src/e.ts:4-6'],
      ]),
    );
    expect(rep.fixed).toHaveLength(3);
    // One commit, of exactly the three entries.
    expect(rep.commits).toHaveLength(1);
    expect(git(dir, 'rev-parse', 'HEAD~1').trim()).toBe(before);
    expect(git(dir, 'show', '--name-only', '--format=', 'HEAD').trim().split('\n').sort()).toEqual(
      [0, 3, 4].map((i) => git(dir, 'ls-files', `ai-memory/demo/*/${ids[i]}.json`).trim()).sort(),
    );
    const why = new Map(rep.entries.map((e: { id: string; evidence: { reason: string }[] }) => [e.id, e.evidence[0]?.reason]));
    expect(why.get(ids[1])).toMatch(/lines 20-22 of src\/a.ts changed since the evidence was written/);
    expect(why.get(ids[5])).toMatch(/src\/gone.ts does not exist/);
    expect(why.get(ids[7])).toMatch(/declares no refund/);

    // Reads after the fix: moved evidence is current again; changed and missing evidence is flagged and marked.
    const after = list();
    expect(statusOf(after)).toEqual(['current', 'changed', 'current', 'current', 'current', 'missing', 'current', 'missing']);
    expect(after.find((h) => h.id === ids[1])!.meta.flags).toContain('stale_evidence');
    // Equal otherwise, entries whose evidence changed or is missing list after the rest.
    const place = after.map((h) => ids.indexOf(h.id)).filter((i) => i >= 0);
    expect(place.slice(-3).sort()).toEqual([1, 5, 7]);
    const ctx = cli(dir, ['context', 'demo'], { env }).stdout;
    expect(ctx).toContain('Ledger anchor: edited inside. **(evidence changed since written: re-check)**');
    expect(ctx).toContain('Ledger anchor: a deleted file. **(evidence missing: re-check)**');
    expect(ctx).toMatch(/Ledger anchor: above every edit\. _\(/);

    // Someone re-checks the edited lines and re-confirms the memory: from then on they are its baseline.
    expect(cli(dir, ['reinforce', ids[1]], { env }).code).toBe(0);

    // An uncommitted edit is seen at read time without git: lines added above move the range,
    // renaming a file away makes its evidence missing; query and prepare-task carry it too.
    writeFileSync(join(dir, 'src/a.ts'), `// one more\n${readFileSync(join(dir, 'src/a.ts'), 'utf8')}`);
    renameSync(join(dir, 'src/e.ts'), join(dir, 'src/f.ts'));
    const q = cli(dir, ['query', 'ledger anchor', '--json', '--limit', '20'], { env }).json();
    expect(statusOf(q)).toEqual(['moved', 'current', 'moved', 'current', 'missing', 'missing', 'current', 'missing']);
    // The rank follows the files now, not the last check: the renamed-away file's entry is
    // flagged and lowered, the re-confirmed one no longer is.
    const flagsOf = (id: string | undefined): string[] => q.find((h: { id: string }) => h.id === id).meta.flags ?? [];
    expect(flagsOf(ids[4])).toContain('stale_evidence');
    expect(flagsOf(ids[1])).not.toContain('stale_evidence');
    const task = cli(dir, ['prepare-task', '--file', '-'], {
      env,
      input: JSON.stringify({ memory_enabled: true, project: 'demo', goal: 'ledger anchor' }),
    }).json();
    expect(task.memory_context.find((e: { id: string }) => e.id === ids[0]).meta).toEqual({ evidence_status: 'moved' });
    // The next check follows the re-confirmed range from the reinforce commit: moved by the new line, no longer changed.
    const again = cli(dir, ['validate-evidence', 'demo', '--offline', '--json'], { env }).json();
    expect(again.entries.find((e: { id: string }) => e.id === ids[1]).evidence[0]).toMatchObject({ anchor: 'moved', status: 'ok' });
  });
});

// A one-shot read through the real CLI (bin -> thin client -> bundle): git's view of the entry
// files is started before the CLI loads and handed over, and a read stays exact whatever git
// says: an edit in place is seen, and a file git vouches for is not read again.
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CatalogCache } from '../../src/store/catalog-cache.js';
import { cli, cliAsync, firstOf, git, initdir, stateDir } from '../helpers/repo.js';

const env = { BASS_AGENTS_AGENT: 'cold-reads-test', BASS_AGENTS_NO_DAEMON: '1' };

function entry(i: number): Record<string, unknown> {
  return {
    section: 'decisions',
    kind: 'decision',
    subject: `cold.read${i}`,
    scope: 'repo',
    summary: `Cold read number ${i} keeps its answer exact`,
    content: `Entry ${i} of the cold read test.`,
    tags: ['perf'],
    confidence: 0.9,
    evidence: [{ type: 'code', uri: 'README.md', note: '' }],
  };
}

describe('cold reads with git', () => {
  it('sees an edit in place, and skips re-reading a file git vouches for', () => {
    const dir = initdir();
    const updates = [1, 2, 3].map((i) => ({ operation: 'create', entry: entry(i) }));
    expect(cli(dir, ['apply', 'demo', '--file', '-'], { env, input: JSON.stringify(updates) }).code).toBe(0);
    const list = (extra: Record<string, string> = {}): { id: string; summary: string }[] => {
      const r = cli(dir, ['list', 'demo', '--json'], { env: { ...env, ...extra } });
      expect(r.code, r.stderr).toBe(0);
      return r.json() as { id: string; summary: string }[];
    };
    const ids = list()
      .map((e) => e.id)
      .sort();
    expect(ids).toHaveLength(3);
    const [id0, id1] = firstOf(ids, 2);
    const file = (id: string): string => join(dir, 'ai-memory/demo/decisions', `${id}.json`);
    const cacheDir = join(stateDir(dir), 'cache');
    // The cache (its base and delta) knows the blob each file's row was read from.
    const cached = new CatalogCache({ localDir: stateDir(dir) }).load()!;
    expect(cached.paths).toHaveLength(3);
    const paths = [0, 1, 2].map((i) => cached.paths.get(i));
    expect(paths.map((_, i) => cached.oids().slice(40 * i, 40 * i + 40))).toEqual(paths.map((f) => git(dir, 'hash-object', f).trim()));

    // An edit in place, not committed: git names the file, so it is read again.
    const edited = JSON.parse(readFileSync(file(id0), 'utf8'));
    writeFileSync(file(id0), `${JSON.stringify({ ...edited, summary: 'Edited by hand in place' }, null, 2)}\n`);
    expect(list().find((e) => e.id === ids[0])!.summary).toBe('Edited by hand in place');

    // A file touched and git's index refreshed: same blob, so git vouches for it and the read
    // does not re-read it (nothing about it reaches catalog.delta)...
    const deltaLinesOf = (name: string): string[] =>
      (existsSync(join(cacheDir, 'catalog.delta')) ? readFileSync(join(cacheDir, 'catalog.delta'), 'utf8') : '').split('\n').filter((l) => l.includes(name));
    utimesSync(file(id1), new Date('2030-01-01T00:00:00Z'), new Date('2030-01-01T00:00:00Z'));
    git(dir, 'update-index', '-q', '--refresh');
    const before = deltaLinesOf(`${ids[1]}.json`);
    expect(list().find((e) => e.id === ids[1])!.summary).toContain('Cold read number');
    expect(deltaLinesOf(`${ids[1]}.json`)).toEqual(before);
    // ...where the full CLI without the thin client (so without git's view) stats it and re-reads it.
    expect(list({ BASS_AGENTS_NO_BUNDLE: '1' }).find((e) => e.id === ids[1])!.summary).toContain('Cold read number');
    expect(deltaLinesOf(`${ids[1]}.json`).length).toBe(before.length + 1);
  });

  it("a query uses the index snapshot without syncing it when it was saved from the catalog's very content", () => {
    const dir = initdir();
    const updates = [1, 2, 3].map((i) => ({ operation: 'create', entry: entry(i) }));
    expect(cli(dir, ['apply', 'demo', '--file', '-'], { env, input: JSON.stringify(updates) }).code).toBe(0);
    const query = (text: string): { ids: string[]; debug: string } => {
      const r = cli(dir, ['query', text, '--project', 'demo', '--json', '--debug'], { env });
      expect(r.code, r.stderr).toBe(0);
      return { ids: (r.json() as { id: string }[]).map((e) => e.id), debug: r.stderr };
    };
    expect(query('cold read').debug).toContain('index: built (+3'); // no snapshot yet: built and saved
    const current = query('cold read');
    expect(current.debug).toContain('built from exactly these entries');
    expect(current.ids).toHaveLength(3);
    // An edit in place: the catalog's content moves on, and the snapshot is synced by stamps again.
    const file = join(dir, 'ai-memory/demo/decisions', `${current.ids[0]}.json`);
    const edited = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, `${JSON.stringify({ ...edited, summary: 'Renamed to a zebra crossing' }, null, 2)}\n`);
    const after = query('zebra');
    expect(after.debug).not.toContain('built from exactly these entries');
    expect(after.debug).toContain('~1');
    expect(after.ids).toEqual([current.ids[0]]);

    // More changes since the snapshot (a create, a file removed, one copied under another
    // section's id): a query syncs just the files named since, and ranks exactly as a query
    // that builds the index from the files.
    expect(cli(dir, ['create', 'demo', '--file', '-'], { env, input: JSON.stringify(entry(4)) }).code).toBe(0);
    rmSync(join(dir, 'ai-memory/demo/decisions', `${current.ids[1]}.json`));
    mkdirSync(join(dir, 'ai-memory/demo/learnings'), { recursive: true });
    const copied = JSON.parse(readFileSync(join(dir, 'ai-memory/demo/decisions', `${current.ids[2]}.json`), 'utf8'));
    writeFileSync(
      join(dir, 'ai-memory/demo/learnings', `${current.ids[2]}.json`),
      `${JSON.stringify({ ...copied, section: 'learnings', summary: 'Cold read copy in learnings' }, null, 2)}\n`,
    );
    const ranked = (r: ReturnType<typeof cli>): [string, number][] => (r.json() as { id: string; meta: { score: number } }[]).map((e) => [e.id, e.meta.score]);
    const synced = cli(dir, ['query', 'cold read', '--project', 'demo', '--json', '--debug'], { env });
    expect(synced.code, synced.stderr).toBe(0);
    // +1 the create, ~1 the earlier edit (that query did not save the snapshot), -1 the removed file;
    // the copy loses its id to the file already holding it, so its key is as it was.
    expect(synced.stderr).toMatch(
      /index: snapshot loaded \(\+1 ~1 -1\), only the postings this text reaches, synced by the 4 files changed since it was saved/,
    );
    rmSync(join(stateDir(dir), 'cache/index.bin'));
    const rebuilt = cli(dir, ['query', 'cold read', '--project', 'demo', '--json', '--debug'], { env });
    expect(rebuilt.stderr).toContain('index: built');
    expect(ranked(synced)).toEqual(ranked(rebuilt));
    // The catalog cache rebuilt (another base, the same entries): one query compares the stamps,
    // finds nothing to sync and notes it; the next is current again.
    rmSync(join(stateDir(dir), 'cache/catalog.bin'));
    const rebuiltCache = cli(dir, ['query', 'cold read', '--project', 'demo', '--json', '--debug'], { env });
    expect(rebuiltCache.stderr).toContain('snapshot loaded (+0 ~0 -0)');
    expect(rebuiltCache.stderr).not.toContain('built from exactly these entries');
    expect(ranked(rebuiltCache)).toEqual(ranked(rebuilt));
    const again = cli(dir, ['query', 'cold read', '--project', 'demo', '--json', '--debug'], { env });
    expect(again.stderr).toContain('built from exactly these entries');
    expect(ranked(again)).toEqual(ranked(rebuilt));
    // Rebuilt again, and an entry more: the stamps show one to add, and as the next query would
    // have to compare them all again, this one brings the whole snapshot up to date and saves it.
    rmSync(join(stateDir(dir), 'cache/catalog.bin'));
    expect(cli(dir, ['create', 'demo', '--file', '-'], { env, input: JSON.stringify(entry(5)) }).code).toBe(0);
    const saved = cli(dir, ['query', 'cold read', '--project', 'demo', '--json', '--debug'], { env });
    expect(saved.stderr).toContain('index: snapshot loaded (+1 ~0 -0)');
    expect(saved.stderr).not.toContain('only the postings');
    const after5 = cli(dir, ['query', 'cold read', '--project', 'demo', '--json', '--debug'], { env });
    expect(after5.stderr).toContain('built from exactly these entries');
    expect(ranked(after5)).toEqual(ranked(saved));
    expect(ranked(saved)).toHaveLength(ranked(rebuilt).length + 1);
  });

  it('a read exits as soon as its output is out: all of it, through a pipe, with its exit code', async () => {
    const dir = initdir();
    const long = (i: number): Record<string, unknown> => ({ ...entry(i), content: `Entry ${i}: ${'a long body of text. '.repeat(90)}` });
    const updates = Array.from({ length: 40 }, (_, i) => ({ operation: 'create', entry: long(i) }));
    const applied = cli(dir, ['apply', 'demo', '--file', '-'], { env, input: JSON.stringify(updates) });
    expect(applied.code, applied.stderr + applied.stdout).toBe(0);
    expect(cli(dir, ['list', 'demo'], { env }).code).toBe(0); // the catalog cache, so that git's view is started
    const r = await cliAsync(dir, ['list', 'demo', '--json', '--limit', '40'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.length).toBeGreaterThan(64 * 1024); // more than a pipe holds at once
    expect((r.json() as unknown[]).length).toBe(40);
    const missing = await cliAsync(dir, ['show', 'no-such-entry'], { env });
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('no-such-entry');
  });
});

// git's view of the entry files (src/store/git-view.ts): the parsing on crafted output, then a
// real repository, where the view must vouch for exactly the files git knows are unchanged.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../../src/store/catalog.js';
import { CatalogCache } from '../../src/store/catalog-cache.js';
import { ByteTexts, encodeTexts, type Texts } from '../../src/store/texts.js';

/** Paths as the catalog cache holds them. */
function texts(items: string[]): Texts {
  const e = encodeTexts(items)!;
  return new ByteTexts(e.bytes, e.starts, e.ascii);
}
import {
  gitBlobId,
  indexChecksum,
  keepGitViewIf,
  offerGitView,
  parseGitView,
  recordedGitView,
  settleGitView,
  startGitView,
  takeGitView,
  VIEW_RECORD,
} from '../../src/store/git-view.js';
import { Workspace } from '../../src/store/workspace.js';
import { serializeEntry } from '../../src/core/entry.js';
import { entry as repoEntry, git, gitdir, stateDir } from '../helpers/repo.js';
import { MemoryService } from '../../src/service/memory-service.js';
import type { MemoryEntry } from '../../src/core/schema.js';
import { storedEntry } from '../helpers/stored.js';

/** A valid stored entry (the catalog skips invalid ones). */
const entry = (id: string, summary: string): MemoryEntry =>
  storedEntry({ id, summary, content: `${summary} in detail`, evidence: [{ type: 'code', uri: 'src/a.ts', note: '' }] });

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);

/** A repository with `count` entries committed and the catalog cache made from them. */
function committedStore(count: number): { dir: string; sdir: string; ws: Workspace } {
  const dir = gitdir();
  const sdir = join(dir, 'ai-memory/p/learnings');
  mkdirSync(sdir, { recursive: true });
  for (let i = 0; i < count; i++) writeFileSync(join(sdir, `E${i}.json`), serializeEntry(entry(`E${i}`, `entry ${i}`)));
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'entries');
  const ws = new Workspace(dir);
  new Catalog(ws).refresh();
  return { dir, sdir, ws };
}

/** A refresh with a view started now, as a one-shot command gets it; and the view it had. */
async function viewedRefresh(ws: Workspace, scratch: string): Promise<{ changed: string[]; view: { index?: string; vouchedFor?: string } | null }> {
  const run = startGitView(ws.root, scratch);
  const view = await run.view;
  offerGitView({ ...run, view: Promise.resolve(view) });
  await settleGitView(60_000);
  return { changed: new Catalog(ws).refresh().changed, view };
}

describe('git view', () => {
  it('vouches only for cached, flagless, stage-0 regular files whose blob is the cached one and that git does not name as modified', () => {
    const rec = (tag: string, mode: string, blob: string, stage: string, path: string): string => `${tag} ${mode} ${blob} ${stage}\t${path}`;
    const listed = [
      rec('H', '100644', A, '0', 'ai-memory/.gitignore'), // not in the list: skipped over
      rec('H', '100644', A, '0', 'ai-memory/p/learnings/a.json'),
      rec('H', '100644', B, '0', 'ai-memory/p/learnings/b.json'), // another blob than cached
      rec('h', '100644', C, '0', 'ai-memory/p/learnings/c.json'), // assume-unchanged
      rec('S', '100644', C, '0', 'ai-memory/p/learnings/d.json'), // skip-worktree
      rec('M', '100644', C, '1', 'ai-memory/p/learnings/e.json'), // unmerged
      rec('H', '120000', C, '0', 'ai-memory/p/learnings/f.json'), // a symlink
      rec('H', '100755', C, '0', 'ai-memory/p/learnings/g.json'),
      rec('H', '100644', C, '0', 'ai-memory/p/learnings/h.json'), // dirty
      rec('H', '100644', C, '0', 'ai-memory/p/learnings/hh.json'), // modified: its `C` record follows
      rec('C', '100644', C, '0', 'ai-memory/p/learnings/hh.json'),
      rec('H', '100644', C, '0', 'ai-memory/p/learnings/i.json'), // not cached
      rec('H', '100644', C, '0', 'ai-memory/p/learnings/k.json'),
    ].join('\0');
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'hh', 'j', 'k'].map((n) => `ai-memory/p/learnings/${n}.json`);
    const files = texts(names);
    const blobs = [A, A, C, C, C, C, C, C, C, C, '0'.repeat(40)].join(''); // the last: not known
    const view = parseGitView('/r', `${listed}\0`, 'ai-memory/p/learnings/h.json\0');
    expect([...view.matching(files, () => blobs)!.clean]).toEqual([1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0]);
    expect(view.matching(files, () => blobs)!.complete).toBe(false);
    expect([...parseGitView('/r', '', '').matching(files, () => blobs)!.clean]).toEqual(names.map(() => 0));
    // Complete: every file has its cached blob in the index, a dirty one too (the listing vouches for the content as a whole).
    const some = texts(names.filter((_, i) => [0, 6, 7].includes(i)));
    const theirs = [A, C, C].join('');
    expect(view.matching(some, () => theirs)).toEqual({ clean: Uint8Array.from([1, 1, 0]), complete: true });
  });

  it('without a listing: every file of the recorded content but the dirty ones and those changed since; nothing when the catalog cannot say what changed', () => {
    const names = ['a', 'b', 'c', 'd'].map((n) => `ai-memory/p/learnings/${n}.json`);
    const files = texts(names);
    const view = recordedGitView('/r', 'content-1', `${names[1]}\0`);
    const since = (content: string): string[] | undefined => (content === 'content-1' ? [...names.slice(3), 'ai-memory/p/learnings/new.json'] : undefined);
    expect(view.matching(files, () => '', since)).toEqual({ clean: Uint8Array.from([1, 0, 1, 0]), complete: false });
    expect(recordedGitView('/r', 'content-2', '').matching(files, () => '', since)).toBeNull();
  });

  it("is waited for only so long: git still at work then is stopped, and the files are stat'ed instead", async () => {
    let stopped = 0;
    offerGitView({ root: '/r', index: null, view: new Promise(() => undefined), stop: () => void stopped++ });
    await settleGitView(20);
    expect(stopped).toBe(1);
    expect(takeGitView('/r')).toBeNull();
  });

  it('in a real repository: a refresh with the view skips what git vouches for and still sees every change', async () => {
    const { dir, sdir, ws } = committedStore(4);
    const cache = new CatalogCache(ws).load()!;
    expect(cache.oids().slice(0, 40)).toBe(git(dir, 'rev-parse', ':ai-memory/p/learnings/E0.json').trim());
    expect(gitBlobId(Buffer.from('hello\n'))).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
    const fresh = async (): Promise<number[]> => [...(await startGitView(dir).view)!.matching(cache.paths, cache.oids)!.clean];
    expect(await fresh()).toEqual([1, 1, 1, 1]);
    // git's output through files in a scratch folder instead of pipes: the same view, and the folder left as it was.
    const scratch = join(stateDir(dir), 'cache');
    const before = readdirSync(scratch).sort();
    expect([...(await startGitView(dir, scratch).view)!.matching(cache.paths, cache.oids)!.clean]).toEqual([1, 1, 1, 1]);
    expect(readdirSync(scratch).sort()).toEqual(before);

    // E1 edited in place, E2 marked assume-unchanged: git no longer vouches for them.
    writeFileSync(join(sdir, 'E1.json'), serializeEntry(entry('E1', 'entry one, edited')));
    git(dir, 'update-index', '--assume-unchanged', 'ai-memory/p/learnings/E2.json');
    expect(await fresh()).toEqual([1, 0, 0, 1]);
    git(dir, 'update-index', '--no-assume-unchanged', 'ai-memory/p/learnings/E2.json');

    // E3 touched, and git's index refreshed: git vouches for it (same blob) where a stat check
    // would re-read it. That is how a refresh shows it used the view.
    utimesSync(join(sdir, 'E3.json'), new Date('2030-01-01T00:00:00Z'), new Date('2030-01-01T00:00:00Z'));
    git(dir, 'update-index', '-q', '--refresh');
    offerGitView(startGitView(ws.root));
    await settleGitView(60_000);
    const viewed = new Catalog(ws).refresh();
    expect(viewed.changed).toEqual(['ai-memory/p/learnings/E1.json']);
    expect(viewed.entries.find((e) => e.meta.id === 'E1')!.entry.summary).toBe('entry one, edited');
    // Used once: the next refresh stats every file again and re-reads the touched one.
    expect(new Catalog(ws).refresh().changed).toEqual(['ai-memory/p/learnings/E3.json']);
  });

  it("a writer under its lock keeps the view only while git's index is the one git looked at and nothing was recovered", async () => {
    const { dir, sdir, ws } = committedStore(2);
    const offered = async (): Promise<void> => {
      offerGitView(startGitView(ws.root));
      await settleGitView(60_000);
    };
    await offered();
    keepGitViewIf(true, dir);
    expect(takeGitView(dir)).not.toBeNull();
    await offered();
    keepGitViewIf(false, dir); // a recovery put files back
    expect(takeGitView(dir)).toBeNull();
    // Another writer's commit (here a user's staging) moved the index after git looked.
    await offered();
    writeFileSync(join(sdir, 'E1.json'), serializeEntry(entry('E1', 'entry one, staged')));
    git(dir, 'add', '-A');
    keepGitViewIf(true, dir);
    expect(takeGitView(dir)).toBeNull();
  });

  it("records a listing every cached file matched, and later commands ask git only for what changed, until the index or the catalog's base moves", async () => {
    const { dir, sdir, ws } = committedStore(3);
    const scratch = join(stateDir(dir), 'cache');
    const record = join(scratch, VIEW_RECORD);
    const viewed = (): ReturnType<typeof viewedRefresh> => viewedRefresh(ws, scratch);
    expect(indexChecksum(dir)).toMatch(/^[0-9a-f]{40}$/);
    // A listing, complete: recorded with the index's checksum.
    const first = await viewed();
    expect(first.view?.index).toBe(indexChecksum(dir));
    expect(JSON.parse(readFileSync(record, 'utf8')).index).toBe(indexChecksum(dir));
    // The same index: no listing, and nothing re-read.
    const second = await viewed();
    expect(second.view?.vouchedFor).toBeDefined();
    expect(second.changed).toEqual([]);
    // An edit git has not been told about: named by `ls-files -m`, re-read; the one after sees it as
    // changed since the recorded content (the delta says so) and re-reads nothing more.
    writeFileSync(join(sdir, 'E1.json'), serializeEntry(entry('E1', 'entry one, edited')));
    const third = await viewed();
    expect(third.view?.vouchedFor).toBeDefined();
    expect(third.changed).toEqual(['ai-memory/p/learnings/E1.json']);
    const fourth = await viewed();
    expect(fourth.view?.vouchedFor).toBeDefined();
    expect(fourth.changed).toEqual([]);
    expect(new Catalog(ws).refresh().entries.find((e) => e.meta.id === 'E1')!.entry.summary).toBe('entry one, edited');
    // Staged: the index moves, so git lists again (and the edited file matches its blob again).
    git(dir, 'add', '-A');
    const fifth = await viewed();
    expect(fifth.view?.vouchedFor).toBeUndefined();
    expect(fifth.view?.index).toBe(indexChecksum(dir));
    // A cache rebuilt from scratch has another base: the recorded content is not in its chain, so the record goes.
    rmSync(join(scratch, 'catalog.bin'));
    new Catalog(ws).refresh();
    const sixth = await viewed();
    expect(sixth.view?.vouchedFor).toBeDefined();
    expect(existsSync(record)).toBe(false);
    expect((await viewed()).view?.index).toBe(indexChecksum(dir));
  });

  it('a memory commit moves the record on to the index and the content it made: the command after it lists nothing', async () => {
    const dir = gitdir();
    const scratch = join(stateDir(dir), 'cache');
    const record = join(scratch, VIEW_RECORD);
    const service = (): MemoryService => new MemoryService({ cwd: dir, agent: 'view-test', env: { HOME: dir } });
    await service().init('demo');
    for (let i = 0; i < 3; i++)
      await service().create(repoEntry({ subject: `view.${i}`, summary: `Entry number ${i} of the view test.` }), { project: 'demo' });
    const ws = new Workspace(dir);
    const viewed = (): ReturnType<typeof viewedRefresh> => viewedRefresh(ws, scratch);
    await viewed(); // a listing, recorded
    expect((await viewed()).view?.vouchedFor).toBeDefined();
    // A write: its commit replaces git's index, and the record follows.
    const before = readFileSync(record, 'utf8');
    const { entry: made } = await service().create(repoEntry({ subject: 'view.new', summary: 'Written after the listing was recorded.' }), { project: 'demo' });
    expect(JSON.parse(readFileSync(record, 'utf8')).index).toBe(indexChecksum(dir));
    expect(readFileSync(record, 'utf8')).not.toBe(before);
    const after = await viewed();
    expect(after.view?.vouchedFor, 'no listing').toBeDefined();
    expect(after.changed).toEqual([]);
    expect(new Catalog(ws).refresh().entries.map((e) => e.meta.id)).toContain(made.id);
    // And it still sees what changes next: an edit in place is named by git and read again.
    const file = join(dir, 'ai-memory/demo', made.section, `${made.id}.json`);
    writeFileSync(file, readFileSync(file, 'utf8').replace('Written after', 'Edited after'));
    const edited = await viewed();
    expect(edited.view?.vouchedFor).toBeDefined();
    expect(edited.changed).toEqual([`ai-memory/demo/${made.section}/${made.id}.json`]);
    // A user's commit in between moves the index past the record: the next write leaves it, and git lists again.
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'by hand');
    await service().create(repoEntry({ subject: 'view.later', summary: 'Written after a commit by hand.' }), { project: 'demo' });
    expect((await viewed()).view?.vouchedFor).toBeUndefined();
  });
});

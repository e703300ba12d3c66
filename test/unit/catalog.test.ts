// The catalog through its real files: a temp workspace, entry files on disk, the cache under
// local state folder. Imported from src/ (test/setup.ts registers the modules it loads lazily).
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../../src/store/catalog.js';
import { CatalogCache } from '../../src/store/catalog-cache.js';
import { contentPosition } from '../../src/store/catalog-delta.js';
import { ColumnMeta, META_KEYS } from '../../src/store/catalog-columns.js';
import { Workspace } from '../../src/store/workspace.js';
import { serializeEntry } from '../../src/core/entry.js';
import type { MemoryEntry } from '../../src/core/schema.js';
import type { EntryMeta } from '../../src/core/meta.js';
import { testdir, stateDir } from '../helpers/repo.js';

function entry(id: string, summary: string, extra: Record<string, unknown> = {}): MemoryEntry {
  return {
    id,
    section: 'learnings',
    kind: 'other',
    subject: 'billing.retry',
    scope: 'repo',
    summary,
    content: `${summary} in detail`,
    tags: ['billing'],
    confidence: 0.8,
    evidence: [{ type: 'code', uri: 'src/a.ts', note: '' }],
    status: 'active',
    superseded_by: null,
    related_entries: [],
    valid_from: null,
    valid_to: null,
    created_by: 'test',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...extra,
  };
}

function workspace(): { dir: string; ws: Workspace; put: (id: string, text: string) => string } {
  const dir = testdir();
  const sdir = join(dir, 'ai-memory/p/learnings');
  mkdirSync(sdir, { recursive: true });
  const put = (id: string, text: string): string => {
    const f = join(sdir, `${id}.json`);
    writeFileSync(f, text);
    return f;
  };
  return { dir, ws: new Workspace(dir), put };
}

const ids = (s: { entries: { meta: { id: string } }[] }): string[] => s.entries.map((e) => e.meta.id).sort();

/** Every metadata field as a plain object: a cached entry's metadata (columns and row) must read exactly as a parsed one. */
const plain = (m: EntryMeta): Record<string, unknown> => Object.fromEntries(META_KEYS.map((k) => [k, m[k]]));

/** A new process finds nothing changed, and exactly what a catalog built from scratch finds. */
function expectCurrent(dir: string, ws: Workspace): ReturnType<Catalog['refresh']> {
  const next = new Catalog(ws).refresh();
  expect(next.changed).toEqual([]);
  expect(next.removed).toEqual([]);
  rmSync(stateDir(dir), { recursive: true });
  const scratch = new Catalog(ws).refresh();
  const view = (x: typeof next): unknown => [x.entries.map((e) => [e.file, e.stamp, plain(e.meta)]).sort(), x.bad];
  expect(view(next)).toEqual(view(scratch));
  return next;
}

describe('Catalog', () => {
  it('caches metadata by stamp: re-reads only what changed, keeps bad files bad, notices removals', () => {
    const { dir, ws, put } = workspace();
    put('A1', serializeEntry(entry('A1', 'first')));
    const b = put('B2', serializeEntry(entry('B2', 'second')));
    put('C3', '{ broken');
    put('D4', serializeEntry(entry('X9', 'misnamed')));
    const first = new Catalog(ws).refresh();
    expect(ids(first)).toEqual(['A1', 'B2']);
    expect(first.bad.map((x) => x.file).sort()).toEqual(['ai-memory/p/learnings/C3.json', 'ai-memory/p/learnings/D4.json']);
    expect(first.changed).toHaveLength(4);

    // A new process: everything comes from the cache, the same metadata, the same problems.
    const second = new Catalog(ws).refresh();
    expect(second.changed).toEqual([]);
    expect(second.removed).toEqual([]);
    expect(ids(second)).toEqual(['A1', 'B2']);
    expect(second.entries.map((e) => plain(e.meta))).toEqual(first.entries.map((e) => plain(e.meta)));
    expect(second.bad).toEqual(first.bad);
    expect(second.entries.find((e) => e.meta.id === 'B2')!.entry.summary).toBe('second');

    // An edit in place (an editor, not our writer) with the mtime put back is still seen: ctime moved.
    writeFileSync(b, serializeEntry(entry('B2', 'SECOND', { confidence: 0.9 })));
    utimesSync(b, new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:00:00Z'));
    const third = new Catalog(ws).refresh();
    expect(third.changed).toEqual(['ai-memory/p/learnings/B2.json']);
    expect(third.entries.find((e) => e.meta.id === 'B2')!.meta.confidence).toBe(0.9);

    unlinkSync(join(dir, 'ai-memory/p/learnings/A1.json'));
    put('C3', serializeEntry(entry('C3', 'fixed now')));
    const fourth = new Catalog(ws).refresh();
    expect(fourth.removed).toEqual(['ai-memory/p/learnings/A1.json']);
    expect(ids(fourth)).toEqual(['B2', 'C3']);
    expect(fourth.bad.map((x) => x.file)).toEqual(['ai-memory/p/learnings/D4.json']);
  });

  it('rebuilds from the files when the cache is corrupt, truncated or from another version', () => {
    const { dir, ws, put } = workspace();
    for (let i = 0; i < 5; i++) put(`E${i}`, serializeEntry(entry(`E${i}`, `entry ${i}`)));
    const want = ids(new Catalog(ws).refresh());
    const cache = join(stateDir(dir), 'cache/catalog.bin');
    const good = readFileSync(cache, 'utf8');
    for (const bad of ['{ not json', good.slice(0, good.lastIndexOf('\n')), JSON.stringify({ v: 5, rows: [] }), '']) {
      writeFileSync(cache, bad);
      const s = new Catalog(ws).refresh();
      expect(ids(s)).toEqual(want);
      expect(s.changed).toHaveLength(5);
      expect(readFileSync(cache, 'utf8')).toBe(good);
    }
    rmSync(stateDir(dir), { recursive: true });
    expect(ids(new Catalog(ws).refresh())).toEqual(want);
  });

  it('skips a second file with the same id in a project, naming the file that keeps it', () => {
    const { dir, ws, put } = workspace();
    put('A1', serializeEntry(entry('A1', 'in learnings')));
    mkdirSync(join(dir, 'ai-memory/p/decisions'), { recursive: true });
    writeFileSync(join(dir, 'ai-memory/p/decisions/A1.json'), serializeEntry(entry('A1', 'copied to decisions', { section: 'decisions' })));
    mkdirSync(join(dir, 'ai-memory/q/learnings'), { recursive: true });
    writeFileSync(join(dir, 'ai-memory/q/learnings/A1.json'), serializeEntry(entry('A1', 'another project may reuse it')));
    const s = new Catalog(ws).refresh();
    expect(s.entries.map((e) => e.file).sort()).toEqual(['ai-memory/p/decisions/A1.json', 'ai-memory/q/learnings/A1.json']);
    expect(s.bad).toEqual([
      {
        file: 'ai-memory/p/learnings/A1.json',
        problems: [
          {
            path: 'ai-memory/p/learnings/A1.json',
            message: 'has id A1, which ai-memory/p/decisions/A1.json already has; ids must be unique within a project (this file is skipped)',
          },
        ],
      },
    ]);
    expect(s.duplicates).toEqual(['ai-memory/p/learnings/A1.json']);
    // The same from the cache, in a new process.
    const again = new Catalog(ws).refresh();
    expect(again.bad).toEqual(s.bad);
    expect(again.duplicates).toEqual(s.duplicates);
    // The copy removed: the base, which had it, is saved again, saying no id is shared.
    unlinkSync(join(dir, 'ai-memory/p/decisions/A1.json'));
    expect(new Catalog(ws).refresh().duplicates).toBeUndefined();
    expect(new CatalogCache(ws).load()!.nodup).toBe(true);
  });

  it('after small changes, tells from the changed files alone that no id is shared, and still finds one that is', () => {
    const { dir, ws, put } = workspace();
    for (let i = 0; i < 10; i++) put(`E${i}`, serializeEntry(entry(`E${i}`, `entry ${i}`)));
    new Catalog(ws).refresh();
    put('N1', serializeEntry(entry('N1', 'new')));
    expect(new Catalog(ws).refresh().changed).toEqual(['ai-memory/p/learnings/N1.json']); // a delta line
    const after = new Catalog(ws).refresh();
    expect(after.cached, 'no entry made to look for shared ids').toBeDefined();
    expect(after.duplicates).toBeUndefined();
    // A copy of E2 under decisions: found by the refresh that sees it, and by every later one.
    mkdirSync(join(dir, 'ai-memory/p/decisions'));
    writeFileSync(join(dir, 'ai-memory/p/decisions/E2.json'), serializeEntry(entry('E2', 'a copy', { section: 'decisions' })));
    for (let round = 0; round < 3; round++) {
      const s = new Catalog(ws).refresh();
      expect(s.duplicates).toEqual(['ai-memory/p/learnings/E2.json']);
      expect(s.cached).toBeUndefined();
    }
  });

  it('finds an unchanged store as the cache left it, without rewriting it, whatever the order of project names', () => {
    const { dir, ws } = workspace();
    // "a-b/" sorts before "a/" as a path, after "a" as a name: the walk must follow the paths.
    for (const [project, section, id] of [
      ['a', 'learnings', 'L1'],
      ['a', 'decisions', 'D1'],
      ['a-b', 'decisions', 'D2'],
      ['a-b', 'learnings', 'L1'],
      ['a.c', 'observations', 'O1'],
    ] as const) {
      mkdirSync(join(dir, 'ai-memory', project, section), { recursive: true });
      writeFileSync(join(dir, 'ai-memory', project, section, `${id}.json`), serializeEntry(entry(id, `${project} ${id}`, { section })));
    }
    const first = new Catalog(ws).refresh();
    expect(first.changed).toHaveLength(5);
    const cache = join(stateDir(dir), 'cache/catalog.bin');
    expect(new CatalogCache(ws).load()!.nodup).toBe(true);
    utimesSync(cache, new Date('2020-01-01T00:00:00Z'), new Date('2020-01-01T00:00:00Z'));
    const mtime = statSync(cache).mtimeMs;
    const second = expectCurrent(dir, ws);
    expect(second.entries.map((e) => e.key).sort()).toEqual(['a-b/D2', 'a-b/L1', 'a.c/O1', 'a/D1', 'a/L1']);
    // The cache of expectCurrent's scratch refresh, found unchanged by a third: not written again.
    const rebuilt = statSync(cache).mtimeMs;
    expect(rebuilt).not.toBe(mtime);
    utimesSync(cache, new Date('2020-01-01T00:00:00Z'), new Date('2020-01-01T00:00:00Z'));
    expect(new Catalog(ws).refresh().changed).toEqual([]);
    expect(statSync(cache).mtimeMs).toBe(mtime);

    // A copy of a's entry under a-b's other section: the cache no longer promises unique ids, and every later reader reports it.
    writeFileSync(join(dir, 'ai-memory/a-b/decisions/L1.json'), serializeEntry(entry('L1', 'a-b L1 again', { section: 'decisions' })));
    const dup = new Catalog(ws).refresh();
    expect(dup.duplicates).toEqual(['ai-memory/a-b/learnings/L1.json']);
    for (let i = 0; i < 2; i++) {
      const later = new Catalog(ws).refresh();
      expect(later.changed).toEqual([]);
      expect(later.duplicates).toEqual(dup.duplicates);
      expect(later.bad).toEqual(dup.bad);
    }

    // The copy removed: no reader finds a shared id any more.
    unlinkSync(join(dir, 'ai-memory/a-b/decisions/L1.json'));
    expect(new Catalog(ws).refresh().duplicates).toBeUndefined();
    expect(expectCurrent(dir, ws).duplicates).toBeUndefined();
  });

  it('a watcher batch (refreshPaths) gives what a full refresh gives, through edits, breakage, duplicates and removals', () => {
    const { dir, ws } = workspace();
    let seed = 11;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = <T>(a: T[]): T => a[Math.floor(rand() * a.length)]!; // rand() < 1: a place of a (never empty here)
    const sections = ['learnings', 'decisions', 'observations'];
    const files = (): string[] =>
      ['p', 'q']
        .flatMap((p) => sections.map((sec) => `ai-memory/${p}/${sec}`))
        .flatMap((d) => {
          mkdirSync(join(dir, d), { recursive: true });
          return ['A1', 'B2', 'C3', 'D4'].map((id) => `${d}/${id}.json`);
        });
    const all = files();
    const live = new Catalog(ws);
    let snap = live.refresh();
    const view = (x: typeof snap): unknown => ({
      entries: x.entries.map((e) => [e.file, e.stamp, e.key, e.entry.summary]).sort(),
      bad: x.bad.map((b) => [b.file, b.problems.map((p) => p.message).join('; ')]).sort(),
      duplicates: [...(x.duplicates ?? [])].sort(),
    });
    let n = 0;
    for (let step = 0; step < 300; step++) {
      const batch = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => pick(all));
      for (const rel of batch) {
        const abs = join(dir, rel);
        const [, , section, name = ''] = rel.split('/');
        const id = name.slice(0, -5);
        const r = rand();
        rmSync(abs, { force: true }); // (a link itself, never what it points at)
        if (r < 0.3) continue; // removed (or left absent)
        if (r < 0.35) writeFileSync(abs, '{ broken');
        else if (r < 0.38)
          symlinkSync(join(dir, all[0]!), abs); // picked from: never empty
        else {
          // Some entries share a summary (duplicates by the duplicate rule), some are superseded.
          const summary = rand() < 0.3 ? pick(['shared one', 'shared two']) : `${id} ${section} v${n++}`;
          const superseded = rand() < 0.2 ? { status: 'superseded', superseded_by: 'Z9' } : {};
          writeFileSync(abs, serializeEntry(entry(id, summary, { section, ...superseded })));
        }
      }
      snap = live.refreshPaths(snap, batch);
      const full = new Catalog(ws).refresh();
      expect(view(snap), `step ${step}`).toEqual(view(full));
      // The lookups a write makes: entries by key, and a live entry with a given duplicate hash.
      expect([...snap.byKey!.keys()].sort()).toEqual(full.entries.map((e) => e.key).sort());
      for (const e of full.entries) {
        const live = full.entries.filter((o) => o.project === e.project && o.meta.dup === e.meta.dup && o.meta.status !== 'superseded').map((o) => o.meta.id);
        const found = snap.findDuplicate!(e.project, e.meta.dup);
        if (live.length) expect(live, `step ${step}`).toContain(found);
        else expect(found, `step ${step}`).toBeUndefined();
      }
      // Every key a batch file has is reported with the entry that now holds it.
      for (const rel of batch) {
        const key = `${rel.split('/')[1]}/${rel.slice(rel.lastIndexOf('/') + 1, -5)}`;
        expect(snap.touched!.has(key), `step ${step} ${rel}`).toBe(true);
        expect(snap.touched!.get(key)?.file ?? null).toBe(full.entries.find((e) => e.key === key)?.file ?? null);
      }
      // Now and then the batches go on from a full refresh (as after the daemon's reconcile).
      if (step % 40 === 39) snap = full;
    }
    // Duplicates did happen along the way.
    expect(n).toBeGreaterThan(100);
  });

  it('noteWritten puts our own writes into the cache: the next process finds nothing changed', () => {
    const { dir, ws, put } = workspace();
    for (let i = 0; i < 6; i++) put(`E${i}`, serializeEntry(entry(`E${i}`, `entry ${i}`)));
    put('BAD', '{ broken');
    const cat = new Catalog(ws);
    cat.refresh();
    // A write of ours: one new file, one changed, one removed, one that is not an entry file.
    put('N9', serializeEntry(entry('N9', 'new one')));
    put('E1', serializeEntry(entry('E1', 'entry 1 changed', { confidence: 0.95 })));
    unlinkSync(join(dir, 'ai-memory/p/learnings/E4.json'));
    writeFileSync(join(dir, 'ai-memory/p/config.yaml'), 'x: 1\n');
    cat.noteWritten(['ai-memory/p/learnings/N9.json', 'ai-memory/p/learnings/E1.json', 'ai-memory/p/learnings/E4.json', 'ai-memory/p/config.yaml']);
    const next = expectCurrent(dir, ws);
    expect(next.entries.find((e) => e.meta.id === 'E1')!.meta.confidence).toBe(0.95);
  });

  it('noteWritten after a refresh that found the cache as saved: writes go to the delta, and the next refresh folds a long one into a new base', () => {
    const { dir, ws, put } = workspace();
    for (let i = 0; i < 30; i++) put(`E${i}`, serializeEntry(entry(`E${i}`, `entry ${i}`)));
    new Catalog(ws).refresh();
    const cat = new Catalog(ws);
    expect(cat.refresh().cached).toBeDefined(); // the cache as loaded, not copied
    const rel = (id: string): string => `ai-memory/p/learnings/${id}.json`;
    const delta = join(stateDir(dir), 'cache/catalog.delta');
    put('N1', serializeEntry(entry('N1', 'new')));
    unlinkSync(join(dir, rel('E3')));
    cat.noteWritten([rel('N1'), rel('E3'), rel('NOPE')]);
    // A file that is not there is noted as removed, whether the cache had it or not.
    expect(readFileSync(delta, 'utf8').trim().split('\n')).toHaveLength(3);
    expect(ids(expectCurrent(dir, ws))).toContain('N1');
    // More than a refresh puts in the delta at once: noted all the same, and the next refresh
    // (finding nothing changed) saves a new base with every write in it.
    const many = Array.from({ length: 300 }, (_, i) => `M${i}`);
    for (const id of many) put(id, serializeEntry(entry(id, `many ${id}`)));
    put('E5', serializeEntry(entry('E5', 'entry 5 edited', { confidence: 0.95 })));
    cat.refresh(); // expectCurrent made a new base: this catalog's notes name the base it found
    cat.noteWritten([...many.map(rel), rel('E5')]);
    expect(readFileSync(delta, 'utf8').trim().split('\n')).toHaveLength(301);
    expect(new Catalog(ws).refresh().changed).toEqual([]);
    expect(existsSync(delta)).toBe(true); // within its bound (1,000 lines at this size)
    // Past its bound, the delta is folded into a new base by the next refresh.
    const base = readFileSync(delta, 'utf8').split('"')[1];
    writeFileSync(delta, `${readFileSync(delta, 'utf8')}${`["${base}","#dir","ai-memory/p/learnings",1,2,3]\n`.repeat(1000)}`);
    expect(new Catalog(ws).refresh().changed).toEqual([]);
    expect(existsSync(delta)).toBe(false);
    const next = expectCurrent(dir, ws);
    expect(next.entries).toHaveLength(30 + 1 - 1 + 300);
    expect(ids(next)).not.toContain('E3');
    expect(next.entries.find((e) => e.meta.id === 'E5')!.meta.confidence).toBe(0.95);
  });

  it("noteWritten takes the writer's entry only for a file that still holds exactly the text written", () => {
    const { dir, ws, put } = workspace();
    for (let i = 0; i < 3; i++) put(`E${i}`, serializeEntry(entry(`E${i}`, `entry ${i}`)));
    const cat = new Catalog(ws);
    cat.refresh();
    const e0 = entry('E0', 'entry 0 rewritten', { confidence: 0.95 });
    const e1 = entry('E1', 'entry 1 rewritten', { confidence: 0.95 });
    put('E0', serializeEntry(e0));
    // E1: someone changed the file after our write; what it holds now is what counts.
    put('E1', serializeEntry(entry('E1', 'entry 1 changed by someone else', { confidence: 0.85 })));
    const rel = (id: string): string => `ai-memory/p/learnings/${id}.json`;
    cat.noteWritten(
      [rel('E0'), rel('E1')],
      new Map([
        [rel('E0'), { text: serializeEntry(e0), entry: e0 }],
        [rel('E1'), { text: serializeEntry(e1), entry: e1 }],
      ]),
    );
    const next = expectCurrent(dir, ws);
    expect(next.entries.find((e) => e.meta.id === 'E0')!.meta.confidence).toBe(0.95);
    expect(next.entries.find((e) => e.meta.id === 'E1')!.meta.confidence).toBe(0.85);
  });

  it('a content id names its base and how many delta lines it holds: a reader finds it only where that very line is', () => {
    const { ws, put } = workspace();
    for (let i = 0; i < 5; i++) put(`E${i}`, serializeEntry(entry(`E${i}`, `entry ${i}`)));
    const base = new Catalog(ws).refresh().contentId!;
    put('E1', serializeEntry(entry('E1', 'entry 1 edited')));
    const first = new Catalog(ws).refresh().contentId!; // one delta line, named by the writer
    expect(first).not.toBe(base);
    const load = (): NonNullable<ReturnType<CatalogCache['load']>> => new CatalogCache(ws).load()!;
    expect(load().content).toBe(first);
    expect(contentPosition(load(), first)).toBe(1);
    expect(contentPosition(load(), base)).toBe(0);
    // Another change after it: the earlier content is still found, one line back.
    put('E2', serializeEntry(entry('E2', 'entry 2 edited')));
    const second = new Catalog(ws).refresh().contentId!;
    expect(load().content).toBe(second);
    expect(contentPosition(load(), first)).toBe(1);
    expect(load().changeLog.slice(contentPosition(load(), first))).toEqual(['ai-memory/p/learnings/E2.json']);
    // A writer that appended without seeing those lines names a content no reader finds.
    const blind = new CatalogCache(ws).appendDelta(load().id, [['ai-memory/p/learnings/E3.json']]);
    expect(blind).toMatch(/\+1\./);
    expect(contentPosition(load(), blind!)).toBeUndefined();
    expect(contentPosition(load(), 'another-base+1.0123456789abcdef')).toBeUndefined();
  });

  it('small changes go to catalog.delta, the base stays; large ones rewrite the base; foreign or torn delta lines are skipped', () => {
    const { dir, ws, put } = workspace();
    for (let i = 0; i < 20; i++) put(`E${i}`, serializeEntry(entry(`E${i}`, `entry ${i}`)));
    new Catalog(ws).refresh();
    const base = join(stateDir(dir), 'cache/catalog.bin');
    const delta = join(stateDir(dir), 'cache/catalog.delta');
    const before = readFileSync(base, 'utf8');
    put('E1', serializeEntry(entry('E1', 'entry 1 edited')));
    put('N1', serializeEntry(entry('N1', 'added')));
    put('E2', '{ broken');
    unlinkSync(join(dir, 'ai-memory/p/learnings/E3.json'));
    const second = new Catalog(ws).refresh();
    expect(second.changed.sort()).toEqual(['ai-memory/p/learnings/E1.json', 'ai-memory/p/learnings/E2.json', 'ai-memory/p/learnings/N1.json']);
    expect(second.removed).toEqual(['ai-memory/p/learnings/E3.json']);
    expect(readFileSync(base, 'utf8')).toBe(before);
    expect(readFileSync(delta, 'utf8').trim().split('\n')).toHaveLength(4);
    // A torn last line (a concurrent append) and a line for another base change nothing.
    writeFileSync(delta, `${readFileSync(delta, 'utf8')}["0000000000000000","ai-memory/p/learnings/E5.json",1,2,3,"1:2:3","[]",null]\n["${'x'.repeat(3)}`);
    expectCurrent(dir, ws);
    // More than a batch's worth of changes: the base is rewritten and the delta goes.
    const rebuilt = readFileSync(base, 'utf8');
    for (let i = 0; i < 300; i++) put(`M${i}`, serializeEntry(entry(`M${i}`, `many ${i}`)));
    expect(new Catalog(ws).refresh().changed).toHaveLength(300);
    expect(readFileSync(base, 'utf8')).not.toBe(rebuilt);
    expect(existsSync(delta)).toBe(false);
    expect(new Catalog(ws).refresh().changed).toEqual([]);
  });

  it('names the content it found: the same id for the same files, a new one after any change, none a line between two processes can fake', () => {
    const { dir, ws, put } = workspace();
    for (let i = 0; i < 6; i++) put(`E${i}`, serializeEntry(entry(`E${i}`, `entry ${i}`)));
    const first = new Catalog(ws).refresh();
    expect(first.contentId).toMatch(/^[0-9a-f]+$/);
    // Nothing changed: the next process finds the same content, also through the delta's folder records.
    expect(new Catalog(ws).refresh().contentId).toBe(first.contentId);
    expect(new CatalogCache(ws).load()!.content).toBe(first.contentId);
    // A change: a delta line, a new id, which the next reader finds by chaining that line.
    put('E1', serializeEntry(entry('E1', 'entry 1 edited')));
    const second = new Catalog(ws).refresh();
    expect(second.changed).toEqual(['ai-memory/p/learnings/E1.json']);
    expect(second.contentId).not.toBe(first.contentId);
    expect(new Catalog(ws).refresh().contentId).toBe(second.contentId);
    // Another process's line between the lines a process saw and the one it appended: the content
    // that process claims is not what a reader of the file finds.
    put('E2', serializeEntry(entry('E2', 'entry 2 edited')));
    const third = new Catalog(ws).refresh();
    const delta = join(stateDir(dir), 'cache/catalog.delta');
    const lines = readFileSync(delta, 'utf8').trim().split('\n');
    const mine = lines.findIndex((l) => l.includes('E2.json'));
    const [baseId, , , , , , row] = JSON.parse(lines[mine] ?? '[]') as string[];
    const theirs = JSON.stringify([baseId, 'ai-memory/p/learnings/E4.json', 1, 2, 3, '1:2:3', row, null, '']);
    writeFileSync(delta, `${[...lines.slice(0, mine), theirs, ...lines.slice(mine)].join('\n')}\n`);
    expect(new CatalogCache(ws).load()!.content).not.toBe(third.contentId);
    // Without it, the file's content is the claimed one again.
    writeFileSync(delta, `${lines.join('\n')}\n`);
    expect(new CatalogCache(ws).load()!.content).toBe(third.contentId);
  });

  it('a cache and its delta read as the files do, through random adds, edits, breakage and removals', () => {
    const { dir, ws, put } = workspace();
    let seed = 29;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const scopes = ['repo', 'org', 'service:billing', 'customer'];
    const ids = Array.from({ length: 40 }, (_, i) => `R${String(i).padStart(2, '0')}`);
    // Some files broken from the start (the base's problems), every row telling its file apart (tags).
    for (const id of ids.slice(0, 25)) put(id, id.endsWith('3') ? '{ broken in the base' : serializeEntry(entry(id, `first ${id}`, { tags: [id] })));
    new Catalog(ws).refresh();
    for (let step = 0; step < 30; step++) {
      for (let j = 0; j < 1 + Math.floor(rand() * 4); j++) {
        const id = ids[Math.floor(rand() * ids.length)]!; // rand() < 1
        const file = join(dir, 'ai-memory/p/learnings', `${id}.json`);
        const r = rand();
        if (r < 0.15 && existsSync(file)) unlinkSync(file);
        else if (r < 0.25) put(id, '{ broken');
        else
          put(
            id,
            serializeEntry(
              entry(id, `step ${step} ${id}`, {
                scope: scopes[Math.floor(rand() * 4)],
                confidence: Math.round(rand() * 10) / 10,
                subject: `s.${step % 7}`,
                tags: [`t${step}`, id],
              }),
            ),
          );
      }
      new Catalog(ws).refresh(); // appends to the delta (or rewrites the base): the delta grows step by step
      // A new process reading base and delta sees what a build from the files alone (a copy) sees.
      const next = new Catalog(ws).refresh();
      expect(next.changed).toEqual([]);
      const copy = testdir();
      cpSync(join(dir, 'ai-memory'), join(copy, 'ai-memory'), { recursive: true });
      const scratch = new Catalog(new Workspace(copy)).refresh();
      const view = (x: typeof next): unknown => [x.entries.map((e) => [e.key, plain(e.meta), e.entry.summary]).sort(), x.bad.map((b) => [b.file, b.problems])];
      expect(view(next), `step ${step}`).toEqual(view(scratch));
      rmSync(copy, { recursive: true, force: true });
    }
    expect(existsSync(join(stateDir(dir), 'cache/catalog.delta'))).toBe(true);
  });

  it('a cached entry reads the same from the columns as from its row, through the base, the delta and a rewrite', () => {
    const { dir, ws, put } = workspace();
    const variety = (i: number): MemoryEntry =>
      entry(`V${i}`, `variety ${i}`, {
        kind: ['hypothesis', 'incident', 'other', 'metric'][i % 4],
        subject: i % 4 === 3 ? `zählwerk.${i % 3}` : `subject.${i % 3}`,
        scope: ['repo', 'org', 'service:billing', 'customer'][i % 4],
        status: ['active', 'draft', 'deprecated'][i % 3],
        confidence: [0.3, 0.75, 1][i % 3],
        tags: i % 2 ? ['a', 'b', 'ünï'] : [],
        evidence:
          i % 3 === 0
            ? [{ type: 'assumption', uri: 'docs/guess.md', note: 'a guess' }]
            : [
                { type: 'code', uri: 'src/a.ts', note: '' },
                { type: 'ticket', uri: 'https://github.com/acme/billing/issues/1', note: '' },
              ],
        valid_from: i % 4 === 1 ? '2026-02-01T00:00:00.000Z' : null,
        valid_to: i % 4 === 2 ? '2027-02-01T00:00:00.000Z' : null,
        updated_at: `2026-01-0${1 + (i % 9)}T00:00:00.000Z`,
      });
    for (let i = 0; i < 12; i++) put(`V${i}`, serializeEntry(variety(i)));
    const parsed = new Catalog(ws).refresh();
    expect(parsed.bad).toEqual([]);
    expect(parsed.entries).toHaveLength(12);
    const fields = (x: typeof parsed): unknown => x.entries.map((e) => [e.file, plain(e.meta)]).sort();
    const cached = new Catalog(ws).refresh();
    expect(cached.changed).toEqual([]);
    expect(cached.entries.every((e) => e.meta instanceof ColumnMeta)).toBe(true);
    expect(fields(cached)).toEqual(fields(parsed));
    // A small change goes to the delta; the next process builds that file's columns from its row.
    put('V3', serializeEntry(variety(5)).replace(/"V5"/, '"V3"'));
    const edited = new Catalog(ws).refresh();
    expect(edited.changed).toEqual(['ai-memory/p/learnings/V3.json']);
    expect(existsSync(join(stateDir(dir), 'cache/catalog.delta'))).toBe(true);
    const fromDelta = new Catalog(ws).refresh();
    expect(fromDelta.entries.every((e) => e.meta instanceof ColumnMeta)).toBe(true);
    expect(fields(fromDelta)).toEqual(fields(edited));
    expect(edited.bad).toEqual([]);
    expect(fromDelta.entries.find((e) => e.meta.id === 'V3')!.meta.kind).toBe('incident');
    // And after a rewrite of the whole cache.
    rmSync(stateDir(dir), { recursive: true });
    const rebuilt = new Catalog(ws).refresh();
    expect(fields(new Catalog(ws).refresh())).toEqual(fields(rebuilt));
    expect(fields(rebuilt)).toEqual(fields(fromDelta));
  });

  it('a pass over a long-lived catalog (readOnce) holds no entry it reads; `entry` holds the recent ones', () => {
    const { ws, put } = workspace();
    for (let i = 0; i < 3; i++) put(`E${i}`, serializeEntry(entry(`E${i}`, `entry ${i}`)));
    const [a, b] = new Catalog(ws, { holdEntries: false }).refresh().entries;
    expect(a!.readOnce().summary).toBe('entry 0');
    // The same id and updated_at, another summary: a held entry would hide it.
    put('E0', serializeEntry(entry('E0', 'entry 0 again')));
    expect(a!.readOnce().summary).toBe('entry 0 again');
    expect(b!.entry.summary).toBe('entry 1');
    put('E1', serializeEntry(entry('E1', 'entry 1 again')));
    expect([b!.entry.summary, b!.readOnce().summary]).toEqual(['entry 1', 'entry 1']);
  });

  it('does not list a folder again while its ctime is the one it had, well before its last listing', () => {
    const { dir, ws, put } = workspace();
    for (let i = 0; i < 5; i++) put(`E${i}`, serializeEntry(entry(`E${i}`, `entry ${i}`)));
    // A listing right after a change is not trusted (a coarse clock could give the next change the same ctime)...
    new Catalog(ws).refresh();
    const delta = join(stateDir(dir), 'cache/catalog.delta');
    // Folders recorded in the base or (a small change) in the delta.
    const recorded = (): string[] => Object.keys(new CatalogCache(ws).load()!.dirs);
    expect(recorded()).toEqual([]);
    // ...one well after it is: recorded, and the next process goes by the names it found.
    const later = (): number => Date.now() + 10_000;
    expect(ids(new Catalog(ws, { wallClock: later }).refresh())).toEqual(['E0', 'E1', 'E2', 'E3', 'E4']);
    expect(recorded()).toEqual(['ai-memory/p/learnings']);
    // Shown by taking a name out of the cache behind the catalog's back: the folder is not listed, so it stays out.
    const id = new CatalogCache(ws).load()!.id;
    const kept = readFileSync(delta, 'utf8');
    writeFileSync(delta, `${JSON.stringify([id, 'ai-memory/p/learnings/E4.json'])}\n`, { flag: 'a' });
    expect(ids(new Catalog(ws, { wallClock: later }).refresh())).toEqual(['E0', 'E1', 'E2', 'E3']);
    writeFileSync(delta, kept);
    // Files are still checked one by one: an edit in place (same size, mtime put back) is seen.
    const f = join(dir, 'ai-memory/p/learnings/E2.json');
    writeFileSync(f, serializeEntry(entry('E2', 'entry X', { confidence: 0.9 })));
    utimesSync(f, new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:00:00Z'));
    const edited = new Catalog(ws, { wallClock: later }).refresh();
    expect(edited.changed).toEqual(['ai-memory/p/learnings/E2.json']);
    expect(edited.entries.find((e) => e.meta.id === 'E2')!.meta.confidence).toBe(0.9);
    // Any change of names moves the folder's ctime: a new file and a removed one are both seen.
    put('N1', serializeEntry(entry('N1', 'new')));
    unlinkSync(join(dir, 'ai-memory/p/learnings/E0.json'));
    const moved = new Catalog(ws, { wallClock: later }).refresh();
    expect(moved.changed).toEqual(['ai-memory/p/learnings/N1.json']);
    expect(moved.removed).toEqual(['ai-memory/p/learnings/E0.json']);
    expect(ids(moved)).toEqual(['E1', 'E2', 'E3', 'E4', 'N1']);
    // A symlinked entry is reported whether or not its folder is listed again.
    symlinkSync(join(dir, 'ai-memory/p/learnings/E1.json'), join(dir, 'ai-memory/p/learnings/L1.json'));
    for (let round = 0; round < 3; round++) {
      const s = new Catalog(ws, { wallClock: later }).refresh();
      expect(s.bad.map((b) => b.file)).toEqual(['ai-memory/p/learnings/L1.json']);
    }
    const paths = new CatalogCache(ws).load()!.paths;
    const files = Array.from({ length: paths.length }, (_, i) => paths.get(i));
    expect(files).toContain('ai-memory/p/learnings/L1.json');
    expect(files).toEqual([...files].sort());
  });
});

// The catalog through its real files: a temp workspace, entry files on disk, the cache under
// .bass-agents/. Imported from dist/ (its lazy requires resolve there).
import { mkdirSync, readFileSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../../dist/store/catalog.js';
import { Workspace } from '../../dist/store/workspace.js';
import { serializeEntry } from '../../dist/core/entry.js';
import { testdir } from '../helpers/repo.js';

function entry(id: string, summary: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id, section: 'learnings', kind: 'other', subject: 'billing.retry', scope: 'repo', summary, content: `${summary} in detail`,
    tags: ['billing'], confidence: 0.8, evidence: [{ type: 'code', uri: 'src/a.ts', note: '' }], status: 'active', superseded_by: null,
    related_entries: [], valid_from: null, valid_to: null, created_by: 'test', created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z', ...extra,
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
    expect(second.entries.map((e) => e.meta)).toEqual(first.entries.map((e) => e.meta));
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
    const cache = join(dir, '.bass-agents/cache/catalog.json');
    const good = readFileSync(cache, 'utf8');
    for (const bad of ['{ not json', good.slice(0, good.lastIndexOf('\n')), JSON.stringify({ v: 5, rows: [] }), '']) {
      writeFileSync(cache, bad);
      const s = new Catalog(ws).refresh();
      expect(ids(s)).toEqual(want);
      expect(s.changed).toHaveLength(5);
      expect(readFileSync(cache, 'utf8')).toBe(good);
    }
    rmSync(join(dir, '.bass-agents'), { recursive: true });
    expect(ids(new Catalog(ws).refresh())).toEqual(want);
  });
});

/**
 * Local state is never read through a link, even one planted after the state folder was checked
 * (a long-lived daemon checks it once): each cache reader sees a link as no file at all.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { VectorStore } from '../../src/index/vectors.js';
import { readNoFollow } from '../../src/store/state-dir.js';
import { readViewRecord, VIEW_RECORD } from '../../src/store/git-view.js';

describe('local state files behind a link', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bass-agents-nofollow-'));
  const real = join(dir, 'real');
  const cache = join(dir, 'cache');
  mkdirSync(real);
  mkdirSync(cache);
  const plant = (name: string): string => {
    symlinkSync(join(real, name), join(cache, name));
    return join(cache, name);
  };

  it('vectors, the git view record and the daemon environment read as absent through a link, and as written without one', () => {
    const store = new VectorStore('m', 2);
    store.put('demo/A', '1:1', 'h1', [0.6, 0.8]);
    expect(store.save(join(real, 'vectors.bin'))).toBe(true);
    expect(VectorStore.load(join(real, 'vectors.bin'), 'm', 2).size).toBe(1);
    expect(VectorStore.load(plant('vectors.bin'), 'm', 2).size).toBe(0);
    expect(VectorStore.load(join(cache, 'vectors.bin')).model).toBe(''); // none

    writeFileSync(join(real, VIEW_RECORD), JSON.stringify({ index: 'abc', content: 'def' }));
    expect(readViewRecord(real)).toEqual({ index: 'abc', content: 'def' });
    plant(VIEW_RECORD);
    expect(readViewRecord(cache)).toBeUndefined();

    writeFileSync(join(real, 'env'), 'GIT_AUTHOR_NAME=x\n');
    expect(readNoFollow(join(real, 'env'), 'utf8')).toContain('GIT_AUTHOR_NAME');
    expect(() => readNoFollow(plant('env'), 'utf8')).toThrow(/ELOOP|link/);
  });
});

/**
 * The full-text index (MiniSearch) over summary, content, subject, tags, kind and scope.
 *
 * Persisted under `.bass-agents/cache/index.json` as `{v, optionsHash, stamps, index}`; a command
 * loads it and replaces/discards by id only the entries whose files changed (the catalog's stamps
 * say which), so a cold query does not rebuild. A corrupt or mismatched snapshot is rebuilt,
 * never fatal. Filters are applied before the text search (Req 15.5) by passing the candidate
 * set as MiniSearch's `filter`.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import MiniSearch, { type Options, type SearchResult } from 'minisearch';
import type { MemoryEntry } from '../core/schema.js';
import { writeFileAtomic } from '../store/fsutil.js';

const SNAPSHOT_VERSION = 1;

interface Doc {
  key: string;
  summary: string;
  content: string;
  subject: string;
  tags: string;
  kind: string;
  scope: string;
}

/** Splits on anything that is not a letter or digit, so `auth-service.tokens` → auth, service, tokens. */
const tokenize = (text: string): string[] => text.split(/[^\p{L}\p{N}]+/u).filter(Boolean);

export const INDEX_OPTIONS: Options<Doc> = {
  idField: 'key',
  fields: ['summary', 'content', 'subject', 'tags', 'kind', 'scope'],
  storeFields: [],
  tokenize,
  processTerm: (t) => (t.length > 1 || /\d/.test(t) ? t.toLowerCase() : null),
  searchOptions: {
    boost: { summary: 3, subject: 3, tags: 2, kind: 1, scope: 1, content: 1 },
    prefix: (term) => term.length >= 3,
    fuzzy: (term) => (term.length >= 6 ? 0.15 : false),
    combineWith: 'OR',
  },
};

/** Changes whenever the options above change, so an old snapshot is rebuilt rather than misread. */
export const OPTIONS_HASH = createHash('sha1')
  .update(JSON.stringify({ v: SNAPSHOT_VERSION, fields: INDEX_OPTIONS.fields, s: String(INDEX_OPTIONS.processTerm), t: String(tokenize) }))
  .digest('hex')
  .slice(0, 12);

export interface IndexedDoc {
  key: string;
  stamp: string;
  entry: MemoryEntry;
}

function toDoc(key: string, e: MemoryEntry): Doc {
  return { key, summary: e.summary, content: e.content, subject: e.subject, tags: e.tags.join(' '), kind: e.kind, scope: e.scope };
}

export interface SyncReport {
  loaded: boolean;
  added: number;
  replaced: number;
  removed: number;
}

export class SearchIndex {
  private ms: MiniSearch<Doc>;
  private stamps: Map<string, string>;
  private dirty = false;

  private constructor(ms: MiniSearch<Doc>, stamps: Map<string, string>) {
    this.ms = ms;
    this.stamps = stamps;
  }

  static empty(): SearchIndex {
    return new SearchIndex(new MiniSearch<Doc>(INDEX_OPTIONS), new Map());
  }

  static snapshotPath(localDir: string): string {
    return join(localDir, 'cache', 'index.json');
  }

  /** Loads a snapshot; returns an empty index when it is missing, corrupt or built with other options. */
  static load(file: string): { index: SearchIndex; loaded: boolean } {
    try {
      const raw = JSON.parse(readFileSync(file, 'utf8')) as { v: number; optionsHash: string; stamps: Record<string, string>; index: unknown };
      if (raw.v !== SNAPSHOT_VERSION || raw.optionsHash !== OPTIONS_HASH) return { index: SearchIndex.empty(), loaded: false };
      const ms = MiniSearch.loadJS<Doc>(raw.index as Parameters<typeof MiniSearch.loadJS>[0], INDEX_OPTIONS);
      return { index: new SearchIndex(ms, new Map(Object.entries(raw.stamps))), loaded: true };
    } catch {
      return { index: SearchIndex.empty(), loaded: false };
    }
  }

  get size(): number {
    return this.ms.documentCount;
  }

  /** Makes the index hold exactly `docs`: adds new ones, replaces changed ones (by stamp), discards gone ones. */
  sync(docs: IndexedDoc[]): SyncReport {
    const report: SyncReport = { loaded: true, added: 0, replaced: 0, removed: 0 };
    const seen = new Set<string>();
    for (const d of docs) {
      seen.add(d.key);
      const old = this.stamps.get(d.key);
      if (old === d.stamp) continue;
      if (old === undefined) {
        this.ms.add(toDoc(d.key, d.entry));
        report.added++;
      } else {
        this.ms.replace(toDoc(d.key, d.entry));
        report.replaced++;
      }
      this.stamps.set(d.key, d.stamp);
    }
    for (const key of [...this.stamps.keys()]) {
      if (!seen.has(key)) {
        this.ms.discard(key);
        this.stamps.delete(key);
        report.removed++;
      }
    }
    if (report.added || report.replaced || report.removed) this.dirty = true;
    return report;
  }

  /** Relevance per key for `text`, restricted to `allowed` keys (filters applied first). */
  search(text: string, allowed?: Set<string>): Map<string, number> {
    const res: SearchResult[] = this.ms.search(text, allowed ? { filter: (r) => allowed.has(r.id as string) } : {});
    const out = new Map<string, number>();
    for (const r of res) out.set(r.id as string, r.score);
    return out;
  }

  save(file: string, force = false): boolean {
    if (!this.dirty && !force) return false;
    const data = JSON.stringify({ v: SNAPSHOT_VERSION, optionsHash: OPTIONS_HASH, stamps: Object.fromEntries(this.stamps), index: this.ms });
    writeFileAtomic(file, data, { fsync: false });
    this.dirty = false;
    return true;
  }
}

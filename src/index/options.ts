/**
 * What the index indexes and how it analyzes text: the document of an entry, MiniSearch's
 * options, and the hash that names them in a snapshot (a change of either rebuilds it).
 */
import { createHash } from 'node:crypto';
import type { Options } from 'minisearch';
import type { MemoryEntry } from '../core/schema.js';

/** The version of the snapshot format (snapshot-file.ts); part of the options hash. */
export const SNAPSHOT_VERSION = 4;

export interface Doc {
  key: string;
  summary: string;
  content: string;
  subject: string;
  tags: string;
  kind: string;
  scope: string;
}

/** Splits on anything that is not a letter or digit, so `auth-service.tokens` → auth, service, tokens. */
export const tokenize = (text: string): string[] => text.split(/[^\p{L}\p{N}]+/u).filter(Boolean);

export const INDEX_OPTIONS: Options<Doc> = {
  idField: 'key',
  fields: ['summary', 'content', 'subject', 'tags', 'kind', 'scope'],
  storeFields: [],
  tokenize,
  processTerm: (t) => (t.length > 1 || /\d/.test(t) ? t.toLowerCase() : null),
  // Vacuumed synchronously after every sync that discards (see SearchIndex.vacuum).
  autoVacuum: false,
  searchOptions: {
    boost: { summary: 3, subject: 3, tags: 2, kind: 1, scope: 1, content: 1 },
    prefix: (term) => term.length >= 3,
    fuzzy: (term) => (term.length >= 6 ? 0.15 : false),
    combineWith: 'OR',
  },
};

/**
 * Names the tokenizer and term processing above: change it whenever they change, so an old
 * snapshot is rebuilt rather than misread. (Not their source text: the bundled CLI and dist/
 * hold the same functions formatted differently, and must share one snapshot.)
 */
const ANALYZER = 'split-non-letter-digit/lowercase-min2-or-digit/v1';

/** Changes whenever the options above change, so an old snapshot is rebuilt rather than misread. */
export const OPTIONS_HASH = createHash('sha1')
  .update(JSON.stringify({ v: SNAPSHOT_VERSION, fields: INDEX_OPTIONS.fields, analyzer: ANALYZER }))
  .digest('hex')
  .slice(0, 12);

export function docOf(key: string, e: MemoryEntry): Doc {
  return { key, summary: e.summary, content: e.content, subject: e.subject, tags: e.tags.join(' '), kind: e.kind, scope: e.scope };
}

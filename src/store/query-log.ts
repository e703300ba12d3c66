/**
 * The query log's lines (`logs/queries.jsonl`; statistics and the dashboard read them). A query
 * text or a filter value can hold anything an agent typed, a secret included, so by default a
 * line keeps none: the text, subject and scope become keyed hashes (HMAC-SHA-256 under a random
 * key in this workspace's local state, never committed, so that a log cannot be matched against
 * guesses computed anywhere else), the other filters are named, not given. Statistics name a
 * hashed subject or scope when an entry has it (`labelOf`), else show it as "(text not kept)".
 * A project's config.yaml with `logging: {query_text: true}` keeps them as typed.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { QueryFilters } from '../core/query.js';
import { nodeCrypto } from '../node-crypto.js';
import { appendLogs } from './local-log.js';
import { readNoFollow } from './state-dir.js';
import type { Workspace } from './workspace.js';

export const TEXT_NOT_KEPT = '(text not kept)';

const KEY_FILE = 'query-key';

export interface QueryLogInput {
  time: string;
  text: string;
  filters: QueryFilters;
  result_count: number;
  execution_ms: number;
}

/** This workspace's hash key (made on first use when `make`); null when it has no local state folder to keep it in. */
function queryKey(ws: Workspace, make: boolean): Buffer | null {
  if (!ws.ensureLocal()) return null;
  const file = join(ws.localDir, KEY_FILE);
  try {
    return readNoFollow(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !make) return null;
  }
  const key = nodeCrypto().randomBytes(32);
  try {
    // O_EXCL (never through a link, as O_CREAT|O_EXCL does not follow one): of two processes making it at once, one key wins.
    writeFileSync(file, key, { flag: 'wx', mode: 0o600 });
    return key;
  } catch {
    return readNoFollow(file);
  }
}

/** Whether a query has text or filter values to keep out of the log (a plain `list` has none). */
export function holdsValues(q: Pick<QueryLogInput, 'text' | 'filters'>): boolean {
  return q.text !== '' || Object.entries(q.filters).some(([k, v]) => k !== 'projects' && v !== undefined);
}

/** The keyed hash of a text as the log keeps it (16 hex digits); null for no text. */
function hashWith(key: Buffer | null, text: string | null | undefined, normalize = false): string | null {
  if (text === null || text === undefined || text === '' || !key) return null;
  const t = normalize ? text.trim().replace(/\s+/g, ' ').toLowerCase() : text;
  return nodeCrypto().createHmac('sha256', key).update(t).digest('hex').slice(0, 16);
}

/** One line of the query log; with `keepText`, the text and filter values as typed too. */
function recordOf(key: Buffer | null, q: QueryLogInput, keepText: boolean): Record<string, unknown> {
  const f = q.filters;
  const common = {
    time: q.time,
    text_hash: hashWith(key, q.text, true),
    subject_hash: hashWith(key, f.subject),
    scope_hash: hashWith(key, f.scope),
    projects: f.projects ?? null,
  };
  const tail = { result_count: q.result_count, execution_ms: q.execution_ms };
  if (keepText) return { ...common, text: q.text, subject: f.subject ?? null, scope: f.scope ?? null, filters: f, ...tail };
  const used = Object.entries(f)
    .filter(([k, v]) => k !== 'projects' && v !== undefined)
    .map(([k]) => k);
  return { ...common, filters: used, ...tail };
}

/** Appends a query to the query log (nothing in a folder that holds no memory). */
export function appendQueryLog(ws: Workspace, q: QueryLogInput, keepText: boolean): void {
  try {
    // (The key is read only when there is something to hash.)
    const key = holdsValues(q) ? queryKey(ws, true) : null;
    if (key || ws.ensureLocal()) appendLogs(ws, 'queries', [recordOf(key, q, keepText)]);
  } catch {
    /* logging must never fail a command */
  }
}

/**
 * A function naming the hashed values of the log (`subject_hash`, `scope_hash`) by the values
 * among `known` (the subjects and scopes of the entries: committed, so nothing is told that the
 * repository does not say) that have that hash; undefined for the others.
 */
export function labelOf(ws: Workspace, known: Iterable<string>): (hash: string) => string | undefined {
  const key = queryKey(ws, false);
  const byHash = new Map<string, string>();
  let rest: Iterator<string> | undefined = key ? known[Symbol.iterator]() : undefined;
  return (hash) => {
    // Hashes the known values only as far as needed to find this one.
    while (!byHash.has(hash) && rest) {
      const n = rest.next();
      if (n.done) rest = undefined;
      else byHash.set(hashWith(key, n.value)!, n.value);
    }
    return byHash.get(hash);
  };
}

/**
 * The query log's lines (docs/local-state.md). A query text or filter value can hold a secret an
 * agent typed, so by default a line keeps keyed hashes of them, under a key of this workspace's
 * (a log cannot be matched against guesses made elsewhere), and names the other filters.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { QueryFilters } from '../core/query.js';
import { nodeCrypto } from '../node-crypto.js';
import { appendLogs } from './local-log.js';
import { tryOr } from './fsutil.js';
import { readNoFollow } from './state-dir.js';
import type { Workspace } from './workspace.js';

export const TEXT_NOT_KEPT = '(text not kept)';

const KEY_FILE = 'query-key';

interface QueryLogInput {
  time: string;
  text: string;
  filters: QueryFilters;
  result_count: number;
  execution_ms: number;
}

/** This workspace's hash key (made when `make`); null without a local state folder. */
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
    // O_EXCL: never through a link, and of two processes making it at once, one key wins.
    writeFileSync(file, key, { flag: 'wx', mode: 0o600 });
    return key;
  } catch {
    return readNoFollow(file);
  }
}

/** The filters given a value, but the projects (which are logged as they are). */
const valued = (f: QueryFilters): string[] => Object.keys(f).filter((k) => k !== 'projects' && f[k as keyof QueryFilters] !== undefined);

/** Whether a query has text or filter values to keep out of the log. */
export const holdsValues = (q: Pick<QueryLogInput, 'text' | 'filters'>): boolean => q.text !== '' || valued(q.filters).length > 0;

function hashWith(key: Buffer | null, text: string | null | undefined, normalize = false): string | null {
  if (text === null || text === undefined || text === '' || !key) return null;
  const t = normalize ? text.trim().replace(/\s+/g, ' ').toLowerCase() : text;
  return nodeCrypto().createHmac('sha256', key).update(t).digest('hex').slice(0, 16);
}

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
  return { ...common, filters: valued(f), ...tail };
}

export function appendQueryLog(ws: Workspace, q: QueryLogInput, keepText: boolean): void {
  // Logging never fails a command.
  tryOr(() => {
    const key = holdsValues(q) ? queryKey(ws, true) : null;
    if (key || ws.ensureLocal()) appendLogs(ws, 'queries', [recordOf(key, q, keepText)]);
  }, undefined);
}

/** Names a hashed value of the log by the value among `known` (committed subjects and scopes: nothing the repository does not say) with that hash. */
export function labelOf(ws: Workspace, known: Iterable<string>): (hash: string) => string | undefined {
  const key = queryKey(ws, false);
  const byHash = new Map<string, string>();
  let rest: Iterator<string> | undefined = key ? known[Symbol.iterator]() : undefined;
  return (hash) => {
    while (!byHash.has(hash) && rest) {
      const n = rest.next();
      if (n.done) rest = undefined;
      else byHash.set(hashWith(key, n.value)!, n.value);
    }
    return byHash.get(hash);
  };
}

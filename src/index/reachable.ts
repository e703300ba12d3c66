/**
 * Which vocabulary terms a search can reach (exact, prefix, fuzzy by MiniSearch's own rules): a
 * one-shot query reads only their postings from the snapshot.
 */
import type { Options, SearchOptions } from 'minisearch';
import { INDEX_OPTIONS, type Doc } from './options.js';
import { lowerBoundBy } from '../core/sorted.js';

/** Rows for boundedDistance, grown as needed (a query checks thousands of terms: no arrays per call). */
let prevRow = new Int32Array(64);
let curRow = new Int32Array(64);

/** Levenshtein distance, or `max + 1` as soon as it must exceed `max`. */
export function boundedDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (max === 1) return withinOneEdit(a, b) ? (a === b ? 0 : 1) : 2;
  if (prevRow.length <= b.length) {
    prevRow = new Int32Array(2 * b.length + 2);
    curRow = new Int32Array(2 * b.length + 2);
  }
  let prev = prevRow;
  let cur = curRow;
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  // `!`: both rows hold b.length + 1 numbers (checked above).
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (ca === b.charCodeAt(j - 1) ? 0 : 1));
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    const t = prev;
    prev = cur;
    cur = t;
  }
  return Math.min(prev[b.length]!, max + 1);
}

/** Whether `a` becomes `b` by at most one insertion, deletion or substitution (the usual fuzzy bound of a query term), in one pass. */
export function withinOneEdit(a: string, b: string): boolean {
  if (a.length > b.length) return withinOneEdit(b, a);
  const la = a.length;
  if (b.length - la > 1) return false;
  let i = 0;
  while (i < la && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === la) return true; // equal, or b has one more character at the end
  const skip = la === b.length ? 1 : 0; // a substitution at i, or an insertion into b at i
  for (let j = i + skip; j < la; j++) if (a.charCodeAt(j) !== b.charCodeAt(j + 1 - skip)) return false;
  return true;
}

/** A query's terms as MiniSearch's `search` derives them from `text`: each with its boost, whether prefixes match, and the greatest typo distance (0: none). */
export function queryTerms(
  text: string,
  opts: Options<Doc>,
  so: SearchOptions = opts.searchOptions ?? {},
): { term: string; boost: number; prefix: boolean; fuzzy: number }[] {
  const processTerm = so.processTerm ?? opts.processTerm!;
  const terms = (so.tokenize ?? opts.tokenize!)(text).flatMap((t) => {
    const p = processTerm(t);
    return Array.isArray(p) ? p.filter(Boolean) : p ? [p] : [];
  });
  return terms.map((term, i) => {
    const fz = typeof so.fuzzy === 'function' ? so.fuzzy(term, i, terms) : so.fuzzy || false;
    const f = fz === true ? 0.2 : fz;
    return {
      term,
      boost: typeof so.boostTerm === 'function' ? so.boostTerm(term, i, terms) : 1,
      prefix: typeof so.prefix === 'function' ? so.prefix(term, i, terms) : so.prefix === true,
      fuzzy: !f ? 0 : f < 1 ? Math.min(so.maxFuzzy ?? 6, Math.round(term.length * f)) : f,
    };
  });
}

/** Indexes of the vocabulary terms a search for `text` can reach by MiniSearch's rules (a superset is harmless: scoring looks every term up again). */
export function reachableTerms(terms: string[], text: string, opts: Options<Doc> = INDEX_OPTIONS): Set<number> {
  const out = new Set<number>();
  for (const { term: q, prefix, fuzzy } of queryTerms(text, opts)) {
    const exact = lowerBoundBy(terms, q, (t) => t);
    if (terms[exact] === q) out.add(exact);
    if (prefix) for (let k = exact; terms[k]?.startsWith(q); k++) out.add(k);
    if (fuzzy)
      terms.forEach((t, k) => {
        if (Math.abs(t.length - q.length) <= fuzzy && boundedDistance(q, t, fuzzy) <= fuzzy) out.add(k);
      });
  }
  return out;
}

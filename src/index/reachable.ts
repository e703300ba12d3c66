/**
 * Which vocabulary terms a search can reach (exact, prefix, fuzzy by MiniSearch's own rules): a
 * one-shot query reads only their postings from the snapshot.
 */
import type { Options } from 'minisearch';
import { INDEX_OPTIONS, tokenize, type Doc } from './options.js';
import { lowerBound } from '../core/sorted.js';

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

/**
 * Indexes of the vocabulary terms a search for `text` can reach, by the same tokenizer, term
 * processing, prefix and fuzzy rules MiniSearch applies (a superset is harmless: MiniSearch
 * re-checks every term against its own tree).
 */
export function reachableTerms(terms: string[], text: string, opts: Options<Doc> = INDEX_OPTIONS): Set<number> {
  const so = opts.searchOptions ?? {};
  const tok = so.tokenize ?? opts.tokenize ?? tokenize;
  const proc = so.processTerm ?? opts.processTerm ?? ((t: string) => t.toLowerCase());
  const maxFuzzy = so.maxFuzzy ?? 6;
  const out = new Set<number>();
  const raw = tok(text);
  const queryTerms = raw.flatMap((t) => {
    const p = proc(t);
    return p == null || p === false ? [] : Array.isArray(p) ? p : [p];
  });
  queryTerms.forEach((q, i) => {
    const exact = lowerBound(terms, q);
    if (terms[exact] === q) out.add(exact);
    const prefix = typeof so.prefix === 'function' ? so.prefix(q, i, queryTerms) : so.prefix;
    if (prefix) for (let k = exact; terms[k]?.startsWith(q); k++) out.add(k);
    const fz = typeof so.fuzzy === 'function' ? so.fuzzy(q, i, queryTerms) : so.fuzzy;
    if (fz) {
      const f = fz === true ? 0.2 : fz;
      const max = f < 1 ? Math.min(maxFuzzy, Math.round(q.length * f)) : f;
      if (max > 0) {
        terms.forEach((t, k) => {
          if (Math.abs(t.length - q.length) <= max && boundedDistance(q, t, max) <= max) out.add(k);
        });
      }
    }
  });
  return out;
}

/** The query rules, pure: filters, then relevance, then the priors. Every front end ranks through `rankEntries`. */
import type { AnchorStatus } from './anchors.js';
import { evidenceQuality } from './constants.js';
import type { EntryLike } from './meta.js';
import type { MemoryEntry } from './schema.js';

export * from './query-filters.js';

export const MAX_RESULTS = 50;
export const LOW_CONFIDENCE = 0.5;
export const EXPIRY_WARNING_DAYS = 7;
const DAY_MS = 86_400_000;

export type Flag = 'low_confidence' | 'expiring_soon' | 'expired' | 'not_yet_valid' | 'stale_evidence';

export function confidenceLabel(c: number): 'stated explicitly' | 'high confidence' | 'inferred' | 'uncertain' {
  if (c >= 0.9) return 'stated explicitly';
  if (c >= 0.7) return 'high confidence';
  if (c >= 0.5) return 'inferred';
  return 'uncertain';
}

// Most entries have no flag (or only stale evidence): shared frozen arrays, not one per candidate.
const NO_FLAGS: Flag[] = Object.freeze([]) as unknown as Flag[];
const ONLY_STALE: Flag[] = Object.freeze(['stale_evidence']) as unknown as Flag[];

/** Flags of an entry as of `now` (ms). `stale` comes from the evidence cache. */
export function entryFlags(e: EntryLike, now: number, stale = false): Flag[] {
  if (e.confidence >= LOW_CONFIDENCE && !e.valid_to && !e.valid_from) return stale ? ONLY_STALE : NO_FLAGS;
  const flags: Flag[] = [];
  if (e.confidence < LOW_CONFIDENCE) flags.push('low_confidence');
  if (e.valid_to) {
    const to = Date.parse(e.valid_to);
    if (to < now) flags.push('expired');
    else if (to - now <= EXPIRY_WARNING_DAYS * DAY_MS) flags.push('expiring_soon');
  }
  if (e.valid_from && Date.parse(e.valid_from) > now) flags.push('not_yet_valid');
  if (stale) flags.push('stale_evidence');
  return flags;
}

export interface Candidate<E extends EntryLike = EntryLike> {
  project: string;
  entry: E;
  /** Text relevance from the index (absent for queries without text). */
  relevance?: number;
  stale?: boolean;
  /** Decay strength (0..1) and effective confidence from the lifecycle, when known. */
  strength?: number;
  effective_confidence?: number;
}

export interface Ranked<E extends EntryLike = EntryLike> extends Candidate<E> {
  score: number;
  flags: Flag[];
  confidence_label: string;
}

/** Down-rank factor for entries near expiry or with stale evidence. */
export function demotion(flags: Flag[]): number {
  let f = 1;
  if (flags.includes('expiring_soon')) f *= 0.7;
  if (flags.includes('stale_evidence')) f *= 0.6;
  return f;
}

/** The prior as one number in (0, 1] of an entry with this confidence and evidence quality: confidence first, then evidence quality. */
export function priorOf(confidence: number, quality: number): number {
  return (0.6 + 0.4 * confidence) * (0.85 + 0.05 * quality);
}

/** the order: confidence desc, evidence quality desc, updated_at desc (id for a stable tie). */
export function compareByPriors(a: EntryLike, b: EntryLike): number {
  return (
    b.confidence - a.confidence ||
    evidenceQuality(b) - evidenceQuality(a) ||
    (b.updated_at < a.updated_at ? -1 : b.updated_at > a.updated_at ? 1 : 0) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** With text, relevance leads: at most these shares of the score come from the prior and from decay strength, so a match 25 % stronger always ranks above. */
export const PRIOR_WEIGHT = 0.2;
export const STRENGTH_WEIGHT = 0.05;

const textPrior = (priorTimesDemotion: number): number => 1 - PRIOR_WEIGHT * (1 - priorTimesDemotion);

/** What `rankEntries` multiplies a text relevance by before decay strength (exposed for `textFloor`). */
export function textWeight(e: EntryLike, now: number, stale = false): number {
  return textPrior(priorOf(e.confidence, evidenceQuality(e)) * demotion(entryFlags(e, now, stale)));
}

/** `textWeight` of each entry of prior keys (see priorKeys): the same numbers, from the columns. */
export function textWeightsOf(keys: PriorKeys): Float64Array {
  const out = new Float64Array(keys.d.length);
  // The key columns are all of out's length.
  for (let i = 0; i < out.length; i++) out[i] = textPrior(priorOf(keys.conf[i]!, keys.q[i]!) * keys.d[i]!);
  return out;
}

/** Positions 0..count-1 of the `n` best by `better` (a strict order), in heap order: a bounded heap whose root is the worst kept: only the kept are sorted. */
function bestPositions(count: number, n: number, better: (i: number, j: number) => boolean): number[] {
  // Every position read below is checked against heap.length (or is a parent of one that is).
  const heap: number[] = [];
  const swap = (a: number, b: number): void => {
    const t = heap[a]!;
    heap[a] = heap[b]!;
    heap[b] = t;
  };
  for (let k = 0; k < count; k++) {
    if (heap.length < n) {
      heap.push(k);
      for (let i = heap.length - 1; i > 0;) {
        const p = (i - 1) >> 1;
        if (!better(heap[p]!, heap[i]!)) break;
        swap(i, p);
        i = p;
      }
    } else if (n > 0 && better(k, heap[0]!)) {
      heap[0] = k;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && better(heap[m]!, heap[l]!)) m = l;
        if (r < heap.length && better(heap[m]!, heap[r]!)) m = r;
        if (m === i) break;
        swap(i, m);
        i = m;
      }
    }
  }
  return heap;
}

/** The n-th largest of `values` (n >= 1): one pass, no sort of all of them. */
export function nthLargest(values: Float64Array, n: number): number {
  if (n < 1 || values.length < n) return -Infinity;
  // Positions are below values.length, and n >= 1 of them are kept.
  return values[bestPositions(values.length, n, (i, j) => values[i]! > values[j]!)[0]!]!;
}

/** A raw-score bound below which a text hit cannot reach `rankEntries`' first `n` (`bases`: raw score × textWeight), lowered past one rounding step. */
export function textFloor(bases: Float64Array, n: number, maxRelevance: number): number {
  if (!(n >= 1) || !Number.isFinite(n) || bases.length <= 2 * n || !(maxRelevance > 0)) return -Infinity;
  return (1 - STRENGTH_WEIGHT) * nthLargest(bases, n) * (1 - 1e-9) - 1.0001e-4 * maxRelevance;
}

/** The first `n` of `cands` in the no-text order (demoted last, then compareByPriors, then position), with their flags; no object per entry. */
export function firstByPriors(cands: readonly Pick<Candidate, 'entry' | 'stale'>[], n: number, now: number): { at: number; flags: Flag[] }[] {
  const keys = priorKeys(cands.length);
  cands.forEach(({ entry: e, stale }, i) => {
    const flags = (keys.flags[i] = entryFlags(e, now, stale));
    keys.conf[i] = e.confidence;
    keys.q[i] = evidenceQuality(e);
    keys.d[i] = demotion(flags);
    keys.upd[i] = e.updated_at;
  });
  return firstByPriorKeys(
    keys,
    n,
    (i) => cands[i]!.entry.id,
    (i) => keys.upd[i]!,
  ); // positions below cands.length, all filled above
}

/** The sort keys of the no-text order; updated_at as text (`upd`) or as `canonicalMs` (`updMs`, NaN where not known). */
export interface PriorKeys {
  flags: Flag[][];
  d: Float64Array;
  conf: Float64Array;
  q: Float64Array;
  upd: string[];
  updMs: Float64Array;
}

export function priorKeys(m: number): PriorKeys {
  return {
    flags: new Array<Flag[]>(m),
    d: new Float64Array(m),
    conf: new Float64Array(m),
    q: new Float64Array(m),
    upd: new Array<string>(m),
    updMs: new Float64Array(m).fill(NaN),
  };
}

/** `firstByPriors` for keys already computed: `updAt(i)` is asked only where `updMs` cannot decide; `idAt` breaks the remaining ties. */
export function firstByPriorKeys(keys: PriorKeys, n: number, idAt: (i: number) => string, updAt: (i: number) => string): { at: number; flags: Flag[] }[] {
  const { d, conf, q, updMs } = keys;
  const m = d.length;
  // Positions are below m, the length of every key column.
  const byUpdated = (i: number, j: number): number => {
    const a = updMs[i]!;
    const b = updMs[j]!;
    if (a === a && b === b) return b - a; // both canonical: the numbers are in the texts' order
    const x = updAt(i);
    const y = updAt(j);
    return y < x ? -1 : y > x ? 1 : 0;
  };
  // Ties kept in position order: a strict order, so that selecting is sorting.
  const before = (i: number, j: number): boolean => {
    const by = d[j]! - d[i]! || conf[j]! - conf[i]! || q[j]! - q[i]! || byUpdated(i, j);
    if (by) return by < 0;
    const a = idAt(i);
    const b = idAt(j);
    return a !== b ? a < b : i < j;
  };
  // A page needs the first n of thousands: selected, not all sorted.
  const page = bestPositions(m, Math.min(n, m), before).sort((i, j) => (i === j ? 0 : before(i, j) ? -1 : 1));
  return page.map((i) => ({ at: i, flags: keys.flags[i]! }));
}

/**
 * Ranks filtered candidates: without text in the priors' order; with text, relevance × scaled priors × scaled
 * strength. `lifecycle` is asked lazily: the strength factor is at most 1, so a base below the `limit`-th final score ends it.
 */
export function rankEntries<E extends EntryLike, C extends Candidate<E>>(
  cands: C[],
  now: number,
  hasText: boolean,
  limit = Infinity,
  lifecycle?: (c: C) => { strength: number; effective_confidence: number },
): (C & Ranked<E>)[] {
  const n = Math.min(limit, cands.length);
  const baseOf = (c: C, flags: Flag[], q: number): number => {
    const p = priorOf(c.entry.confidence, q) * demotion(flags);
    return hasText ? (c.relevance ?? 0) * textPrior(p) : p;
  };
  // The final score is base × a factor in [1 - STRENGTH_WEIGHT, 1]: a base below that share of the n-th best
  // cannot reach the top n (compared rounded, as scores are, so a possible tie is kept).
  let floor = -Infinity;
  if (hasText && Number.isFinite(limit) && cands.length > 2 * n && n > 0) {
    const bases = Float64Array.from(cands, (c) => baseOf(c, entryFlags(c.entry, now, c.stale), evidenceQuality(c.entry)));
    floor = Math.round((1 - STRENGTH_WEIGHT) * nthLargest(bases, n) * 1e4) / 1e4;
  }
  type K = { c: C; flags: Flag[]; base: number; score: number };
  const byPriors = (a: K, b: K): number => compareByPriors(a.c.entry, b.c.entry);
  const apply = (k: K): void => {
    if (lifecycle) {
      const lc = lifecycle(k.c);
      k.c.strength = lc.strength;
      k.c.effective_confidence = lc.effective_confidence;
    }
    // Decay strength is a prior of text relevance only: the no-text order stays exactly the priors'.
    const s = hasText ? 1 - STRENGTH_WEIGHT * (1 - Math.min(1, Math.max(0, k.c.strength ?? 1))) : 1;
    k.score = Math.round(k.base * s * 1e4) / 1e4;
  };
  let top: K[];
  if (hasText) {
    const keyed: K[] = [];
    for (const c of cands) {
      const flags = entryFlags(c.entry, now, c.stale);
      const base = baseOf(c, flags, evidenceQuality(c.entry));
      if (Math.round(base * 1e4) / 1e4 < floor) continue;
      keyed.push({ c, flags, base, score: 0 });
    }
    keyed.sort((a, b) => b.base - a.base || byPriors(a, b));
    top = [];
    const best: number[] = []; // the n best final scores so far, descending
    for (const k of keyed) {
      if (best.length >= n && Math.round(k.base * 1e4) / 1e4 < best[n - 1]!) break;
      apply(k);
      top.push(k);
      let lo = 0;
      let hi = best.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (best[mid]! >= k.score) lo = mid + 1;
        else hi = mid;
      }
      best.splice(lo, 0, k.score);
      if (best.length > n) best.pop();
    }
    top.sort((a, b) => b.score - a.score || byPriors(a, b));
    top = top.slice(0, n);
  } else {
    top = firstByPriors(cands, n, now).map(({ at, flags }) => {
      const c = cands[at]!; // a position of cands
      return { c, flags, base: baseOf(c, flags, evidenceQuality(c.entry)), score: 0 };
    });
    for (const k of top) apply(k);
  }
  return top.map((k) => ({
    ...k.c,
    flags: k.flags,
    score: k.score,
    confidence_label: confidenceLabel(Math.min(k.c.effective_confidence ?? k.c.entry.confidence, k.c.entry.confidence)),
  }));
}

/** The summary-only shape of a result. */
export function summaryOnly(e: MemoryEntry): Pick<MemoryEntry, 'id' | 'summary' | 'subject' | 'scope' | 'kind' | 'confidence'> {
  return { id: e.id, summary: e.summary, subject: e.subject, scope: e.scope, kind: e.kind, confidence: e.confidence };
}

/** One query result: a ranked entry, and the entry it was added for by `--include-related`. */
export interface QueryHit extends Ranked<MemoryEntry> {
  related_to?: string;
  /** The worst status of its evidence now: current, moved, changed or missing. */
  evidence_status?: AnchorStatus;
}

/** A query hit in CLI.md's JSON shape (CLI and MCP alike): the entry (or its summary fields) plus `meta`. */
export function hitJson(h: QueryHit, summary: boolean): Record<string, unknown> {
  const meta: Record<string, unknown> = { score: h.score, flags: h.flags, confidence_label: h.confidence_label, project: h.project };
  if (h.related_to) meta.related_to = h.related_to;
  if (h.evidence_status) meta.evidence_status = h.evidence_status;
  return { ...(summary ? summaryOnly(h.entry) : h.entry), meta };
}

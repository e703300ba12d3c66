/**
 * How text relevance is put together before the priors (pure): lexical score, semantic similarity and the context
 * writers state. Nothing here reads write order, time or ids: a store is not written in the order its questions are asked.
 */

/** The weight of semantic similarity against the lexical score, both scaled to 0..1. */
export const SEMANTIC_WEIGHT = 0.5;
/** An entry that shares no word with the query is a match by meaning alone only when its fused score reaches this. */
export const SEMANTIC_ONLY_MIN = 0.25;
/** At most this many such entries (the closest) are candidates: more cannot reach a page of 50. */
export const SEMANTIC_ONLY_MAX = 300;
/** How many of the best hits give context: the subject they are about, the entries they link to. */
export const CONTEXT_HITS = 3;
/** A match about the same subject as one of the best hits gains this share of that hit's relevance. */
export const SUBJECT_SHARE = 0.3;
/** A match gains up to this share of its relevance by its subject's score as a document (liftBySubjectDocs). */
export const SUBJECT_DOC_SHARE = 0.5;
/** An entry a best hit links to (related_entries, superseded_by) gains this share of the hit's relevance. */
export const LINK_SHARE = 0.3;

/**
 * A question that asks when is answered by an entry that says when: among the entries its words reach, those with
 * time words gain up to this share of the best lexical score, by how well they match `TIME_WORDS` scored as a query of
 * its own (so a time word every entry holds counts for nearly nothing). English only; "may" is a modal verb as often.
 */
export const TIME_CUE_SHARE = 0.1;
export const TIME_WORDS =
  'yesterday today tonight tomorrow ago last next recently lately earlier week weekend month year day morning evening night ' +
  'monday tuesday wednesday thursday friday saturday sunday january february march april june july august september october november december';
const ASKS_WHEN = /^\W*(?:when|since when|how long|what (?:time|date|day|year|month))\b/i;

/** The time words to score `text`'s hits by, when it asks when (see TIME_CUE_SHARE). */
export const timeCue = (text: string): string | undefined => (ASKS_WHEN.test(text) ? TIME_WORDS : undefined);

export interface TimeCueHits {
  of: ReadonlyMap<number, number>;
  max: number;
}

export function timeCueHits(cue: { sids: ArrayLike<number>; scores: ArrayLike<number> }): TimeCueHits {
  const of = new Map<number, number>();
  let max = 0;
  for (let i = 0; i < cue.sids.length; i++) {
    of.set(cue.sids[i]!, cue.scores[i]!); // i < cue.sids.length = cue.scores.length
    max = Math.max(max, cue.scores[i]!);
  }
  return { of, max };
}

/** Adds the time cue to `scores` (of the documents `sids`) in place: only documents the query itself reached gain. */
export function addTimeCue(sids: ArrayLike<number>, scores: Float64Array, cue: TimeCueHits): void {
  let max = 0;
  for (const s of scores) max = Math.max(max, s);
  if (!(cue.max > 0)) return;
  const w = (TIME_CUE_SHARE * max) / cue.max;
  for (let i = 0; i < scores.length; i++) scores[i]! += w * (cue.of.get(sids[i]!) ?? 0); // i < scores.length = sids.length
}

/**
 * Weighted score fusion: `lex` is the lexical score over the best one (0..1), `sim` a cosine similarity scaled by the
 * range among the filtered entries. An entry without a vector keeps its lexical score: neither helped nor hurt.
 */
export function fuse(lex: number, sim: number | undefined, simMin: number, simMax: number, weight = SEMANTIC_WEIGHT): number {
  if (sim === undefined) return lex;
  const s = simMax > simMin ? (sim - simMin) / (simMax - simMin) : 0;
  return weight * s + (1 - weight) * lex;
}

/** The places of the `n` largest positive values of `rel`, and of every other as large as the n-th (equals are not picked among), largest first. */
export function bestPlaces(rel: ArrayLike<number>, n = CONTEXT_HITS): number[] {
  // i < rel.length, top holds places of rel, and it is read at k - 1 >= 0 and n - 1 < top.length.
  const top: number[] = [];
  for (let i = 0; i < rel.length; i++) {
    if (!(rel[i]! > 0)) continue;
    let k = top.length;
    while (k > 0 && rel[top[k - 1]!]! < rel[i]!) k--;
    if (k < n) {
      top.splice(k, 0, i);
      if (top.length > n) top.pop();
    }
  }
  if (top.length < n) return top;
  const least = rel[top[n - 1]!];
  const out = top.slice();
  for (let i = 0; i < rel.length; i++) if (rel[i] === least && !top.includes(i)) out.push(i);
  return out;
}

/** Subject focus, in place: every match of the subject (within its project) of one of the best hits gains `SUBJECT_SHARE` of that hit's relevance. */
export function focusSubjects(rel: number[] | Float64Array, subjectOf: (i: number) => string, projectOf: (i: number) => string = () => ''): void {
  // By project, then subject: no string is made per match (a query reaches thousands).
  const best = new Map<string, Map<string, { rel: number; matches: number }>>();
  const slotOf = (i: number, make: boolean): { rel: number; matches: number } | undefined => {
    const project = projectOf(i);
    let bySubject = best.get(project);
    if (!bySubject) {
      if (!make) return undefined;
      best.set(project, (bySubject = new Map<string, { rel: number; matches: number }>()));
    }
    const subject = subjectOf(i);
    let slot = bySubject.get(subject);
    if (!slot && make) bySubject.set(subject, (slot = { rel: rel[i]!, matches: 0 })); // a place of rel
    return slot;
  };
  for (const i of bestPlaces(rel)) slotOf(i, true);
  if (!best.size) return;
  // Only where the query reached more than one entry of it: a lone match's subject says nothing its words did not.
  const slots = Array.from({ length: rel.length }, (_, i) => {
    const slot = slotOf(i, false);
    if (slot) slot.matches++;
    return slot;
  });
  slots.forEach((slot, i) => {
    if (slot && slot.matches > 1) rel[i]! += SUBJECT_SHARE * slot.rel;
  });
}

/**
 * The matches of one subject (within its project) as one document: each query term held by any of them scores its IDF
 * (over `docs` documents), saturated by how many hold it (BM25's k 1.2, no length), if the subject holds two or more
 * terms. In place, each match's relevance times 1 + SUBJECT_DOC_SHARE x its subject's score over the best subject's,
 * then over the best match: a subject whose entries hold the query's terms between them gains, no one entry holding
 * them all. `masks[i]`: the query terms match i holds, as bits.
 */
export function liftBySubjectDocs(rel: number[], masks: ArrayLike<number>, docs: number, subjectOf: (i: number) => string): void {
  const df = new Array<number>(32).fill(0);
  const held = new Map<string, number[]>();
  const subjects = Array.from(masks, (m, i) => {
    const s = subjectOf(i);
    const n = held.get(s) ?? new Array<number>(32).fill(0);
    held.set(s, n);
    for (let t = 0; t < 32 && m >>> t; t++) {
      n[t]! += (m >>> t) & 1; // t < 32: the length of both
      df[t]! += (m >>> t) & 1;
    }
    return n;
  });
  const bm25 = (n: number[]): number =>
    n.filter(Boolean).length < 2 ? 0 : n.reduce((v, c, t) => v + ((c * 2.2) / (c + 1.2)) * Math.log(1 + (docs - df[t]! + 0.5) / (df[t]! + 0.5)), 0);
  const score = new Map([...held.values()].map((n) => [n, bm25(n)]));
  const best = [...score.values()].reduce((a, b) => Math.max(a, b), 0);
  if (!(best > 0)) return;
  let top = 0;
  rel.forEach((r, i) => (top = Math.max(top, (rel[i] = r * (1 + (SUBJECT_DOC_SHARE * score.get(subjects[i]!)!) / best)))));
  rel.forEach((r, i) => (rel[i] = r / top));
}

/** Context from stated links: each of the best `hits` raises every entry it links to by `LINK_SHARE` of its relevance; an entry keeps its best raise. */
export function linkLifts<T>(
  hits: readonly { item: T; relevance: number; links: readonly T[] }[],
  current: (t: T) => number,
): Map<T, { relevance: number; by: T }> {
  const out = new Map<T, { relevance: number; by: T }>();
  for (const h of hits)
    for (const t of h.links) {
      if (t === h.item) continue;
      const r = current(t) + LINK_SHARE * h.relevance;
      if (!(r > (out.get(t)?.relevance ?? current(t)))) continue;
      out.set(t, { relevance: r, by: h.item });
    }
  return out;
}

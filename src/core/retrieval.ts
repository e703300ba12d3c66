/**
 * How text relevance is put together before the priors (pure): lexical score, semantic similarity and the context
 * writers state. Nothing here reads write order, time or ids: a store is not written in the order its questions are asked.
 */

/** The weight of semantic similarity against the lexical score (subject focus included), both scaled to 0..1. */
export const SEMANTIC_WEIGHT = 0.35;
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
/** A candidate gains up to this share of its fused score by how near its subject's nearest entry is (subjectNearness). */
export const SUBJECT_SIM_SHARE = 0.2;
/**
 * Each subject's nearest entry by similarity (`sims`: cosine, NaN left out; `code`: each entry's subject, below `count`),
 * over the range among subjects, cubed (only the nearest subjects count): a session that says what the question asks
 * in one turn lifts its other turns, as the words' subject focus does.
 */
export function subjectNearness(sims: ArrayLike<number>, code: ArrayLike<number>, count: number): Float64Array {
  const near = new Float64Array(count).fill(-Infinity);
  for (let h = 0; h < sims.length; h++) if (sims[h]! > near[code[h]!]!) near[code[h]!] = sims[h]!; // (code[h] < count)
  let [lo, hi] = [Infinity, -Infinity];
  for (const x of near) if (x > -Infinity) [lo, hi] = [Math.min(lo, x), Math.max(hi, x)];
  return near.map((x) => (x > -Infinity && hi > lo ? ((x - lo) / (hi - lo)) ** 3 : 0));
}

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
  const of = new Map(Array.from(cue.sids, (sid, i) => [sid, cue.scores[i]!] as const)); // i < cue.sids.length = cue.scores.length
  return { of, max: [...of.values()].reduce((a, b) => Math.max(a, b), 0) };
}

/** Adds the time cue to `scores` (of the documents `sids`) in place: only documents the query itself reached gain. */
export function addTimeCue(sids: ArrayLike<number>, scores: Float64Array, cue: TimeCueHits): void {
  if (!(cue.max > 0)) return;
  const w = (TIME_CUE_SHARE * scores.reduce((a, b) => Math.max(a, b), 0)) / cue.max;
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

/** Subject focus, in place: every match of the subject (`group`: subjectGroups) of one of the best hits gains `SUBJECT_SHARE` of that hit's relevance. */
export function focusSubjects(rel: number[] | Float64Array, group: ArrayLike<number>): void {
  // By group number (group[i] <= i < rel.length): typed arrays, no lookup by key per match (a query reaches thousands).
  const lift = new Float64Array(rel.length);
  for (const i of bestPlaces(rel)) lift[group[i]!] ||= rel[i]!; // best first: a subject's best hit gives its lift
  // Only where the query reached more than one entry of it: a lone match's subject says nothing its words did not.
  const matches = new Int32Array(rel.length);
  for (let i = 0; i < rel.length; i++) matches[group[i]!]!++;
  for (let i = 0; i < rel.length; i++) if (matches[group[i]!]! > 1) rel[i]! += SUBJECT_SHARE * lift[group[i]!]!;
}

/**
 * After the subject focus, before similarity is fused in: each match's relevance times its summary's length (distinct
 * words) to this power, then over the best. BM25's length normalization favours short entries beyond their chance of
 * answering, and the subject focus lifts a subject's short and long matches alike.
 */
export const LENGTH_PRIOR = 0.3;
const POWERS = Float64Array.from({ length: 512 }, (_, n) => Math.max(n, 1) ** LENGTH_PRIOR);
export function weighByLength(rel: number[], lengths: readonly number[], named?: readonly number[]): void {
  let top = 0;
  // (i < rel.length = lengths.length = named.length)
  for (let i = 0; i < rel.length; i++)
    top = Math.max(top, (rel[i]! *= (POWERS[lengths[i]!] ?? lengths[i]! ** LENGTH_PRIOR) * (1 + NAMED_SHARE * (named?.[i] ?? 0))));
  for (let i = 0; top > 0 && i < rel.length; i++) rel[i]! /= top;
}

/**
 * A question that asks which one ("what / which <noun> ...", not "what kind of") is answered by a place, a title, a
 * person: with the length prior, a match whose summary names something (a capitalised word past a sentence's start;
 * not the names addressing someone) weighs 1 + this.
 */
export const NAMED_SHARE = 0.2;
const ASKS_WHICH = /^\W*(?:what|which)\s+(?!(?:kind|type|sort|did|does|do|is|are|was|were|has|have|had|can|could|would|might|will)\b)\w/i;
export const asksWhich = (text: string): boolean => ASKS_WHICH.test(text);

/** Each match's subject within its project as a number (0, 1, ... as met), shared by the matches of one subject: no string is made per match. */
export function subjectGroups<T>(matches: readonly T[], of: { meta(m: T): { subject: string }; project(m: T): string }): Int32Array {
  const ids = new Map<string, Map<string, number>>();
  const out = new Int32Array(matches.length);
  // (Matches come mostly from one project: its subjects' map is kept at hand.)
  let [project, bySubject] = ['', new Map<string, number>()];
  for (let i = 0, next = 0; i < matches.length; i++) {
    const p = of.project(matches[i]!); // i < matches.length
    if (p !== project || i === 0) [project, bySubject] = [p, ids.get(p) ?? ids.set(p, new Map()).get(p)!];
    const s = of.meta(matches[i]!).subject;
    const id = bySubject.get(s);
    out[i] = id ?? next;
    if (id === undefined) bySubject.set(s, next++);
  }
  return out;
}

/** `subjectGroups` of entry numbers from each entry's subject code (`codes.of`, below `codes.count`): the same numbers, no lookup by string. */
export function groupsByCode(matches: readonly number[], codes: { of: Int32Array; count: number }): Int32Array {
  const out = new Int32Array(matches.length);
  const seen = new Int32Array(codes.count); // a code's group number + 1, once met
  for (let i = 0, next = 0; i < matches.length; i++) out[i] = (seen[codes.of[matches[i]!]!] ||= ++next) - 1; // (entry numbers below codes.of.length)
  return out;
}

/**
 * The matches of one subject (`group`: subjectGroups) as one document of the query terms they hold (`masks`: bits), each
 * scoring its IDF among the subjects the query reaches (a term every one of them holds, such as the name they are all
 * about, tells none apart) saturated by how many matches hold it (BM25 without length): each match's relevance times
 * 1 + SUBJECT_DOC_SHARE x its subject's score over the best, then over the best match. A one-term query: none.
 */
export function liftBySubjectDocs(rel: number[], masks: ArrayLike<number>, group: ArrayLike<number>): void {
  const n = rel.length;
  let all = 0;
  let G = 0; // subjects: group numbers are below it
  for (let i = 0; i < n; i++) {
    all |= masks[i]!;
    G = Math.max(G, group[i]! + 1);
  }
  const T = 32 - Math.clz32(all);
  if (T < 2) return;
  // (`!` below: i < n, the length of masks and group; group[i] < G; t < T.)
  const held = new Int32Array(G * T);
  for (let i = 0; i < n; i++) for (let t = 0; t < T; t++) held[group[i]! * T + t]! += (masks[i]! >>> t) & 1;
  const df = new Int32Array(T); // subjects holding each term
  for (let g = 0; g < G; g++) for (let t = 0; t < T; t++) df[t]! += Number(held[g * T + t]! > 0);
  const idf = Array.from(df, (d) => Math.log(1 + (G - d + 0.5) / (d + 0.5)));
  const score = new Float64Array(G);
  let best = 0;
  for (let g = 0; g < G; g++) {
    for (let t = 0; t < T; t++) score[g]! += (idf[t]! * held[g * T + t]! * 2.2) / (held[g * T + t]! + 1.2);
    best = Math.max(best, score[g]!);
  }
  if (!(best > 0)) return;
  let top = 0;
  for (let i = 0; i < n; i++) top = Math.max(top, (rel[i]! *= 1 + (SUBJECT_DOC_SHARE * score[group[i]!]!) / best));
  for (let i = 0; i < n; i++) rel[i]! /= top;
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

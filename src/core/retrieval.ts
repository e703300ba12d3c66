/**
 * How text relevance is put together before the priors (pure): the lexical score, the semantic
 * similarity when vectors exist, and the lift an entry gets from a strong hit next to it in the
 * same episode. Tuned on the development half of LoCoMo only (docs/benchmarks.md).
 */
import type { EntryLike } from './meta.js';

/** The weight of semantic similarity against the lexical score, both scaled to 0..1. */
export const SEMANTIC_WEIGHT = 0.5;
/**
 * An entry that shares no word with the query is a match by meaning alone only when its fused
 * score reaches this (its similarity in the upper part of the range): the rest of the store is
 * not "more matches".
 */
export const SEMANTIC_ONLY_MIN = 0.25;
/** At most this many such entries (the closest) are candidates: more cannot reach a page of 50. */
export const SEMANTIC_ONLY_MAX = 300;
/** How many of the best hits lift their neighbours. */
export const CONTEXT_HITS = 3;
/** How far on either side of a hit its neighbours are lifted (entries of the same episode). */
export const CONTEXT_WINDOW = 2;
/** A neighbour gains this share of the hit's relevance. */
export const CONTEXT_LIFT = 0.3;

/**
 * Weighted score fusion: `lex` is the lexical score over the best one (0..1), `sim` a cosine
 * similarity, scaled by the lowest and highest similarity among the entries that passed the
 * filters. An entry without a vector (not embedded yet, or its project has semantic search off)
 * keeps its lexical score, so it is neither helped nor hurt.
 */
export function fuse(lex: number, sim: number | undefined, simMin: number, simMax: number, weight = SEMANTIC_WEIGHT): number {
  if (sim === undefined) return lex;
  const s = simMax > simMin ? (sim - simMin) / (simMax - simMin) : 0;
  return weight * s + (1 - weight) * lex;
}

/**
 * Entries written together in one batch under one subject are an episode: a conversation, the
 * findings of one task. The answer to a question often sits next to the entry that matched its
 * words ("it", "that one"). Entries written separately never share an episode, even under the
 * same subject: their `created_at` differs, and where it does not (a fixed clock, two writers in
 * one millisecond) their ids are not consecutive, as a batch's are (the caller checks that).
 */
export function episodeKey(e: Pick<EntryLike, 'subject' | 'created_at'>, project: string): string {
  return `${project}\u0000${e.subject}\u0000${e.created_at}`;
}

export interface Lift<T> {
  /** The entry lifted, its new relevance, and the hit that lifted it. */
  item: T;
  relevance: number;
  by: T;
}

/**
 * The context lift: each of the `CONTEXT_HITS` best items lifts the items within
 * `CONTEXT_WINDOW` places of it in its episode (`episodeOf` gives the episode in write order) to
 * their own relevance plus `CONTEXT_LIFT` times the hit's; an item keeps the best lift it gets.
 * `episodesOf` gives the episode of each hit asked in write order (or the part of it around the
 * hit; places may be empty), with only the entries that passed the filters. Returns the lifts, best first; the items given are not changed.
 */
export function contextLifts<T>(
  items: readonly T[],
  relevance: (i: number) => number,
  episodesOf: (hits: readonly T[]) => readonly (readonly (T | undefined)[] | undefined)[],
  current: (item: T) => number,
): Lift<T>[] {
  const top: number[] = [];
  for (let i = 0; i < items.length; i++) {
    const r = relevance(i);
    if (!(r > 0)) continue;
    let k = top.length;
    while (k > 0 && relevance(top[k - 1]) < r) k--;
    if (k < CONTEXT_HITS) {
      top.splice(k, 0, i);
      if (top.length > CONTEXT_HITS) top.pop();
    }
  }
  const best = new Map<T, Lift<T>>();
  const episodes = top.length ? episodesOf(top.map((i) => items[i])) : [];
  for (let h = 0; h < top.length; h++) {
    const i = top[h];
    const hit = items[i];
    const episode = episodes[h];
    if (!episode || episode.length < 2) continue;
    const at = episode.indexOf(hit);
    if (at < 0) continue;
    const gain = CONTEXT_LIFT * relevance(i);
    for (let o = -CONTEXT_WINDOW; o <= CONTEXT_WINDOW; o++) {
      const n = episode[at + o];
      if (o === 0 || n === undefined) continue;
      const r = current(n) + gain;
      const prev = best.get(n);
      if (!prev || prev.relevance < r) best.set(n, { item: n, relevance: r, by: hit });
    }
  }
  return [...best.values()].filter((l) => l.relevance > current(l.item)).sort((a, b) => b.relevance - a.relevance);
}

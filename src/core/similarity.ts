/** Lexical similarity, pure: TF-IDF cosine blended with Jaccard overlap; candidate pairs share rare terms, so not all pairs are compared. */
const STOP = new Set('a an and are as at be by for from has have in is it its of on or that the this to was were will with we our not no but'.split(' '));

export const words = (text: string): string[] =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 1 && !STOP.has(w));

/** Shared words over all words of two word sets (a vector's keys are its words). */
export function jaccard(a: ReadonlySet<string> | ReadonlyMap<string, number>, b: ReadonlySet<string> | ReadonlyMap<string, number>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const w of a.keys()) if (b.has(w)) inter++;
  return inter / (a.size + b.size - inter);
}

/** A unit-length TF-IDF vector per doc, by id. */
export type Vectors = Map<string, Map<string, number>>;

export function vectorize(docs: readonly { id: string; text: string }[]): Vectors {
  const vec: Vectors = new Map();
  const df = new Map<string, number>();
  for (const d of docs) {
    const counts = new Map<string, number>();
    for (const w of words(d.text)) counts.set(w, (counts.get(w) ?? 0) + 1);
    vec.set(d.id, counts);
    for (const w of counts.keys()) df.set(w, (df.get(w) ?? 0) + 1);
  }
  // Each count becomes its weight, then the vector is scaled to unit length.
  for (const v of vec.values()) {
    let norm = 0;
    for (const [w, c] of v) {
      const x = (1 + Math.log(c)) * (Math.log((1 + docs.length) / (1 + df.get(w)!)) + 1);
      v.set(w, x);
      norm += x * x;
    }
    norm = Math.sqrt(norm) || 1;
    for (const [w, x] of v) v.set(w, x / norm);
  }
  return vec;
}

export function cosine(a: Map<string, number>, b: Map<string, number>): number {
  const [small, big] = a.size <= b.size ? [a, b] : [b, a];
  let dot = 0;
  for (const [w, x] of small) dot += x * (big.get(w) ?? 0); // adding an exact 0 changes no sum
  return dot;
}

/** Combined = (1 - w)·cosine + w·jaccard (w = content_weight, default 0.3). */
export function similarity(v: Vectors, a: string, b: string, contentWeight = 0.3): { combined: number; cosine: number; overlap: number } {
  const c = cosine(v.get(a)!, v.get(b)!);
  const o = jaccard(v.get(a)!, v.get(b)!);
  return { combined: (1 - contentWeight) * c + contentWeight * o, cosine: c, overlap: o };
}

export type PairDecision = 'merge' | 'review' | 'link' | 'separate';

/** Similarity thresholds of the consolidation strategies. */
export function decide(s: { combined: number; overlap: number }): PairDecision {
  if (s.combined >= 0.9 && s.overlap >= 0.5) return 'merge';
  if (s.combined >= 0.8) return 'review';
  return s.combined >= 0.75 ? 'link' : 'separate';
}

/** Pairs worth comparing (each once, `a < b`): docs that share one of their `top` highest-weighted terms. */
export function candidatePairs(v: Vectors, top = 8): [string, string][] {
  const byTerm = new Map<string, string[]>();
  for (const [id, vec] of v) {
    const best = [...vec].sort((x, y) => y[1] - x[1]).slice(0, top);
    for (const [w] of best) {
      const l = byTerm.get(w);
      if (l) l.push(id);
      else byTerm.set(w, [id]);
    }
  }
  const seen = new Set<string>();
  const out: [string, string][] = [];
  for (const ids of byTerm.values()) {
    if (ids.length > 200) continue; // a term shared by hundreds of entries says nothing about duplicates
    for (const [i, x] of ids.entries()) {
      for (let j = i + 1; j < ids.length; j++) {
        const y = ids[j]!; // j < ids.length
        const [a, b] = x < y ? [x, y] : [y, x];
        const key = `${a}\u0000${b}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push([a, b]);
      }
    }
  }
  return out;
}

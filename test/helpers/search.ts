import type { SearchIndex } from '../../src/index/search-index.js';

/** Relevance per key for `text` (every document it reaches), from the index's scored hits. */
export function searchOf(ix: SearchIndex, text: string, feedback = false): Map<string, number> {
  const { sids, scores } = ix.rawHits(text, feedback);
  return new Map([...sids].map((sid, i) => [ix.keyOf(sid)!, scores[i]!]));
}

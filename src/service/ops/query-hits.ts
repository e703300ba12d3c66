/**
 * How a text query's hits (document numbers) become entries: a one-shot query by entry number of
 * the catalog cache as loaded (an entry object is made only for what is kept: a query reaches
 * thousands), placed where the index snapshot records them; else by a table per snapshot.
 */
import type { CatalogSnapshot, StoredEntry } from '../../store/catalog.js';
import type { CachedEntries } from '../../store/cached-entries.js';
import { textWeightsOf } from '../../core/query.js';
import type { SearchIndex } from '../../index/search-index.js';
import type { Engine } from '../engine.js';
import { textCandidates, type Reach, type TextArgs, type TextHits } from './query-text.js';

/** The candidates of the hits `sids` (scored `args.scores`) of `index` over the entries of `snap`. */
export function textHits(engine: Engine, snap: CatalogSnapshot, index: SearchIndex, sids: ArrayLike<number>, args: TextArgs): TextHits {
  const cached = snap.cached;
  if (cached && !engine.longLived) {
    // A snapshot saved from this very content places each document exactly; else checked by key.
    const exact = index.inSync && index.savedFrom !== undefined && index.savedFrom === snap.contentId;
    let byKey: Map<string, number> | undefined;
    const hitAt = (i: number): number | undefined => {
      const sid = sids[i]!; // textCandidates asks only for i < sids.length
      const j = index.entryAt(sid);
      if (exact && j !== undefined && j < cached.count) return j;
      const key = index.keyOf(sid) ?? '';
      if (j !== undefined && j < cached.count && cached.keyOf(j) === key) return j;
      if (!byKey) {
        byKey = new Map();
        for (let k = 0; k < cached.count; k++) byKey.set(cached.keyOf(k), k);
      }
      return byKey.get(key);
    };
    return textCandidates(cachedReach(cached), hitAt, args);
  }
  // The index holds exactly the snapshot's entries: a key's entry is its document's.
  const at = engine.rm.sidTable(snap, index);
  const of = (sid: number | undefined): number | undefined => ((at[sid ?? -1] ?? -1) < 0 ? undefined : at[sid!]);
  // Entries of the catalog cache as loaded (no write since) are also told from its columns.
  const reach = { ...entriesReach(snap.entries, (key) => of(index.docOf(key))), ...(cached && byColumns(cached)) };
  return textCandidates(reach, (i) => of(sids[i]), args);
}

/** Filters and priors told from the catalog cache's columns, by entry number: faster for many, the same answers. */
function byColumns(ce: CachedEntries): Pick<Reach, 'passingSet' | 'textWeights'> {
  return {
    passingSet: (parts, accept) => {
      const mask = new Uint8Array(ce.count);
      for (const j of ce.passing(parts, accept)) mask[j] = 1;
      return (j) => mask[j] === 1;
    },
    textWeights: (js, now, staleAt) => textWeightsOf(ce.priorKeysOf(js, now, staleAt)),
  };
}

function cachedReach(ce: CachedEntries): Reach {
  return {
    count: ce.count,
    meta: (j) => ce.peek(j),
    project: (j) => ce.projectOf(j),
    entry: (j) => ce.at(j),
    key: (j) => ce.keyOf(j),
    list: () => ce.all(),
    byId: (project, id) => ce.byId(project, id),
    ...byColumns(ce),
  };
}

/** Each list of entries' subject codes (a list is not changed once made: a new snapshot makes a new one). */
const codesOf = new WeakMap<readonly StoredEntry[], { of: Int32Array; count: number }>();

/** `entries` by place; `numberOf` a key's place. */
function entriesReach(entries: readonly StoredEntry[], numberOf: (key: string) => number | undefined): Reach {
  const se = (j: number): StoredEntry => entries[j]!; // numbers are places of entries
  return {
    subjectCodes: () => {
      let codes = codesOf.get(entries);
      if (!codes) {
        const ids = new Map<string, number>();
        const of = Int32Array.from(entries, (e) => ids.get(`${e.project}/${e.meta.subject}`) ?? ids.set(`${e.project}/${e.meta.subject}`, ids.size).size - 1);
        codesOf.set(entries, (codes = { of, count: ids.size }));
      }
      return codes;
    },
    count: entries.length,
    meta: (j) => se(j).meta,
    project: (j) => se(j).project,
    entry: se,
    key: (j) => se(j).key,
    list: () => entries,
    byId: (project, id) => numberOf(`${project}/${id}`),
  };
}

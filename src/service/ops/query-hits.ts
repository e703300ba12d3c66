/**
 * How a text query's hits (the index's document numbers) become entries, two ways: a one-shot
 * query by entry number of the catalog cache as loaded, placed where the index snapshot records
 * them (checked by key); else through a table built once per catalog and index version. Each
 * hands its `Reach` to textCandidates (query-text.ts).
 */
import type { CatalogSnapshot, StoredEntry } from '../../store/catalog.js';
import type { CachedEntries } from '../../store/cached-entries.js';
import { SECTIONS } from '../../core/constants.js';
import { textWeightsOf } from '../../core/query.js';
import { MEMORY_DIR } from '../../store/root.js';
import type { SearchIndex } from '../../index/search-index.js';
import type { Engine } from '../engine.js';
import { textCandidates, type Reach, type TextArgs, type TextHits } from './query-text.js';

/** The candidates of the hits `sids` (scored `args.scores`) of `index` over the entries of `snap`. */
export function textHits(engine: Engine, snap: CatalogSnapshot, index: SearchIndex, sids: ArrayLike<number>, args: TextArgs): TextHits {
  const cached = snap.cached;
  if (cached && !engine.longLived) {
    // By entry number: an entry object is made only for what is kept (a query reaches thousands).
    // A snapshot saved from this very catalog content places each document exactly; one saved
    // from another content holding the same entries (or none) is checked hit by hit, by key.
    const exact = index.inSync && index.savedFrom !== undefined && index.savedFrom === snap.contentId;
    let byKey: Map<string, number> | undefined;
    const hitAt = (i: number): number | undefined => {
      const sid = sids[i]!; // textCandidates asks only for i < sids.length
      const j = index.entryAt(sid);
      if (exact && j !== undefined && j < cached.count) return j;
      const key = index.keyOf(sid) ?? '';
      if (j !== undefined && j < cached.count && cached.hasKey(j, key)) return j;
      if (!byKey) {
        byKey = new Map();
        for (let k = 0; k < cached.count; k++) byKey.set(cached.keyOf(k), k);
      }
      return byKey.get(key);
    };
    return textCandidates(cachedReach(cached), hitAt, args);
  }
  const bySid = engine.rm.sidTable(snap, index);
  return textCandidates(
    entriesReach(snap.entries, () => snap.byKey ?? engine.rm.keyed(snap)),
    (i) => bySid[sids[i]!],
    args,
  );
}

function cachedReach(ce: CachedEntries): Reach<number> {
  return {
    meta: (j) => ce.peek(j),
    project: (j) => ce.projectOf(j),
    entry: (j) => ce.at(j),
    key: (j) => ce.keyOf(j),
    all: () => Array.from({ length: ce.count }, (_, j) => j),
    byId: (project, id) => {
      for (const section of SECTIONS) {
        const j = ce.numberOf(`${MEMORY_DIR}/${project}/${section}/${id}.json`);
        if (j !== undefined) return j;
      }
      return undefined;
    },
    // From the columns: the filters once over every entry, the weights of the hits kept.
    passingSet: (parts, accept) => {
      const mask = new Uint8Array(ce.count);
      for (const j of ce.passing(parts, accept)) mask[j] = 1;
      return (j) => mask[j] === 1;
    },
    textWeights: (js, now, staleAt) => textWeightsOf(ce.priorKeysOf(js, now, staleAt)),
  };
}

/** `byKey`: the entries by key, made when first asked for (stale evidence is told by entry, from it). */
function entriesReach(entries: readonly StoredEntry[], byKey: () => ReadonlyMap<string, StoredEntry>): Reach<StoredEntry> {
  return {
    meta: (se) => se.meta,
    project: (se) => se.project,
    entry: (se) => se,
    key: (se) => se.key,
    all: () => entries,
    byId: (project, id) => byKey().get(`${project}/${id}`),
    staleSet: (keys) => {
      const stale = new Set<StoredEntry>();
      for (const k of keys) {
        const se = byKey().get(k);
        if (se) stale.add(se);
      }
      return (se) => stale.has(se);
    },
  };
}

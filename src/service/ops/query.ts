/** `memory list` and `memory query`: filters, optional text, ranking, limit; the query log. */
import { UsageError } from '../../core/errors.js';
import { lifecycleOf, type DecayConfig } from '../../core/lifecycle.js';
import type { EntryMeta } from '../../core/meta.js';
import { MAX_RESULTS, filterParts, filtersOf, rankEntries, type QueryFilters, type QueryHit } from '../../core/query.js';
import type { AnchorStatus } from '../../core/anchors.js';
import { addTimeCue, asksWhich, timeCue, timeCueHits, type TimeCueHits } from '../../core/retrieval.js';
import type { SearchIndex } from '../../index/search-index.js';
import type { CatalogSnapshot, StoredEntry } from '../../store/catalog.js';
import { appendQueryLog, holdsValues } from '../../store/query-log.js';
import { tryOr } from '../../try.js';
import type { Engine } from '../engine.js';
import type { Caller } from '../caller.js';
import { recordDelivered } from './entries.js';
import { evidenceStatusOf } from './evidence-status.js';
import { textHits } from './query-hits.js';
import type { Cand, TextArgs } from './query-text.js';

/** Longer texts are refused, not truncated; ranking cost grows with offset + limit. */
const MAX_QUERY_LENGTH = 4096;
const MAX_OFFSET = 10_000;

export interface QueryOptions {
  limit?: number;
  offset?: number;
  includeRelated?: boolean;
  /** Count the results as retrievals (default true; `list` and resource listings do not). */
  record?: boolean;
  /** Re-read changed files first (default true). */
  refresh?: boolean;
  /** From semanticFor. */
  semantic?: TextArgs['semantic'];
}

export interface QueryStats {
  execution_ms: number;
  entries_scanned: number;
  entries_matched_filters: number;
  entries_returned: number;
  semantic: boolean;
  /** Results raised by a link from one of the best hits: `[id, id of the hit]`. */
  linked: [string, string][];
  /** `current`: the index snapshot was saved from this catalog content; `files_since`: synced by this many changed files, not every stamp. */
  index: { loaded_snapshot: boolean; partial: boolean; added: number; replaced: number; removed: number; current?: boolean; files_since?: number } | null;
}

export { hitJson, type QueryHit } from '../../core/query.js';

export interface QueryResult {
  results: QueryHit[];
  stats: QueryStats;
}

/**
 * The first `limit` of `rank`, with stale evidence as the cited files say now (the last check's
 * set only shortlists): a window of twice the page is ranked, the page's entries and the window's
 * stale ones told at read time; only when a verdict changed is the window told and ranked again.
 */
function byEvidenceNow<R extends Cand>(statusOf: (se: StoredEntry) => AnchorStatus, cands: Cand[], rank: (cs: Cand[], n: number) => R[], limit: number): R[] {
  const wide = rank(cands, 2 * limit);
  const staleNow = (r: R): boolean => r.entry.evidence.some((e) => e.type !== 'assumption') && ['changed', 'missing'].includes(statusOf(r.se));
  const verdicts = new Map<R, boolean>();
  wide.forEach((r, i) => (i < limit || r.stale) && verdicts.set(r, staleNow(r)));
  if ([...verdicts].every(([r, stale]) => stale === (r.stale === true))) return wide.slice(0, limit);
  const again = wide.map((r): Cand => ({ project: r.project, entry: r.entry, se: r.se, relevance: r.relevance, stale: verdicts.get(r) ?? staleNow(r) }));
  return rank(again, limit);
}

/** The documents the time words reach, once per index version: matching some thirty words with prefixes and typos costs more than most questions. */
const timeCues = new WeakMap<SearchIndex, { generation: number; hits: TimeCueHits }>();
function timeCueOf(index: SearchIndex, words: string): TimeCueHits {
  const known = timeCues.get(index);
  if (known?.generation === index.generation) return known.hits;
  const hits = timeCueHits(index.rawHits(words));
  timeCues.set(index, { generation: index.generation, hits });
  return hits;
}

export function query(engine: Engine, caller: Caller, text: string, filters: QueryFilters, opts: QueryOptions = {}): QueryResult {
  const t0 = process.hrtime.bigint(); // (`performance` loads a module of its own)
  if (text.length > MAX_QUERY_LENGTH) throw new UsageError(`query text is ${text.length} characters; at most ${MAX_QUERY_LENGTH} are accepted`);
  const nowMs = caller.now().getTime();
  const hasText = text.trim().length > 0;
  const cue = timeCue(text);
  // A one-shot query loads only the postings its text (and the time words) reach.
  const { snap, index, indexStats } = engine.rm.load(cue ? `${text}\n${cue}` : text, opts.refresh !== false, false, undefined, caller.warn);
  const parts = filterParts(filters, nowMs);
  const accept = filtersOf(parts);
  const staleKeys = engine.evidenceCache.staleKeys();
  let found: { cands: Cand[]; matched: number; linked?: [string, string][]; semantic?: boolean };
  // A page of at most MAX_RESULTS from `offset`: the ranking goes that far, the page is its tail.
  const offset = Math.max(0, Math.min(Math.floor(opts.offset ?? 0), MAX_OFFSET));
  const limit = Math.max(0, Math.min(opts.limit ?? MAX_RESULTS, MAX_RESULTS)) + offset;
  if (hasText && index) {
    // Relevance does not depend on the filters (MiniSearch scores first and filters after), so
    // look up only the entries the text reaches and apply the filters to those: the same result
    // as restricting first, for the cost of the hits instead of every entry (query-hits.ts).
    const hits = index.rawHits(text, true, asksWhich(text));
    if (cue) addTimeCue(hits.sids, hits.scores, timeCueOf(index, cue));
    found = textHits(engine, snap, index, hits.sids, { ...hits, parts, accept, staleKeys, nowMs, limit, semantic: opts.semantic });
  } else if (snap.cached) {
    // The catalog cache as loaded holds the entries: the filters and the order read its columns,
    // and only the page's entries are made (rankEntries then orders them exactly so again).
    const ce = snap.cached;
    const staleAt = staleKeys.size > 0 ? (j: number): boolean => staleKeys.has(ce.keyOf(j)) : undefined;
    const { js, matched } = engine.rm.savedWindow(snap, JSON.stringify([filters, limit, [...staleKeys], ce.validityAt(nowMs)]), () => {
      const passed = ce.passing(parts, accept);
      return { js: ce.firstInOrder(passed, 2 * limit, nowMs, staleAt).map(({ at }) => passed[at]!), matched: passed.length }; // a window: see `byEvidenceNow`
    });
    found = { matched, cands: js.map((j): Cand => ({ project: ce.projectOf(j), entry: ce.at(j).meta, se: ce.at(j), stale: staleAt?.(j) ?? false })) };
  } else {
    const cands = snap.entries
      .filter((se) => accept(se.meta, se.project))
      .map((se): Cand => ({ project: se.project, entry: se.meta, se, stale: staleKeys.has(se.key) }));
    found = { cands, matched: cands.length };
  }
  // Strength and effective confidence as of now, for the candidates ranking needs them for.
  const usage = engine.usage.load();
  const cfgs = new Map<string, DecayConfig>();
  const lifecycle = (c: Cand): { strength: number; effective_confidence: number } => {
    let cfg = cfgs.get(c.project);
    if (!cfg) cfgs.set(c.project, (cfg = engine.decayConfig(c.project, caller.now())));
    return lifecycleOf(c.entry, usage.get(c.se.key), cfg, nowMs, c.entry.importance0);
  };
  // Rank on metadata, read only the results' entries; each entry's evidence is told once.
  const statuses = new Map<StoredEntry, AnchorStatus>();
  const statusOf = (se: StoredEntry): AnchorStatus => {
    let s = statuses.get(se);
    if (s === undefined) statuses.set(se, (s = evidenceStatusOf(engine, se)));
    return s;
  };
  const ranked: QueryHit[] = byEvidenceNow(statusOf, found.cands, (cs, n) => rankEntries<EntryMeta, Cand>(cs, nowMs, hasText, n, lifecycle), limit)
    .slice(offset)
    .map(({ se, entry: _meta, ...r }) => ({ ...r, entry: se.entry, evidence_status: statusOf(se) }));
  if (opts.includeRelated) addRelated(ranked, snap, filters, nowMs, limit);
  if (opts.record !== false) recordDelivered(engine, caller, ranked);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  return {
    results: ranked,
    stats: {
      execution_ms: Math.round(ms * 100) / 100,
      entries_scanned: snap.cached ? snap.cached.count : snap.entries.length,
      entries_matched_filters: found.matched,
      entries_returned: ranked.length,
      semantic: found.semantic ?? false,
      linked: (found.linked ?? []).filter(([id]) => ranked.some((r) => r.entry.id === id)),
      index: indexStats,
    },
  };
}

/** Follows related_entries; related entries obey the same status and validity rules. */
function addRelated(results: QueryHit[], snap: CatalogSnapshot, filters: QueryFilters, nowMs: number, limit: number): void {
  const byId = new Map(snap.entries.map((se) => [se.meta.id, se] as const));
  const present = new Set(results.map((r) => r.entry.id));
  const accept = filtersOf(filterParts({ status: filters.status, minConfidence: filters.minConfidence, includeExpired: filters.includeExpired }, nowMs));
  const extra: QueryHit[] = [];
  for (const r of results) {
    for (const rid of r.entry.related_entries) {
      if (present.has(rid) || results.length + extra.length >= limit) continue;
      const se = byId.get(rid);
      if (!se || !accept(se.meta, se.project)) continue;
      present.add(rid);
      for (const ranked of rankEntries([{ project: se.project, entry: se.entry }], nowMs, false)) extra.push({ ...ranked, score: 0, related_to: r.entry.id });
    }
  }
  results.push(...extra);
}

/** The local query log (statistics read it); its text only when the project's config asks. */
export function logQuery(engine: Engine, caller: Caller, record: { text: string; filters: QueryFilters; result_count: number; execution_ms: number }): void {
  // A plain `list` has nothing to keep: no config read. No project, or an unreadable config: nothing kept.
  const keepText =
    holdsValues(record) &&
    tryOr(() => engine.projectConfig(record.filters.projects?.[0] ?? caller.project(engine), caller.now()).logging?.query_text === true, false);
  appendQueryLog(engine.ws, { time: caller.now().toISOString(), ...record }, keepText);
}

export const slowQueryMs = (engine: Engine, caller: Caller, project?: string): number =>
  tryOr(() => engine.projectConfig(caller.project(engine, project), caller.now()).query.slow_ms, 200);

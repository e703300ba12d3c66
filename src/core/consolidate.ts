/** Consolidation plans, pure: a reviewable JSON document of groups to merge, review, link or summarize; applying one supersedes the originals. */
import { CONTENT_MAX, type STRATEGIES, SUMMARY_MAX } from './constants.js';
import { cut } from './entry.js';
import type { MemoryEntry } from './schema.js';
import { candidatePairs, decide, similarity, vectorize, type PairDecision } from './similarity.js';

export type Strategy = (typeof STRATEGIES)[number];

export type PlanMember = Pick<MemoryEntry, 'id' | 'summary' | 'confidence' | 'updated_at'> & { importance: number };

export interface PlanGroup {
  action: 'merge' | 'review' | 'link' | 'summarize';
  /** Average combined similarity of the group's pairs (1 for summaries). */
  similarity: number;
  members: PlanMember[];
  /** merge / summarize: the entry that replaces (or summarizes) the members. */
  result?: Record<string, unknown>;
  /** merge: which member the strategy kept as the base. */
  kept?: string;
  subject?: string;
}

export interface ConsolidationPlan {
  version: 1;
  project: string;
  created_at: string;
  strategy: Strategy;
  thresholds: { merge: number; review: number; link: number; merge_min_overlap: number; summarize_at: number };
  groups: PlanGroup[];
  /** Superseded entries, candidates for cleanup. */
  superseded_candidates: string[];
}

const evidenceKey = (e: { type: string; uri: string }): string => `${e.type}\u0000${e.uri}`;

const textOf = (e: MemoryEntry): string => `${e.summary} ${e.subject.replace(/[._:/-]/g, ' ')} ${e.tags.join(' ')} ${e.content}`;

function choose(members: MemoryEntry[], strategy: Strategy, importance: (e: MemoryEntry) => number): MemoryEntry {
  const by = [...members];
  if (strategy === 'keep_oldest') by.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
  else if (strategy === 'keep_highest_importance')
    by.sort((a, b) => importance(b) - importance(a) || b.confidence - a.confidence || (a.updated_at < b.updated_at ? 1 : -1));
  else by.sort((a, b) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0)); // keep_newest, and the base of merge_content
  return by[0]!; // a merge group holds the two ends of a pair at least
}

/** The entry (create input) that replaces a merge group. */
export function mergedEntry(
  members: MemoryEntry[],
  strategy: Strategy,
  importance: (e: MemoryEntry) => number,
): { kept: MemoryEntry; entry: Record<string, unknown> } {
  const kept = choose(members, strategy, importance);
  const others = members.filter((m) => m.id !== kept.id);
  const ordered = [kept, ...others]; // the kept entry's tags, evidence and links first
  /** The members' items of one list field, each once (by `key`), in that order. */
  const union = <T>(list: (m: MemoryEntry) => T[], key: (x: T) => string): T[] => {
    const seen = new Set<string>();
    return ordered.flatMap(list).filter((x) => (seen.has(key(x)) ? false : (seen.add(key(x)), true)));
  };
  const content =
    strategy === 'merge_content'
      ? cut([kept.content, ...others.map((o) => o.content).filter((c) => c && c !== kept.content)].join('\n\n'), CONTENT_MAX)
      : kept.content;
  const entry: Record<string, unknown> = {
    section: kept.section,
    kind: kept.kind,
    subject: kept.subject,
    scope: kept.scope,
    summary: cut(`${kept.summary}`, SUMMARY_MAX),
    content,
    tags: union((m) => m.tags, String),
    confidence: Math.max(...members.map((m) => m.confidence)),
    evidence: union((m) => m.evidence, evidenceKey),
    related_entries: union((m) => m.related_entries, String).filter((r) => !members.some((m) => m.id === r)),
  };
  if (kept.valid_from) entry.valid_from = kept.valid_from;
  if (kept.valid_to) entry.valid_to = kept.valid_to;
  if (kept.lifecycle) entry.lifecycle = { ...kept.lifecycle, reviewed_at: undefined };
  return { kept, entry: JSON.parse(JSON.stringify(entry)) as Record<string, unknown> };
}

/** A summary entry of one subject's entries: their summaries as content, linked to them. */
export function summaryEntry(subject: string, members: MemoryEntry[]): Record<string, unknown> {
  const sorted = [...members].sort((a, b) => b.confidence - a.confidence || (a.updated_at < b.updated_at ? 1 : -1));
  const lines = sorted.map((m) => `- ${m.summary.replace(/\s+/g, ' ')} (${m.id})`);
  const best = sorted[0]!; // a subject is listed with its entries only
  return {
    section: 'learnings',
    kind: 'other',
    subject,
    scope: best.scope,
    summary: cut(`Summary of ${members.length} entries about ${subject}`, SUMMARY_MAX),
    content: cut(lines.join('\n'), CONTENT_MAX),
    tags: ['summary'],
    confidence: Math.round(Math.min(...members.map((m) => m.confidence)) * 100) / 100,
    evidence: [...new Map(members.flatMap((m) => m.evidence).map((e) => [evidenceKey(e), e])).values()].slice(0, 20),
    related_entries: sorted.map((m) => m.id),
  };
}

/** Builds a plan over a project's live entries. */
export function buildPlan(
  project: string,
  entries: MemoryEntry[],
  opts: { now: string; strategy?: Strategy; summarizeAt?: number; maxGroups?: number; importance: (e: MemoryEntry) => number },
): ConsolidationPlan {
  const strategy = opts.strategy ?? 'keep_highest_importance';
  const summarizeAt = opts.summarizeAt ?? 10;
  const live = entries.filter((e) => e.status === 'active' && e.tags.every((t) => t !== 'summary'));
  const byId = new Map(live.map((e) => [e.id, e]));
  const v = vectorize(live.map((e) => ({ id: e.id, text: textOf(e) })));
  // Union-find over ids: pairs to merge or review join their groups.
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    while (parent.has(x)) x = parent.get(x)!;
    return x;
  };
  const pairs: { a: string; b: string; d: PairDecision; s: number }[] = [];
  const links: { a: string; b: string; s: number }[] = [];
  for (const [a, b] of candidatePairs(v)) {
    // Only entries of the same section and scope are duplicates of each other.
    const ea = byId.get(a)!;
    const eb = byId.get(b)!;
    if (ea.section !== eb.section || ea.scope !== eb.scope) continue;
    const s = similarity(v, a, b);
    const d = decide(s);
    if (d === 'separate') continue;
    if (d === 'link') {
      if (!ea.related_entries.includes(b)) links.push({ a, b, s: s.combined });
      continue;
    }
    if (find(a) !== find(b)) parent.set(find(a), find(b));
    pairs.push({ a, b, d, s: s.combined });
  }
  const groups = new Map<string, { ids: Set<string>; first: string; merge: boolean; sims: number[] }>();
  for (const { a, b, d, s } of pairs) {
    const root = find(a);
    const g = groups.get(root) ?? { ids: new Set<string>(), first: a, merge: true, sims: [] };
    g.ids.add(a).add(b);
    if (d !== 'merge') g.merge = false; // any pair below the merge bar sends the group to review
    g.sims.push(s);
    groups.set(root, g);
  }
  const member = (e: MemoryEntry): PlanMember => ({
    id: e.id,
    summary: e.summary,
    confidence: e.confidence,
    updated_at: e.updated_at,
    importance: opts.importance(e),
  });
  const out: PlanGroup[] = [];
  for (const g of [...groups.values()].sort((x, y) => y.ids.size - x.ids.size || (x.first < y.first ? -1 : 1))) {
    const members = [...g.ids].sort().map((id) => byId.get(id)!);
    const sim = Math.round((g.sims.reduce((a, b) => a + b, 0) / g.sims.length) * 1000) / 1000;
    // A review group carries the merge it would make too: accepting it is changing its action to
    // "merge" (and editing the result, if need be).
    const m = mergedEntry(members, strategy, opts.importance);
    out.push({ action: g.merge ? 'merge' : 'review', similarity: sim, members: members.map(member), kept: m.kept.id, result: m.entry });
  }
  for (const l of links.sort((x, y) => y.s - x.s))
    out.push({ action: 'link', similarity: Math.round(l.s * 1000) / 1000, members: [member(byId.get(l.a)!), member(byId.get(l.b)!)] });
  const bySubject = new Map<string, MemoryEntry[]>();
  for (const e of live) bySubject.set(e.subject, [...(bySubject.get(e.subject) ?? []), e]);
  for (const [subject, members] of [...bySubject].sort((a, b) => b[1].length - a[1].length)) {
    if (members.length < summarizeAt) continue;
    out.push({ action: 'summarize', similarity: 1, subject, members: members.map(member), result: summaryEntry(subject, members) });
  }
  return {
    version: 1,
    project,
    created_at: opts.now,
    strategy,
    thresholds: { merge: 0.9, review: 0.8, link: 0.75, merge_min_overlap: 0.5, summarize_at: summarizeAt },
    groups: out.slice(0, opts.maxGroups ?? 100),
    superseded_candidates: entries
      .filter((e) => e.status === 'superseded')
      .map((e) => e.id)
      .sort(),
  };
}

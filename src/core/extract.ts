/** Candidate memories from free text, pure: regex patterns with a base confidence each, deduplicated. */
import { SUMMARY_MAX, SUBJECT_MAX, type Kind, type Section } from './constants.js';
import { cut } from './entry.js';
import { jaccard, words } from './similarity.js';

/** The extraction patterns, most specific first, with the section and kind of the memories each finds. */
const EXTRACTION_PATTERNS = [
  { re: /(?:decided|chose|going with|selected|will use)\s+(.+?)(?:\.|$)/gim, confidence: 0.8, type: 'decision', section: 'decisions', kind: 'decision' },
  { re: /(.+?)\s+(?:is|are|means|refers to)\s+(.+?)(?:\.|$)/gim, confidence: 0.6, type: 'definition', section: 'learnings', kind: 'other' },
  { re: /(?:important|note|remember|key point):\s*(.+?)(?:\.|$)/gim, confidence: 0.9, type: 'important', section: 'observations', kind: 'other' },
  { re: /(?:the (?:fix|solution|approach) (?:is|was))\s+(.+?)(?:\.|$)/gim, confidence: 0.85, type: 'solution', section: 'learnings', kind: 'runbook_step' },
  { re: /(?:the (?:issue|problem|bug) was)\s+(.+?)(?:\.|$)/gim, confidence: 0.8, type: 'error', section: 'observations', kind: 'incident' },
  { re: /(?:save|remember|note|store)(?:\s+that)?\s+(.+?)(?:\.|$)/gim, confidence: 0.95, type: 'explicit', section: 'observations', kind: 'other' },
  { re: /(?:the trick is|the key is|pattern:)\s+(.+?)(?:\.|$)/gim, confidence: 0.85, type: 'pattern', section: 'learnings', kind: 'other' },
  // Beyond the documented list: how fixes and post-mortems are usually written.
  { re: /\b(?:fixed|resolved)\s+(.+?)(?:\.|$)/gim, confidence: 0.8, type: 'solution', section: 'learnings', kind: 'runbook_step' },
  { re: /\broot cause (?:was|is)\s+(.+?)(?:\.|$)/gim, confidence: 0.85, type: 'error', section: 'observations', kind: 'incident' },
] as const satisfies readonly { re: RegExp; confidence: number; type: string; section: Section; kind: Kind }[];

type Pattern = (typeof EXTRACTION_PATTERNS)[number];

export const EXTRACT_LIMITS = { maxTextLength: 50_000, maxCandidates: 20, minConfidence: 0.5, dedupThreshold: 0.9, defaultImportance: 0.4 };

const TECH = ['api', 'database', 'function', 'class', 'config', 'error'];

/** Base confidence adjusted by length, technical terms and code. */
export function scoreConfidence(content: string, base: number): number {
  let score = base;
  const n = content.split(/\s+/).filter(Boolean).length;
  if (n >= 10) score += 0.1;
  else if (n < 5) score -= 0.1;
  if (TECH.some((t) => content.toLowerCase().includes(t))) score += 0.05;
  if (content.includes('```') || /^\s{4,}/m.test(content)) score += 0.1;
  return Math.round(Math.min(1, Math.max(0, score)) * 1000) / 1000;
}

export interface Candidate {
  text: string;
  /** The whole sentence the match sits in: what a reader needs, not the fragment after the keyword. */
  sentence: string;
  type: Pattern['type'];
  confidence: number;
  start: number;
  end: number;
}

/** All pattern matches at or above `minConfidence`, overlapping ones reduced to the most confident. */
export function extractCandidates(text: string, minConfidence = EXTRACT_LIMITS.minConfidence): Candidate[] {
  const found: Candidate[] = [];
  for (const p of EXTRACTION_PATTERNS) {
    p.re.lastIndex = 0;
    for (const m of text.matchAll(p.re)) {
      const captured = (p.type === 'definition' ? `${m[1]} ${/\b(is|are|means|refers to)\b/i.exec(m[0])?.[0] ?? 'is'} ${m[2]}` : (m[1] ?? ''))
        .trim()
        .replace(/\s+/g, ' ');
      if (captured.length < 8) continue;
      const confidence = scoreConfidence(captured, p.confidence);
      if (confidence < minConfidence) continue;
      const start = m.index ?? 0;
      found.push({ text: captured, sentence: sentenceAround(text, start, start + m[0].length), type: p.type, confidence, start, end: start + m[0].length });
    }
  }
  // Overlap dedup: keep the most confident, then the earliest.
  found.sort((a, b) => b.confidence - a.confidence || a.start - b.start);
  const kept: Candidate[] = [];
  for (const c of found) if (!kept.some((k) => c.start < k.end && k.start < c.end)) kept.push(c);
  return kept.sort((a, b) => a.start - b.start);
}

/** The sentence holding [start, end): from the previous sentence end (or line start) to the next. */
function sentenceAround(text: string, start: number, end: number): string {
  // A sentence ends at a line break, or at . ! ? followed by a space (not the dot of retry.ts).
  const endsAt = (i: number): boolean => text[i] === '\n' || (/[.!?]/.test(text.charAt(i)) && (i + 1 >= text.length || /\s/.test(text.charAt(i + 1))));
  let from = start;
  while (from > 0 && !endsAt(from - 1)) from--;
  let to = Math.max(start, end - 1);
  while (to < text.length && !endsAt(to)) to++;
  return text
    .slice(from, Math.min(text.length, to + 1))
    .trim()
    .replace(/\s+/g, ' ');
}

const STOP = new Set(
  'the a an and or but of to in on at for with from by is are was were be been this that these those it its we our you your they their there here when then than because after before during about into over under must should would could will can may might not never always also just only very more most some any each every all use used using uses decided chose going selected note remember important key point fix fixed solution approach issue problem bug trick pattern root cause resolved save store move moved moves moving run runs ran running make makes made add adds added change changed changes set sets get gets got keep keeps kept take takes took switch switched now new old does did done has have had need needs needed'.split(
    ' ',
  ),
);

/** The words of a text that tell what it is about (no function words, verbs of doing, or numbers). */
const telling = (text: string): string[] =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}_-]+/u)
    .filter((w) => w.length > 2 && !STOP.has(w) && !/^\d+$/.test(w));

/** Two words are one term when they share their first five letters (invoice, invoices, invoicing). */
const sameTerm = (a: string, b: string): boolean => a.length >= 4 && b.length >= 4 && a.slice(0, 5) === b.slice(0, 5);

/**
 * A subject key for a sentence: a known subject whose parts it names ("invoice generation moved" → `billing.invoices`),
 * else a file path it names (`src/billing/retry.ts` → `billing.retry`), a dotted key it names, else two telling words.
 */
export function subjectOf(sentence: string, known: readonly string[] = []): string {
  const said = telling(sentence);
  let best: { subject: string; hits: number; share: number } | null = null;
  for (const subject of known) {
    const parts = subject.split(/[._:-]+/).filter((p) => p.length >= 4);
    const hits = parts.filter((p) => said.some((w) => sameTerm(w, p))).length;
    const share = parts.length ? hits / parts.length : 0;
    if (hits > 0 && share >= 0.5 && (!best || hits > best.hits || (hits === best.hits && share > best.share))) best = { subject, hits, share };
  }
  if (best) return best.subject;
  const path = /(?:[\w-]+\/)+([\w-]+)\.\w{1,5}\b/.exec(sentence);
  if (path) {
    const parts = path[0]
      .replace(/\.\w{1,5}$/, '')
      .split('/')
      .filter((p) => p && !['src', 'lib', 'app', 'pkg', 'internal', 'test', 'tests'].includes(p));
    const key = parts
      .slice(-2)
      .join('.')
      .toLowerCase()
      .replace(/[^a-z0-9._-]/g, '-');
    if (key) return key.slice(0, SUBJECT_MAX);
  }
  const dotted = /\b[a-z][a-z0-9_-]*\.[a-z][a-z0-9_-]*(?:\.[a-z][a-z0-9_-]*)*\b/.exec(sentence);
  return dotted && !/\.(?:com|org|io|net|md|ts|js|json)$/.test(dotted[0]) ? dotted[0].slice(0, SUBJECT_MAX) : said.slice(0, 2).join('.') || 'notes';
}

/** The id of an existing summary at least `threshold` similar (Jaccard of words), if any. */
export function findSimilar(text: string, existing: readonly { id: string; summary: string }[], threshold = EXTRACT_LIMITS.dedupThreshold): string | undefined {
  const w = new Set(words(text));
  for (const e of existing) if (jaccard(w, new Set(words(e.summary))) >= threshold) return e.id;
  return undefined;
}

/** The most a pattern-found draft claims: a regex match is never certain. */
export const EXTRACTED_CONFIDENCE_MAX = 0.9;

/** The create input of a candidate: a draft with `assumption` evidence pointing at the source. */
export function candidateEntry(c: Candidate, source: string, known: readonly string[] = []): Record<string, unknown> {
  // Patterns of one type share their section and kind.
  const target = EXTRACTION_PATTERNS.find((p) => p.type === c.type)!;
  const whole = c.sentence || c.text;
  return {
    section: target.section,
    kind: target.kind,
    subject: subjectOf(whole, known),
    scope: 'repo',
    summary: cut(whole, SUMMARY_MAX),
    content: whole,
    tags: ['extracted', c.type],
    confidence: Math.min(c.confidence, EXTRACTED_CONFIDENCE_MAX),
    evidence: [{ type: 'assumption', uri: `extract:${source}#${c.start}`, note: `extracted by the ${c.type} pattern` }],
    status: 'draft',
    lifecycle: { importance: EXTRACT_LIMITS.defaultImportance },
  };
}

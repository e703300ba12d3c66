/**
 * Extraction of candidate memories from free text (001 §3), pure: tiered regex patterns with a
 * base confidence each, confidence scoring by content quality, overlap dedup (the most confident
 * of overlapping matches wins), and dedup against existing memories by lexical similarity.
 */
import { SUMMARY_MAX, SUBJECT_MAX, type Kind, type Section } from './constants.js';
import { jaccard, words } from './similarity.js';

export type PatternType = 'decision' | 'definition' | 'important' | 'solution' | 'error' | 'explicit' | 'pattern';

/** 001 §3.3, in order. */
export const EXTRACTION_PATTERNS: readonly { re: RegExp; confidence: number; type: PatternType }[] = [
  { re: /(?:decided|chose|going with|selected|will use)\s+(.+?)(?:\.|$)/gim, confidence: 0.8, type: 'decision' },
  { re: /(.+?)\s+(?:is|are|means|refers to)\s+(.+?)(?:\.|$)/gim, confidence: 0.6, type: 'definition' },
  { re: /(?:important|note|remember|key point):\s*(.+?)(?:\.|$)/gim, confidence: 0.9, type: 'important' },
  { re: /(?:the (?:fix|solution|approach) (?:is|was))\s+(.+?)(?:\.|$)/gim, confidence: 0.85, type: 'solution' },
  { re: /(?:the (?:issue|problem|bug) was)\s+(.+?)(?:\.|$)/gim, confidence: 0.8, type: 'error' },
  { re: /(?:save|remember|note|store)(?:\s+that)?\s+(.+?)(?:\.|$)/gim, confidence: 0.95, type: 'explicit' },
  { re: /(?:the trick is|the key is|pattern:)\s+(.+?)(?:\.|$)/gim, confidence: 0.85, type: 'pattern' },
];

/** Where each pattern's memories go. */
export const PATTERN_TARGET: Record<PatternType, { section: Section; kind: Kind }> = {
  decision: { section: 'decisions', kind: 'decision' },
  definition: { section: 'learnings', kind: 'other' },
  important: { section: 'observations', kind: 'other' },
  solution: { section: 'learnings', kind: 'runbook_step' },
  error: { section: 'observations', kind: 'incident' },
  explicit: { section: 'observations', kind: 'other' },
  pattern: { section: 'learnings', kind: 'other' },
};

export const EXTRACT_LIMITS = { maxTextLength: 50_000, maxCandidates: 20, minConfidence: 0.5, dedupThreshold: 0.9, defaultImportance: 0.4 };

const TECH = ['api', 'database', 'function', 'class', 'config', 'error'];

/** 001 §3.6: base confidence adjusted by length, technical terms and code. */
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
  type: PatternType;
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
      found.push({ text: captured, type: p.type, confidence, start, end: start + m[0].length });
    }
  }
  // Overlap dedup: keep the most confident, then the earliest.
  found.sort((a, b) => b.confidence - a.confidence || a.start - b.start);
  const kept: Candidate[] = [];
  for (const c of found) if (!kept.some((k) => c.start < k.end && k.start < c.end)) kept.push(c);
  return kept.sort((a, b) => a.start - b.start);
}

/** The id of an existing summary at least `threshold` similar (Jaccard of words), if any. */
export function findSimilar(text: string, existing: readonly { id: string; summary: string }[], threshold = EXTRACT_LIMITS.dedupThreshold): string | undefined {
  const w = new Set(words(text));
  for (const e of existing) if (jaccard(w, new Set(words(e.summary))) >= threshold) return e.id;
  return undefined;
}

const slug = (s: string): string =>
  s
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((x) => x.length > 2)
    .slice(0, 4)
    .join('-') || 'note';

/** The create input of a candidate: a draft with `assumption` evidence pointing at the source. */
export function candidateEntry(c: Candidate, source: string): Record<string, unknown> {
  const target = PATTERN_TARGET[c.type];
  const summary = c.text.length <= SUMMARY_MAX ? c.text : `${c.text.slice(0, SUMMARY_MAX - 1)}…`;
  return {
    section: target.section,
    kind: target.kind,
    subject: `extracted.${slug(c.text)}`.slice(0, SUBJECT_MAX),
    scope: 'repo',
    summary,
    content: c.text,
    tags: ['extracted', c.type],
    confidence: c.confidence,
    evidence: [{ type: 'assumption', uri: `extract:${source}#${c.start}`, note: `extracted by the ${c.type} pattern` }],
    status: 'draft',
    lifecycle: { importance: EXTRACT_LIMITS.defaultImportance },
  };
}

/** What the index indexes and how it analyzes text: the document of an entry, MiniSearch's options, and the name of both in a snapshot. */
import type { Options } from 'minisearch';
import type { MemoryEntry } from '../core/schema.js';
import { readFileSync } from 'node:fs';
import { stemmer } from 'stemmer';

export type Doc = Record<'key' | 'summary' | 'content' | 'subject' | 'tags' | 'kind' | 'scope', string> & { names?: string };

/** The analyzer's English word lists, kept as data (read, not imported: two levels above dist/index/). */
const ENGLISH = JSON.parse(readFileSync(new URL('../../rules/english.json', import.meta.url), 'utf8')) as { stopwords: string[]; irregular: string[] };

/** Splits on anything that is not a letter or digit, so `auth-service.tokens` → auth, service, tokens. */
export const tokenize = (text: string): string[] => text.split(/[^\p{L}\p{N}]+/u).filter(Boolean);

/** English function words, which match nearly every entry: a query drops them (queryTokenize); documents keep them, so that a query of nothing else still finds something. */
export const STOPWORDS: ReadonlySet<string> = new Set(ENGLISH.stopwords.join(' ').split(' '));

const ASCII_WORD = /^[a-z]+$/;

/**
 * English irregular verb forms and plurals, which Porter's rules leave apart from their base: each
 * to its base ("what did we build" finds "we built"). Forms that are also common words of another
 * meaning are left out: left, rose, saw, found, lay, bit, ground, and won (as in won't).
 */
const IRREGULAR: ReadonlyMap<string, string> = new Map(
  ENGLISH.irregular
    .join(' ')
    .split(' ')
    .flatMap((entry) => {
      const [base, forms] = entry.split(':') as [string, string];
      return forms.split(',').map((f) => [f, base] as const);
    }),
);

/** One term as the index stores it: lowercase, at least two characters unless it holds a digit, English words to their Porter stem; identifiers with digits or non-ASCII letters as they are. */
export function processTerm(term: string): string | null {
  if (term.length < 2 && !/\d/.test(term)) return null;
  const t = IRREGULAR.get(term.toLowerCase()) ?? term.toLowerCase();
  if (t.length <= 3 || !ASCII_WORD.test(t)) return t;
  let s = stems.get(t);
  if (s === undefined) {
    // Stemming is ~20 regular expressions; entries repeat their words, so remember the last few thousand.
    if (stems.size >= STEM_CACHE) stems.clear();
    stems.set(t, (s = stemmer(t)));
  }
  return s;
}
const STEM_CACHE = 20_000;
const stems = new Map<string, string>();

/** A query's words: the tokenizer's, without stopwords unless nothing else is left. */
export function queryTokenize(text: string): string[] {
  const all = tokenize(text);
  // "May" written so after the first word is the month ("in May 2023"), not the modal verb.
  const content = all.filter((w, i) => (i > 0 && w === 'May') || !STOPWORDS.has(w.toLowerCase()));
  return content.length ? content : all;
}

/** How much more a query's name weighs than its other words (namedTerms). */
export const NAME_BOOST = 2;

/** A text's names: words capitalised anywhere but at a sentence's start (or a heading's, "Gina: Thanks"), not function words. */
const namesOf = (text: string, starts = /[.!?]\s|\n/): string[] =>
  text.split(starts).flatMap((s) => tokenize(s).filter((w, i) => i > 0 && w.length >= 2 && /^\p{Lu}/u.test(w) && !STOPWORDS.has(w.toLowerCase())));

/** The terms of a query's names (why they weigh more: docs/ARCHITECTURE.md, the read path). */
export const namedTerms = (text: string): Set<string> => new Set(namesOf(text).flatMap((w) => processTerm(w) ?? []));

export const INDEX_OPTIONS: Options<Doc> = {
  idField: 'key',
  fields: ['summary', 'content', 'subject', 'tags', 'kind', 'scope', 'names'],
  storeFields: [],
  tokenize,
  processTerm,
  // MiniSearch itself runs with these options only in tests, as the reference the index's scores are checked against.
  autoVacuum: false,
  searchOptions: {
    tokenize: queryTokenize,
    // `names` is there for its length (whether an entry names something: NAMED_SHARE); its words are the summary's.
    boost: { summary: 3, subject: 3, tags: 2, kind: 1, scope: 1, content: 1, names: 1e-6 },
    prefix: (term) => term.length >= 3,
    fuzzy: (term) => (term.length >= 6 ? 0.15 : false),
    // Below MiniSearch's 0.375 and 0.45: stemming already joins a word's own forms, so most of
    // what a prefix adds is other words ("art" → "article").
    weights: { prefix: 0.2, fuzzy: 0.3 },
    combineWith: 'OR',
  },
};

/**
 * Names the snapshot's layout (snapshot-file.ts), the fields and the analyzer: change it whenever
 * they change, so an old snapshot is rebuilt, not misread. (Not their source text: the bundle
 * and dist/ format the same functions differently, and share one snapshot.)
 */
export const INDEX_FORMAT = `v8/${INDEX_OPTIONS.fields.join(',')}/split-non-letter-digit/lowercase-min2-or-digit/irregular-forms/porter-stem-ascii-over3/query-stopwords/summary-rows/v4/vocatives-out/names`;

/** Greetings and thanks (either case at their start): the capitalised word right after one is whom a text is told to. */
const GREETINGS = 'hey|hi|hello|thanks|thank you|wow|yeah|yes|yep|oh|congrats|sorry|sure|bye'.replace(/\b\w/g, (c) => `[${c.toUpperCase()}${c}]`);

/**
 * A name in the vocative, addressing someone: after a greeting ("Hey Jon!", "Thanks, Gina,") or after a comma, ending
 * its sentence ("Way to go, Jon!", "Good luck, Gina."). A text told to someone is not about them: documents leave the
 * name out, so a question's name finds what is said by or about that person, not each line said to them. (An
 * appositive ending a sentence, "my home country, Sweden.", is taken for one too.)
 */
const VOCATIVE = new RegExp(String.raw`(?<=\b(?:${GREETINGS}),?\s+)\p{Lu}\p{Ll}+(?=\s*[,.!?])|(?<=,\s+)\p{Lu}\p{Ll}+(?=\s*[.!?](?:\s|$))`, 'gu');
/** `text` without the names it addresses someone by: what the index holds and the vector is made of. */
export const unaddressed = (text: string): string => text.replace(VOCATIVE, '');

export function docOf(key: string, e: MemoryEntry): Doc {
  const [summary, content] = [unaddressed(e.summary), unaddressed(e.content)];
  return { key, summary, content, subject: e.subject, tags: e.tags.join(' '), kind: e.kind, scope: e.scope, names: namesOf(summary, /[.!?:]\s|\n/).join(' ') };
}

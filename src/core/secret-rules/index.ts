/**
 * The rule catalogue of the secret scan: provider formats as data (`catalogue.ts`), shapes any
 * issuer uses, context rules and the checks they share. Every pattern runs in linear time (no
 * nested unbounded repeats); a rule with `keywords` runs only on text that holds one.
 */
import type { Rule } from './checks.js';
import { loadCatalogue } from './catalogue.js';
import { CONTEXT_RULES } from './context.js';

export type { Rule, Span } from './checks.js';

/** In this order: of two rules that find the same span, the first names it (provider formats before context rules). */
export const RULES: readonly Rule[] = [...loadCatalogue(), ...CONTEXT_RULES];

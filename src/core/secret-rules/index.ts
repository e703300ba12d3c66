/**
 * The rule catalogue of the secret scan (src/core/secrets.ts runs it): provider token formats as
 * their vendors and the major scanners document them (the formats are facts; the patterns are
 * ours), kept as data in `rules/secrets/<family>.json` and compiled by `catalogue.ts`; shapes
 * any issuer uses (`shapes.ts`); context rules (Authorization headers, curl credentials,
 * Kubernetes Secrets, connection strings, key-like names beside values) and the checks that tell
 * a secret from a placeholder, a code reference or an identifier (`checks.ts`).
 *
 * Every pattern runs in linear time: no nested unbounded repeats, bounded gaps only. A rule with
 * `keywords` runs only on text that contains one of them (lower-cased), so most rules cost one
 * substring search per field.
 */
import type { Rule } from './checks.js';
import { loadCatalogue } from './catalogue.js';
import { CONTEXT_RULES } from './context.js';
import { SHAPE_RULES } from './shapes.js';

export { decodeBase64Text, entropy, isKeylikeName, isPlaceholder, type Rule, type Span } from './checks.js';

/** In this order: of two rules that find the same span, the first names it (provider formats before context rules). */
export const RULES: readonly Rule[] = [...loadCatalogue(), ...SHAPE_RULES, ...CONTEXT_RULES];

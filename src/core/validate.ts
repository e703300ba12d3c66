/** The one validation, pure: every problem with its field path, never a throw. Every write, import and read uses it. */
import { z, type ZodError, type ZodType } from 'zod';
import type { Problem } from './errors.js';
import { checkEvidenceUri } from './evidence.js';
import {
  EVIDENCE_TYPES,
  EntryInputSchema,
  ID_PATTERN,
  KINDS,
  MemoryEntrySchema,
  STATUSES,
  MemoryUpdateSchema,
  type EntryInput,
  type MemoryEntry,
  type MemoryUpdate,
} from './schema.js';
import { duplicateHash } from './meta.js';
import { normalizeTimestamp } from './time.js';
import { shown } from './redact.js';

export type Result<T> = { ok: true; value: T; errors: [] } | { ok: false; errors: Problem[] };

const result = <T>(value: T | undefined, errors: Problem[]): Result<T> =>
  value !== undefined && !errors.length ? { ok: true, value, errors: [] } : { ok: false, errors };

/** What the validator may ask of the store: the live entry a `duplicateHash` duplicates, an entry by id (supersede/deprecate targets). */
export interface ValidationContext {
  findDuplicate?: (hash: string) => string | undefined;
  getEntry?: (id: string) => MemoryEntry | undefined;
}

/** Decision-like kinds need strong evidence. */
const STRONG_KINDS = new Set(['decision', 'requirement', 'invariant']);
const STRONG_EVIDENCE = new Set(['code', 'artifact', 'ticket', 'doc']);

const fieldAt = (prefix: string, f: string): string => (prefix ? `${prefix}.${f}` : f);

/** `evidence[0].uri` from zod's `['evidence', 0, 'uri']`. */
export function fieldPath(parts: readonly PropertyKey[], prefix = ''): string {
  let out = prefix;
  for (const p of parts) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out ? `.${String(p)}` : String(p);
  }
  return out;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = input;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

function zodProblems(err: ZodError, prefix: string, input: unknown): Problem[] {
  const out: Problem[] = [];
  for (const issue of err.issues) {
    const base = fieldPath(issue.path, prefix);
    if (issue.code === 'unrecognized_keys') {
      // A key is named only when it could be a field's name: it may be a pasted token.
      for (const k of issue.keys) {
        if (/^[a-z][a-z0-9_]{0,39}$/.test(k)) out.push({ path: fieldPath([k], base), message: 'is not a known field' });
        else out.push({ path: base || '(root)', message: `holds a field that is not a known one (its name, ${k.length} characters, not shown)` });
      }
      continue;
    }
    let message = issue.message;
    if (issue.path.length > 0 && valueAt(input, issue.path) === undefined) message = 'is required';
    else if (issue.code === 'invalid_type') message = `must be ${issue.expected} (${issue.message.replace(/^Invalid input: /, '')})`;
    else if (issue.code === 'invalid_value' && 'values' in issue) message = `must be one of: ${(issue.values as unknown[]).map(String).join(', ')}`;
    out.push({ path: base || '(root)', message });
  }
  return out;
}

/** Checks `input` against a zod schema, returning problems with field paths (never throws). */
export function parseWith<T>(schema: ZodType<T>, input: unknown, prefix = ''): Result<T> {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    return { ok: false, errors: [{ path: prefix || '(root)', message: 'must be a JSON object' }] };
  // (Asking zod to report each issue's input would double the cost of every parse.)
  const r = schema.safeParse(input);
  return result(r.data, r.success ? [] : zodProblems(r.error, prefix, input));
}

/** Rules between fields (each field's own limits are in the schema). `p` is the path prefix (e.g. `entry.`). */
function fieldRules(e: EntryInput | MemoryEntry, p: string, out: Problem[]): void {
  const at = (f: string): string => fieldAt(p, f);
  (e.evidence ?? []).forEach((ev, i) => {
    const msg = checkEvidenceUri(ev.type, ev.uri);
    if (msg) out.push({ path: at(`evidence[${i}].uri`), message: `${msg} (type ${ev.type})` });
  });
  const [from, to] = [e.valid_from, e.valid_to].map((v) => (v ? normalizeTimestamp(v) : null));
  if (from && to && to <= from) out.push({ path: at('valid_to'), message: 'must be later than valid_from' });
  if (e.section === 'state') {
    // State is only trustworthy with a validity window.
    if (!e.valid_from) out.push({ path: at('valid_from'), message: 'is required for section "state" (when the state became true)' });
    if (!e.valid_to) out.push({ path: at('valid_to'), message: 'is required for section "state" (when it must be re-checked or expires)' });
  }
}

/** The fields the write policy reads, checked on their own when others are malformed. */
const PolicyFields = z.object({
  kind: z.enum(KINDS),
  status: z.enum(STATUSES).optional(),
  evidence: z.array(z.looseObject({ type: z.enum(EVIDENCE_TYPES) })).optional(),
});

/** The write policy for an entry about to become (or stay) live: an input unless a draft, a stored entry when active. */
function policyRules(e: z.infer<typeof PolicyFields>, as: 'input' | 'stored', p: string, out: Problem[]): void {
  const evidence = e.evidence ?? [];
  if (e.status === 'draft' || (as === 'stored' && e.status !== 'active')) return; // Drafts may omit evidence.
  if (evidence.length === 0)
    out.push({ path: fieldAt(p, 'evidence'), message: 'needs at least one evidence object {type, uri, note} for an active entry (drafts may omit it)' });
  else if (STRONG_KINDS.has(e.kind) && !evidence.some((ev) => STRONG_EVIDENCE.has(ev.type)))
    out.push({ path: fieldAt(p, 'evidence'), message: `kind "${e.kind}" needs evidence of type code, artifact, ticket or doc` });
}

/** Shape, rules between fields and write policy; an input whose fields broke their limits gets its policy problems listed beside those. */
function checked<T extends EntryInput | MemoryEntry>(schema: ZodType<T>, input: unknown, as: 'input' | 'stored', prefix: string): { e?: T; errors: Problem[] } {
  const shaped = parseWith(schema, input, prefix);
  const errors = shaped.ok ? [] : shaped.errors;
  if (shaped.ok) fieldRules(shaped.value, prefix, errors);
  const policy = shaped.ok ? shaped.value : PolicyFields.safeParse(input).data;
  if (policy) policyRules(policy, as, prefix, errors);
  return { e: shaped.ok ? shaped.value : undefined, errors };
}

/** A create input, normalized: timestamps in canonical UTC, defaults filled in. */
export type NormalizedInput = EntryInput & {
  tags: string[];
  evidence: NonNullable<EntryInput['evidence']>;
  status: 'active' | 'draft';
  related_entries: string[];
  valid_from: string | null;
  valid_to: string | null;
};

/** Validates the `entry` of a create: shape, field rules, write policy, and (with a context) duplicates; `prefix`: where it sits (`[2].entry`). */
export function validateEntryInput(input: unknown, ctx: ValidationContext = {}, prefix = ''): Result<NormalizedInput> {
  const { e, errors } = checked(EntryInputSchema, input, 'input', prefix);
  const dup = e && errors.length === 0 ? ctx.findDuplicate?.(duplicateHash(e)) : undefined;
  if (dup) {
    const message = `duplicates entry ${dup} (same subject, scope and summary); supersede it instead of creating a copy`;
    errors.push({ path: fieldAt(prefix, 'summary'), message });
  }
  return result(
    e && {
      ...e,
      tags: e.tags ?? [],
      evidence: e.evidence ?? [],
      status: e.status ?? 'active',
      related_entries: e.related_entries ?? [],
      valid_from: e.valid_from ? normalizeTimestamp(e.valid_from) : null,
      valid_to: e.valid_to ? normalizeTimestamp(e.valid_to) : null,
    },
    errors,
  );
}

/** Validates a stored entry (a file on disk, an import): shape and field rules; policy for live ones. */
export function validateStoredEntry(input: unknown, prefix = ''): Result<MemoryEntry> {
  const { e, errors } = checked(MemoryEntrySchema, input, 'stored', prefix);
  if (e && (e.status === 'superseded') !== Boolean(e.superseded_by)) {
    const message = e.superseded_by ? 'must be null unless status is "superseded"' : 'is required when status is "superseded"';
    errors.push({ path: fieldAt(prefix, 'superseded_by'), message });
  }
  return result(e, errors);
}

/** A Memory_Update whose shape, fields and target are valid; `entry` is normalized when present. */
export type ValidUpdate = Omit<MemoryUpdate, 'entry'> & { entry?: NormalizedInput };

/** Validates one Memory_Update: create needs `entry`; supersede/deprecate need `target_id`. */
export function validateUpdate(input: unknown, ctx: ValidationContext = {}, prefix = ''): Result<ValidUpdate> {
  const shaped = parseWith(MemoryUpdateSchema, input, prefix);
  if (!shaped.ok) return shaped;
  const { operation: op, entry: given, target_id: target, superseded_by: by } = shaped.value;
  const errors: Problem[] = [];
  const problem = (f: string, message: string): number => errors.push({ path: fieldAt(prefix, f), message });
  if (op === 'create') {
    if (target !== undefined) problem('target_id', 'is only used by supersede and deprecate');
  } else if (!target) problem('target_id', `is required for operation "${op}"`);
  else if (!ID_PATTERN.test(target)) problem('target_id', 'is not a memory id');
  else if (ctx.getEntry) {
    const t = ctx.getEntry(target);
    if (!t) problem('target_id', `no entry with id ${shown(target, { bare: true })}`);
    else if (t.status === 'superseded') problem('target_id', `entry ${target} is already superseded by ${t.superseded_by}`);
    else if (op === 'deprecate' && t.status === 'deprecated') problem('target_id', `entry ${target} is already deprecated`);
  }
  let entry: NormalizedInput | undefined;
  if (op === 'create' && given === undefined) problem('entry', 'is required for operation "create"');
  else if (op !== 'deprecate' && given !== undefined) {
    const r = validateEntryInput(given, ctx, fieldAt(prefix, 'entry'));
    if (r.ok) entry = r.value;
    else errors.push(...r.errors);
  }
  if (op === 'supersede') {
    if (given === undefined && !by)
      problem('entry', 'is required for operation "supersede" (the replacement entry), unless superseded_by names an existing one');
    if (given !== undefined && by) problem('superseded_by', 'give either entry (a new replacement) or superseded_by (an existing one), not both');
    if (by && by === target) problem('superseded_by', 'an entry cannot supersede itself');
    else if (by && ctx.getEntry && !ctx.getEntry(by)) problem('superseded_by', `no entry with id ${shown(by, { bare: true })}`);
  }
  if (op === 'deprecate' && given !== undefined) problem('entry', 'is not used by operation "deprecate"');
  if (op !== 'supersede' && by !== undefined) problem('superseded_by', 'is only used by operation "supersede"');
  return result<ValidUpdate>({ operation: op, ...(entry && { entry }), ...(target && { target_id: target }), ...(by && { superseded_by: by }) }, errors);
}

/** Guesses what `memory validate` was handed: a Memory_Update has `operation`; a stored entry has `id`. */
export function documentKind(doc: unknown): 'update' | 'entry' | 'stored-entry' | 'array' {
  if (Array.isArray(doc)) return 'array';
  if (doc && typeof doc === 'object') {
    if ('operation' in doc) return 'update';
    if ('id' in doc && 'created_at' in doc) return 'stored-entry';
  }
  return 'entry';
}

/** `memory validate`: an entry, a Memory_Update, a stored entry, or an array of any of them. */
export function validateDocument(doc: unknown, ctx: ValidationContext = {}): Problem[] {
  const one = (d: unknown, prefix: string): Problem[] => {
    const kind = documentKind(d);
    if (kind === 'array') return [{ path: prefix || '(root)', message: 'nested arrays are not allowed' }];
    if (kind === 'update') return validateUpdate(d, ctx, prefix).errors;
    return kind === 'stored-entry' ? validateStoredEntry(d, prefix).errors : validateEntryInput(d, ctx, prefix).errors;
  };
  if (Array.isArray(doc)) return doc.length === 0 ? [{ path: '(root)', message: 'the array is empty' }] : doc.flatMap((d, i) => one(d, `[${i}]`));
  return one(doc, '');
}

/** `memory diff`, the pure part: each entry file changed becomes one change, with the warnings a reviewer needs (secrets by field and rule). */
import type { CodeChange } from './anchors.js';
import type { MemoryEntry } from './schema.js';
import { duplicateHash } from './meta.js';
import { scanText, secretFields } from './secrets.js';
import { validateStoredEntry } from './validate.js';
import { tryOr } from '../try.js';

export type ChangeKind = 'created' | 'superseded' | 'deprecated' | 'archived' | 'restored' | 'edited' | 'moved' | 'removed';

export interface EntryChange extends Partial<Pick<MemoryEntry, 'kind' | 'subject' | 'scope' | 'summary' | 'confidence' | 'superseded_by'>> {
  change: ChangeKind;
  project: string;
  section: string;
  id: string;
  file: string;
  evidence_types?: string[];
  /** Edited or moved: what changed, old → new. */
  fields?: { field: string; from: string; to: string }[];
}

/** A memory whose evidence cites code the change moved, modified or deleted. */
export interface CitedCode {
  id: string;
  project: string;
  uri: string;
  change: CodeChange;
  /** Where the cited code went (moved; a renamed file also when modified). */
  to?: string;
  summary: string;
  /** The change also wrote the entry (updated, superseded, deprecated, re-confirmed with `reinforce`, or its evidence fixed). */
  touched: boolean;
}

export interface MemoryDiff {
  base: string;
  head: string;
  changes: EntryChange[];
  warnings: { level: 'error' | 'warning'; project: string; id: string | null; file: string; message: string }[];
  /** Memory paths that are not entry files (config.yaml, .gitattributes, ai-context/). */
  other_files: { file: string; status: 'added' | 'modified' | 'removed' }[];
  cited_code: CitedCode[];
}

const ENTRY_PATH = /^ai-memory\/([^/]+)\/(decisions|state|observations|learnings)\/([^/]+)\.json$/;

/** Fields a reviewer reads first; the rest follow in the file's order. */
const FIELD_ORDER = 'status superseded_by summary content kind subject scope confidence tags evidence valid_from valid_to related_entries'.split(' ');
/** Fields that change on every write and say nothing to a reviewer. */
const QUIET = new Set(['updated_at']);

/** The entry a file holds; null for no file, or one that is not a JSON object. */
export function parse(text: string | null): MemoryEntry | null {
  const v = text === null ? null : tryOr(() => JSON.parse(text) as MemoryEntry | null, null);
  return v && typeof v === 'object' && !Array.isArray(v) ? v : null;
}

/** A value as a reviewer reads it: whole, unless the secret scan flags it. */
export function whole(v: unknown, field: string): string {
  if (v === null || v === undefined) return '(none)';
  if (Array.isArray(v) && v.every((x) => x && typeof x === 'object' && 'uri' in x))
    return (v as { type?: string; uri?: string }[]).map((x, i) => `${x.type ?? '?'} ${whole(x.uri, `${field}[${i}].uri`)}`).join('; ') || '(none)';
  const text = typeof v === 'string' ? v : Array.isArray(v) && v.every((x) => typeof x === 'string') ? `[${v.join(', ')}]` : JSON.stringify(v);
  const [first] = scanText(field, text);
  return first ? `(hidden: looks like a secret, rule ${first.rule})` : text;
}

function fieldChanges(a: MemoryEntry, b: MemoryEntry): NonNullable<EntryChange['fields']> {
  const at = (e: MemoryEntry, k: string): unknown => (e as unknown as Record<string, unknown>)[k];
  const keys = [...new Set([...FIELD_ORDER, ...Object.keys(a), ...Object.keys(b)])].filter((k) => !QUIET.has(k));
  const changed = keys.filter((k) => JSON.stringify(at(a, k)) !== JSON.stringify(at(b, k)));
  return changed.map((k) => ({ field: k, from: whole(at(a, k), k), to: whole(at(b, k), k) }));
}

function describe(e: MemoryEntry, project: string, section: string, file: string, change: ChangeKind): EntryChange {
  return {
    change,
    project,
    section,
    id: e.id,
    file,
    kind: e.kind,
    subject: e.subject,
    scope: e.scope,
    summary: e.summary,
    confidence: e.confidence,
    evidence_types: Array.isArray(e.evidence) ? [...new Set(e.evidence.map((v) => v.type))] : [],
    superseded_by: e.superseded_by ?? null,
  };
}

/** The changes between two sides: `files` by path (null: absent on that side); `live`, when known, for duplicates. */
export function diffMemory(
  range: { base: string; head: string },
  files: { path: string; before: string | null; after: string | null }[],
  live: Map<string, MemoryEntry[]> = new Map(),
): MemoryDiff {
  const changes: EntryChange[] = [];
  const warnings: MemoryDiff['warnings'] = [];
  const other: MemoryDiff['other_files'] = [];
  const warn = (level: 'error' | 'warning', project: string, id: string | null, file: string, message: string): void => {
    warnings.push({ level, project, id, file, message });
  };
  // An entry that changed section is one path removed and one added: the same id, moved.
  const sides = files.sort((x, y) => (x.path < y.path ? -1 : 1)).map((f) => ({ f, at: ENTRY_PATH.exec(f.path), b: parse(f.before), e: parse(f.after) }));
  const removedById = new Map(sides.flatMap(({ at, b, e }) => (at && b && !e ? [[b.id ?? at[3], b] as const] : [])));
  const addedIds = new Set(sides.flatMap(({ at, b, e }) => (at && e && !b ? [e.id ?? at[3]] : [])));
  for (const { f, at, b, e } of sides) {
    const [, project, section, idFromName] = at ?? [];
    if (!project || !section || !idFromName) {
      if (f.path.startsWith('ai-memory/') || f.path.startsWith('ai-context/'))
        other.push({ file: f.path, status: f.before === null ? 'added' : f.after === null ? 'removed' : 'modified' });
      continue;
    }
    if (f.after !== null && !e) {
      warn('error', project, idFromName, f.path, 'is not valid JSON: the entry cannot be read');
      continue;
    }
    if (!e) {
      // Gone from this path: moved to another section, or removed by hand.
      const id = b?.id ?? idFromName;
      if (addedIds.has(id)) continue; // reported where it went
      const gone = b ? describe(b, project, section, f.path, 'removed') : { change: 'removed' as const, project, section, id, file: f.path };
      changes.push(gone);
      warn('error', project, id, f.path, 'was deleted: entries are never deleted; supersede or deprecate it instead (restore the file)');
      continue;
    }
    const old = b ?? removedById.get(e.id) ?? null;
    let change: ChangeKind;
    if (!old) change = 'created';
    else if (old.status !== e.status && (e.status === 'superseded' || e.status === 'deprecated' || e.status === 'archived')) change = e.status;
    else if (old.status !== e.status && old.status !== 'draft' && (e.status === 'active' || e.status === 'draft')) change = 'restored';
    else change = b ? 'edited' : 'moved';
    const c = describe(e, project, section, f.path, change);
    if (old) {
      const fields = fieldChanges(old, e);
      if (change === 'edited' && fields.length === 0) continue; // only updated_at: nothing to review
      c.fields = fields;
    }
    changes.push(c);

    // What a reviewer should look at.
    const v = validateStoredEntry(e);
    if (!v.ok) for (const p of v.errors) warn('error', project, e.id, f.path, `${p.path}: ${p.message}`);
    const leaks = secretFields(e).flatMap((x) => scanText(x.path, x.text));
    for (const s of leaks) warn('error', project, e.id, f.path, `${s.path}: contains what looks like a secret (rule ${s.rule}); it must not be merged`);
    if (e.status !== 'active' && e.status !== 'draft') continue;
    if (typeof e.confidence === 'number' && e.confidence < 0.6)
      warn('warning', project, e.id, f.path, `confidence ${e.confidence} is low: is it a hypothesis?`);
    const types = Array.isArray(e.evidence) ? e.evidence.map((x) => x.type) : [];
    if ((e.kind === 'decision' || section === 'decisions') && types.length > 0 && types.every((t) => t === 'assumption'))
      warn('warning', project, e.id, f.path, 'a decision resting on assumptions only: link the code, ticket or doc it is based on');
    if (section === 'state' && !e.valid_to) warn('warning', project, e.id, f.path, 'state without valid_to: when must it be checked again?');
    if (change === 'created') {
      const key = duplicateHash(e);
      const twin = (live.get(project) ?? []).find((o) => o.id !== e.id && o.status === 'active' && duplicateHash(o) === key);
      if (twin) warn('warning', project, e.id, f.path, `duplicates entry ${twin.id} (same subject, scope and summary): supersede it instead`);
    }
  }
  return { base: range.base, head: range.head, changes, warnings, other_files: other, cited_code: [] };
}

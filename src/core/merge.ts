/**
 * Three-way merge of one memory entry (the git merge driver), pure: an ending status wins over an edit, sets merge
 * against the ancestor, a field changed on both sides takes the later updated_at's; never conflict markers inside JSON.
 * Also the conflict markers of a clone that never registered the driver, which `memory doctor --fix` merges.
 */
import type { MemoryEntry } from './schema.js';

const ENDING = new Set(['superseded', 'deprecated', 'archived']);
const ARRAYS = ['tags', 'evidence', 'related_entries'] as const;

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** A three-way merge of a set kept as a list: the base's items both sides kept, then what either added (ours first). */
export function mergeSet<T>(base: readonly T[] | undefined, ours: readonly T[] | undefined, theirs: readonly T[] | undefined): T[] {
  if (!base) return union(ours, theirs);
  const key = (x: T): string => JSON.stringify(x);
  const inBase = new Set(base.map(key));
  const inOurs = new Set((ours ?? []).map(key));
  const inTheirs = new Set((theirs ?? []).map(key));
  return union(ours, theirs).filter((x) => !inBase.has(key(x)) || (inOurs.has(key(x)) && inTheirs.has(key(x))));
}

/** The lists' items, each once (equal JSON is the same item), in order. */
const union = <T>(...lists: (readonly T[] | undefined)[]): T[] => [...new Map(lists.flatMap((l) => l ?? []).map((x) => [JSON.stringify(x), x])).values()];

export function mergeEntry(base: MemoryEntry | null, ours: MemoryEntry, theirs: MemoryEntry): MemoryEntry {
  const oursLater = ours.updated_at >= theirs.updated_at;
  const keys = new Set([...Object.keys(ours), ...Object.keys(theirs)]) as Set<keyof MemoryEntry>;
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    if ((ARRAYS as readonly string[]).includes(k)) continue;
    const o = ours[k];
    const t = theirs[k];
    const b = base ? base[k] : undefined;
    if (same(o, t)) out[k] = o;
    else if (base && same(o, b)) out[k] = t;
    else if (base && same(t, b)) out[k] = o;
    else out[k] = oursLater ? o : t;
    if (out[k] === undefined) delete out[k];
  }
  for (const k of ARRAYS) out[k] = mergeSet<unknown>(base ? base[k] : undefined, ours[k], theirs[k]);
  // A status that ends the entry wins over an edit on the other side.
  const ending = [ours, theirs].filter((e) => ENDING.has(e.status)).sort((a, b) => (a.updated_at < b.updated_at ? 1 : -1))[0];
  if (ending && !ENDING.has(String(out.status))) {
    out.status = ending.status;
    out.superseded_by = ending.superseded_by;
  } else if (out.status === 'superseded' && !out.superseded_by) {
    out.superseded_by = ours.superseded_by ?? theirs.superseded_by;
  }
  if (out.status !== 'superseded') out.superseded_by = null;
  out.updated_at = oursLater ? ours.updated_at : theirs.updated_at;
  out.created_at = ours.created_at <= theirs.created_at ? ours.created_at : theirs.created_at;
  return out as unknown as MemoryEntry;
}

const START = /^<{7}(?: |$)/;
const BASE = /^\|{7}(?: |$)/;
const MID = /^={7}$/;
const END = /^>{7}(?: |$)/;

export function hasConflictMarkers(text: string): boolean {
  let open = false;
  for (const line of text.split('\n')) {
    if (START.test(line)) open = true;
    else if (open && END.test(line)) return true;
  }
  return false;
}

/** The texts of ours, theirs and (diff3 only) the ancestor, each with the lines outside the conflicts; null when markers do not nest as git's. */
export function conflictSides(text: string): { ours: string; theirs: string; base: string | null } | null {
  const sides = { ours: [] as string[], base: [] as string[], theirs: [] as string[] };
  let sawBase = false;
  let state: 'out' | keyof typeof sides = 'out';
  for (const line of text.split('\n')) {
    if (state === 'out' && START.test(line)) state = 'ours';
    else if (state === 'ours' && BASE.test(line)) {
      state = 'base';
      sawBase = true;
    } else if ((state === 'ours' || state === 'base') && MID.test(line)) state = 'theirs';
    else if (state === 'theirs' && END.test(line)) state = 'out';
    else for (const side of state === 'out' ? Object.values(sides) : [sides[state]]) side.push(line); // outside a conflict: every side's
  }
  return state !== 'out' ? null : { ours: sides.ours.join('\n'), theirs: sides.theirs.join('\n'), base: sawBase ? sides.base.join('\n') : null };
}

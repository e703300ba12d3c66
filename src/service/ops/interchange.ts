/** `memory export` and `memory import` (one transaction; an id that exists is skipped, overwritten or merged). */
import { join } from 'node:path';
import { buildEntry } from '../../core/entry.js';
import { ValidationError, type Problem } from '../../core/errors.js';
import { duplicateHash } from '../../core/meta.js';
import { filterParts, filtersOf, type QueryFilters } from '../../core/query.js';
import type { MemoryEntry } from '../../core/schema.js';
import { isUlid } from '../../core/names.js';
import { entryPath, type StoredEntry } from '../../store/catalog.js';
import { modules, type Engine } from '../engine.js';
import type { Caller } from '../caller.js';
import { withWrite } from '../transaction.js';
import { MAX_BATCH } from './apply.js';
import { idMaker, liveByDup, scanGroups, warnIfLarge } from './batch.js';

export function exportEntries(engine: Engine, caller: Caller, project: string, filters: QueryFilters = {}): MemoryEntry[] {
  const p = caller.project(engine, project, true);
  const accept = filtersOf(filterParts({ status: 'any', minConfidence: 0, includeExpired: true, ...filters, projects: [p] }, caller.now().getTime()));
  return engine
    .snapshot(caller.warn)
    .entries.filter((se) => accept(se.meta, se.project))
    .map((se) => se.entry)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Every entry validated before anything is written, then one commit; the report says what happened to each. */
export async function importEntries(
  engine: Engine,
  caller: Caller,
  project: string,
  docs: unknown[],
  opts: {
    onConflict?: 'skip' | 'overwrite' | 'merge';
    source?: string;
    /** Copies under new ids (links between them follow). */
    reassignIds?: boolean;
    onProgress?: (done: number, total: number, phase: 'validate' | 'write') => void;
  } = {},
) {
  const onConflict = opts.onConflict ?? 'skip';
  engine.ws.projectDir(project);
  if (docs.length > MAX_BATCH)
    throw new ValidationError(
      [{ path: opts.source ?? 'import', message: `holds ${docs.length} entries; at most ${MAX_BATCH} go in one import: split it` }],
      'import',
    );
  const problems: Problem[] = [];
  const entries: MemoryEntry[] = [];
  const seen = new Map<string, number>();
  const agent = await caller.agent(engine);
  const nowDate = caller.now();
  const nextId = idMaker();
  /** Made from input-shaped documents or copied under new ids: created, never merged. */
  const fresh = new Set<string>();
  docs.forEach((doc, i) => {
    if (i % 200 === 0) opts.onProgress?.(i, docs.length, 'validate');
    // Shaped as `create` takes it (no id, status or timestamps): imported as a create.
    const o = doc as Record<string, unknown> | null;
    if (o && typeof o === 'object' && !Array.isArray(o) && !('id' in o) && !('created_at' in o) && !('updated_at' in o) && !('status' in o)) {
      const r = modules.validation().validateEntryInput(o, {}, `[${i}]`);
      if (!r.ok) return void problems.push(...r.errors);
      const e = buildEntry(r.value, nextId(nowDate.getTime()), nowDate.toISOString(), agent);
      seen.set(e.id, i);
      fresh.add(e.id);
      entries.push(e);
      return;
    }
    const r = modules.validation().validateStoredEntry(doc, `[${i}]`);
    if (!r.ok) return void problems.push(...r.errors);
    // Ids become file names and commit trailers: only a ULID is taken as it is.
    if (!opts.reassignIds && !isUlid(r.value.id))
      return void problems.push({ path: `[${i}].id`, message: 'is not a memory id (a ULID); --reassign-ids imports the entry under a new one' });
    const first = seen.get(r.value.id);
    if (first !== undefined) return void problems.push({ path: `[${i}].id`, message: `repeats the id of entry [${first}]` });
    seen.set(r.value.id, i);
    entries.push(r.value);
  });
  if (opts.reassignIds) {
    const renamed = new Map<string, string>();
    for (const e of entries) if (!fresh.has(e.id)) renamed.set(e.id, nextId(nowDate.getTime()));
    const to = (id: string): string => renamed.get(id) ?? id;
    entries.forEach((e, k) => {
      const id = to(e.id);
      if (id === e.id) return;
      seen.set(id, seen.get(e.id)!);
      fresh.add(id);
      entries[k] = { ...e, id, superseded_by: e.superseded_by ? to(e.superseded_by) : null, related_entries: e.related_entries.map(to) };
    });
  }
  const fields = docs.map((d, i) => modules.secretRules().secretFields(d, `[${i}]`));
  problems.push(...(await scanGroups(engine, caller, fields, { project, agent, operation: 'import' })).flat());
  if (problems.length) throw new ValidationError(problems, opts.source ?? 'import');
  const { value, commit } = await withWrite(engine, caller, { project, agent }, async (tx) => {
    const snap = engine.snapshot(caller.warn);
    const existing = new Map(snap.entries.map((se) => [se.meta.id, se] as const));
    // An unreadable file under an id is never written over.
    const unreadable = new Map<string, string>();
    for (const b of snap.bad) {
      const at = entryPath(b.file);
      if (at && at.project === project) unreadable.set(at.id, b.file);
    }
    const live = liveByDup(snap.entries, project);
    const imported: { index: number; id: string; action: 'created' | 'overwritten' | 'merged' }[] = [];
    const skipped: { index: number; id: string; errors: Problem[] }[] = [];
    const skip = (index: number, id: string, field: string, message: string): number =>
      skipped.push({ index, id, errors: [{ path: `[${index}].${field}`, message }] });
    // What goes in (and what a skipped duplicate stands for), then the links, then the files.
    const going: { e: MemoryEntry; index: number; old?: StoredEntry; action: (typeof imported)[number]['action'] }[] = [];
    const standsFor = new Map<string, string>();
    for (const [k, e] of entries.entries()) {
      const index = seen.get(e.id) ?? k;
      if (fresh.has(e.id) && e.status !== 'superseded') {
        const dup = live.get(duplicateHash(e));
        if (dup) {
          standsFor.set(e.id, dup);
          skip(index, e.id, 'summary', `duplicates entry ${dup} (same subject, scope and summary)`);
          continue;
        }
        live.set(duplicateHash(e), e.id);
      }
      const old = existing.get(e.id);
      const bad = unreadable.get(e.id);
      if (bad) skip(index, e.id, 'id', `${bad} holds this id and cannot be read: fix it first (memory doctor)`);
      else if (old && old.project !== project)
        skip(index, e.id, 'id', `an entry with this id exists in project ${old.project}; --reassign-ids imports a copy under a new id`);
      else if (old && onConflict === 'skip') {
        standsFor.set(e.id, e.id);
        skip(index, e.id, 'id', 'an entry with this id exists (--on-conflict skip)');
      } else going.push({ e, index, old, action: !old ? 'created' : onConflict === 'merge' ? 'merged' : 'overwritten' });
    }
    // Links must name an entry imported or stored: a superseded entry whose successor is neither
    // is not imported (it would dangle), a related entry that is neither is dropped.
    const inBatch = new Set(going.map((g) => g.e.id));
    const resolve = (id: string): string | null => {
      const to = standsFor.get(id) ?? id;
      return inBatch.has(to) || existing.has(to) ? to : null;
    };
    for (let round = 0, changed = true; changed && round < going.length + 1; round++) {
      changed = false;
      for (const g of going) {
        if (!inBatch.has(g.e.id) || !g.e.superseded_by || resolve(g.e.superseded_by)) continue;
        inBatch.delete(g.e.id);
        changed = true;
        skip(g.index, g.e.id, 'superseded_by', `names ${g.e.superseded_by}, which is neither imported nor stored (it would dangle)`);
      }
    }
    const warnings: string[] = []; // links dropped: they named entries neither imported nor stored
    for (const [k, { e, index, old, action }] of going.entries()) {
      if (!inBatch.has(e.id)) continue;
      if (k % 200 === 0) {
        opts.onProgress?.(k, going.length, 'write');
        await tx.checkpoint();
      }
      const related = e.related_entries.map(resolve).filter((r): r is string => r !== null && r !== e.id);
      if (related.length < e.related_entries.length) warnings.push(`[${index}] ${e.id}: dropped related entries that are neither imported nor stored`);
      let next: MemoryEntry = { ...e, superseded_by: e.superseded_by ? resolve(e.superseded_by) : null, related_entries: [...new Set(related)] };
      if (old && onConflict === 'merge') next = modules.merge().mergeEntry(null, old.entry, next); // as the git merge driver does
      tx.put(next, old ? { from: join(engine.ws.root, old.file) } : { fresh: fresh.has(e.id) });
      tx.change({ op: 'import', id: e.id, summary: next.summary });
      imported.push({ index, id: e.id, action });
    }
    opts.onProgress?.(entries.length, entries.length, 'write');
    skipped.sort((x, y) => x.index - y.index);
    return { imported, skipped, warnings, snap, already: skipped.length > 0 && skipped.every((x) => standsFor.has(x.id)) };
  });
  warnIfLarge(caller, project, value.snap, value.imported.filter((a) => a.action === 'created').length);
  // already_here: every skipped entry is in the project (by id or as a duplicate).
  return { applied: value.imported, skipped: value.skipped, warnings: value.warnings, already_here: value.already, commit, project };
}

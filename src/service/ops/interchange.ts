/**
 * Interchange (002 Req 14): `memory export` of a project's entries, `memory import` of stored
 * entries as one transaction (skip, overwrite or merge an id that exists).
 */
import { join } from 'node:path';
import { ValidationError, type Problem } from '../../core/errors.js';
import { compileFilters, type QueryFilters } from '../../core/query.js';
import type { MemoryEntry } from '../../core/schema.js';
import { modules, type ServiceContext } from '../context.js';
import { withWrite } from '../transaction.js';
import { MAX_BATCH, scanGroups, warnIfLarge } from './apply.js';

export interface ImportResult {
  applied: { index: number; id: string; action: 'created' | 'overwritten' | 'merged' }[];
  skipped: { index: number; id: string; errors: Problem[] }[];
  commit: string | null;
  project: string;
}

/** `memory export`: a project's entries (filtered) sorted by id (Req 14). */
export function exportEntries(ctx: ServiceContext, project: string, filters: QueryFilters = {}): MemoryEntry[] {
  const p = ctx.project(project, true);
  const accept = compileFilters({ status: 'any', minConfidence: 0, includeExpired: true, ...filters, projects: [p] }, ctx.now().getTime());
  return ctx
    .snapshot()
    .entries.filter((se) => accept(se.meta, se.project))
    .map((se) => se.entry)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * `memory import`: validates every entry (schema, write policy) before writing anything, then
 * writes them as one commit. An id that already exists is skipped, overwritten or merged
 * field by field (Req 14.5); the report says what happened to each.
 */
export async function importEntries(
  ctx: ServiceContext,
  project: string,
  docs: unknown[],
  opts: { onConflict?: 'skip' | 'overwrite' | 'merge'; source?: string; onProgress?: (done: number, total: number, phase: 'validate' | 'write') => void } = {},
): Promise<ImportResult> {
  const onConflict = opts.onConflict ?? 'skip';
  ctx.ws.projectDir(project);
  if (docs.length > MAX_BATCH)
    throw new ValidationError(
      [{ path: opts.source ?? 'import', message: `holds ${docs.length} entries; at most ${MAX_BATCH} go in one import: split it` }],
      'import',
    );
  const problems: Problem[] = [];
  const entries: MemoryEntry[] = [];
  const seen = new Map<string, number>();
  docs.forEach((doc, i) => {
    if (i % 200 === 0) opts.onProgress?.(i, docs.length, 'validate');
    const r = modules.validation().validateStoredEntry(doc, `[${i}]`);
    if (!r.ok) return void problems.push(...r.errors);
    const first = seen.get(r.value.id);
    if (first !== undefined) return void problems.push({ path: `[${i}].id`, message: `repeats the id of entry [${first}]` });
    seen.set(r.value.id, i);
    entries.push(r.value);
  });
  const agent = await ctx.agent();
  const secrets = await scanGroups(
    ctx,
    docs.map((d, i) => modules.secretRules().secretFields(d, `[${i}]`)),
    { project, agent, operation: 'import' },
  );
  problems.push(...secrets.flat());
  if (problems.length) throw new ValidationError(problems, opts.source ?? 'import');
  const { value, commit } = await withWrite(ctx, { project, agent, operation: 'import' }, async (tx) => {
    const snap = ctx.snapshot();
    const existing = new Map(snap.entries.map((se) => [se.meta.id, se] as const));
    const imported: ImportResult['applied'] = [];
    const skipped: ImportResult['skipped'] = [];
    for (let k = 0; k < entries.length; k++) {
      const e = entries[k];
      if (k % 200 === 0) {
        opts.onProgress?.(k, entries.length, 'write');
        await tx.checkpoint();
      }
      const index = seen.get(e.id) ?? k;
      const old = existing.get(e.id);
      if (old && old.project !== project) {
        skipped.push({ index, id: e.id, errors: [{ path: `[${index}].id`, message: `an entry with this id exists in project ${old.project}` }] });
        continue;
      }
      let next = e;
      let action: 'created' | 'overwritten' | 'merged' = 'created';
      if (old) {
        if (onConflict === 'skip') {
          skipped.push({ index, id: e.id, errors: [{ path: `[${index}].id`, message: 'an entry with this id exists (--on-conflict skip)' }] });
          continue;
        }
        action = onConflict === 'merge' ? 'merged' : 'overwritten';
        if (onConflict === 'merge') next = modules.merge().mergeEntry(null, old.entry, e); // the same field-level merge as the git merge driver
      }
      tx.put(next, old ? { from: join(ctx.ws.root, old.file) } : {});
      tx.change({ op: 'import', id: e.id, summary: next.summary });
      imported.push({ index, id: e.id, action });
    }
    opts.onProgress?.(entries.length, entries.length, 'write');
    return { imported, skipped, snap };
  });
  warnIfLarge(ctx, project, value.snap, value.imported.filter((a) => a.action === 'created').length);
  return { applied: value.imported, skipped: value.skipped, commit, project };
}

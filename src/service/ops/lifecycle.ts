/** Edits of existing entries (`reinforce`, `promote`, `restore`, `link`), each one commit; and `related`. */
import { join } from 'node:path';
import { ConflictError, NotFoundError, UsageError, ValidationError } from '../../core/errors.js';
import type { CommitOp } from '../../core/entry.js';
import { initialImportance, memoryTypeOf, reinforceLifecycle, type BoostType } from '../../core/lifecycle.js';
import { MAX_RESULTS } from '../../core/query.js';
import type { MemoryEntry } from '../../core/schema.js';
import { shown } from '../../core/redact.js';
import { lastDeleted } from '../../store/git-log.js';
import { appendLogs } from '../../store/local-log.js';
import { checkId } from '../../store/workspace.js';
import { modules, type Engine } from '../engine.js';
import type { Caller } from '../caller.js';
import { withWrite } from '../transaction.js';
import { locate } from './entries.js';
import { query } from './query.js';

/** Entries of one project in one transaction; `edit` returns null to skip one. */
async function rewrite(
  engine: Engine,
  caller: Caller,
  ids: string[],
  projectName: string | undefined,
  op: CommitOp,
  edit: (e: MemoryEntry, project: string) => MemoryEntry | null,
) {
  const [first] = ids;
  if (first === undefined) throw new UsageError('name at least one entry id');
  for (const id of ids) checkId(id);
  const project = locate(engine, caller, first, projectName).project;
  const { value, commit } = await withWrite(engine, caller, { project }, (tx) => {
    const out: MemoryEntry[] = [];
    for (const id of ids) {
      const found = locate(engine, caller, id, project);
      const next = edit(found.entry, project);
      if (!next) continue;
      tx.put(next, { from: join(engine.ws.root, found.file) });
      tx.change({ op, id: next.id, summary: next.summary });
      out.push(next);
    }
    return out;
  });
  return { project, entries: value, commit };
}

/** Strength to 1 and stability up, importance boosted on request. */
export async function reinforce(engine: Engine, caller: Caller, ids: string[], opts: { project?: string; boostType?: BoostType; amount?: number } = {}) {
  const now = caller.now().getTime();
  return rewrite(engine, caller, ids, opts.project, 'reinforce', (e, project) => ({
    ...e,
    lifecycle: reinforceLifecycle(e, engine.decayConfig(project, caller.now()), now, {
      boostType: opts.boostType,
      amount: opts.amount,
      baseImportance: initialImportance(e),
    }),
  }));
}

/** Episodic to semantic: it stops decaying; confidence +0.1, at most 0.95. */
export async function promote(engine: Engine, caller: Caller, id: string, opts: { project?: string } = {}) {
  return rewrite(engine, caller, [id], opts.project, 'promote', (e) => {
    if (memoryTypeOf(e) === 'semantic') throw new ConflictError(`entry ${id} is already semantic`);
    return {
      ...e,
      confidence: Math.max(e.confidence, Math.min(0.95, Math.round((e.confidence + 0.1) * 100) / 100)),
      lifecycle: { ...(e.lifecycle ?? {}), memory_type: 'semantic' },
      updated_at: caller.now().toISOString(),
    };
  });
}

/** An archived entry becomes active again; a deleted one comes back from git history, active. */
export async function restore(engine: Engine, caller: Caller, id: string, opts: { project?: string } = {}) {
  checkId(id);
  const now = caller.now().toISOString();
  try {
    const found = locate(engine, caller, id, opts.project);
    if (found.entry.status !== 'archived') throw new ConflictError(`entry ${id} is ${found.entry.status}, not archived or deleted; nothing to restore`);
    const r = await rewrite(engine, caller, [id], found.project, 'restore', (e) => ({ ...e, status: 'active', updated_at: now }));
    return { project: r.project, entry: r.entries[0]!, commit: r.commit, from: 'archive' as const };
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
  const git = await engine.git();
  const hit = git ? await lastDeleted(git, `ai-memory/${opts.project ?? '*'}/*/${id}.json`) : null;
  if (!hit) throw new NotFoundError(`no entry ${shown(id, { bare: true })} in the tree or in git history${opts.project ? ` of project ${opts.project}` : ''}`);
  const project = hit.path.split('/')[1]!; // ai-memory/<project>/…
  const parsed = modules.validation().validateStoredEntry(JSON.parse(hit.content));
  if (!parsed.ok) throw new ValidationError(parsed.errors, `${hit.path} in history`);
  const entry: MemoryEntry = { ...parsed.value, status: 'active', superseded_by: null, updated_at: now };
  const { commit } = await withWrite(engine, caller, { project }, (tx) => {
    tx.put(entry);
    tx.change({ op: 'restore', id, summary: entry.summary });
  });
  return { project, entry, commit, from: 'history' as const };
}

export async function link(engine: Engine, caller: Caller, aOrPrefix: string, bOrPrefix: string, opts: { project?: string; type?: string } = {}) {
  const la = locate(engine, caller, aOrPrefix, opts.project);
  const lb = locate(engine, caller, bOrPrefix, opts.project);
  const [a, b, pa, pb] = [la.entry.id, lb.entry.id, la.project, lb.project];
  if (a === b) throw new UsageError('an entry cannot be linked to itself');
  if (pa !== pb) throw new ConflictError(`entries ${a} and ${b} are in different projects (${pa}, ${pb})`);
  const now = caller.now().toISOString();
  const r = await rewrite(engine, caller, [a, b], pa, 'link', (e) => {
    const other = e.id === a ? b : a;
    return e.related_entries.includes(other) ? null : { ...e, related_entries: [...e.related_entries, other], updated_at: now };
  });
  if (opts.type) appendLogs(engine.ws, 'operations', [{ time: now, op: 'link', id: a, to: b, type: opts.type, project: pa }]);
  return r;
}

/** Explicit links first, then lexically similar entries (summary, subject, tags). */
export function related(engine: Engine, caller: Caller, id: string, opts: { project?: string; limit?: number } = {}) {
  const found = locate(engine, caller, id, opts.project);
  const limit = opts.limit ?? 10;
  const out: { id: string; relation: 'linked' | 'similar'; score: number; entry: MemoryEntry }[] = [];
  const snap = engine.snapshot(caller.warn);
  const byId = new Map(snap.entries.filter((se) => se.project === found.project).map((se) => [se.meta.id, se]));
  for (const rid of found.entry.related_entries) {
    const se = byId.get(rid);
    if (se) out.push({ id: rid, relation: 'linked', score: 1, entry: se.entry });
  }
  const text = `${found.entry.summary} ${found.entry.subject.replace(/[._:-]/g, ' ')} ${found.entry.tags.join(' ')}`;
  const hits = query(engine, caller, text, { projects: [found.project], status: ['active'], minConfidence: 0 }, { limit: MAX_RESULTS, record: false }).results;
  for (const h of hits) {
    if (out.length >= limit) break;
    if (h.entry.id === found.entry.id || out.some((o) => o.id === h.entry.id)) continue;
    out.push({ id: h.entry.id, relation: 'similar', score: h.score, entry: h.entry });
  }
  return out.slice(0, Math.max(limit, found.entry.related_entries.length));
}

/** Memory_Update batches (`create`, `apply`, `supersede`, `deprecate`, `apply-result`): invalid updates are skipped, or with `atomic` reject the batch. */
import { ConflictError, UsageError, ValidationError, type Problem } from '../../core/errors.js';
import { buildEntry } from '../../core/entry.js';
import { pickAgent } from '../../core/filters.js';
import { duplicateHash } from '../../core/meta.js';
import type { ValidUpdate } from '../../core/validate.js';
import { tryOr } from '../../store/fsutil.js';
import { appendLogs } from '../../store/local-log.js';
import { checkId } from '../../store/workspace.js';
import { modules, type Engine } from '../engine.js';
import type { Caller } from '../caller.js';
import { withWrite, type WriteTx } from '../transaction.js';
import { BatchState, scanGroups, supersedeProblem, warnIfLarge } from './batch.js';
import { fixLinks } from './conflicts.js';
import { locate } from './entries.js';

export const MAX_BATCH = 50_000;

export interface AppliedUpdate {
  index: number;
  operation: 'create' | 'supersede' | 'deprecate';
  id: string;
  target_id?: string;
  superseded_by?: string;
}

export interface ApplyResult {
  applied: AppliedUpdate[];
  skipped: { index: number; errors: Problem[] }[];
  commit: string | null;
  project: string;
}

export interface ApplyOptions {
  project?: string;
  atomic?: boolean;
  label?: string;
  agent?: string;
  /** Create even what re-creates a retired entry (`--force`). */
  force?: boolean;
  onProgress?: (done: number, total: number, phase: 'validate' | 'write') => void;
}

/** One entry, from an entry or a whole create update. */
export async function create(engine: Engine, caller: Caller, input: unknown, opts: { project?: string; agent?: string; force?: boolean } = {}) {
  let entry = input;
  if (input && typeof input === 'object' && !Array.isArray(input) && 'operation' in input) {
    const op = input.operation;
    if (op !== 'create') throw new UsageError(`memory create takes an entry or a create update, not operation ${JSON.stringify(op)}; use memory apply`);
    entry = (input as { entry?: unknown }).entry;
  }
  const r = await apply(engine, caller, [{ operation: 'create', entry }], { ...opts, atomic: true, label: 'entry' });
  return { entry: locate(engine, caller, appliedOne(r, 'entry').id, r.project).entry, commit: r.commit, project: r.project };
}

/** The one update of a one-update batch; its problems thrown. */
export function appliedOne(r: ApplyResult, label: string): AppliedUpdate {
  const [a] = r.applied;
  if (!a) throw new ValidationError(r.skipped[0]?.errors ?? [], label);
  return a;
}

/** A batch checked and scanned before it takes the lock. */
type Prepared = Awaited<ReturnType<typeof prepare>>;

async function prepare(engine: Engine, caller: Caller, updates: unknown, opts: ApplyOptions) {
  if (!Array.isArray(updates)) {
    throw new ValidationError([{ path: '(root)', message: 'must be a JSON array of Memory_Update objects' }], 'updates');
  }
  if (updates.length > MAX_BATCH) {
    throw new ValidationError([{ path: '(root)', message: `holds ${updates.length} updates; at most ${MAX_BATCH} go in one batch: split it` }], 'updates');
  }
  const project = caller.project(engine, opts.project);
  engine.ws.projectDir(project);
  const agent = pickAgent(opts.agent) ?? (await caller.agent(engine));
  const prefixOf = (i: number): string => (opts.label && updates.length === 1 ? '' : `[${i}]`);
  // Every string of each update; `memory create` names the entry's own fields (`content`).
  const { secretFields } = modules.secretRules();
  const fields = updates.map((u, i) => (opts.label === 'entry' ? secretFields((u as { entry?: unknown } | null)?.entry) : secretFields(u, prefixOf(i))));
  const secrets = await scanGroups(engine, caller, fields, { project, agent, operation: opts.label ?? 'apply' });
  return { caller, updates: updates as unknown[], opts, project, agent, secrets, prefixOf };
}

/** One prepared batch inside a transaction; an atomic batch with a problem stages nothing: its result is the error. */
async function applyIn(tx: WriteTx, st: BatchState, p: Prepared): Promise<{ applied: AppliedUpdate[]; skipped: ApplyResult['skipped'] } | ValidationError> {
  const { updates, opts, secrets, prefixOf, agent } = p;
  const now = tx.nowIso;
  const applied: AppliedUpdate[] = [];
  const skipped: ApplyResult['skipped'] = [];
  const { getEntry, dupKeys } = st;
  const at = (i: number, field: string): string => (prefixOf(i) ? `${prefixOf(i)}.${field}` : field);

  // `memory create` was handed the entry: `summary`, not `entry.summary`.
  const own = (ps: Problem[]): Problem[] => ps.map((p) => ({ ...p, path: p.path.replace(/^entry\.?/, '') || '(root)' }));
  const validated: ReturnType<ReturnType<typeof modules.validation>['validateUpdate']>[] = [];
  for (const [i, raw] of updates.entries()) {
    if (i % 512 === 511) {
      opts.onProgress?.(i, updates.length, 'validate');
      await tx.checkpoint();
    }
    const u = raw as { operation?: string; target_id?: string; superseded_by?: string };
    const foreign = st.otherProject(u?.target_id) ?? st.otherProject(u?.superseded_by);
    if (foreign) {
      validated.push({ ok: false as const, errors: [{ path: at(i, 'target_id'), message: `entry belongs to project ${foreign}, not ${p.project}` }] });
      continue;
    }
    const exclude = u?.operation === 'supersede' ? u.target_id : undefined;
    // A supersede's own target is no duplicate of its replacement.
    const findDuplicate = (k: string): string | undefined => (dupKeys.get(k) === exclude ? undefined : dupKeys.get(k));
    const r0 = modules.validation().validateUpdate(raw, { getEntry, findDuplicate }, prefixOf(i));
    const again = r0.ok && r0.value.operation === 'create' && !opts.force ? recreates(st, r0.value.entry!) : null;
    const mine = secrets[i]!; // one list per update
    const found = again ? [...mine, { path: at(i, 'entry.summary'), message: again }] : mine;
    const r: typeof r0 = found.length ? { ok: false, errors: [...(r0.ok ? [] : r0.errors), ...found] } : r0;
    validated.push(opts.label === 'entry' && !r.ok ? { ok: false as const, errors: own(r.errors) } : r);
  }
  if (opts.atomic) {
    const bad = validated.flatMap((r) => (r.ok ? [] : r.errors));
    if (bad.length) return new ValidationError(bad, opts.label ?? 'update');
  }

  // One valid update against the working state (earlier updates of this batch may have changed it); what it returns is why it was skipped.
  const applyOne = (i: number, u: ValidUpdate): Problem[] | undefined => {
    const was = u.operation !== 'create' && u.target_id ? getEntry(u.target_id) : undefined;
    if (u.operation !== 'create' && u.target_id && (!was || was.status === 'superseded' || (u.operation === 'deprecate' && was.status === 'deprecated')))
      return [{ path: `[${i}].target_id`, message: `entry ${u.target_id} was changed earlier in this batch` }];
    const why = u.operation === 'supersede' && !u.entry && u.superseded_by ? supersedeProblem(u.target_id!, u.superseded_by, getEntry) : null;
    if (why) return [{ path: at(i, 'superseded_by'), message: why }];
    const dup = u.entry && dupKeys.get(duplicateHash(u.entry));
    if (dup && dup !== u.target_id) return [{ path: `[${i}].entry.summary`, message: `duplicates entry ${dup} (same subject, scope and summary)` }];
    let newId: string | undefined;
    if (u.entry) {
      newId = st.nextId(tx.now.getTime());
      const e = buildEntry(u.entry, newId, now, agent);
      st.write(tx, e, true);
      dupKeys.set(duplicateHash(e), newId);
      tx.change({ op: 'create', id: newId, summary: e.summary, agent });
    }
    if (u.operation === 'create') return void applied.push({ index: i, operation: 'create', id: newId! });
    const target = getEntry(u.target_id!)!;
    if (u.operation === 'supersede') {
      const by = newId ?? u.superseded_by!;
      st.write(tx, { ...target, status: 'superseded', superseded_by: by, updated_at: now });
      if (dupKeys.get(duplicateHash(target)) === target.id) dupKeys.delete(duplicateHash(target));
      tx.change({ op: 'supersede', id: target.id, summary: `superseded by ${by}`, agent });
      return void applied.push({ index: i, operation: 'supersede', id: by, target_id: target.id, superseded_by: by });
    }
    st.write(tx, { ...target, status: 'deprecated', updated_at: now });
    tx.change({ op: 'deprecate', id: target.id, summary: target.summary, agent });
    return void applied.push({ index: i, operation: 'deprecate', id: target.id, target_id: target.id });
  };
  for (const [i, r] of validated.entries()) {
    if (i % 512 === 511) await tx.checkpoint();
    const errors = r.ok ? applyOne(i, r.value) : r.errors;
    if (errors) skipped.push({ index: i, errors });
  }
  return { applied, skipped };
}

/**
 * Why a create restates a retired entry of the project (same subject, a summary of the same
 * words), or null: the next session's context would list the old fact and the new as current.
 */
function recreates(st: BatchState, entry: { subject: string; summary: string }): string | null {
  const retired = st.retired(entry.subject);
  if (!retired.length) return null;
  const { words, jaccard } = modules.similarity();
  const mine = new Set(words(entry.summary));
  for (const se of retired) {
    const status = se.meta.status;
    if (jaccard(mine, new Set(words(se.entry.summary))) < 0.8) continue;
    const by = se.meta.superseded_by ? st.getEntry(se.meta.superseded_by) : undefined;
    const what =
      status === 'deprecated' ? 'which was deprecated' : `which was superseded by ${se.meta.superseded_by}${by ? ` ("${by.summary.slice(0, 80)}")` : ''}`;
    return `re-creates entry ${se.meta.id} (${status}), ${what}; supersede the current entry instead, or pass --force (force: true over MCP) to write it anyway`;
  }
  return null;
}

export interface Batch {
  caller: Caller;
  updates: unknown;
  opts: ApplyOptions;
}

type Queued = Batch & { resolve: (r: ApplyResult) => void; reject: (err: unknown) => void };

/** Each engine's batches waiting for the group commit under way (none: no commit runs). */
const queues = new WeakMap<Engine, Queued[]>();

/** A batch as one commit; batches that arrive while a commit runs join the next group, one commit per project. */
export function apply(engine: Engine, caller: Caller, updates: unknown, opts: ApplyOptions = {}): Promise<ApplyResult> {
  return new Promise((resolve, reject) => {
    const queued = { caller, updates, opts, resolve, reject };
    const queue = queues.get(engine);
    if (queue) return void queue.push(queued);
    queues.set(engine, [queued]);
    void drain(engine);
  });
}

async function drain(engine: Engine): Promise<void> {
  const queue = queues.get(engine)!;
  try {
    while (queue.length) {
      // Writes arriving right now join this group.
      await new Promise((r) => setImmediate(r));
      const groups = new Map<string, Queued[]>();
      for (const w of queue.splice(0)) {
        try {
          // One commit per project and per leave to write on a detached HEAD.
          const key = `${w.caller.project(engine, w.opts.project)}\u0000${w.caller.allowDetached}`;
          groups.set(key, [...(groups.get(key) ?? []), w]);
        } catch (err) {
          w.reject(err);
        }
      }
      for (const group of groups.values()) {
        const results = await applyGroup(engine, group).catch((err: Error) => group.map(() => err));
        const done = group.map((batch, k) => ({ batch, result: results[k] ?? new Error('not applied') }));
        for (const { batch, result } of done) {
          if (result instanceof Error) batch.reject(result);
          else batch.resolve(result);
        }
        // The hook only records: a failure there must not strand the writers still queued.
        tryOr(() => engine.onGroup?.(done), undefined);
      }
    }
  } finally {
    queues.delete(engine);
  }
}

/**
 * Group commit: batches of one project in one transaction, each with its own result or error. An
 * atomic batch that fails validation fails alone; when the transaction fails, each batch is tried
 * again alone, so one caller's problem never becomes another's.
 */
export async function applyGroup(engine: Engine, batches: Batch[]): Promise<(ApplyResult | Error)[]> {
  const out: (ApplyResult | Error)[] = [];
  const ready: (Prepared & { k: number })[] = [];
  for (const [k, b] of batches.entries()) {
    const p = await prepare(engine, b.caller, b.updates, b.opts).catch((err: Error) => err);
    if (p instanceof Error) out[k] = p;
    else ready.push({ ...p, k });
  }
  if (new Set(ready.map((p) => p.project)).size > 1) throw new UsageError('a group commit takes batches of one project');
  const together = async (group: typeof ready): Promise<void> => {
    const first = group[0]!; // never called empty
    const single = group.length === 1 ? first.opts : undefined;
    // The first caller's settings; the transaction's warnings go to every caller.
    const caller = single
      ? first.caller
      : Object.assign(Object.create(first.caller) as Caller, { warn: (m: string) => group.forEach((p) => p.caller.warn(m)) });
    // Each change keeps its own writer (created_by, operation log, Memory-Agent).
    const agent = [...new Set(group.map((p) => p.agent))].join(', ');
    try {
      const { value, commit } = await withWrite(engine, caller, { project: first.project, agent, onProgress: single?.onProgress }, async (tx) => {
        const st = new BatchState(
          engine.snapshot(caller.warn),
          first.project,
          group.reduce((n, p) => n + p.updates.length, 0),
        );
        const results: Awaited<ReturnType<typeof applyIn>>[] = [];
        for (const p of group) results.push(await applyIn(tx, st, p));
        return { results, snap: st.snap };
      });
      for (const [i, p] of group.entries()) {
        const r = value.results[i]!; // one result per batch
        if (r instanceof Error) out[p.k] = r;
        else {
          const time = p.caller.now().toISOString();
          const skips = r.skipped.map((s) => ({ time, level: 'warn', event: 'update_skipped', project: p.project, agent: p.agent, ...s }));
          appendLogs(engine.ws, 'events', skips);
          warnIfLarge(p.caller, p.project, value.snap, r.applied.filter((a) => a.operation === 'create').length);
          out[p.k] = { ...r, commit: r.applied.length ? commit : null, project: p.project };
        }
      }
    } catch (err) {
      if (single) out[first.k] = err as Error;
      else for (const p of group) await together([p]);
    }
  };
  if (ready.length) await together(ready);
  return out;
}

export async function supersede(engine: Engine, caller: Caller, idOrPrefix: string, byOrPrefix: string, opts: { project?: string } = {}): Promise<ApplyResult> {
  checkId(idOrPrefix);
  checkId(byOrPrefix, 'by');
  const found = locate(engine, caller, idOrPrefix, opts.project);
  const replacement = locate(engine, caller, byOrPrefix, found.project);
  const id = found.entry.id;
  const by = replacement.entry.id;
  if (id === by) throw new ConflictError(`entry ${id} cannot supersede itself`);
  const problem = supersedeProblem(id, by, (x) =>
    x === by ? replacement.entry : x === id ? found.entry : tryOr(() => locate(engine, caller, x, found.project).entry, undefined),
  );
  if (problem) throw new ConflictError(problem);
  return apply(engine, caller, [{ operation: 'supersede', target_id: id, superseded_by: by }], { project: found.project, atomic: true, label: 'supersede' });
}

/** `memory deprecate <id>`; a deprecated entry is left unchanged. */
export async function deprecate(
  engine: Engine,
  caller: Caller,
  idOrPrefix: string,
  opts: { project?: string } = {},
): Promise<ApplyResult & { unchanged?: boolean }> {
  checkId(idOrPrefix);
  const found = locate(engine, caller, idOrPrefix, opts.project);
  const id = found.entry.id;
  if (found.entry.status === 'deprecated') return { applied: [], skipped: [], commit: null, project: found.project, unchanged: true };
  // Superseded by an entry that does not exist: deprecating it is the link repair.
  const by = found.entry.superseded_by;
  if (by && !tryOr(() => locate(engine, caller, by, found.project), undefined)) {
    const r = await fixLinks(engine, caller, new Set([id]));
    return { applied: [{ index: 0, operation: 'deprecate', id, target_id: id }], skipped: [], commit: r.commits[0] ?? null, project: found.project };
  }
  return apply(engine, caller, [{ operation: 'deprecate', target_id: id }], { project: found.project, atomic: true, label: 'deprecate' });
}

/** An AgentResult's `memory_updates`: valid ones as one commit, invalid ones skipped. */
export async function applyResult(engine: Engine, caller: Caller, result: unknown, opts: { project?: string; agent?: string } = {}): Promise<ApplyResult> {
  const parsed = modules.validation().parseWith(modules.schemas().AgentResultSchema, result);
  if (!parsed.ok) throw new ValidationError(parsed.errors, 'AgentResult');
  const r = parsed.value;
  const updates = r.memory_updates ?? [];
  const agent = opts.agent ?? caller.explicitAgent ?? r.agent_id ?? r.agent ?? undefined;
  const project = opts.project ?? r.project;
  if (updates.length === 0) return { applied: [], skipped: [], commit: null, project: caller.project(engine, project) };
  return apply(engine, caller, updates, { project, agent });
}

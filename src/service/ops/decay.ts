import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { FORGET_DEFAULTS, isPromotionCandidate, lifecycleOf, overlay } from '../../core/lifecycle.js';
import type { StoredEntry } from '../../store/catalog.js';
import { tryOr, writeFileAtomic } from '../../store/fsutil.js';
import { readNoFollow } from '../../store/state-dir.js';
import type { Engine } from '../engine.js';
import type { Caller } from '../caller.js';
import { withWrite } from '../transaction.js';

const decayStateFile = (engine: Engine, make = false): string => join(engine.ws.local('state', make), 'decay.json');

/** When decay last ran, per project (the daemon catches up from it). */
export function decayState(engine: Engine, _caller: Caller): Record<string, { last_run_at: string; forgotten_total: number }> {
  return tryOr(() => JSON.parse(readNoFollow(decayStateFile(engine), 'utf8')) as Record<string, { last_run_at: string; forgotten_total: number }>, {});
}

/**
 * Strength or confidence of a project's live entries now against the previous run; `apply` forgets
 * those below the threshold in one commit. `onBatch` hears after each `batch_size` (the daemon may stop there).
 */
export async function decay(
  engine: Engine,
  caller: Caller,
  projectName: string | undefined,
  opts: {
    apply?: boolean;
    overrides?: Parameters<typeof overlay>[1];
    onBatch?: (done: number, total: number) => boolean | void;
    resumeAfter?: string;
  } = {},
) {
  const project = caller.project(engine, projectName, true);
  const cfg = overlay(engine.decayConfig(project, caller.now()), opts.overrides);
  const threshold = cfg.forget_threshold ?? FORGET_DEFAULTS[cfg.curve];
  const t0 = performance.now();
  const nowDate = caller.now();
  const now = nowDate.getTime();
  const last = decayState(engine, caller)[project];
  const lastMs = last ? Date.parse(last.last_run_at) : null;
  const usage = engine.usage.load();
  const live = engine.snapshot(caller.warn).entries.filter((se) => se.project === project && (se.meta.status === 'active' || se.meta.status === 'draft'));
  // Entries whose value moved since the previous run, or to forget.
  const entries: (Pick<ReturnType<typeof lifecycleOf>, 'factor' | 'days_since_access' | 'retrievals' | 'memory_type' | 'forget'> & {
    id: string;
    before: number;
    after: number;
  })[] = [];
  const forget: StoredEntry[] = [];
  let changed = 0;
  let resumeAfter: string | null = null;
  // By id: an interrupted run resumes after its last id, though what it forgot is no longer live.
  live.sort((x, y) => (x.meta.id < y.meta.id ? -1 : x.meta.id > y.meta.id ? 1 : 0));
  const from = opts.resumeAfter ? live.findIndex((se) => se.meta.id > opts.resumeAfter!) : 0;
  for (let i = from < 0 ? live.length : from; i < live.length; i += cfg.batch_size) {
    for (const se of live.slice(i, i + cfg.batch_size)) {
      const u = usage.get(`${project}/${se.meta.id}`);
      const after = lifecycleOf(se.meta, u, cfg, now, se.meta.importance0);
      const before = lifecycleOf(se.meta, u, cfg, lastMs !== null && lastMs < now ? lastMs : Date.parse(se.meta.updated_at), se.meta.importance0);
      if (after.forget) forget.push(se);
      if (after.value !== before.value || after.forget) {
        changed += after.value !== before.value ? 1 : 0;
        const { factor, days_since_access, retrievals, memory_type } = after;
        entries.push({ id: se.meta.id, before: before.value, after: after.value, factor, days_since_access, retrievals, memory_type, forget: after.forget });
      }
    }
    await new Promise((r) => setImmediate(r)); // between batches, other work (the daemon's queries) runs
    const done = Math.min(i + cfg.batch_size, live.length);
    if (opts.onBatch?.(done, live.length) === false && done < live.length) {
      resumeAfter = live[done - 1]!.meta.id; // done > i >= 0
      break;
    }
  }
  let commit: string | null = null;
  if (opts.apply) {
    const done = await withWrite(engine, caller, { project }, (tx) => {
      let forgotten = 0;
      for (const se of forget) {
        const abs = join(engine.ws.root, se.file);
        if (!existsSync(abs)) continue;
        if (cfg.forget_action === 'delete') tx.remove(abs);
        else tx.put({ ...se.entry, status: 'archived', updated_at: tx.nowIso });
        forgotten++;
        tx.change(
          { op: 'forget', id: se.meta.id, summary: `${cfg.forget_action} (${cfg.curve} below ${threshold})` },
          { time: tx.nowIso, op: 'forget', action: cfg.forget_action, id: se.meta.id, project, agent: tx.agent },
        );
      }
      return forgotten;
    });
    commit = done.commit;
    const state = decayState(engine, caller);
    // An interrupted run keeps the previous run time until it finishes.
    const prev = state[project];
    if (resumeAfter === null) state[project] = { last_run_at: nowDate.toISOString(), forgotten_total: (prev?.forgotten_total ?? 0) + done.value };
    else if (prev) prev.forgotten_total += done.value;
    engine.ws.ensureLocal({ force: true });
    writeFileAtomic(decayStateFile(engine, true), JSON.stringify(state, null, 2), { fsync: false });
    engine.usage.compact();
  }
  return {
    project,
    curve: cfg.curve,
    forget_threshold: threshold,
    forget_action: cfg.forget_action,
    analyzed: live.length,
    changed,
    forgotten: forget.length,
    dry_run: !opts.apply,
    previous_run_at: last?.last_run_at ?? null,
    duration_ms: Math.round((performance.now() - t0) * 100) / 100,
    entries,
    resume_after: resumeAfter, // `onBatch` stopped the run early: the last id done
    promotion_candidates: live.filter((se) => isPromotionCandidate(se.meta, usage.get(`${project}/${se.meta.id}`))).map((se) => se.meta.id),
    commit,
  };
}

/** `memory compact` (a reviewable plan; `--apply PLAN` carries it out in one commit) and `memory log`. */
import { readFileSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import type { ConsolidationPlan, Strategy } from '../../core/consolidate.js';
import { buildEntry } from '../../core/entry.js';
import { ValidationError } from '../../core/errors.js';
import { duplicateHash } from '../../core/meta.js';
import type { MemoryEntry } from '../../core/schema.js';
import { writeFileAtomic } from '../../store/fsutil.js';
import { orThrow } from '../../try.js';
import { memoryLog } from '../../store/git-log.js';
import { modules, type Engine } from '../engine.js';
import type { Caller } from '../caller.js';
import { withWrite } from '../transaction.js';
import { idMaker, liveByDup } from './batch.js';
import { locate } from './entries.js';

/** The plan, written under `plans/` of the local state folder (nothing else changes). */
export function compactPlan(
  engine: Engine,
  caller: Caller,
  projectName: string | undefined,
  opts: { strategy?: Strategy; summarizeAt?: number; file?: string } = {},
) {
  const project = caller.project(engine, projectName, true);
  const entries = engine.snapshot(caller.warn).entries.filter((se) => se.project === project);
  const imp = new Map(entries.map((se) => [se.meta.id, se.meta.lifecycle?.importance ?? se.meta.importance0]));
  const summarizeAt = opts.summarizeAt ?? (engine.projectConfig(project, caller.now()) as { compact?: { summarize_at?: number } }).compact?.summarize_at;
  const plan = modules.consolidate().buildPlan(
    project,
    entries.map((se) => se.entry),
    {
      now: caller.now().toISOString(),
      strategy: opts.strategy,
      summarizeAt,
      importance: (e) => imp.get(e.id) ?? 0.5,
    },
  );
  let abs: string;
  if (opts.file) abs = engine.ws.assertInside(resolvePath(opts.file), 'plan file');
  else {
    engine.ws.ensureLocal({ force: true });
    abs = join(engine.ws.local('plans', true), `compact-${project}-${plan.created_at.replace(/[:.]/g, '-')}.json`);
  }
  writeFileAtomic(abs, `${JSON.stringify(plan, null, 2)}\n`, { fsync: false });
  return { plan, path: engine.ws.shownPath(abs) };
}

const readPlan = (file: string): ConsolidationPlan => JSON.parse(readFileSync(file, 'utf8')) as ConsolidationPlan;

/** Merge and summarize groups create their entry (merge supersedes the members by it), link groups link; a group whose members changed is skipped. */
export async function applyPlan(engine: Engine, caller: Caller, planFile: string) {
  // Read wherever it is (what it writes is memory, inside).
  const abs = resolvePath(planFile);
  const plan = orThrow(readPlan, abs, (err) => new ValidationError([{ path: planFile, message: `is not a readable plan (${err.message})` }], 'plan'));
  if (plan?.version !== 1 || !Array.isArray(plan.groups) || typeof plan.project !== 'string')
    throw new ValidationError([{ path: planFile, message: 'is not a consolidation plan (version 1 with project and groups)' }], 'plan');
  const project = caller.project(engine, plan.project, true);
  const mine = engine.snapshot(caller.warn).entries.filter((se) => se.project === project);
  const current = new Map(mine.map((se) => [se.meta.id, se.meta]));
  const skipped: { group: number; reason: string }[] = [];
  plan.groups.forEach((g, gi) => {
    if (g.action === 'review') return;
    const stale = g.members.find((m) => current.get(m.id)?.updated_at !== m.updated_at || current.get(m.id)?.status !== 'active');
    if (stale) skipped.push({ group: gi, reason: `entry ${stale.id} changed or is no longer active since the plan was made` });
  });
  const merged: { group: number; id: string; superseded: string[] }[] = [];
  const summaries: { group: number; id: string }[] = [];
  const linked: { group: number; ids: string[] }[] = [];
  // People edit plans: what one creates is checked like any new entry (secrets by the transaction).
  const live = liveByDup(mine, project);
  const { commit } = await withWrite(engine, caller, { project }, (tx) => {
    const nowIso = tx.nowIso;
    const nextId = idMaker();
    // One group carried out; what it returns is why it was skipped.
    const carry = (gi: number, g: ConsolidationPlan['groups'][number]): string | undefined => {
      const members = g.members.map((m) => locate(engine, caller, m.id, project).entry);
      if (g.action === 'link') {
        const [a, b] = members as [MemoryEntry, MemoryEntry];
        if (!a.related_entries.includes(b.id)) tx.put({ ...a, related_entries: [...a.related_entries, b.id], updated_at: nowIso });
        if (!b.related_entries.includes(a.id)) tx.put({ ...b, related_entries: [...b.related_entries, a.id], updated_at: nowIso });
        tx.change({ op: 'link', id: a.id, summary: `linked to ${b.id}` });
        return void linked.push({ group: gi, ids: [a.id, b.id] });
      }
      if (!g.result || typeof g.result !== 'object')
        return `action ${g.action} needs a result (the entry it creates); plans made before review groups carried one: run compact again`;
      const input = modules.validation().validateEntryInput(g.result);
      if (!input.ok) return input.errors.map((p) => `${p.path}: ${p.message}`).join('; ');
      const id = nextId(Date.parse(nowIso));
      const created = buildEntry(input.value, id, nowIso, tx.agent);
      const dup = live.get(duplicateHash(created));
      if (dup && !(g.action === 'merge' && members.some((m) => m.id === dup))) return `its result duplicates entry ${dup} (same subject, scope and summary)`;
      live.set(duplicateHash(created), id);
      tx.put(created);
      tx.change({ op: 'consolidate', id, summary: created.summary });
      if (g.action === 'summarize') return void summaries.push({ group: gi, id });
      for (const m of members) {
        tx.put({ ...m, status: 'superseded', superseded_by: id, updated_at: nowIso });
        tx.change({ op: 'supersede', id: m.id, summary: `consolidated into ${id}` });
      }
      return void merged.push({ group: gi, id, superseded: members.map((m) => m.id) });
    };
    for (const [gi, g] of plan.groups.entries()) {
      if (skipped.some((sk) => sk.group === gi) || g.action === 'review') continue;
      const reason = carry(gi, g);
      if (reason) skipped.push({ group: gi, reason });
    }
  });
  return { project, plan: engine.ws.rel(abs), merged, summaries, linked, skipped, commit };
}

export async function log(engine: Engine, caller: Caller, projectName: string | undefined, opts: { op?: string; limit?: number } = {}) {
  const projects = projectName ? [caller.project(engine, projectName, true)] : engine.ws.listProjects();
  const git = await engine.git();
  const paths = projects.map((p) => `ai-memory/${p}`);
  return git ? memoryLog(git, paths, opts.limit ?? 50, opts.op) : [];
}

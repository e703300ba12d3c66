/**
 * `memory sync-context` (002 Req 10): the ai-context document of a project, rendered as of now
 * (deterministic) and committed when it changed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CONTEXT_BUDGET, renderContextOf } from '../../core/context.js';
import type { ServiceContext } from '../context.js';
import type { ReadModel } from '../read-model.js';
import { withWrite } from '../transaction.js';
import { evidenceStatusOf } from './evidence-status.js';

/** The ai-context document of a project as of now, without writing it. */
export function renderContext(
  ctx: ServiceContext,
  rm: ReadModel,
  projectName: string,
  opts: { budget?: number } = {},
): { project: string; text: string; included: number; omitted: number } {
  const project = ctx.project(projectName, true);
  // The daemon's watcher keeps its catalog current; others stat the files first.
  const snap = ctx.watched && rm.current ? rm.current : ctx.snapshot();
  const items = snap.entries
    .filter((se) => se.project === project)
    .map((se) => ({ meta: se.meta, entry: () => se.entry, evidence: () => evidenceStatusOf(ctx, se) }));
  return {
    project,
    ...renderContextOf(project, items, ctx.now().getTime(), opts.budget ?? ctx.projectConfig(project).context?.budget ?? DEFAULT_CONTEXT_BUDGET),
  };
}

/** `memory sync-context <project>`: writes ai-context/<project>.md, committing it when it changed. */
export async function syncContext(
  ctx: ServiceContext,
  rm: ReadModel,
  projectName: string,
  opts: { budget?: number } = {},
): Promise<{ path: string; changed: boolean; included: number; omitted: number; commit: string | null }> {
  const r = renderContext(ctx, rm, projectName, opts);
  const project = r.project;
  const file = ctx.ws.assertInside(join(ctx.ws.contextDir, `${project}.md`), 'context file');
  const changed = !existsSync(file) || readFileSync(file, 'utf8') !== r.text;
  let commit: string | null = null;
  if (changed) {
    const agent = await ctx.agent();
    ({ commit } = await withWrite(ctx, { project, agent, operation: 'sync-context' }, (tx) => {
      tx.putFile(file, r.text);
      tx.change({ op: 'update', id: `ai-context/${project}.md`, summary: `sync-context (${r.included} entries)` }, false);
    }));
  }
  return { path: ctx.ws.rel(file), changed, included: r.included, omitted: r.omitted, commit };
}

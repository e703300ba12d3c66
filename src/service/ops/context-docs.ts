/** `memory sync-context`: a project's ai-context document as of now (deterministic), committed when it changed. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CONTEXT_BUDGET, renderContextOf } from '../../core/context.js';
import type { Engine } from '../engine.js';
import type { Caller } from '../caller.js';
import { withWrite } from '../transaction.js';
import { evidenceStatusOf } from './evidence-status.js';

export function renderContext(engine: Engine, caller: Caller, projectName: string, opts: { budget?: number } = {}) {
  const project = caller.project(engine, projectName, true);
  const items = engine
    .snapshot(caller.warn)
    .entries.filter((se) => se.project === project)
    .map((se) => ({ meta: se.meta, entry: () => se.entry, evidence: () => evidenceStatusOf(engine, se) }));
  const budget = opts.budget ?? engine.projectConfig(project, caller.now()).context?.budget ?? DEFAULT_CONTEXT_BUDGET;
  return { project, ...renderContextOf(project, items, caller.now().getTime(), budget) };
}

export async function syncContext(engine: Engine, caller: Caller, projectName: string, opts: { budget?: number } = {}) {
  const r = renderContext(engine, caller, projectName, opts);
  const project = r.project;
  const file = engine.ws.assertInside(join(engine.ws.contextDir, `${project}.md`), 'context file');
  const changed = !existsSync(file) || readFileSync(file, 'utf8') !== r.text;
  const { commit } = changed
    ? await withWrite(engine, caller, { project }, (tx) => {
        tx.putFile(file, r.text);
        tx.change({ op: 'update', id: `ai-context/${project}.md`, summary: `sync-context (${r.included} entries)` }, false);
      })
    : { commit: null };
  return { path: engine.ws.rel(file), changed, included: r.included, omitted: r.omitted, commit };
}

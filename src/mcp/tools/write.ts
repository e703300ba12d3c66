/** The write tools: create (optionally superseding), deprecate, and a batch as one commit. */
import { z } from 'zod';
import * as uc from '../../service/use-cases.js';
import { WRITE, objectArg, projectArg, type Tool } from '../tool.js';

export const writeTools: Tool[] = [
  {
    name: 'memory_create',
    config: {
      title: 'Record one fact',
      description:
        'Create one entry (one commit): section, kind, subject (a key: billing.invoices), scope, summary (1-2 sentences), content (why, how you know), confidence (0-1), evidence [{type, uri, note}] unless status is draft. ' +
        'supersedes: the id of an entry it replaces. Re-creating a superseded or deprecated fact is refused unless force.',
      inputSchema: { entry: objectArg, supersedes: z.string().optional(), force: z.boolean().optional(), project: projectArg },
      annotations: WRITE,
    },
    async body(engine, caller, a: { entry: Obj; supersedes?: string; force?: boolean; project?: string }) {
      if (a.supersedes === undefined) return { ...(await uc.create(engine, caller, a.entry, { project: a.project, force: a.force })) };
      const target = uc.locate(engine, caller, a.supersedes, a.project);
      const r = await uc.apply(engine, caller, [{ operation: 'supersede', target_id: target.entry.id, entry: a.entry }], {
        project: target.project,
        atomic: true,
        label: 'supersede',
      });
      const { id } = uc.appliedOne(r, 'supersede');
      return { entry: uc.locate(engine, caller, id, r.project).entry, superseded: target.entry.id, commit: r.commit, project: r.project };
    },
  },
  {
    name: 'memory_deprecate',
    config: {
      title: 'Deprecate an entry',
      description: 'Mark an entry no longer true: kept in history, out of default results. Idempotent.',
      inputSchema: { id: z.string(), project: projectArg },
      annotations: { ...WRITE, idempotentHint: true },
    },
    async body(engine, caller, a: { id: string; project?: string }) {
      return { ...(await uc.deprecate(engine, caller, a.id, { project: a.project })) };
    },
  },
  {
    name: 'memory_apply',
    config: {
      title: 'Write a batch',
      description:
        'Apply Memory_Update objects ({operation: create|supersede|deprecate, entry?, target_id?, superseded_by?}) as one commit; invalid ones are reported in skipped, the rest applied.',
      inputSchema: { updates: z.array(objectArg).min(1), project: projectArg },
      annotations: WRITE,
    },
    async body(engine, caller, a: { updates: Obj[]; project?: string }) {
      return { ...(await uc.apply(engine, caller, a.updates, { project: a.project })) };
    },
  },
];

type Obj = Record<string, unknown>;

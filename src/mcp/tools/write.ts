/**
 * The write tools: `memory_create` (one entry, optionally replacing one that no longer holds),
 * `memory_deprecate`, and `memory_apply` (a batch of Memory_Update as one commit).
 */
import { z } from 'zod';
import { WRITE, guard, objectArg, projectArg, type ToolContext } from '../result.js';

export function registerWriteTools(t: ToolContext): void {
  const { service } = t;
  t.server.registerTool(
    'memory_create',
    {
      title: 'Record one fact',
      description:
        'Create one entry (one commit): section, kind, subject (a key: billing.invoices), scope, summary (1-2 sentences), content (why, how you know), confidence (0-1), evidence [{type, uri, note}] unless status is draft. ' +
        'supersedes: the id of an entry it replaces. Re-creating a superseded or deprecated fact is refused unless force.',
      inputSchema: { entry: objectArg, supersedes: z.string().optional(), force: z.boolean().optional(), project: projectArg },
      annotations: WRITE,
    },
    async (a) =>
      guard(async () => {
        const agent = await t.agent();
        if (a.supersedes === undefined) return { ...(await service.create(a.entry, { project: t.project(a.project), agent, force: a.force })) };
        const target = service.locate(a.supersedes, t.project(a.project));
        const r = await service.apply([{ operation: 'supersede', target_id: target.entry.id, entry: a.entry }], {
          project: target.project,
          agent,
          atomic: true,
          label: 'supersede',
        });
        return { entry: service.locate(r.applied[0].id, r.project).entry, superseded: target.entry.id, commit: r.commit, project: r.project };
      }),
  );

  t.server.registerTool(
    'memory_deprecate',
    {
      title: 'Deprecate an entry',
      description: 'Mark an entry no longer true: kept in history, out of default results. Idempotent.',
      inputSchema: { id: z.string(), project: projectArg },
      annotations: { ...WRITE, idempotentHint: true },
    },
    async (a) => guard(async () => ({ ...(await service.deprecate(a.id, { project: t.project(a.project) })) })),
  );

  t.server.registerTool(
    'memory_apply',
    {
      title: 'Write a batch',
      description:
        'Apply Memory_Update objects ({operation: create|supersede|deprecate, entry?, target_id?, superseded_by?}) as one commit; invalid ones are reported in skipped, the rest applied.',
      inputSchema: { updates: z.array(objectArg).min(1), project: projectArg },
      annotations: WRITE,
    },
    async (a) => guard(async () => ({ ...(await service.apply(a.updates, { project: t.project(a.project), agent: await t.agent() })) })),
  );
}

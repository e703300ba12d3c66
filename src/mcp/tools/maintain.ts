/** `memory_maintain`: the rarely used operations behind one tool, so they cost an agent's context one description, not eight. */
import { z } from 'zod';
import { UsageError } from '../../core/errors.js';
import { parseWhen } from '../../core/filters.js';
import * as uc from '../../service/use-cases.js';
import { WRITE, objectArg, projectArg, type Tool } from '../tool.js';

const ACTIONS = ['validate', 'link', 'reinforce', 'extract', 'check_freshness', 'stats', 'decay', 'sync_context'] as const;

const maintainArgs = {
  action: z.enum(ACTIONS),
  project: projectArg,
  id: z.string().optional(),
  other: z.string().optional(),
  type: z.string().optional(),
  ids: z.array(z.string()).optional(),
  entry: objectArg.optional(),
  update: objectArg.optional(),
  text: z.string().optional(),
  dry_run: z.boolean().optional(),
  days: z.number().min(0).optional(),
  since: z.string().optional(),
  until: z.string().optional(),
  curve: z.enum(['exponential', 'half-life', 'periodic', 'fsrs6']).optional(),
  budget: z.number().int().min(200).optional(),
};
type MaintainArgs = { [K in keyof typeof maintainArgs]?: z.infer<(typeof maintainArgs)[K]> } & { action: (typeof ACTIONS)[number] };

export const maintainTools: Tool[] = [
  {
    name: 'memory_maintain',
    config: {
      title: 'Maintain memory',
      description:
        'validate: entry or update, nothing written. link: id with other (type?). reinforce: ids. extract: text into drafts (dry_run?). ' +
        'check_freshness: expiring within days. stats: since/until. decay: preview (curve?). sync_context: regenerate ai-context (budget?).',
      inputSchema: maintainArgs,
      annotations: WRITE,
    },
    async body(engine, caller, a: MaintainArgs) {
      const { project } = a;
      const need = <T>(v: T | undefined, name: string): T => {
        if (v === undefined) throw new UsageError(`${a.action} needs ${name}`);
        return v;
      };
      switch (a.action) {
        case 'validate':
          if ((a.entry === undefined) === (a.update === undefined)) throw new UsageError('give exactly one of entry or update');
          return { ...(await uc.validate(engine, caller, a.entry ?? a.update, { project })) };
        case 'link':
          return { ...(await uc.link(engine, caller, need(a.id, 'id'), need(a.other, 'other'), { project, type: a.type })) };
        case 'reinforce':
          return { ...(await uc.reinforce(engine, caller, need(a.ids, 'ids'), { project })) };
        case 'extract':
          return { ...(await uc.extract(engine, caller, project, need(a.text, 'text'), { dryRun: a.dry_run, source: 'mcp' })) };
        case 'check_freshness':
          return { items: uc.checkFreshness(engine, caller, { project, days: a.days }) };
        case 'stats':
          return {
            ...uc.getStatistics(engine, caller, project, {
              start_date: parseWhen(a.since, 'since', caller.now()),
              end_date: parseWhen(a.until, 'until', caller.now()),
            }),
          };
        case 'decay':
          return { ...(await uc.decay(engine, caller, project, { overrides: a.curve ? { curve: a.curve } : undefined })) };
        case 'sync_context':
          return { ...(await uc.syncContext(engine, caller, caller.project(engine, project), { budget: a.budget })) };
      }
    },
  },
];

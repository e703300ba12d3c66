/**
 * sync-context and stats.
 */
import type { Argv } from 'yargs';
import { parseWhen } from '../../core/filters.js';
import { type GlobalArgs, out, printJson, service } from '../io.js';

type A = GlobalArgs & Record<string, unknown>;

export function registerContext(y: Argv<GlobalArgs>): Argv<GlobalArgs> {
  return y
    .command(
      'sync-context [project]',
      'write ai-context/<project>.md from active, confidence >= 0.8, code/artifact-evidenced entries (the project as for any command when not named)',
      (c) => c.positional('project', { type: 'string' }).option('budget', { type: 'number', describe: 'maximum size in characters (default 12000)' }),
      async (a: A) => {
        const svc = service(a);
        const r = await svc.syncContext(svc.project(a.project || undefined, true), { budget: a.budget as number | undefined });
        if (a.json) printJson(r);
        else {
          out(
            `${r.changed ? 'wrote' : 'unchanged:'} ${r.path} (${r.included} entries${r.omitted ? `, ${r.omitted} left out by the size budget` : ''})${r.commit ? ` commit ${r.commit.slice(0, 12)}` : ''}`,
          );
        }
      },
    )
    .command(
      'stats [project]',
      'statistics of the memory: entries by section, status and confidence, expiry, agents, queries',
      (c) => c.positional('project', { type: 'string' }).option('since', { type: 'string' }).option('until', { type: 'string' }),
      (a: A) => {
        const svc = service(a);
        const project = a.project || undefined;
        const now = svc.now();
        const s = svc.getStatistics(project, {
          start_date: parseWhen(a.since as string | undefined, 'since', now),
          end_date: parseWhen(a.until as string | undefined, 'until', now),
        });
        if (a.json) return printJson(s);
        const dist = Object.entries(s.confidence_distribution)
          .map(([k, v]) => `${k}: ${v}`)
          .join(', ');
        out(
          [
            `project            ${s.project ?? '(all)'}`,
            `total entries      ${s.total_entries} (${
              Object.entries(s.entries_by_status)
                .filter(([, v]) => v)
                .map(([k, v]) => `${v} ${k}`)
                .join(', ') || 'none'
            })`,
            `by section         ${Object.entries(s.entries_by_section)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')}`,
            `avg confidence     ${s.avg_confidence}  (${dist})`,
            `low confidence     ${s.low_confidence_count}`,
            `superseded         ${s.superseded_percentage}%  (compaction candidates: ${s.compaction_candidates.count})`,
            `expiring <= 7 days ${s.entries_approaching_expiry.length}`,
            `top agents         ${s.most_active_agents.map((x) => `${x.agent} (${x.count})`).join(', ') || 'none'}`,
            `queries            ${s.query_frequency_over_time.reduce((n, d) => n + d.count, 0)}; top subjects: ${s.most_queried_subjects.map((x) => `${x.subject} (${x.count})`).join(', ') || 'none'}`,
          ].join('\n'),
        );
      },
    );
}

/**
 * sync-context, context, setup and stats.
 */
import type { Argv } from 'yargs';
import * as uc from '../../service/use-cases.js';
import { parseWhen } from '../../core/filters.js';
import { stopAnswer } from '../../service/ops/capture.js';
import { type GlobalArgs, type Cli } from '../io.js';

type A = GlobalArgs & Record<string, unknown>;

export function registerContext(y: Argv<GlobalArgs>, k: Cli): Argv<GlobalArgs> {
  return y
    .command(
      'sync-context [project]',
      'write ai-context/<project>.md from active, confidence >= 0.8, code/artifact-evidenced entries (the project as for any command when not named)',
      (c) =>
        c
          .positional('project', { type: 'string' })
          .option('budget', { type: 'number', describe: 'maximum size in characters (default: config.yaml context.budget, else 8000)' }),
      async (a: A) => {
        const [engine, caller] = k.open(a);
        const r = await uc.syncContext(engine, caller, caller.project(engine, a.project || undefined, true), { budget: a.budget as number | undefined });
        if (a.json) k.printJson(r);
        else {
          k.out(
            `${r.changed ? 'wrote' : 'unchanged:'} ${r.path} (${r.included} entries${r.omitted ? `, ${r.omitted} left out by the size budget` : ''})${r.commit ? ` commit ${r.commit.slice(0, 12)}` : ''}`,
          );
        }
      },
    )
    .command(
      'context [project]',
      'print the project context summary (what sync-context writes to ai-context/); nothing is written',
      (c) =>
        c
          .positional('project', { type: 'string' })
          .option('budget', { type: 'number', describe: 'maximum size in characters (default: config.yaml context.budget, else 8000)' }),
      (a: A) => {
        const [engine, caller] = k.open(a);
        const r = uc.renderContext(engine, caller, caller.project(engine, a.project || undefined, true), { budget: a.budget as number | undefined });
        if (a.json) k.printJson(r);
        else k.out(r.text);
      },
    )
    .command(
      'setup <client> [project]',
      'configure an agent client for this repository: its MCP server, its standing instructions (CLAUDE.md, AGENTS.md or a Cursor rule) and the context once (for Claude Code a session-start hook); --capture adds a Stop hook reminding the agent to record what it learned; idempotent, your own content is kept',
      (c) =>
        c
          .positional('client', { type: 'string', choices: ['claude-code', 'cursor', 'codex'], demandOption: true })
          .positional('project', { type: 'string' })
          .option('dry-run', { type: 'boolean', describe: 'show what would change; write nothing' })
          .option('capture', {
            type: 'boolean',
            describe: 'also install the reminder hook: record what was learned when a session changed code and recorded nothing',
          }),
      (a: A) => {
        const r = uc.setup(...k.open(a), String(a.client), a.project || undefined, { dryRun: Boolean(a['dry-run']), capture: Boolean(a.capture) });
        if (a.json) return k.printJson(r);
        for (const f of r.files)
          k.out(`${r.dry_run && f.action !== 'unchanged' ? `would ${f.action}` : f.action === 'unchanged' ? 'unchanged' : `${f.action}d`}  ${f.file}`);
        if (r.dry_run) for (const f of r.files.filter((x) => x.action !== 'unchanged')) k.out(`\n--- ${f.file} (after)\n${f.after.trimEnd()}`);
        k.out(`the server starts as: ${r.command.join(' ')} memory mcp --project ${r.project}`);
        if (!r.portable)
          k.warn(
            'that command names a path on this machine (bass-agents is neither a dependency of this project nor on PATH): teammates need their own setup; install bass-agents as a dev dependency (npm install -D) or globally and run setup again',
          );
        if (!r.dry_run && r.files.some((f) => f.action !== 'unchanged')) k.out('review and commit these files; setup commits nothing');
      },
    )
    .command(
      'hook <event>',
      false, // run by agent clients (setup --capture), not by people
      (c) =>
        c
          .positional('event', { type: 'string', choices: ['stop'], demandOption: true })
          .option('client', { type: 'string', choices: ['claude-code', 'cursor', 'codex'], demandOption: true }),
      async (a: A) => {
        // A hook never fails its client: whatever goes wrong, it says nothing and exits 0.
        let reminder: string | null = null;
        try {
          reminder = await uc.stopReminder(...k.open(a), k.readTextInput('-').text);
        } catch {
          reminder = null;
        }
        const answer = stopAnswer(String(a.client), reminder);
        if (answer) k.out(answer);
      },
    )
    .command(
      'stats [project]',
      'statistics of the memory: entries by section, status and confidence, expiry, agents, queries',
      (c) => c.positional('project', { type: 'string' }).option('since', { type: 'string' }).option('until', { type: 'string' }),
      (a: A) => {
        const [engine, caller] = k.open(a);
        const project = a.project || undefined;
        const now = caller.now();
        const s = uc.getStatistics(engine, caller, project, {
          start_date: parseWhen(a.since as string | undefined, 'since', now),
          end_date: parseWhen(a.until as string | undefined, 'until', now),
        });
        if (a.json) return k.printJson(s);
        const dist = Object.entries(s.confidence_distribution)
          .map(([k, v]) => `${k}: ${v}`)
          .join(', ');
        k.out(
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

/** sync-context, context, setup, hook and stats. */
import * as uc from '../../service/use-cases.js';
import { parseWhen } from '../../core/filters.js';
import { stopAnswer } from '../../service/ops/capture.js';
import { commitNote, type Command } from '../io.js';

const BUDGET = { type: 'number', describe: 'maximum size in characters (default: config.yaml context.budget, else 8000)' } as const;
const CLIENTS = ['claude-code', 'cursor', 'codex'];

export const contextCommands: Command[] = [
  {
    cmd: 'sync-context [project]',
    describe: 'write ai-context/<project>.md from active, confidence >= 0.8, code/artifact-evidenced entries (the project as for any command when not named)',
    options: { budget: BUDGET },
    async run(k, a) {
      const [engine, caller] = k.open(a);
      const r = await uc.syncContext(engine, caller, caller.project(engine, a.project || undefined, true), { budget: a.budget as number | undefined });
      k.print(
        a,
        r,
        `${r.changed ? 'wrote' : 'unchanged:'} ${r.path} (${r.included} entries${r.omitted ? `, ${r.omitted} left out by the size budget` : ''})${commitNote(r.commit, ' commit ')}`,
      );
    },
  },
  {
    cmd: 'context [project]',
    describe: 'print the project context summary (what sync-context writes to ai-context/); nothing is written',
    options: { budget: BUDGET },
    run(k, a) {
      const [engine, caller] = k.open(a);
      const r = uc.renderContext(engine, caller, caller.project(engine, a.project || undefined, true), { budget: a.budget as number | undefined });
      k.print(a, r, r.text);
    },
  },
  {
    cmd: 'setup <client> [project]',
    describe:
      'configure an agent client for this repository: its MCP server, its standing instructions (CLAUDE.md, AGENTS.md or a Cursor rule) and the context once (for Claude Code a session-start hook); --capture adds a Stop hook reminding the agent to record what it learned; idempotent, your own content is kept',
    options: {
      client: { choices: CLIENTS, demandOption: true },
      'dry-run': { type: 'boolean', describe: 'show what would change; write nothing' },
      capture: { type: 'boolean', describe: 'also install the reminder hook: record what was learned when a session changed code and recorded nothing' },
    },
    run(k, a) {
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
  },
  {
    cmd: 'hook <event>',
    describe: false, // run by agent clients (setup --capture), not by people
    options: { event: { choices: ['stop'], demandOption: true }, client: { type: 'string', choices: CLIENTS, demandOption: true } },
    async run(k, a) {
      // A hook never fails its client: on any problem it says nothing and exits 0.
      const reminder = await (async () => uc.stopReminder(...k.open(a), k.readTextInput('-').text))().catch(() => null);
      const answer = stopAnswer(String(a.client), reminder);
      if (answer) k.out(answer);
    },
  },
  {
    cmd: 'stats [project]',
    describe: 'statistics of the memory: entries by section, status and confidence, expiry, agents, queries',
    options: { since: { type: 'string' }, until: { type: 'string' } },
    run(k, a) {
      const [engine, caller] = k.open(a);
      const now = caller.now();
      const s = uc.getStatistics(engine, caller, a.project || undefined, {
        start_date: parseWhen(a.since as string | undefined, 'since', now),
        end_date: parseWhen(a.until as string | undefined, 'until', now),
      });
      if (a.json) return k.printJson(s);
      const pairs = (o: Record<string, number>, f: (k: string, v: number) => string): string =>
        Object.entries(o)
          .map(([k, v]) => f(k, v))
          .join(', ');
      k.out([
        `project            ${s.project ?? '(all)'}`,
        `total entries      ${s.total_entries} (${pairs(Object.fromEntries(Object.entries(s.entries_by_status).filter(([, v]) => v)), (k, v) => `${v} ${k}`) || 'none'})`,
        `by section         ${pairs(s.entries_by_section, (k, v) => `${k} ${v}`)}`,
        `avg confidence     ${s.avg_confidence}  (${pairs(s.confidence_distribution, (k, v) => `${k}: ${v}`)})`,
        `low confidence     ${s.low_confidence_count}`,
        `superseded         ${s.superseded_percentage}%  (compaction candidates: ${s.compaction_candidates.count})`,
        `expiring <= 7 days ${s.entries_approaching_expiry.length}`,
        `top agents         ${s.most_active_agents.map((x) => `${x.agent} (${x.count})`).join(', ') || 'none'}`,
        `queries            ${s.query_frequency_over_time.reduce((n, d) => n + d.count, 0)}; top subjects: ${s.most_queried_subjects.map((x) => `${x.subject} (${x.count})`).join(', ') || 'none'}`,
      ]);
    },
  },
];

/**
 * `memory dashboard [project]` (the blessed libraries load only for this command).
 */
import type { Argv } from 'yargs';
import { UsageError } from '../../core/errors.js';
import { type GlobalArgs, type Cli } from '../io.js';

export function registerDashboard(y: Argv<GlobalArgs>, k: Cli): Argv<GlobalArgs> {
  return y.command(
    'dashboard [project]',
    'the terminal dashboard: statistics, trends, quality, agents, queries, lifecycle (q quits)',
    (c) => c.positional('project', { type: 'string' }).option('refresh', { type: 'number', describe: 'auto-refresh interval in seconds (default 30)' }),
    async (a: GlobalArgs & Record<string, unknown>) => {
      if (!process.stdout.isTTY) throw new UsageError('the dashboard needs a terminal; use `memory stats --json` for the numbers');
      const [engine, caller] = k.open(a);
      const project = a.project || undefined;
      if (project) caller.project(engine, project, true);
      const { runDashboard } = await import('../../dashboard/dashboard.js');
      await runDashboard(engine, caller, { project, refreshMs: a.refresh === undefined ? undefined : Number(a.refresh) * 1000 });
    },
  );
}

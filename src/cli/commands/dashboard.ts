/**
 * `memory dashboard [project]` (the blessed libraries load only for this command).
 */
import { UsageError } from '../../core/errors.js';
import type { Command } from '../io.js';

export const dashboardCommands: Command[] = [
  {
    cmd: 'dashboard [project]',
    describe: 'the terminal dashboard: statistics, trends, quality, agents, queries, lifecycle (q quits)',
    options: { refresh: { type: 'number', describe: 'auto-refresh interval in seconds (default 30)' } },
    async run(k, a) {
      if (!process.stdout.isTTY) throw new UsageError('the dashboard needs a terminal; use `memory stats --json` for the numbers');
      const [engine, caller] = k.open(a);
      const project = a.project || undefined;
      if (project) caller.project(engine, project, true);
      const { runDashboard } = await import('../../dashboard/dashboard.js');
      await runDashboard(engine, caller, { project, refreshMs: a.refresh === undefined ? undefined : Number(a.refresh) * 1000 });
    },
  },
];

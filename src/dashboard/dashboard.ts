/** `memory dashboard [project]`: blessed-contrib panels of getStatistics, coloured by health in core/stats.ts; keys in its help line. */
import { createRequire } from 'node:module';
import { health, rangeFor, type Level, type Statistics } from '../core/stats.js';
import type { Caller } from '../service/caller.js';
import type { Engine } from '../service/engine.js';
import { getStatistics } from '../service/ops/statistics.js';

const require = createRequire(import.meta.url);

type Range = '7d' | '30d' | 'all';
const RANGE_LABEL: Record<Range, string> = { '7d': 'last 7 days', '30d': 'last 30 days', all: 'all time' };

/** `name  12 ██████` lines scaled to the largest value; `['', -1]` is a blank line. */
function textBars(rows: [string, number][], width: number): string {
  const name = Math.max(...rows.map(([k]) => k.length), 4);
  const max = Math.max(1, ...rows.map(([, v]) => v));
  const room = Math.max(1, width - name - 6);
  return rows.map(([k, v]) => (v < 0 ? '' : `${k.padEnd(name)} ${String(v).padStart(4)} ${'█'.repeat(Math.round((v / max) * room))}`)).join('\n');
}

export async function runDashboard(engine: Engine, caller: Caller, opts: { project?: string; refreshMs?: number } = {}): Promise<void> {
  /* eslint-disable @typescript-eslint/no-explicit-any -- blessed-contrib has no type definitions */
  const blessed = require('blessed') as typeof import('blessed');
  const contrib = require('blessed-contrib');
  const screen = blessed.screen({ smartCSR: true, title: 'bass-agents memory', fullUnicode: true, autoPadding: true });
  const listed = engine.ws.listProjects();
  const projects = [undefined, ...(opts.project && !listed.includes(opts.project) ? [opts.project] : []), ...listed];
  let projectIdx = projects.indexOf(opts.project);
  let range: Range = 'all';
  let lastError = '';

  const grid = new contrib.grid({ rows: 12, cols: 12, screen });
  const summary = grid.set(0, 0, 4, 4, blessed.box, { label: ' summary ', tags: true });
  const growth = grid.set(0, 4, 4, 8, contrib.line, {
    label: ' entries created per day ',
    showLegend: false,
    style: { line: 'cyan', text: 'white', baseline: 'white' },
    xPadding: 2,
    wholeNumbersOnly: true,
  });
  // Text bars, not donuts: whole names at 80x24, in the terminal's own foreground colour.
  const shares = grid.set(4, 0, 4, 4, blessed.box, { label: ' sections, evidence ', tags: true });
  const confidence = grid.set(4, 4, 4, 3, blessed.box, { label: ' confidence ', tags: true });
  const expiring = grid.set(4, 7, 4, 5, blessed.box, { label: ' expiring <= 7d ', tags: true, scrollable: true, alwaysScroll: true });
  const width = (span: number): number => Math.max(16, Math.floor(((Number(screen.width) || 80) * span) / 12) - 3);
  const table = (row: number, col: number, span: number, label: string, split: (w: number) => number[]): any =>
    grid.set(row, col, row === 8 ? 3 : 4, span, contrib.table, {
      label,
      keys: false,
      interactive: false,
      columnSpacing: 1,
      columnWidth: split(width(span)),
      fg: 'white',
    });
  const agents = table(8, 0, 3, ' top agents ', (w) => [w - 5, 4]);
  // Whole ids: entries written in one batch differ only at the end.
  const ops = table(8, 3, 6, ' recent operations ', (w) => (w >= 44 ? [10, 27, w - 39] : [10, w - 11]));
  const queries = table(8, 9, 3, ' queried ', (w) => [w - 5, 4]);
  const help = blessed.box({ parent: screen, bottom: 0, left: 0, height: 2, width: '100%', tags: true });

  const n = (x: number): string => x.toLocaleString('en-US');
  const render = (s: Statistics): void => {
    const h = health(s);
    const c = (level: Level, text: string): string => `{${level}-fg}${text}{/${level}-fg}`; // a level is a blessed colour
    const active = s.entries_by_status.active ?? 0;
    summary.setContent(
      [
        `total ${n(s.total_entries)}  active ${n(active)}`,
        `avg confidence  ${c(h.avg_confidence, s.avg_confidence.toFixed(2))}`,
        `low confidence  ${c(h.low_confidence, n(s.low_confidence_count))}`,
        `stale evidence  ${c(h.stale_evidence, n(s.stale_evidence_count))}`,
        `superseded      ${c(h.superseded, `${s.superseded_percentage}%`)}`,
        `expiring (7d)   ${c(h.expiring, n(s.entries_approaching_expiry.length))}`,
      ].join('\n'),
    );
    let days = s.entries_created_over_time.slice(-30);
    // A line chart cannot draw one point: start from the day before.
    if (days.length === 1) days = [{ date: new Date(Date.parse(days[0]!.date) - 86_400_000).toISOString().slice(0, 10), count: 0 }, ...days];
    const sup = new Map(s.entries_superseded_over_time.map((d) => [d.date, d.count]));
    const x = days.length ? days.map((d) => d.date.slice(5)) : ['-'];
    growth.setData([
      { title: 'created', x, y: days.length ? days.map((d) => d.count) : [0], style: { line: 'cyan' } },
      { title: 'superseded', x, y: days.length ? days.map((d) => sup.get(d.date) ?? 0) : [0], style: { line: 'yellow' } },
    ]);
    shares.setContent(
      textBars([...Object.entries(s.entries_by_section), ['', -1], ...Object.entries(s.evidence_type_distribution).filter(([, v]) => v > 0)], width(4) - 1),
    );
    confidence.setContent(textBars(Object.entries(s.confidence_distribution), width(3) - 1));
    const fit = (t: string, w: number): string => (t.length <= w ? t : `${t.slice(0, w - 1)}…`);
    agents.setData({ headers: ['agent', 'n'], data: s.most_active_agents.slice(0, 10).map((a) => [fit(a.agent, width(3) - 6), String(a.count)]) });
    const soon = s.entries_approaching_expiry;
    expiring.setLabel(` expiring <= 7d: ${soon.length}${soon.length > Number(expiring.height) - 2 ? ', ↑↓ scroll' : ''} `);
    expiring.setContent(soon.length ? soon.map((e) => `${e.id} ${e.days_left}d`).join('\n') : 'none');
    const wide = width(6) >= 44;
    ops.setData({
      headers: wide ? ['op', 'id', 'when'] : ['op', 'id'],
      data: s.recent_operations.slice(0, 20).map((o) => (wide ? [o.op.slice(0, 10), o.id, o.time.slice(5, 10)] : [o.op.slice(0, 10), o.id])),
    });
    const perWeek = s.query_frequency_over_time.slice(-7).reduce((a, d) => a + d.count, 0);
    queries.setData({
      headers: ['pattern', 'n'],
      data: [
        ...s.most_queried_subjects.slice(0, 4).map((q) => [fit(q.subject, width(3) - 6), String(q.count)]),
        ...s.most_queried_scopes.slice(0, 3).map((q) => [fit(`@${q.scope}`, width(3) - 6), String(q.count)]),
        [fit('queries, 7d', width(3) - 6), String(perWeek)],
      ],
    });
    const p = projects[projectIdx] ?? 'all projects';
    const overall = c(h.overall, `● ${h.overall}${h.reasons.length ? `: ${h.reasons.join(', ')}` : ''}`);
    help.setContent(
      `${overall}  ${p} | ${RANGE_LABEL[range]}${lastError ? `  {red-fg}${lastError}{/red-fg}` : ''}\nr refresh  1 7 days  2 30 days  3 all time  p next project  q quit`,
    );
    screen.render();
  };

  const refresh = (): void => {
    try {
      lastError = '';
      render(getStatistics(engine, caller, projects[projectIdx], rangeFor(range, caller.now())));
    } catch (err) {
      lastError = (err as Error).message.slice(0, 60);
      help.setContent(`{red-fg}${lastError}{/red-fg}`);
      screen.render();
    }
  };

  const timer = setInterval(refresh, opts.refreshMs ?? 30_000);
  screen.key(['r'], refresh);
  screen.key(['down', 'j'], () => (expiring.scroll(1), screen.render()));
  screen.key(['up', 'k'], () => (expiring.scroll(-1), screen.render()));
  (['7d', '30d', 'all'] as const).forEach((r, i) => screen.key([String(i + 1)], () => ((range = r), refresh())));
  screen.key(['p'], () => ((projectIdx = (projectIdx + 1) % projects.length), refresh()));
  screen.on('resize', () => refresh());
  refresh();
  await new Promise<void>((resolve) =>
    screen.key(['q', 'C-c', 'escape'], () => {
      clearInterval(timer);
      screen.destroy(); // restores the terminal: normal buffer, cursor, modes
      resolve();
    }),
  );
  /* eslint-enable @typescript-eslint/no-explicit-any */
}

/**
 * The dashboard in a real terminal: tmux runs `memory dashboard` on a seeded repo at 80x24; the
 * captured pane shows the right numbers; after an outside change, `r` refreshes them; `1`
 * switches the date range; `q` quits and the terminal comes back.
 */
import { describe, expect, it } from 'vitest';
import { BIN, cli, entry, gitdir } from '../helpers/repo.js';
import { terminal } from '../helpers/tmux.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: string, fn: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('memory dashboard', () => {
  it('shows the statistics in a real terminal, refreshes after a change, switches range, quits cleanly', async () => {
    const dir = gitdir();
    const env = (agent: string): Record<string, string> => ({ BASS_AGENTS_AGENT: agent });
    const seed = [
      entry({ summary: 'first', confidence: 0.9 }),
      entry({ summary: 'second', subject: 'billing.x', confidence: 0.3, status: 'draft', evidence: [] }),
    ];
    expect(
      cli(dir, ['apply', 'demo', '--file', '-'], { env: env('agent-alpha'), input: JSON.stringify(seed.map((e) => ({ operation: 'create', entry: e }))) }).code,
    ).toBe(0);
    const term = terminal(dir, `TERM=xterm-256color HOME='${dir}' '${process.execPath}' '${BIN}' memory dashboard demo; echo DASHBOARD-EXITED $?`, 80, 24);
    const pane = (): string => term.pane();
    await until('the dashboard', () => pane().includes('active'));
    let screen = pane();
    expect(screen).toMatch(/total 2\s+active 1/);
    expect(screen).toMatch(/low confidence\s+1/);
    expect(screen).toContain('agent-alpha');
    expect(screen).toMatch(/demo \| all time/);
    // Readable at 80x24: whole section and evidence names, the reason for the colour, whole ids
    // that `show` accepts, panel titles on one line, and a growth line for one day of data.
    expect(screen).toMatch(/decisions\s+2 █+/);
    expect(screen).toMatch(/code\s+1 █+/);
    expect(screen).toMatch(/● (yellow|red): .*low-confidence/);
    expect(screen).toContain(' recent operations ');
    const shownId = /create\s+([0-9A-Z]{26})\b/.exec(screen)?.[1];
    expect(shownId).toBeDefined();
    expect(cli(dir, ['show', shownId!]).code).toBe(0);
    expect(screen).toMatch(/[⡀-⣿]{6,}/); // braille dots of the growth line, though all was created today

    // An outside change, then `r`.
    const more = [entry({ summary: 'third', subject: 'billing.y' }), entry({ summary: 'fourth', subject: 'billing.z' })];
    expect(
      cli(dir, ['apply', 'demo', '--file', '-'], { env: env('agent-beta'), input: JSON.stringify(more.map((e) => ({ operation: 'create', entry: e }))) }).code,
    ).toBe(0);
    term.keys('r');
    await until('the refreshed numbers', () => /total 4\s+active 3/.test(pane()));
    screen = pane();
    expect(screen).toContain('agent-beta');

    term.keys('1');
    await until('the 7-day range', () => pane().includes('last 7 days'));
    term.keys('q');
    await until('a clean exit', () => pane().includes('DASHBOARD-EXITED 0'));
    // The terminal is restored: the shell's output is on the normal screen, no dashboard frame left.
    expect(pane()).not.toContain('summary');
  });

  it('uses a larger terminal: wider tables with the dates of operations', async () => {
    const dir = gitdir();
    expect(cli(dir, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry({ summary: 'one fact' })) }).code).toBe(0);
    const term = terminal(dir, `TERM=xterm-256color HOME='${dir}' '${process.execPath}' '${BIN}' memory dashboard demo`, 120, 40);
    const pane = (): string => term.pane();
    await until('the dashboard', () => pane().includes('recent operations'));
    expect(pane()).toMatch(/create\s+[0-9A-Z]{26} \d\d-\d\d/);
    expect(pane()).toMatch(/● green\s+demo \| all time/);
  });

  it('refuses to run without a terminal, pointing at stats --json', () => {
    const dir = gitdir();
    const r = cli(dir, ['dashboard']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/needs a terminal.*stats --json/);
  });
});

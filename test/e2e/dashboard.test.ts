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
    expect(screen).toMatch(/● (yellow|red): .*1 of 2 low-confidence/);
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

  it('a healthy project with a few entries expiring is green; confidence bars are drawn; every expiring id is reached by scrolling; at 120x40 the tables widen', async () => {
    const dir = gitdir();
    const now = Date.parse('2026-06-01T12:00:00Z');
    const day = 86_400_000;
    const facts = Array.from({ length: 92 }, (_, i) =>
      entry({ subject: `billing.f${i}`, summary: `Billing fact number ${i}.`, confidence: 0.7 + (i % 4) * 0.1 }),
    );
    const states = Array.from({ length: 8 }, (_, i) =>
      entry({
        section: 'state',
        kind: 'other',
        subject: `flags.f${i}`,
        summary: `Flag ${i} is on until its review.`,
        valid_from: new Date(now - 30 * day).toISOString(),
        valid_to: new Date(now + (i % 6) * day + day / 2).toISOString(),
      }),
    );
    const input = JSON.stringify([...facts, ...states].map((e) => ({ operation: 'create', entry: e })));
    expect(cli(dir, ['apply', 'demo', '--file', '-'], { env: { BASS_AGENTS_NOW: '2026-06-01T12:00:00Z' }, input }).code).toBe(0);
    const expiring = (cli(dir, ['check-freshness', '--json'], { env: { BASS_AGENTS_NOW: '2026-06-01T12:00:00Z' } }).json() as { id: string }[]).map(
      (e) => e.id,
    );
    expect(expiring).toHaveLength(8);
    const run = `TERM=xterm-256color HOME='${dir}' BASS_AGENTS_NOW=2026-06-01T12:00:00Z '${process.execPath}' '${BIN}' memory dashboard demo`;

    const small = terminal(dir, run, 80, 24);
    await until('the dashboard', () => small.pane().includes('expiring <= 7d: 8'));
    const screen = small.pane();
    expect(screen).toMatch(/● green\s+demo \| all time/); // 8 of 100 expiring is not an issue
    expect(screen).toMatch(/0\.8-1\.0\s+\d+ █+/); // the confidence panel draws bars
    expect(screen).toContain('↑↓ scroll');
    const seen = new Set(expiring.filter((id) => screen.includes(id)));
    expect(seen.size).toBeGreaterThanOrEqual(4);
    for (let k = 0; k < 6; k++) {
      small.keys('Down');
      await sleep(150);
      for (const id of expiring) if (small.pane().includes(id)) seen.add(id);
    }
    expect([...seen].sort()).toEqual([...expiring].sort()); // every one, whole (memory show takes it)

    const wide = terminal(dir, run, 120, 40);
    await until('the wide dashboard', () => wide.pane().includes('recent operations'));
    expect(wide.pane()).toMatch(/create\s+[0-9A-Z]{26} \d\d-\d\d/);
    for (const id of expiring) expect(wide.pane()).toContain(id); // room for all of them
  });

  it('refuses to run without a terminal, pointing at stats --json', () => {
    const dir = gitdir();
    const r = cli(dir, ['dashboard']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/needs a terminal.*stats --json/);
  });
});

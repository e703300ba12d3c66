/**
 * Long writes show their progress in a real terminal (tmux), and nothing of it when piped or
 * with --json.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, cli, entry, gitdir } from '../helpers/repo.js';
import { terminal } from '../helpers/tmux.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('progress of a large apply', () => {
  it('is a bar on a terminal, and absent from piped or JSON output', async () => {
    const dir = gitdir();
    const updates = Array.from({ length: 600 }, (_, i) => ({
      operation: 'create',
      entry: entry({ summary: `Batch fact number ${i}.`, subject: `batch.n${i}` }),
    }));
    writeFileSync(join(dir, 'batch.json'), JSON.stringify(updates));
    writeFileSync(join(dir, 'batch2.json'), JSON.stringify(updates.map((u, i) => ({ ...u, entry: { ...u.entry, summary: `Second batch fact ${i}.` } }))));
    const term = terminal(
      dir,
      `HOME='${dir}' BASS_AGENTS_NO_DAEMON=1 '${process.execPath}' '${BIN}' memory apply demo --file batch.json; echo APPLY-EXITED $?`,
      100,
      10,
    );
    const pane = (): string => term.pane(true);
    for (let i = 0; i < 300 && !pane().includes('APPLY-EXITED'); i++) await sleep(100);
    const screen = pane();
    expect(screen).toContain('APPLY-EXITED 0');
    // Files written, of all (the 600 entries and the project's own files).
    const bar = /write\s+\[#{30}\] (\d+)\/(\d+)/.exec(screen);
    expect(bar).not.toBeNull();
    expect(bar![1]).toBe(bar![2]);
    expect(Number(bar![1])).toBeGreaterThanOrEqual(600);

    const piped = cli(dir, ['apply', 'demo', '--file', 'batch2.json'], { env: { BASS_AGENTS_NO_DAEMON: '1' } });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stderr).not.toContain('[#');
  });
});

import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The stress script itself: a short run must find no lost, torn or uncommitted entry, a clean
// git fsck and the user's staged change untouched. (Its figures are recorded, never asserted.)
// Fewer writes than a quick run by hand: four writers at once still contend for every commit,
// and ten memory writes still race dozens of user commits.
describe('npm run stress -- --quick', () => {
  it('concurrent writers and a kill -9 loop lose and corrupt nothing', () => {
    const args = ['--quick', '--writes', '3', '--race-writes', '10', '--json'];
    const r = spawnSync(process.execPath, [resolve(__dirname, '../../scripts/stress.js'), ...args], { encoding: 'utf8', timeout: 600_000 });
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.failures).toEqual([]);
    expect(report.acknowledged_writes).toBe(report.processes * report.writes_per_process);
    expect(report.kill_loop.writers_killed).toBeGreaterThan(0);
    // The harness bounds its own run; no limit here that a busy machine could break.
  }, 600_000);
});

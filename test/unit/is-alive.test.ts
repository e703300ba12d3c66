// A killed daemon's pid may stay a zombie until the system's init reaps it: `daemon start` must
// not take it for a running daemon (the stress suite's daemon-start phase met exactly that).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isAlive } from '../../src/daemon/client.js';

describe('isAlive', () => {
  it.runIf(existsSync('/proc/self/stat'))('a zombie is not alive; a running process is', async () => {
    // The shell starts `true` in the background and becomes `sleep`, which never reaps it.
    const parent = spawn('sh', ['-c', 'true & exec sleep 5'], { stdio: 'ignore' });
    try {
      let zombie: number | undefined;
      for (let tries = 0; tries < 100 && zombie === undefined; tries++) {
        await new Promise((r) => setTimeout(r, 50));
        const children = readFileSync(`/proc/${parent.pid}/task/${parent.pid}/children`, 'utf8').trim();
        const pid = Number(children.split(' ')[0]);
        if (pid && readFileSync(`/proc/${pid}/stat`, 'latin1').includes(') Z ')) zombie = pid;
      }
      expect(zombie).toBeDefined();
      process.kill(zombie!, 0); // a signal still reaches it
      expect(isAlive(zombie!)).toBe(false);
      expect(isAlive(parent.pid!)).toBe(true);
    } finally {
      parent.kill();
    }
    expect(isAlive(2 ** 22 + 12345)).toBe(false);
  });
});

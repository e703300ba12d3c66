import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { installedBin, launcherFor } from '../../src/store/install.js';

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'bass-agents-install-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('how other programs start bass-agents', () => {
  const bin = installedBin().replace(/[\\/]src[\\/]\.\.[\\/]/, '/');
  it('by name when the bass-agents on PATH is this installation (a global install, npm link)', () => {
    const root = scratch();
    const pathDir = join(root, 'bin-dir');
    mkdirSync(pathDir);
    symlinkSync(bin, join(pathDir, 'bass-agents'));
    expect(launcherFor(root, { PATH: pathDir })).toEqual({ command: 'bass-agents', args: [], portable: true });
  });
  it("by a path inside the workspace when it is the workspace's own dependency", () => {
    const root = scratch();
    mkdirSync(join(root, 'node_modules'), { recursive: true });
    symlinkSync(dirname(dirname(bin)), join(root, 'node_modules', 'bass-agents'));
    expect(launcherFor(root, { PATH: '' })).toEqual({ command: 'node', args: ['node_modules/bass-agents/bin/bass-agents.cjs'], portable: true });
  });
  it("else by this machine's absolute path, said to be not portable", () => {
    const root = scratch();
    const l = launcherFor(root, { PATH: '' });
    expect(l.portable).toBe(false);
    expect(l.args[0]).toMatch(/bin[\\/]bass-agents\.cjs$/);
  });
});

import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { gitCommandFor, installedBin, launcherFor } from '../../src/store/install.js';

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'bass-agents-install-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('how other programs start bass-agents', () => {
  const bin = installedBin().replace(/[\\/]src[\\/]\.\.[\\/]/, '/');
  const onPath = (root: string): string => {
    const pathDir = join(root, 'bin-dir');
    mkdirSync(pathDir);
    symlinkSync(bin, join(pathDir, 'bass-agents'));
    return pathDir;
  };

  it('by name when the bass-agents on PATH is this installation (a global install, npm link)', () => {
    const root = scratch();
    expect(launcherFor(root, { PATH: onPath(root) })).toMatchObject({ words: ['bass-agents'], cli: 'bass-agents', portable: true });
    expect(gitCommandFor(root, { PATH: onPath(scratch()) }, 'memory textconv')).toBe('bass-agents memory textconv');
  });

  it("through npx and by the path in the project when it is the workspace's own dependency, whatever PATH holds", () => {
    const root = scratch();
    mkdirSync(join(root, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(dirname(dirname(bin)), join(root, 'node_modules', 'bass-agents'));
    symlinkSync(bin, join(root, 'node_modules', '.bin', 'bass-agents'));
    // npx puts node_modules/.bin on PATH: that is not the PATH a client or git starts with.
    const l = launcherFor(root, { PATH: join(root, 'node_modules', '.bin') });
    expect(l).toMatchObject({ words: ['npx', '--no-install', 'bass-agents'], cli: 'npx bass-agents', portable: true });
    expect(l.claudeHook).toBe('node "$CLAUDE_PROJECT_DIR"/node_modules/bass-agents/bin/bass-agents.cjs');
    expect(gitCommandFor(root, { PATH: '' }, 'memory textconv')).toMatch(/^\S*node node_modules\/bass-agents\/bin\/bass-agents\.cjs memory textconv$/);
  });

  it("else by this machine's absolute path, said to be not portable", () => {
    const root = scratch();
    const l = launcherFor(root, { PATH: '' });
    expect(l.portable).toBe(false);
    expect(l.words[1]).toMatch(/bin[\\/]bass-agents\.cjs$/);
  });
});

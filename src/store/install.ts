/**
 * How other programs (an MCP client, a hook, git's merge driver) start this installation of
 * `bass-agents`: by name when the `bass-agents` on PATH is this very installation (a global
 * install or `npm link`: it survives reinstalls), by a path relative to the workspace when it is
 * the workspace's own dev dependency, else by this machine's absolute path (a clone).
 */
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Launcher } from '../core/setup.js';

/** This installation's command file. */
export function installedBin(): string {
  return fileURLToPath(new URL('../../bin/bass-agents.cjs', import.meta.url));
}

export function launcherFor(root: string, env: NodeJS.ProcessEnv = process.env): Launcher {
  const bin = installedBin();
  let real: string;
  try {
    real = realpathSync(bin);
  } catch {
    real = bin;
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'bass-agents');
    try {
      if (existsSync(candidate) && realpathSync(candidate) === real) return { command: 'bass-agents', args: [], portable: true };
    } catch {
      /* unreadable PATH entry */
    }
  }
  // The workspace's own dependency (a copy, or npm's symlink to a folder it was installed from).
  const local = join(root, 'node_modules', 'bass-agents', 'bin', 'bass-agents.cjs');
  try {
    if (existsSync(local) && realpathSync(local) === real) return { command: 'node', args: ['node_modules/bass-agents/bin/bass-agents.cjs'], portable: true };
  } catch {
    /* a broken link */
  }
  const rel = relative(realpathSync(root), real);
  if (rel.split(sep)[0] === 'node_modules') return { command: 'node', args: [rel.split(sep).join('/')], portable: true };
  return { command: 'node', args: [real], portable: false };
}

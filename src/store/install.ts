/**
 * How an agent client (committed configuration) and git (local config) start this installation
 * from their plain PATH: a dev dependency, a global install, a checkout of bass-agents itself, or
 * else this machine's absolute paths (not portable). docs/mcp.md says why each gets its form.
 */
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, isAbsolute, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Launcher } from '../core/setup.js';
import { tryOr } from './fsutil.js';

const shellWord = (w: string): string => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, "'\\''")}'`);

export const installedBin = (): string => fileURLToPath(new URL('../../bin/bass-agents.cjs', import.meta.url));

const real = (p: string): string => tryOr(() => realpathSync(p), p);

type Install = { kind: 'dependency' } | { kind: 'global' } | { kind: 'checkout'; rel: string } | { kind: 'elsewhere'; bin: string };

function installOf(root: string, env: NodeJS.ProcessEnv): Install {
  const bin = real(installedBin());
  const top = real(root);
  // The workspace's own dependency: a copy, or npm's link to a folder it was installed from.
  const dep = join(top, 'node_modules', 'bass-agents', 'bin', 'bass-agents.cjs');
  if (existsSync(dep) && real(dep) === bin) return { kind: 'dependency' };
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    // npx and npm scripts put a project's node_modules/.bin on PATH: not the client's PATH.
    if (!dir || /[\\/]node_modules[\\/]\.bin[\\/]?$/.test(dir)) continue;
    const candidate = join(dir, 'bass-agents');
    if (existsSync(candidate) && real(candidate) === bin) return { kind: 'global' };
  }
  const rel = relative(top, bin);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? { kind: 'checkout', rel: rel.split(sep).join('/') } : { kind: 'elsewhere', bin };
}

const DEP_SCRIPT = 'node_modules/bass-agents/bin/bass-agents.cjs';

/** How an agent client, started in the project, starts bass-agents. */
export function launcherFor(root: string, env: NodeJS.ProcessEnv = process.env): Launcher {
  const at = installOf(root, env);
  if (at.kind === 'global')
    return { words: ['bass-agents'], shell: 'bass-agents', claudeHook: 'bass-agents', rootHook: 'bass-agents', cli: 'bass-agents', portable: true };
  if (at.kind === 'elsewhere') {
    const line = [process.execPath, at.bin].map(shellWord).join(' ');
    return { words: [process.execPath, at.bin], shell: line, claudeHook: line, rootHook: line, cli: line, portable: false };
  }
  // A script in the project: hooks run it by its path there.
  const script = shellWord(at.kind === 'dependency' ? DEP_SCRIPT : at.rel);
  const hooks = { claudeHook: `node "$CLAUDE_PROJECT_DIR"/${script}`, rootHook: `node ${script}`, portable: true };
  if (at.kind === 'dependency')
    return { words: ['npx', '--no-install', 'bass-agents'], shell: 'npx --no-install bass-agents', cli: 'npx bass-agents', ...hooks };
  return { words: ['node', at.rel], shell: `node ${script}`, cli: `node ${at.rel}`, ...hooks };
}

/**
 * The command line git runs from the top of the work tree for `args` (merge driver, textconv). A
 * path in the project survives `npm ci`, a moved checkout and a clone elsewhere; node is named by
 * its absolute path: git started by an editor may not have node on its PATH.
 */
export function gitCommandFor(root: string, env: NodeJS.ProcessEnv, args: string): string {
  const at = installOf(root, env);
  const node = shellWord(process.execPath);
  if (at.kind === 'dependency') return `${node} ${DEP_SCRIPT} ${args}`;
  return at.kind === 'global' ? `bass-agents ${args}` : `${node} ${shellWord(at.kind === 'checkout' ? at.rel : at.bin)} ${args}`;
}

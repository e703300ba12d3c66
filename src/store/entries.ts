/** The files a project needs besides its entries, as contents for the write transaction to write, and git's drivers for them. */
import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { renderConfig, defaultConfig } from './config.js';
import type { GitRepo } from './git.js';
import { gitCommandFor } from './install.js';
import { readNoFollow } from './state-dir.js';
import { linkRefused, type Workspace } from './workspace.js';

/** Ignore rules committed inside ai-memory/: lock dirs and temp files never reach git. */
const MEMORY_GITIGNORE = '# bass-agents memory: lock folders and temp files are never committed\n*.lock/\n.*.tmp\n';

/** The files that create a project (config.yaml, ai-memory/.gitignore), each only when missing. */
export function projectFiles(ws: Workspace, project: string, now: string): { abs: string; text: string }[] {
  const out: { abs: string; text: string }[] = [];
  ws.projectDir(project); // validates the name and the path
  const gi = join(ws.memoryDir, '.gitignore');
  if (!existsSync(gi)) out.push({ abs: gi, text: MEMORY_GITIGNORE });
  const cfg = ws.configPath(project);
  if (!existsSync(cfg)) out.push({ abs: cfg, text: renderConfig(defaultConfig(project, now)) });
  return out;
}

export const MERGE_DRIVER = 'bass-agents-memory';
// In ai-memory/.gitattributes (a memory path, so committing it never touches the user's files).
const ATTR_LINE = `**/*.json merge=${MERGE_DRIVER}`;
const DIFF_ATTR_LINE = `**/*.json diff=${MERGE_DRIVER}`;

/** The attributes file with our line added (the rest left as it is), or null when it is there. */
export function gitAttributesText(file: string): string | null {
  // Never read through a link: what is read here is committed again.
  const st = lstatSync(file, { throwIfNoEntry: false });
  if (st && !st.isFile()) throw linkRefused('ai-memory/.gitattributes', 'file', !st.isSymbolicLink());
  let text = st ? readNoFollow(file, 'utf8') : '';
  const has = (line: string): boolean => text.split('\n').some((l) => l.trim() === line);
  if (has(ATTR_LINE) && has(DIFF_ATTR_LINE)) return null;
  const add = (comment: string, line: string): void => {
    if (!has(line)) text = `${text}${text && !text.endsWith('\n') ? '\n' : ''}# bass-agents memory: ${comment}\n${line}\n`;
  };
  add('merge entries field by field, never with conflict markers', ATTR_LINE);
  add('show entries one field per line in git diff and git log -p', DIFF_ATTR_LINE);
  return text;
}

/** Registers the merge driver and the diff driver's textconv in the repository's local git config (idempotent). */
export async function ensureDrivers(git: GitRepo, root: string, env: NodeJS.ProcessEnv): Promise<void> {
  // `git diff` and `git log -p` of an entry file show its fields, one per line (git appends the file).
  await git.ensureDrivers(MERGE_DRIVER, gitCommandFor(root, env, 'memory merge-driver %O %A %B %P'), gitCommandFor(root, env, 'memory textconv'));
}

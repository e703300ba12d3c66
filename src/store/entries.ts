/**
 * Entry files and project folders: the only code that writes under ai-memory/.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serializeEntry } from '../core/entry.js';
import type { MemoryEntry } from '../core/schema.js';
import { renderConfig, defaultConfig } from './config.js';
import { writeFileAtomic } from './fsutil.js';
import { noteWrite } from './journal.js';
import type { Workspace } from './workspace.js';

/** Writes one entry file atomically at its place; returns the absolute path. */
export function writeEntry(ws: Workspace, project: string, entry: MemoryEntry): string {
  const file = ws.entryPath(project, entry.section, entry.id);
  noteWrite(file);
  writeFileAtomic(file, serializeEntry(entry));
  return file;
}

/** Ignore rules committed inside ai-memory/: lock dirs and temp files never reach git. */
const MEMORY_GITIGNORE = '# bass-agents memory: lock folders and temp files are never committed\n*.lock/\n.*.tmp\n';

/**
 * Creates a project's folder and config.yaml (002 Req 7.11-7.12) and ai-memory/.gitignore.
 * Returns the files it created (to be committed); empty when the project already existed.
 */
export function initProject(ws: Workspace, project: string, now: string): string[] {
  const dir = ws.projectDir(project);
  const created: string[] = [];
  mkdirSync(dir, { recursive: true });
  const gi = join(ws.memoryDir, '.gitignore');
  if (!existsSync(gi)) {
    noteWrite(gi);
    writeFileSync(gi, MEMORY_GITIGNORE);
    created.push(gi);
  }
  const cfg = ws.configPath(project);
  if (!existsSync(cfg)) {
    noteWrite(cfg);
    writeFileAtomic(cfg, renderConfig(defaultConfig(project, now)));
    created.push(cfg);
  }
  return created;
}

/** The merge driver's name in git config and .gitattributes. */
export const MERGE_DRIVER = 'bass-agents-memory';
// In ai-memory/.gitattributes (a memory path, so committing it never touches the user's files).
const ATTR_LINE = `**/*.json merge=${MERGE_DRIVER}`;

/** Adds our line to the repository's .gitattributes (leaving the rest as it is); true when it changed. */
export function ensureGitAttributes(file: string): boolean {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (text.split('\n').some((l) => l.trim() === ATTR_LINE)) return false;
  noteWrite(file);
  writeFileSync(file, `${text}${text && !text.endsWith('\n') ? '\n' : ''}# bass-agents memory: merge entries field by field, never with conflict markers\n${ATTR_LINE}\n`);
  return true;
}

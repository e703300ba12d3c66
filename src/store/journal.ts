/**
 * The write journal: every file a locked write touches is noted in
 * `.bass-agents/state/write-journal.json` before it is touched, and the journal is removed once
 * the commit (and the user's index update) is done. A writer killed in between leaves the
 * journal behind, and the next writer, under the same lock, finishes or undoes its work (see
 * MemoryService.recoverJournal): a batch is either committed whole or not at all, and the
 * user's index never keeps a stale view of committed memory.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Workspace } from './workspace.js';

let active: { file: string; paths: Set<string> } | null = null;

export function journalFile(ws: Workspace): string {
  return join(ws.localDir, 'state', 'write-journal.json');
}

export function beginJournal(ws: Workspace): void {
  active = { file: journalFile(ws), paths: new Set() };
}

/** Notes a file about to be written or removed (absolute path). */
export function noteWrite(abs: string): void {
  if (!active || active.paths.has(abs)) return;
  active.paths.add(abs);
  mkdirSync(dirname(active.file), { recursive: true });
  writeFileSync(active.file, JSON.stringify([...active.paths]));
}

/** The work is committed: forget the journal. */
export function endJournal(): void {
  if (active) rmSync(active.file, { force: true });
  active = null;
}

/** Stops noting without removing the journal (the write failed: the next writer undoes it). */
export function abandonJournal(): void {
  active = null;
}

export function readJournal(ws: Workspace): string[] | null {
  try {
    const v = JSON.parse(readFileSync(journalFile(ws), 'utf8')) as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? null : [];
  }
}

export function clearJournal(ws: Workspace): void {
  rmSync(journalFile(ws), { force: true });
}

/**
 * Append-only local logs under `.bass-agents/logs/` (git-ignored): the operation log, the query
 * log, the audit log. One JSON object per line; appends of one short line are atomic enough for
 * concurrent writers (O_APPEND), and a torn last line is skipped when reading.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Workspace } from './workspace.js';

export type LogName = 'operations' | 'queries' | 'audit' | 'events';

export function logPath(ws: Workspace, name: LogName): string {
  // The audit log keeps the name 002 Req 13.8 and the safety issue give it (JSON lines inside).
  return join(ws.localDir, 'logs', name === 'audit' ? 'audit.log' : `${name}.jsonl`);
}

export function appendLog(ws: Workspace, name: LogName, record: object): void {
  const file = logPath(ws, name);
  try {
    mkdirSync(dirname(file), { recursive: true });
    if (!existsSync(join(ws.localDir, '.gitignore'))) {
      appendFileSync(join(ws.localDir, '.gitignore'), '# local state of bass-agents memory: never committed\n*\n');
    }
    appendFileSync(file, `${JSON.stringify(record)}\n`);
  } catch {
    /* logging must never fail a command */
  }
}

export function readLog<T = Record<string, unknown>>(ws: Workspace, name: LogName): T[] {
  const file = logPath(ws, name);
  if (!existsSync(file)) return [];
  const out: T[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      /* torn line */
    }
  }
  return out;
}

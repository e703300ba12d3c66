/**
 * Append-only local logs under `logs/` of the local state folder, one JSON object per line,
 * appended with O_APPEND and never through a link; a torn last line is skipped when reading.
 */
import { closeSync, constants, fstatSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { appendNoFollow, openNoFollow } from './state-dir.js';
import { tryOr } from './fsutil.js';
import type { Workspace } from './workspace.js';

type LogName = 'operations' | 'queries' | 'audit' | 'events';

/** A log's file (the audit log's name is the documented one), its folder checked and made when `make`. */
const logPath = (ws: Workspace, name: LogName, make = false): string => join(ws.local('logs', make), name === 'audit' ? 'audit.log' : `${name}.jsonl`);

/** Several records in one write (a batch of 5,000 updates logs 5,000 lines). */
export function appendLogs(ws: Workspace, name: LogName, records: object[]): void {
  if (!records.length) return;
  // A write logs wherever it runs; a query in a folder that holds no memory leaves nothing behind. Never fails a command.
  const line = (r: object): string => `${JSON.stringify(r)}\n`;
  tryOr(() => ws.ensureLocal({ force: name !== 'queries' }) && appendNoFollow(logPath(ws, name, true), records.map(line).join('')), undefined);
}

/** The complete lines appended to `file` since `from` (inode and bytes read), or all when it was replaced or cut; null without a file. */
export function readAppended(file: string, from?: { ino: number; size: number }): { lines: string[]; ino: number; size: number; restarted: boolean } | null {
  let fd: number;
  try {
    fd = openNoFollow(file, constants.O_RDONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const st = fstatSync(fd);
    const restarted = !from || from.ino !== st.ino || st.size < from.size;
    const start = restarted ? 0 : from.size;
    const buf = Buffer.alloc(st.size - start);
    const text = buf.subarray(0, readSync(fd, buf, 0, buf.length, start)).toString('utf8');
    const complete = text.slice(0, text.lastIndexOf('\n') + 1);
    return { lines: complete.split('\n').filter((l) => l.trim()), ino: st.ino, size: start + Buffer.byteLength(complete), restarted };
  } finally {
    closeSync(fd);
  }
}

/** Reads a log, parsing only the lines appended since this reader's last read. */
export class LogReader {
  private cache = new Map<LogName, { ino: number; size: number; records: unknown[] }>();

  read<T>(ws: Workspace, name: LogName): T[] {
    const c = this.cache.get(name);
    const r = readAppended(logPath(ws, name), c);
    if (!r) {
      this.cache.delete(name);
      return [];
    }
    const records = !c || r.restarted ? [] : c.records;
    for (const line of r.lines) {
      const rec = tryOr(() => JSON.parse(line) as unknown, undefined); // none: a torn line
      if (rec !== undefined) records.push(rec);
    }
    this.cache.set(name, { ino: r.ino, size: r.size, records });
    return records as T[];
  }
}

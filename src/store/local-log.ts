/**
 * Append-only local logs under `logs/` of the local state folder (never committed): the operation
 * log, the query log, the audit log. One JSON object per line; appends of one short line are
 * atomic enough for concurrent writers (O_APPEND), and a torn last line is skipped when reading.
 * Never through a link (state-dir.ts).
 */
import { closeSync, constants, fstatSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { appendNoFollow, openNoFollow } from './state-dir.js';
import type { Workspace } from './workspace.js';

export type LogName = 'operations' | 'queries' | 'audit' | 'events';

/** A log's file, its folder checked (and made when `make`). */
function logPath(ws: Workspace, name: LogName, make = false): string {
  // The audit log keeps the name the documented contract gives it (JSON lines inside).
  return join(ws.local('logs', make), name === 'audit' ? 'audit.log' : `${name}.jsonl`);
}

export function appendLog(ws: Workspace, name: LogName, record: object): void {
  appendLogs(ws, name, [record]);
}

/** Appends several records in one write (a batch of 5,000 updates logs 5,000 lines). */
export function appendLogs(ws: Workspace, name: LogName, records: object[]): void {
  if (!records.length) return;
  try {
    // Writes log what they did or refused wherever they run; a query in a folder that holds no
    // memory leaves nothing behind.
    if (!ws.ensureLocal({ force: name !== 'queries' })) return;
    appendNoFollow(logPath(ws, name, true), records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  } catch {
    /* logging must never fail a command */
  }
}

/**
 * The complete lines appended to `file` since `from` (its inode and the bytes read then), or all
 * of them when it was replaced or cut (`restarted`); null when there is no file. Never through a
 * link; a line still being written waits for the next read.
 */
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

/** Reads a log: only the lines appended since this reader's last read are parsed (a torn one is skipped). */
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
      try {
        records.push(JSON.parse(line));
      } catch {
        /* torn line */
      }
    }
    this.cache.set(name, { ino: r.ino, size: r.size, records });
    return records as T[];
  }
}

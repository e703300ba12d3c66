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

export function logPath(ws: Workspace, name: LogName): string {
  // The audit log keeps the name the documented contract gives it (JSON lines inside).
  return join(ws.localDir, 'logs', name === 'audit' ? 'audit.log' : `${name}.jsonl`);
}

/** The same, with its folder checked (and made when `make`). */
function checkedLogPath(ws: Workspace, name: LogName, make = false): string {
  ws.local('logs', make);
  return logPath(ws, name);
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
    appendNoFollow(checkedLogPath(ws, name, true), records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  } catch {
    /* logging must never fail a command */
  }
}

/**
 * Reads a log: only the bytes appended since this reader's last read are parsed
 * (a log that shrank or was replaced is read again from the start).
 */
export class LogReader {
  private cache = new Map<LogName, { ino: number; size: number; records: unknown[] }>();

  read<T>(ws: Workspace, name: LogName): T[] {
    let fd: number;
    try {
      fd = openNoFollow(checkedLogPath(ws, name), constants.O_RDONLY);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.cache.delete(name);
      return [];
    }
    try {
      const st = fstatSync(fd);
      let c = this.cache.get(name);
      if (!c || c.ino !== st.ino || st.size < c.size) c = { ino: st.ino, size: 0, records: [] };
      if (st.size > c.size) {
        const buf = Buffer.alloc(st.size - c.size);
        const n = readSync(fd, buf, 0, buf.length, c.size);
        const text = buf.subarray(0, n).toString('utf8');
        const complete = text.lastIndexOf('\n') + 1; // a line still being written waits for the next read
        for (const line of text.slice(0, complete).split('\n')) {
          if (!line.trim()) continue;
          try {
            c.records.push(JSON.parse(line));
          } catch {
            /* torn line */
          }
        }
        c.size += Buffer.byteLength(text.slice(0, complete));
      }
      this.cache.set(name, c);
      return c.records as T[];
    } finally {
      closeSync(fd);
    }
  }
}

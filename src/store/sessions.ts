/** Short-term memory: `sessions/<session>.json` of the local state folder, each entry with an expiry, dropped when read after it. */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../core/errors.js';
import { tryOr, writeFileAtomic } from './fsutil.js';
import { readNoFollow } from './state-dir.js';
import type { Workspace } from './workspace.js';

export interface ShortTermEntry {
  id: string;
  project: string;
  summary: string;
  content: string;
  subject: string;
  tags: string[];
  created_at: string;
  expires_at: string;
  importance: number;
  accesses: number;
  /** Marked important (`remember --important`, or an "Important:" note): kept when the session ends. */
  important?: boolean;
}

const SESSION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function checkSession(name: string): string {
  if (!SESSION_PATTERN.test(name) || name.includes('..'))
    throw new UsageError(`session ${JSON.stringify(name)} must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit`);
  return name;
}

export class SessionStore {
  constructor(private readonly ws: Workspace) {}

  private file(session: string, make = false): string {
    return join(this.ws.local('sessions', make), `${checkSession(session)}.json`);
  }

  exists(session: string): boolean {
    return existsSync(this.file(session));
  }

  read(session: string, now: number): ShortTermEntry[] {
    const file = this.file(session);
    const all = tryOr(() => JSON.parse(readNoFollow(file, 'utf8')) as ShortTermEntry[], []);
    const live = all.filter((e) => Date.parse(e.expires_at) > now);
    if (live.length !== all.length) this.write(session, live);
    return live;
  }

  write(session: string, entries: ShortTermEntry[]): void {
    this.ws.ensureLocal({ force: true });
    writeFileAtomic(this.file(session, true), `${JSON.stringify(entries, null, 2)}\n`, { fsync: false, mode: 0o600 });
  }

  remove(session: string): void {
    rmSync(this.file(session), { force: true });
  }
}

/**
 * The write journal of one transaction (docs/ARCHITECTURE.md "Journal and recovery"): JSON lines,
 * the header (`v`, `token`, `pid`, `root`, `head`), then `{"paths": [...]}` per batch of files,
 * `{"index_lock": …}`, `{"commit": sha}`. A line cut short by a kill is ignored: nothing it
 * announced had been touched yet.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeCrypto } from '../node-crypto.js';
import { tryOr, writeFileAtomic } from './fsutil.js';

const VERSION = 2;
const JOURNAL = 'journal';
const TOKEN = 'token';

/** `inodes`: those git's index lock file had while we held it (the empty lock, then the new index renamed onto it). */
type IndexLockNote = { inodes: number[] };

interface JournalState {
  root: string;
  paths: string[];
  commit: string | null;
  indexLock: IndexLockNote | null;
}

/** This repository's journal token (made once in `dir`, 0600); null when there is none and not `make`. */
function stateToken(dir: string, make: boolean): string | null {
  const file = join(dir, TOKEN);
  const old = tryOr(() => readFileSync(file, 'utf8').trim(), ''); // '': the first write here
  if (/^[0-9a-f]{32}$/.test(old)) return old;
  if (!make) return null;
  const t = nodeCrypto().randomBytes(16).toString('hex');
  writeFileAtomic(file, `${t}\n`, { mode: 0o600 });
  return t;
}

export class Journal {
  private closed = false;

  private constructor(
    private readonly file: string,
    private readonly fd: number,
  ) {}

  static begin(dir: string, header: { root: string; head: string | null }): Journal {
    mkdirSync(dir, { recursive: true });
    const token = stateToken(dir, true);
    const file = join(dir, JOURNAL);
    const j = new Journal(file, openSync(file, 'w', 0o600));
    // Durable with the first paths (one fsync covers both).
    j.append({ v: VERSION, token, pid: process.pid, ...header }, false);
    return j;
  }

  /**
   * `durable`: fsynced before the caller touches what it names. Notes of what git already did need
   * not be: a killed process leaves them in the page cache, and after a power loss recovery reads HEAD.
   */
  private append(record: Record<string, unknown>, durable = true): void {
    if (this.closed) throw new Error('journal is closed');
    writeFileSync(this.fd, `${JSON.stringify(record)}\n`);
    if (durable) fsyncSync(this.fd);
  }

  addPaths(paths: string[]): void {
    if (paths.length) this.append({ paths });
  }

  /** What git already did (not fsynced: see append). */
  note(record: { index_lock: IndexLockNote } | { commit: string }): void {
    this.append(record, false);
  }

  /** The work is done (committed, or undone). */
  end(): void {
    this.close();
    rmSync(this.file, { force: true });
  }

  /** Stops writing and leaves the journal for recovery. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }
}

/** The journal a writer left in `dir`, or null; one without this repository's token is `untrusted`, never acted on. */
export function readJournal(dir: string): { state: JournalState } | { untrusted: string } | null {
  const file = join(dir, JOURNAL);
  if (!existsSync(file)) return null;
  let lines: string[];
  try {
    lines = readFileSync(file, 'utf8').split('\n');
  } catch (err) {
    return { untrusted: `cannot read it (${(err as Error).message})` };
  }
  const state: JournalState = { root: '', paths: [], commit: null, indexLock: null };
  const header = tryOr(() => JSON.parse(lines[0] ?? '') as Record<string, unknown>, undefined);
  if (header === undefined) return { state }; // a kill before the header was durable: nothing was touched yet
  const token = stateToken(dir, false);
  if (header.v !== VERSION || !token || header.token !== token) return { untrusted: 'it does not carry this repository\u2019s token' };
  if (typeof header.root === 'string') state.root = header.root;
  for (const line of lines.slice(1)) {
    if (!line) continue;
    const rec = tryOr(() => JSON.parse(line) as Record<string, unknown>, undefined);
    if (rec === undefined) break; // cut short by a kill: what it named was not touched
    if (Array.isArray(rec.paths)) for (const p of rec.paths) if (typeof p === 'string') state.paths.push(p);
    if (typeof rec.commit === 'string') state.commit = rec.commit;
    const il = rec.index_lock as IndexLockNote | undefined;
    if (il && Array.isArray(il.inodes)) state.indexLock = { inodes: il.inodes.filter((n) => typeof n === 'number') };
  }
  return { state };
}

export function clearJournal(dir: string): void {
  rmSync(join(dir, JOURNAL), { force: true });
}

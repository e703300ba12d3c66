/** Pure construction and serialization of entries, and the commit messages that record them. */
import { ENTRY_KEY_ORDER } from './constants.js';
import type { Evidence, MemoryEntry } from './schema.js';
import type { NormalizedInput } from './validate.js';

/** Builds a new stored entry from a validated create input. `now` is an ISO timestamp. */
export function buildEntry(input: NormalizedInput, id: string, now: string, createdBy: string): MemoryEntry {
  const { review_interval, ...rest } = input;
  return orderEntry({
    ...rest,
    id,
    superseded_by: null,
    ...(review_interval != null ? { review_interval } : {}),
    created_by: createdBy,
    created_at: now,
    updated_at: now,
  });
}

/** The entry with its keys in the fixed schema order (unknown keys dropped, absent optionals omitted). */
export function orderEntry(entry: MemoryEntry): MemoryEntry {
  const out: Record<string, unknown> = {};
  for (const k of ENTRY_KEY_ORDER) {
    const v = entry[k];
    if (v === undefined) continue;
    out[k] = k === 'evidence' ? (v as Evidence[]).map(({ type, uri, note }) => ({ type, uri, note })) : v;
  }
  return out as MemoryEntry;
}

/** The exact bytes of an entry file: fixed key order, 2-space indent, final newline. */
export const serializeEntry = (entry: MemoryEntry): string => `${JSON.stringify(orderEntry(entry), null, 2)}\n`;

/** An entry as people read it (`show`, and the textconv `git diff` uses): one field per line, so a change reads as the fields that changed. */
export function entryLines(e: Record<string, unknown>, label = (k: string): string => k.padEnd(16)): string[] {
  const lines: string[] = [];
  for (const [k, v] of Object.entries(e)) {
    if (Array.isArray(v) && v.some((x) => x && typeof x === 'object')) {
      lines.push(label(k).trimEnd());
      for (const x of v as unknown[]) {
        const ev = x && typeof x === 'object' && 'uri' in x ? (x as Record<string, unknown>) : undefined;
        lines.push(`  - ${ev ? `${String(ev.type).padEnd(11)}${String(ev.uri)}${ev.note ? `  (${String(ev.note)})` : ''}` : JSON.stringify(x)}`);
      }
    } else if (Array.isArray(v)) lines.push(`${label(k)}${v.length ? v.join(', ') : '(none)'}`);
    else if (typeof v === 'string') lines.push(`${label(k)}${v.split('\n').join(`\n${' '.repeat(label(k).length)}`)}`);
    else lines.push(`${label(k)}${v == null ? '(none)' : typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
  }
  return lines;
}

export type CommitOp =
  | 'create'
  | 'supersede'
  | 'deprecate'
  | 'update'
  | 'import'
  | 'init'
  | 'remove-project'
  | 'forget'
  | 'restore'
  | 'reinforce'
  | 'promote'
  | 'link'
  | 'consolidate'
  | 'session';

export interface CommitChange {
  op: CommitOp;
  id: string;
  summary?: string;
  /** Who made this change, when one commit carries several writers' changes (the daemon's group commit). */
  agent?: string;
}

const SUBJECT_MAX = 72;

/** `s` cut to `max` characters, an ellipsis marking the cut. */
export const cut = (s: string, max: number): string => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);

/** `s` on one line, cut to `max` characters. */
export const clip = (s: string, max: number): string => cut(s.replace(/\s+/g, ' ').trim(), max);

/**
 * A commit message for one write or a batch: a subject (`memory(<project>): create <id>: <summary…>`) and trailers
 * `Memory-Id`, `Memory-Op` (a pair per change, in order) and `Memory-Agent`, so history, audit and statistics read back from git.
 */
export function commitMessage(project: string, changes: CommitChange[], agent: string): string {
  let subject: string;
  const [only] = changes;
  if (changes.length === 1 && only) {
    const head = `memory(${project}): ${only.op} ${only.id}`;
    subject = only.summary ? `${head}: ${clip(only.summary, Math.max(20, SUBJECT_MAX - head.length - 2))}` : head;
  } else {
    const counts = new Map<string, number>();
    for (const c of changes) counts.set(c.op, (counts.get(c.op) ?? 0) + 1);
    const parts = [...counts].map(([op, n]) => `${n} ${op}`).join(', ');
    // Entries touched, not updates: a supersede by a new entry is one update and two entries.
    const entries = new Set(changes.map((c) => c.id)).size;
    subject = `memory(${project}): ${entries} ${entries === 1 ? 'entry' : 'entries'} (${parts})`;
  }
  const trailers = changes.flatMap((c) => [`Memory-Id: ${c.id}`, `Memory-Op: ${c.op}`]);
  const agents = [...new Set(changes.map((c) => c.agent ?? agent))];
  trailers.push(`Memory-Agent: ${(agents.length ? agents : [agent]).join(', ').replace(/[\r\n]+/g, ' ')}`);
  return `${subject}\n\n${trailers.join('\n')}\n`;
}

/** Reads the Memory-Id / Memory-Op pairs and the agent back out of a commit message body. */
export function parseCommitTrailers(body: string): { changes: { id: string; op: string }[]; agent?: string } {
  const changes: { id: string; op: string }[] = [];
  let agent: string | undefined;
  let pendingId: string | undefined;
  for (const line of body.split('\n')) {
    const [, key, value = ''] = /^(Memory-Id|Memory-Op|Memory-Agent):\s*(.*)$/.exec(line.trim()) ?? [];
    if (key === 'Memory-Id') pendingId = value;
    else if (key === 'Memory-Op' && pendingId !== undefined) {
      changes.push({ id: pendingId, op: value });
      pendingId = undefined;
    } else if (key === 'Memory-Agent') agent = value;
  }
  return { changes, agent };
}

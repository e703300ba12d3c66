/** What every batch write shares: the store as a transaction's batches see it, the supersede rules, the secret pre-scan, the size hint. */
import type { CommitOp } from '../../core/entry.js';
import { ValidationError, type Problem } from '../../core/errors.js';
import type { EntryMeta } from '../../core/meta.js';
import type { MemoryEntry } from '../../core/schema.js';
import type { CatalogSnapshot, StoredEntry } from '../../store/catalog.js';
import { modules, type Engine } from '../engine.js';
import type { Caller } from '../caller.js';
import { auditSecrets, withWrite, type WriteTx } from '../transaction.js';

/** The store as one transaction's batches see it: entries by id, live entries by duplicate key, and what earlier updates wrote. */
export class BatchState {
  /** This project's entry of an id first, else another project's. */
  private byIdMap: Map<string, StoredEntry> | undefined;
  private retiredMap: Map<string, StoredEntry[]> | undefined;
  readonly dupKeys: ReturnType<typeof duplicateIndex>;
  private readonly working = new Map<string, MemoryEntry>();
  /** A fresh random part per id (not ULID's monotonic counter): a batch's ids differ early, so short prefixes stay unique. */
  readonly nextId = idMaker();

  constructor(
    readonly snap: CatalogSnapshot,
    private readonly project: string,
    updates: number,
  ) {
    this.dupKeys = duplicateIndex(snap, project, updates);
  }

  /** Made only when an update names an id (a plain create names none). */
  private get byId(): Map<string, StoredEntry> {
    if (!this.byIdMap) {
      const m = new Map<string, StoredEntry>();
      // From the keys (project/id): no metadata row is parsed.
      for (const se of this.snap.entries) {
        const id = se.key.slice(se.project.length + 1);
        const had = m.get(id);
        if (!had || (se.project === this.project && had.project !== this.project)) m.set(id, se);
      }
      this.byIdMap = m;
    }
    return this.byIdMap;
  }

  /** The project's superseded and deprecated entries of a subject (catalog columns: no row is parsed). */
  retired(subject: string): StoredEntry[] {
    if (!this.retiredMap) {
      const map = (this.retiredMap = new Map<string, StoredEntry[]>());
      ofProject(this.snap, this.project, (meta, entry) => {
        if (meta.status !== 'superseded' && meta.status !== 'deprecated') return;
        const list = map.get(meta.subject);
        if (list) list.push(entry());
        else map.set(meta.subject, [entry()]);
      });
    }
    return this.retiredMap.get(subject) ?? [];
  }

  getEntry = (id: string): MemoryEntry | undefined => {
    const w = this.working.get(id);
    if (w) return w;
    const se = this.snap.byKey ? this.snap.byKey.get(`${this.project}/${id}`) : this.byId.get(id);
    return se && se.project === this.project ? se.entry : undefined;
  };

  /** The project holding `id` when this one does not (an update may name only its own project's entries). */
  otherProject(id: string | undefined): string | undefined {
    if (!id || this.working.has(id) || this.snap.byKey?.has(`${this.project}/${id}`)) return undefined;
    const se = this.byId.get(id);
    return se && se.project !== this.project ? se.project : undefined;
  }

  write(tx: WriteTx, e: MemoryEntry, fresh = false): void {
    this.working.set(e.id, e);
    tx.put(e, { fresh });
  }
}

/** ULIDs from a pool of random bytes (ulid asks the system for one byte per character and detects its source per id). */
export function idMaker(): (time: number) => string {
  const pool = new Uint8Array(4096);
  let at = pool.length;
  const prng = (): number => {
    if (at === pool.length) {
      globalThis.crypto.getRandomValues(pool);
      at = 0;
    }
    return pool[at++]! / 256;
  };
  return (time) => modules.ulid().ulid(time, prng);
}

/** Why `target` cannot be superseded by `by`: the replacement is not live, or its own chain leads back to `target`. */
export function supersedeProblem(target: string, by: string, getEntry: (id: string) => MemoryEntry | undefined): string | null {
  const e = getEntry(by);
  if (!e) return null; // validation reports a missing replacement
  if (e.status === 'superseded' || e.status === 'deprecated' || e.status === 'archived') {
    return `entry ${by} is ${e.status}: an entry can only be superseded by a live one`;
  }
  const seen = new Set<string>();
  for (let at: MemoryEntry | undefined = e; at?.superseded_by; at = getEntry(at.superseded_by)) {
    if (at.superseded_by === target || seen.has(at.superseded_by)) return `superseding ${target} by ${by} would make a cycle`;
    seen.add(at.superseded_by);
  }
  return null;
}

/**
 * The secret pre-scan, before the lock: one problem list per group; throws when the writer's name
 * holds one (it goes into created_by, the commit and the logs). Hits go to the audit log.
 */
export async function scanGroups(
  engine: Engine,
  caller: Caller,
  groups: { path: string; text: string }[][],
  who: { project?: string; agent: string; operation: string },
): Promise<Problem[][]> {
  const time = caller.now().toISOString();
  // One scan for all groups (paths are unique across them), split back per group.
  const all = await modules.secretScan().scanFields([...groups.flat(), { path: 'agent', text: who.agent }]);
  const agent = all.find((f) => f.path === 'agent');
  const { findingMessage } = modules.secretRules();
  if (agent) {
    auditSecrets(engine, time, who, [agent]);
    throw new ValidationError(
      [{ path: 'agent', message: `(the writer's name: --agent, BASS_AGENTS_AGENT or an AgentResult's agent) ${findingMessage(agent)}` }],
      'write',
    );
  }
  if (!all.length) return groups.map(() => []);
  auditSecrets(engine, time, who, all);
  return groups.map((g) => {
    const paths = new Set(g.map((f) => f.path));
    return all.filter((f) => paths.has(f.path)).map((f) => ({ path: f.path, message: findingMessage(f) }));
  });
}

/** Repaired entries over the files they were read from: all checked first, then a commit per project (`noCommit`: files only, mid-merge). */
export async function rewriteEntries(
  engine: Engine,
  caller: Caller,
  items: { project: string; abs: string; entry: MemoryEntry; op: CommitOp; summary: string }[],
  noCommit: (project: string) => boolean = () => false,
): Promise<string[]> {
  const byProject = new Map<string, typeof items>();
  for (const it of items) {
    const checked = modules.validation().validateStoredEntry(it.entry);
    if (!checked.ok) throw new ValidationError(checked.errors, `entry ${it.entry.id}`);
    byProject.set(it.project, [...(byProject.get(it.project) ?? []), it]);
  }
  const commits: string[] = [];
  for (const [project, list] of byProject) {
    const { commit } = await withWrite(engine, caller, { project, noCommit: noCommit(project) }, (tx) => {
      for (const { abs, entry, op, summary } of list) {
        tx.put(entry, { from: abs });
        tx.change({ op, id: entry.id, summary });
      }
    });
    if (commit) commits.push(commit);
  }
  return commits;
}

/** Past 100 entries a project should be consolidated. */
export function warnIfLarge(caller: Caller, project: string, snap: CatalogSnapshot, added: number): void {
  if (added === 0) return;
  let count = added;
  ofProject(snap, project, () => count++);
  if (count > 100 && count - added <= 100) {
    caller.warn(`project ${project} now holds ${count} entries (over 100): consider consolidating with \`bass-agents memory compact ${project}\``);
  }
}

/** A project's entries, each as its metadata (valid until the next) and its entry, to a callback (a generator's yields cost a cold process more than the work): from the catalog's columns when the snapshot has them, so a one-shot write makes only the entries it asks for. */
function ofProject(snap: CatalogSnapshot, project: string, each: (meta: EntryMeta, entry: () => StoredEntry) => void): void {
  const c = snap.cached;
  if (!c) {
    for (const se of snap.entries) if (se.project === project) each(se.meta, () => se);
    return;
  }
  for (let j = 0; j < c.count; j++) if (c.projectOf(j) === project) each(c.peek(j), () => c.at(j));
}

/** A project's not superseded entries' ids by duplicate key. */
export function liveByDup(entries: readonly StoredEntry[], project: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const se of entries) if (se.project === project && se.meta.status !== 'superseded') m.set(se.meta.dup, se.meta.id);
  return m;
}

/**
 * A project's live entries by duplicate key for one apply, with the batch's own changes on top:
 * the daemon's map; else a few updates each scan the catalog's column, a larger batch builds the map once.
 */
function duplicateIndex(
  snap: CatalogSnapshot,
  project: string,
  updates: number,
): { get(k: string): string | undefined; set(k: string, id: string): void; delete(k: string): void } {
  const own = new Map<string, string | null>();
  let all: Map<string, string> | undefined;
  const lookup = (k: string): string | undefined => {
    if (snap.findDuplicate) return snap.findDuplicate(project, k);
    if (updates > 4) return (all ??= liveByDup(snap.entries, project)).get(k);
    let found: string | undefined;
    ofProject(snap, project, (meta) => (found = meta.dup === k && meta.status !== 'superseded' ? meta.id : found));
    own.set(k, found ?? null);
    return found;
  };
  return {
    get: (k) => (own.has(k) ? (own.get(k) ?? undefined) : lookup(k)),
    set: (k, id) => void own.set(k, id),
    delete: (k) => void own.set(k, null),
  };
}

/** A full refresh's entries by number: filters and the no-text order read the cache's columns, and entry objects are made for the page only. */
import { KINDS, SECTIONS, STATUSES, evidenceQuality } from '../core/constants.js';
import type { EntryLike, EntryMeta } from '../core/meta.js';
import type { MemoryEntry } from '../core/schema.js';
import { LOW_CONFIDENCE, demotion, entryFlags, firstByPriorKeys, priorKeys, type Flag, type FilterParts, type PriorKeys } from '../core/query.js';
import { canonicalMs } from '../core/time.js';
import type { CatalogFile } from './catalog-cache.js';
import { ColumnMeta, item } from './catalog-columns.js';
import { firstNotBelow, lowerBoundText, positionOfText } from './texts.js';
import { MEMORY_DIR } from './root.js';
import { StoredEntry, type RecentEntries } from './stored-entry.js';

/** The cached files of one section folder: positions [start, end) of the sorted list. */
interface FolderRun {
  start: number;
  end: number;
  project: string;
  section: string;
}

export class CachedEntries {
  /** How many entries (files without problems). */
  readonly count: number;
  /** The cache position of each entry when some files have problems (else entry j is file j). */
  private readonly positions: Int32Array | undefined;
  private readonly made: (StoredEntry | undefined)[];
  private list: StoredEntry[] | undefined;
  private runs: FolderRun[] | undefined;
  private lastRun: FolderRun | undefined;
  private cursor: ColumnMeta | undefined;

  constructor(
    private readonly file: CatalogFile,
    private readonly root: string,
    private readonly recent?: RecentEntries,
    /** Entries read whole while the cache was checked, by path: each handed to its entry once, then dropped. */
    private readonly read?: Map<string, MemoryEntry>,
  ) {
    const n = file.paths.length;
    const bad = Object.keys(file.bad)
      .map(Number)
      .filter((i) => i >= 0 && i < n);
    if (bad.length) {
      const isBad = new Uint8Array(n);
      for (const i of bad) isBad[i] = 1;
      this.positions = new Int32Array(n - bad.length);
      let j = 0;
      for (let i = 0; i < n; i++) if (!isBad[i]) this.positions[j++] = i;
    }
    this.count = n - bad.length;
    this.made = new Array<StoredEntry | undefined>(this.count);
  }

  private positionOf(j: number): number {
    return this.positions ? item(this.positions, j, 'entry') : j;
  }

  /** The project of entry `j` (one string per project, shared). */
  projectOf(j: number): string {
    return this.runOf(this.positionOf(j)).project;
  }

  private runOf(p: number): FolderRun {
    const last = this.lastRun;
    if (last && p >= last.start && p < last.end) return last;
    for (const r of this.folderRuns()) if (p >= r.start && p < r.end) return (this.lastRun = r);
    throw new Error(`catalog cache: no folder for ${this.file.paths.get(p)}`);
  }

  /** The runs of the sorted paths by folder, each end found by a binary search ('0' follows '/'). */
  private folderRuns(): FolderRun[] {
    if (this.runs) return this.runs;
    const paths = this.file.paths;
    const runs: FolderRun[] = [];
    const from = MEMORY_DIR.length + 1;
    let project = '';
    for (let start = 0; start < paths.length;) {
      const f = paths.get(start);
      const mid = f.indexOf('/', from);
      const name = f.slice(from, mid);
      if (name !== project) project = name;
      const section = f.slice(mid + 1, f.indexOf('/', mid + 1));
      const end = Math.max(start + 1, lowerBoundText(paths, `${MEMORY_DIR}/${project}/${section}0`));
      runs.push({ start, end, project, section });
      start = end;
    }
    return (this.runs = runs);
  }

  /** The entries `accept` takes, told from the columns (tags and `created_at` dates: by `accept`). */
  passing(f: FilterParts, accept: (e: EntryLike, project: string) => boolean): number[] {
    const out: number[] = [];
    if (f.tags || ((f.since || f.until) && f.dateField !== 'updated_at')) {
      for (let j = 0; j < this.count; j++) if (accept(this.peek(j), this.projectOf(j))) out.push(j);
      return out;
    }
    const c = this.file.cols;
    const kindOk = f.kinds && new Uint8Array(KINDS.map((k) => Number(f.kinds!.includes(k))));
    const statusOk = f.status === 'any' ? undefined : new Uint8Array(STATUSES.map((st) => Number((f.status as string[]).includes(st))));
    const scopeOk = f.scopes && new Uint8Array(c.scopes.map((sc) => Number(f.scopes!.has(sc))));
    const subject = f.subject === undefined ? -2 : c.subjects.indexOf(f.subject); // -1: no entry with columns has it
    const { minConfidence, since, until, includeExpired, inWindow } = f;
    // updated_at against the bounds: by the numbers where both have them (see CachedColumns.updMs), else by the texts.
    const sinceMs = since ? canonicalMs(since) : NaN;
    const untilMs = until ? canonicalMs(until) : NaN;
    const { updMs, vf, vt, dates } = c;
    const upd = this.file.upd;
    // `!` on the columns: p is a position of the cache, and codes index their tables (see item).
    const beforeSince = (p: number): boolean => (sinceMs === sinceMs && updMs[p] === updMs[p] ? updMs[p]! < sinceMs : upd.get(p) < since!);
    const afterUntil = (p: number): boolean => (untilMs === untilMs && updMs[p] === updMs[p] ? updMs[p]! > untilMs : upd.get(p) > until!);
    const date = (d: number): string | null => (d < 0 ? null : dates[d]!);
    let end = -1;
    let inRun = false;
    for (let j = 0; j < this.count; j++) {
      const p = this.positionOf(j);
      if (p >= end) {
        const run = this.runOf(p);
        end = run.end;
        inRun = (!f.projects || f.projects.includes(run.project)) && (!f.sections || (f.sections as string[]).includes(run.section));
      }
      if (!inRun) continue;
      if (kindOk && !kindOk[c.kind[p]!]) continue;
      if (scopeOk && !scopeOk[c.scope[p]!]) continue;
      if (subject !== -2 && c.subject[p] !== subject) continue;
      if (statusOk && !statusOk[c.status[p]!]) continue;
      if (c.conf[p]! < minConfidence) continue;
      if (since && beforeSince(p)) continue;
      if (until && afterUntil(p)) continue;
      const [from, to] = [vf[p]!, vt[p]!];
      if (!includeExpired && (to >= 0 || from >= 0) && (date(to) || date(from)) && !inWindow(date(from), date(to))) continue;
      out.push(j);
    }
    return out;
  }

  /** The first `n` of entries `js` in the no-text order, with their flags; `at` is a place in `js`. */
  firstInOrder(js: readonly number[], n: number, now: number, staleAt?: (j: number) => boolean): { at: number; flags: Flag[] }[] {
    const keys = this.priorKeysOf(js, now, staleAt);
    const id = (k: number): string => this.idOf(item(js, k, 'entry'));
    return firstByPriorKeys(keys, n, id, (k) => this.file.upd.get(this.positionOf(item(js, k, 'entry'))));
  }

  /** The keys of the no-text order of entries `js`, from the columns (evidence quality once per evidence shape). */
  priorKeysOf(js: readonly number[], now: number, staleAt?: (j: number) => boolean): PriorKeys {
    const keys = priorKeys(js.length);
    const { conf, vf, vt, ev, evs, updMs, dates } = this.file.cols;
    const positions = this.positions;
    // Without low confidence or validity bounds the only flag is stale evidence: those lists, taken once.
    const plain = { confidence: 1, valid_from: null, valid_to: null } as unknown as EntryLike;
    const none = entryFlags(plain, now, false);
    const onlyStale = entryFlags(plain, now, true);
    const probe = { confidence: 0, valid_from: null as string | null, valid_to: null as string | null };
    const qualityOf = new Map<string, number>();
    js.forEach((j, i) => {
      const p = positions ? positions[j]! : j;
      const stale = staleAt ? staleAt(j) : false;
      const cf = conf[p]!;
      const from = vf[p]! < 0 ? null : dates[vf[p]!]!;
      const to = vt[p]! < 0 ? null : dates[vt[p]!]!;
      if (cf >= LOW_CONFIDENCE && !to && !from) {
        keys.flags[i] = stale ? onlyStale : none;
        keys.d[i] = stale ? demotion(onlyStale) : 1;
      } else {
        probe.confidence = cf;
        probe.valid_from = from;
        probe.valid_to = to;
        keys.d[i] = demotion((keys.flags[i] = entryFlags(probe as unknown as EntryLike, now, stale)));
      }
      keys.conf[i] = cf;
      const shape = evs[ev[p]!]!;
      let q = qualityOf.get(shape);
      if (q === undefined) qualityOf.set(shape, (q = evidenceQuality(this.peek(j))));
      keys.q[i] = q;
      keys.updMs[i] = updMs[p]!;
    });
    return keys;
  }

  /** Each validity date's flags as of `now` (expired, expiring soon, not yet valid): while they hold, so do the no-text filters and order. */
  validityAt(now: number): string {
    return this.file.cols.dates.map((d) => entryFlags({ confidence: 1, valid_from: d, valid_to: d } as unknown as EntryLike, now).join()).join(';');
  }

  idOf(j: number): string {
    const f = this.file.paths.get(this.positionOf(j));
    return f.slice(f.lastIndexOf('/') + 1, -'.json'.length);
  }

  keyOf(j: number): string {
    return `${this.projectOf(j)}/${this.idOf(j)}`;
  }

  /** The metadata of entry `j`, to read and let go: one object moved along, valid until the next call. */
  peek(j: number): EntryMeta {
    const p = this.positionOf(j);
    return (this.cursor ??= new ColumnMeta(this.file, p)).moveTo(p);
  }

  /** Entry `j` (the same object every time). */
  at(j: number): StoredEntry {
    if (this.made[j]) return this.made[j];
    const p = this.positionOf(j);
    const f = this.file;
    const rel = f.paths.get(p);
    const full = this.read?.get(rel);
    this.read?.delete(rel);
    const stamp = (): string => `${f.st[3 * p]}:${f.st[3 * p + 1]}:${f.st[3 * p + 2]}`; // as stampOf makes it
    return (this.made[j] = new StoredEntry(this.root, this.projectOf(j), rel, stamp, new ColumnMeta(f, p, rel), full, this.recent));
  }

  all(): StoredEntry[] {
    return (this.list ??= Array.from({ length: this.count }, (_, j) => this.at(j)));
  }

  /** The number of the entry `project/id`, in whichever section it is. */
  byId(project: string, id: string): number | undefined {
    for (const section of SECTIONS) {
      const j = this.numberOf(`${MEMORY_DIR}/${project}/${section}/${id}.json`);
      if (j !== undefined) return j;
    }
    return undefined;
  }

  /** The number of the entry of the file at `rel` (relative to the root), if it is one. */
  numberOf(rel: string): number | undefined {
    const p = positionOfText(this.file.paths, rel);
    if (p === undefined) return undefined;
    const positions = this.positions;
    if (!positions) return p;
    const j = firstNotBelow(positions.length, (i) => positions[i]! < p);
    return positions[j] === p ? j : undefined;
  }
}

/**
 * MemoryService: the one API every front end (CLI, MCP, daemon, dashboard, TypeScript users)
 * calls. It is the only write path: validate → lock → atomic write → one git commit → operation
 * log. Reads go catalog (stat-refreshed cache of the files) → filters → index → ranking.
 */
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { EvidenceCache, type CheckResult } from '../store/evidence-cache.js';
import type { ConsolidationPlan, Strategy } from '../core/consolidate.js';
import type { EvidenceStatus } from '../core/evidence-check.js';
import type { FreshnessItem } from '../core/freshness.js';
import { SessionStore, checkSession, type ShortTermEntry } from '../store/sessions.js';
import { DEFAULT_CONTEXT_BUDGET, renderContextOf } from '../core/context.js';
import { EntryAggregate, computeStatistics, statisticsFrom, type DateRange, type OperationRecord, type QueryRecord, type Statistics } from '../core/stats.js';
import { writeFileAtomic } from '../store/fsutil.js';
import { userInfo } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { buildEntry, commitMessage, type CommitChange, type CommitOp } from '../core/entry.js';
import { BusyError, ConflictError, GitError, NotFoundError, UsageError, ValidationError, type Problem } from '../core/errors.js';
import {
  EXPIRY_WARNING_DAYS,
  MAX_RESULTS,
  entryFlags,
  compileFilters,
  matchesFilters,
  rankEntries,
  textFloor,
  textWeight,
  summaryOnly,
  type Candidate,
  type QueryFilters,
  type Ranked,
} from '../core/query.js';
import { SECTIONS, evidenceQuality } from '../core/constants.js';
import { duplicateHash } from '../core/meta.js';
import type { AgentTask, MemoryEntry } from '../core/schema.js';
import type { ValidationContext } from '../core/validate.js';
import { lazy } from '../lazy.js';
import { SearchIndex, type IndexedDoc } from '../index/search-index.js';
import { Catalog, readEntryFile, type BadFile, type CatalogSnapshot, type StoredEntry } from '../store/catalog.js';
import { MERGE_DRIVER, ensureGitAttributes } from '../store/entries.js';
import { abandonJournal, beginJournal, clearJournal, endJournal, noteWrite, readJournal } from '../store/journal.js';
import { fileURLToPath } from 'node:url';
import type { EntryMeta } from '../core/meta.js';
import { clockFromEnv, type Clock } from '../store/clock.js';
import { readConfig } from '../store/config.js';
import { initProject, writeEntry } from '../store/entries.js';
import { GitRepo } from '../store/git.js';
import { LogReader, appendLog } from '../store/local-log.js';
import { UsageStore } from '../store/usage.js';
import {
  FORGET_DEFAULTS,
  initialImportance,
  intervalMs,
  isPromotionCandidate,
  lifecycleOf,
  memoryTypeOf,
  reinforceLifecycle,
  resolveDecay,
  type BoostType,
  type Curve,
  type DecayConfig,
  type MemoryType,
} from '../core/lifecycle.js';
import { ensureLocalDir, withLock } from '../store/lock.js';
import { GLOBAL_PROJECT, Workspace, checkId, findRoot } from '../store/workspace.js';

export interface ServiceOptions {
  /** Folder to start root discovery from (default: process.cwd()). */
  cwd?: string;
  /** Explicit workspace root (`--root`). */
  root?: string;
  /** Writer name for created_by (`--agent`). */
  agent?: string;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  /**
   * A process that answers many queries (daemon, MCP server): keep the whole text index in
   * memory. One-shot CLI processes leave it false and load only what one query needs.
   */
  longLived?: boolean;
  /** Called with the files of each write (before its commit): the CLI notifies a running daemon. */
  onWrite?: (files: string[]) => Promise<void>;
  /**
   * A file watcher keeps this service's catalog current (the daemon): writes check duplicates and
   * targets against it instead of a stat of every file.
   */
  watched?: boolean;
}

// Modules of single commands load on first use: the service is imported by every CLI call.
const evidenceCheck = lazy<typeof import('../core/evidence-check.js')>('./core/evidence-check.js');
const freshness = lazy<typeof import('../core/freshness.js')>('./core/freshness.js');
const merge = lazy<typeof import('../core/merge.js')>('./core/merge.js');
const consolidate = lazy<typeof import('../core/consolidate.js')>('./core/consolidate.js');
const extraction = lazy<typeof import('../core/extract.js')>('./core/extract.js');
const similarity = lazy<typeof import('../core/similarity.js')>('./core/similarity.js');
const secretRules = lazy<typeof import('../core/secrets.js')>('./core/secrets.js');
const validation = lazy<typeof import('../core/validate.js')>('./core/validate.js');
const schemas = lazy<typeof import('../core/schema.js')>('./core/schema.js');
const ulid = lazy<typeof import('ulid')>('ulid');
const secretScan = lazy<typeof import('./secret-scan.js')>('./service/secret-scan.js');

/** A one-shot query uses the partial snapshot while at most this many files changed since it was saved... */
const PARTIAL_DRIFT_MIN = 64;
/** ...or this share of all entries, whichever is larger; past that it refreshes and saves the snapshot. */
const PARTIAL_DRIFT_SHARE = 0.02;

export interface AppliedUpdate {
  index: number;
  operation: 'create' | 'supersede' | 'deprecate';
  id: string;
  target_id?: string;
  superseded_by?: string;
}

export interface ApplyResult {
  applied: AppliedUpdate[];
  skipped: { index: number; errors: Problem[] }[];
  commit: string | null;
  project: string;
}

export interface QueryOptions {
  limit?: number;
  includeRelated?: boolean;
  /** Count the results as retrievals (local usage; default true). `list` and resource listings do not. */
  record?: boolean;
  /** Re-read changed files before answering (default true). */
  refresh?: boolean;
}

export interface QueryStats {
  execution_ms: number;
  entries_scanned: number;
  entries_matched_filters: number;
  entries_returned: number;
  index: { loaded_snapshot: boolean; partial: boolean; added: number; replaced: number; removed: number } | null;
}

export interface QueryHit extends Ranked<MemoryEntry> {
  related_to?: string;
}

/** A query hit as CLI.md's JSON shape: the entry (or its summary fields) plus `meta`. */
export function hitJson(h: QueryHit, summary: boolean): Record<string, unknown> {
  const meta: Record<string, unknown> = { score: h.score, flags: h.flags, confidence_label: h.confidence_label, project: h.project };
  if (h.related_to) meta.related_to = h.related_to;
  return { ...(summary ? summaryOnly(h.entry) : h.entry), meta };
}

export interface QueryResult {
  results: QueryHit[];
  stats: QueryStats;
}

export interface ImportResult {
  applied: { index: number; id: string; action: 'created' | 'overwritten' | 'merged' }[];
  skipped: { index: number; id: string; errors: Problem[] }[];
  commit: string | null;
  project: string;
}

export interface DecayReport {
  project: string;
  curve: Curve;
  forget_threshold: number;
  forget_action: 'archive' | 'delete';
  analyzed: number;
  changed: number;
  forgotten: number;
  dry_run: boolean;
  previous_run_at: string | null;
  duration_ms: number;
  /** Entries whose value moved since the previous run, and those to forget. */
  entries: { id: string; before: number; after: number; factor: number; days_since_access: number; retrievals: number; memory_type: MemoryType; forget: boolean }[];
  promotion_candidates: string[];
  /** Set when `onBatch` stopped the run early: the last id done; the next run resumes after it. */
  resume_after: string | null;
  commit: string | null;
}

export interface ExtractReport {
  project: string;
  candidates: number;
  stored: number;
  deduplicated_count: number;
  dry_run: boolean;
  truncated: boolean;
  extractions: {
    summary: string;
    type: string;
    confidence: number;
    span: [number, number];
    section: string;
    stored: boolean;
    duplicate_of: string | null;
    id: string | null;
    skipped?: Problem[];
  }[];
  commit: string | null;
}

export interface ApplyPlanReport {
  project: string;
  plan: string;
  merged: { group: number; id: string; superseded: string[] }[];
  summaries: { group: number; id: string }[];
  linked: { group: number; ids: string[] }[];
  skipped: { group: number; reason: string }[];
  commit: string | null;
}

export interface EvidenceReport {
  checked: number;
  ok: number;
  stale: number;
  unknown: number;
  skipped: number;
  entries: { id: string; project: string; stale: boolean; evidence: { type: string; uri: string; status: EvidenceStatus; reason: string }[] }[];
}

/** HEAD (GET when HEAD is refused) with a timeout; network trouble is unknown, never stale. */
async function probeUrl(url: string, timeoutMs: number): Promise<{ status: EvidenceStatus; reason: string }> {
  for (const method of ['HEAD', 'GET']) {
    try {
      const res = await fetch(url, { method, redirect: 'follow', signal: AbortSignal.timeout(timeoutMs) });
      void res.body?.cancel();
      if (method === 'HEAD' && (res.status === 405 || res.status === 501)) continue;
      return evidenceCheck().httpStatus(res.status);
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      return { status: 'unknown', reason: `unreachable (${e.cause?.code ?? e.name})` };
    }
  }
  return { status: 'unknown', reason: 'no answer' };
}

export interface ShownEntry {
  project: string;
  file: string;
  entry: MemoryEntry;
  computed: {
    strength: number;
    effective_confidence: number;
    confidence_label: string;
    retrieval_count: number;
    last_accessed_at: string | null;
    flags: string[];
    curve: Curve;
    memory_type: MemoryType;
    importance: number;
    days_since_access: number;
    decays: boolean;
    forget_threshold: number;
    promotion_candidate: boolean;
  };
}

export interface EntryVersion {
  commit: string;
  date: string;
  author: string;
  subject: string;
  entry: MemoryEntry | null;
}

/** Warnings for the front end to show (bad files, no git, performance). */
export type WarningSink = (message: string) => void;

export class MemoryService {
  readonly ws: Workspace;
  readonly env: NodeJS.ProcessEnv;
  readonly clock: Clock;
  private agentName: string | undefined;
  private readonly agentFromOptions: string | undefined;
  private catalog: Catalog;
  private gitRepo: GitRepo | null | undefined;
  private warn: WarningSink;
  private state: { snap: CatalogSnapshot; index: SearchIndex | null } | undefined;
  private longLived: boolean;
  private watched: boolean;
  private onWrite: ServiceOptions['onWrite'];
  readonly usage: UsageStore;
  readonly sessions: SessionStore;
  readonly evidenceCache: EvidenceCache;
  private logs = new LogReader();
  private lastSnap: CatalogSnapshot | undefined;
  /** Statistics aggregates per project selection, with the catalog snapshot they last followed. */
  private aggregates = new Map<string, { agg: EntryAggregate; seen: Map<string, { stamp: string; meta: EntryMeta }>; snap?: CatalogSnapshot }>();
  private byKey: { snap: CatalogSnapshot; map: Map<string, StoredEntry> } | undefined;
  private bySid: { snap: CatalogSnapshot; index: SearchIndex; gen: number; table: (StoredEntry | undefined)[] } | undefined;

  constructor(opts: ServiceOptions = {}, warn: WarningSink = () => undefined) {
    this.longLived = opts.longLived ?? false;
    this.watched = opts.watched ?? false;
    this.onWrite = opts.onWrite;
    this.env = opts.env ?? process.env;
    this.ws = new Workspace(findRoot(opts.cwd ?? process.cwd(), opts.root, this.env));
    this.clock = opts.clock ?? clockFromEnv(this.env);
    this.agentName = opts.agent ?? (this.env.BASS_AGENTS_AGENT || undefined);
    this.agentFromOptions = this.agentName;
    this.catalog = new Catalog(this.ws, { noteWrites: !this.watched });
    this.usage = new UsageStore(this.ws);
    this.sessions = new SessionStore(this.ws);
    this.evidenceCache = new EvidenceCache(this.ws);
    this.warn = warn;
  }

  now(): Date {
    return this.clock();
  }

  // ---------------------------------------------------------------- infrastructure

  private async git(): Promise<GitRepo | null> {
    if (this.gitRepo === undefined) this.gitRepo = await GitRepo.open(this.ws.root);
    return this.gitRepo;
  }

  /** The writer stored in created_by: --agent, BASS_AGENTS_AGENT, the git user, the OS user. */
  async agent(opts: { ignoreOwnAgent?: boolean } = {}): Promise<string> {
    // ignoreOwnAgent: a daemon writing for a CLI caller must not sign with its own --agent/env.
    if (this.agentName && !(opts.ignoreOwnAgent && this.agentName === this.agentFromOptions)) return this.agentName;
    const git = await this.git();
    let name = git ? await git.userName() : null;
    if (!name) {
      try {
        name = userInfo().username;
      } catch {
        name = null;
      }
    }
    const found = name || 'unknown';
    if (!opts.ignoreOwnAgent) this.agentName = found;
    return found;
  }

  /** The writer named by --agent or BASS_AGENTS_AGENT, if any (what a daemon must be told: its own env differs). */
  get explicitAgent(): string | undefined {
    return this.agentFromOptions;
  }

  /** Resolves the project for a command (CLI.md "--project"). */
  project(explicit?: string, mustExist = false): string {
    return this.ws.resolveProject(explicit, this.env, { mustExist });
  }

  /** The catalog of all entries; files that fail to parse or validate are reported and skipped. */
  snapshot(): CatalogSnapshot {
    const snap = this.catalog.refresh();
    this.lastSnap = snap;
    for (const b of snap.bad) {
      for (const p of b.problems) this.warn(`skipping ${p.path.startsWith(b.file) ? '' : `${b.file}: `}${p.path}: ${p.message}`);
    }
    return snap;
  }

  private async commit(project: string, files: string[], changes: CommitChange[], agent: string): Promise<string | null> {
    if (files.length === 0) return null;
    // Tell a running daemon right away (it would see the files through its watcher a little later).
    if (this.onWrite) await this.onWrite(files).catch(() => undefined);
    const cfg = readConfig(this.ws.configPath(project), project, this.now().toISOString(), join(this.ws.localDir, 'cache'));
    const git = cfg.git.autoCommit ? await this.git() : null;
    if (cfg.git.autoCommit && !git) this.warn(`${this.ws.root} is not a git repository: memory was written, but no history is kept`);
    // Start git, then bring the catalog cache up to date while its processes run.
    const committing = git?.commitPaths(files, commitMessage(project, changes, agent), agent);
    committing?.catch(() => undefined); // (awaited below; this only keeps a failure from being reported as unhandled meanwhile)
    try {
      // (A no-op in the daemon: it keeps its catalog in memory and saves the cache at reconciles.)
      this.catalog.noteWritten(files.map((f) => this.ws.rel(f)));
    } catch {
      /* a cache that cannot be updated only costs the next command a re-read */
    }
    return committing ?? null;
  }

  /**
   * The write lock plus the write journal: a previous writer's unfinished work is finished or
   * undone first, every file touched is journaled, and the journal goes once the commit is done.
   */
  private async locked<T>(fn: () => Promise<T>): Promise<T> {
    return withLock(this.ws, 'write', async () => {
      await this.recoverJournal();
      beginJournal(this.ws);
      let ok = false;
      try {
        const r = await fn();
        ok = true;
        return r;
      } finally {
        if (ok) endJournal();
        else {
          abandonJournal();
          await this.recoverJournal().catch(() => undefined); // undo this write's partial files now
        }
      }
    });
  }

  /**
   * Finishes or undoes the work of a writer that died holding the lock (its journal is still
   * there): a file whose content is the one committed at HEAD was committed, so only the user's
   * index may lag and is pointed at it; any other journaled file is put back as HEAD has it (or
   * removed when HEAD has none).
   */
  async recoverJournal(): Promise<{ kept: number; undone: number } | null> {
    const paths = readJournal(this.ws);
    if (paths === null) return null;
    const git = await this.git();
    let kept = 0;
    let undone = 0;
    if (git) {
      for (const abs of paths) {
        const rel = git.repoPath(abs);
        if (rel.startsWith('..')) continue;
        const head = await git.blobAt('HEAD', rel);
        const work = existsSync(abs) ? await git.hashFile(abs) : null;
        if (work === head) {
          kept++;
        } else {
          undone++;
          if (head) writeFileAtomic(abs, await git.show('HEAD', rel));
          else rmSync(abs, { force: true });
        }
        await git.setIndexEntry(rel, head).catch(() => undefined);
      }
      if (kept + undone) appendLog(this.ws, 'events', { time: this.now().toISOString(), level: 'warn', event: 'journal_recovered', kept, undone });
    }
    clearJournal(this.ws);
    return { kept, undone };
  }

  /**
   * Scans groups of fields for secrets; returns one problem list per group. Every hit goes to the
   * audit log with its field, rule and position, never the value (Req 13.8).
   */
  private async scanSecrets(groups: { path: string; text: string }[][], ctx: { project?: string; agent: string; operation: string }): Promise<Problem[][]> {
    if (!groups.some((g) => g.length)) return groups.map(() => []);
    const { scanFields } = secretScan();
    const time = this.now().toISOString();
    // One scan for every group (paths are unique across groups), split back per group.
    const all = await scanFields(groups.flat());
    const out: Problem[][] = [];
    for (const g of groups) {
      const paths = new Set(g.map((f) => f.path));
      const findings = all.filter((f) => paths.has(f.path));
      for (const f of findings) {
        appendLog(this.ws, 'audit', { time, event: 'secret_rejected', operation: ctx.operation, project: ctx.project ?? null, agent: ctx.agent, path: f.path, rule: f.rule, line: f.line, column: f.column });
      }
      out.push(findings.map((f) => ({ path: f.path, message: secretRules().findingMessage(f) })));
    }
    return out;
  }

  // ---------------------------------------------------------------- writes

  /** `memory init <project>`: idempotent; creates and commits config.yaml when new. */
  async init(project: string): Promise<{ project: string; created: boolean; commit: string | null; path: string; merge_driver: boolean }> {
    this.ws.projectDir(project); // validates the name and the path
    const mergeDriver = await this.registerMergeDriver();
    return this.locked(async () => {
      ensureLocalDir(this.ws);
      const files = initProject(this.ws, project, this.now().toISOString());
      const attrs = join(this.ws.memoryDir, '.gitattributes');
      if (mergeDriver && ensureGitAttributes(attrs)) files.push(attrs);
      const created = files.some((f) => f.endsWith('config.yaml'));
      const agent = await this.agent();
      const commit = await this.commit(project, files, [{ op: 'init', id: project }], agent);
      if (created) appendLog(this.ws, 'operations', { time: this.now().toISOString(), op: 'init', project, agent, commit });
      return { project, created, commit, path: this.ws.rel(this.ws.projectDir(project)), merge_driver: mergeDriver };
    });
  }

  /**
   * Registers the memory merge driver in the repository's local git config (a fresh clone needs
   * this once: `memory init` does it). Returns false outside git.
   */
  async registerMergeDriver(): Promise<boolean> {
    const git = await this.git();
    if (!git) return false;
    const bin = fileURLToPath(new URL('../../bin/bass-agents.js', import.meta.url));
    const driver = `"${process.execPath}" "${bin}" memory merge-driver %O %A %B %P`;
    if ((await git.config(`merge.${MERGE_DRIVER}.driver`)) !== driver) {
      await git.setConfig(`merge.${MERGE_DRIVER}.name`, 'bass-agents memory: field-level merge of one entry');
      await git.setConfig(`merge.${MERGE_DRIVER}.driver`, driver);
    }
    return true;
  }

  /**
   * `memory sync`: pull (memory files merge through the driver), re-validate what arrived, push.
   * A merge git cannot finish is aborted: nothing is left half-merged. A push that loses a race
   * pulls and tries again.
   */
  async sync(opts: { remote?: string; branch?: string; push?: boolean } = {}): Promise<{ pulled: boolean; pushed: boolean; head: string | null; bad: BadFile[]; attempts: number }> {
    const git = await this.git();
    if (!git) throw new UsageError(`${this.ws.root} is not a git repository: there is nothing to sync`);
    await this.registerMergeDriver();
    const remote = opts.remote ?? 'origin';
    const branch = opts.branch ?? (await git.run(['rev-parse', '--abbrev-ref', 'HEAD'])).trim();
    for (let attempt = 1; attempt <= 5; attempt++) {
      let pulled = false;
      try {
        await git.run(['fetch', '--quiet', remote, branch]);
        const behind = (await git.run(['rev-list', '--count', `HEAD..${remote}/${branch}`]).catch(() => '0')).trim();
        if (behind !== '0') {
          await git.run(['merge', '--no-edit', '--quiet', `${remote}/${branch}`]);
          pulled = true;
        }
      } catch (err) {
        const inMerge = await git.run(['rev-parse', '-q', '--verify', 'MERGE_HEAD']).then(() => true, () => false);
        if (inMerge) await git.run(['merge', '--abort']).catch(() => undefined);
        const conflicted = String((err as Error).message).split('\n').filter((l) => /CONFLICT|error:|fatal:/.test(l)).slice(0, 5).join('; ');
        throw new ConflictError(`sync stopped: git could not merge ${remote}/${branch} (${conflicted || (err as Error).message.trim()}); nothing was merged, resolve it with git and run sync again`);
      }
      const snap = this.snapshot();
      if (opts.push === false) return { pulled, pushed: false, head: await git.head(), bad: snap.bad, attempts: attempt };
      try {
        await git.run(['push', '--quiet', remote, `HEAD:${branch}`]);
        return { pulled, pushed: true, head: await git.head(), bad: snap.bad, attempts: attempt };
      } catch (err) {
        if (!/rejected|fetch first|non-fast-forward/i.test(String((err as Error).message))) throw new GitError(`push to ${remote} failed: ${String((err as Error).message).trim()}`);
        await new Promise((r) => setTimeout(r, 50 * attempt + Math.random() * 100));
      }
    }
    throw new BusyError(`sync gave up after 5 attempts: ${remote}/${branch} kept moving`);
  }

  /** Creates one entry from the `entry` part of a Memory_Update (or a whole create update). */
  async create(input: unknown, opts: { project?: string; agent?: string; ignoreOwnAgent?: boolean } = {}): Promise<{ entry: MemoryEntry; commit: string | null; project: string }> {
    let entry = input;
    if (input && typeof input === 'object' && !Array.isArray(input) && 'operation' in input) {
      const op = (input as { operation: unknown }).operation;
      if (op !== 'create') throw new UsageError(`memory create takes an entry or a create update, not operation ${JSON.stringify(op)}; use memory apply`);
      entry = (input as { entry?: unknown }).entry;
    }
    const r = await this.apply([{ operation: 'create', entry }], { ...opts, atomic: true, label: 'entry' });
    const applied = r.applied[0]!;
    const stored = this.readEntry(r.project, applied.id);
    return { entry: stored, commit: r.commit, project: r.project };
  }

  /**
   * Applies a batch of Memory_Update as one commit (002 Req 5, 9). Invalid updates are reported
   * and skipped; the valid ones are applied. With `atomic`, any invalid update rejects the batch.
   */
  async apply(
    updates: unknown,
    opts: { project?: string; atomic?: boolean; label?: string; agent?: string; ignoreOwnAgent?: boolean } = {},
  ): Promise<ApplyResult> {
    if (!Array.isArray(updates)) {
      throw new ValidationError([{ path: '(root)', message: 'must be a JSON array of Memory_Update objects' }], 'updates');
    }
    const project = this.project(opts.project);
    this.ws.projectDir(project);
    const agent = opts.agent ?? (await this.agent({ ignoreOwnAgent: opts.ignoreOwnAgent }));
    const prefixOf = (i: number): string => (opts.label && updates.length === 1 ? '' : `[${i}]`);
    // Secrets first, on the raw text of each field (Req 13): a hit makes that update invalid.
    const secrets = await this.scanSecrets(
      // `memory create` names the entry's own fields (`content`), like its validation errors.
      updates.map((u, i) => secretRules().secretFields((u as { entry?: unknown } | null)?.entry, opts.label === 'entry' ? '' : [prefixOf(i), 'entry'].filter(Boolean).join('.'))),
      { project, agent, operation: opts.label ?? 'apply' },
    );
    return this.locked(async () => {
      const nowDate = this.now();
      const now = nowDate.toISOString();
      const snap = this.watched && this.state ? this.state.snap : this.snapshot();
      // By id from the keys (project/id), so no entry's metadata row is parsed for it.
      const byId = new Map<string, StoredEntry>();
      for (const se of snap.entries) {
        const id = se.key.slice(se.project.length + 1);
        if (!byId.has(id)) byId.set(id, se);
      }
      const dupKeys = duplicateIndex(snap.entries, project, updates.length);
      const working = new Map<string, MemoryEntry>();
      const nextId = ulid().monotonicFactory();
      const applied: AppliedUpdate[] = [];
      const skipped: ApplyResult['skipped'] = [];
      const changes: CommitChange[] = [];
      const files: string[] = [];
      let initialized = this.ws.isInitialized(project);

      const getEntry = (id: string): MemoryEntry | undefined => {
        const w = working.get(id);
        if (w) return w;
        const se = byId.get(id);
        return se && se.project === project ? se.entry : undefined;
      };
      const otherProject = (id: string | undefined): string | undefined => {
        if (!id) return undefined;
        const se = byId.get(id);
        return se && se.project !== project && !working.has(id) ? se.project : undefined;
      };
      const write = (e: MemoryEntry): void => {
        if (!initialized) {
          files.push(...initProject(this.ws, project, now));
          initialized = true;
        }
        working.set(e.id, e);
        files.push(writeEntry(this.ws, project, e));
      };

      // Validate everything first when atomic, so nothing is written for a rejected batch.
      const validated = updates.map((raw, i) => {
        const u = raw as { operation?: string; target_id?: string; superseded_by?: string };
        const prefix = prefixOf(i);
        const foreign = otherProject(u?.target_id) ?? otherProject(u?.superseded_by);
        if (foreign) {
          return { ok: false as const, errors: [{ path: `${prefix ? `${prefix}.` : ''}target_id`, message: `entry belongs to project ${foreign}, not ${project}` }] };
        }
        const exclude = u?.operation === 'supersede' ? u.target_id : undefined;
        const ctx: ValidationContext = {
          getEntry,
          findDuplicate: (k) => {
            const id = dupKeys.get(k);
            return id && id !== exclude ? id : undefined;
          },
        };
        const found = secrets[i]!;
        const r0 = validation().validateUpdate(raw, ctx, prefix);
        const r: typeof r0 = found.length ? { ok: false, errors: [...(r0.ok ? [] : r0.errors), ...found] } : r0;
        // `memory create` was handed just the entry: name its own fields (`summary`, not `entry.summary`).
        return opts.label === 'entry' && !r.ok ? { ok: false as const, errors: stripEntryPrefix(r.errors) } : r;
      });
      if (opts.atomic) {
        const bad = validated.flatMap((r) => (r.ok ? [] : r.errors));
        if (bad.length) throw new ValidationError(bad, opts.label ?? 'update');
      }

      for (let i = 0; i < updates.length; i++) {
        // Re-validate against the working state: earlier updates of this batch may have changed it.
        const first = validated[i]!;
        if (!first.ok) {
          skipped.push({ index: i, errors: first.errors });
          continue;
        }
        const u = first.value;
        if (u.operation !== 'create' && u.target_id) {
          const target = getEntry(u.target_id);
          if (!target || target.status === 'superseded' || (u.operation === 'deprecate' && target.status === 'deprecated')) {
            skipped.push({ index: i, errors: [{ path: `[${i}].target_id`, message: `entry ${u.target_id} was changed earlier in this batch` }] });
            continue;
          }
        }
        if (u.entry) {
          const key = duplicateHash(u.entry);
          const dup = dupKeys.get(key);
          if (dup && dup !== u.target_id) {
            skipped.push({ index: i, errors: [{ path: `[${i}].entry.summary`, message: `duplicates entry ${dup} (same subject, scope and summary)` }] });
            continue;
          }
        }
        let newId: string | undefined;
        if (u.entry) {
          newId = nextId(nowDate.getTime());
          const e = buildEntry(u.entry, newId, now, agent);
          write(e);
          dupKeys.set(duplicateHash(e), newId);
          changes.push({ op: 'create', id: newId, summary: e.summary });
        }
        if (u.operation === 'create') {
          applied.push({ index: i, operation: 'create', id: newId! });
          continue;
        }
        const target = getEntry(u.target_id!)!;
        if (u.operation === 'supersede') {
          const by = newId ?? u.superseded_by!;
          write({ ...target, status: 'superseded', superseded_by: by, updated_at: now });
          if (dupKeys.get(duplicateHash(target)) === target.id) dupKeys.delete(duplicateHash(target));
          changes.push({ op: 'supersede', id: target.id, summary: `superseded by ${by}` });
          applied.push({ index: i, operation: 'supersede', id: by, target_id: target.id, superseded_by: by });
        } else {
          write({ ...target, status: 'deprecated', updated_at: now });
          changes.push({ op: 'deprecate', id: target.id, summary: target.summary });
          applied.push({ index: i, operation: 'deprecate', id: target.id, target_id: target.id });
        }
      }

      const commit = await this.commit(project, files, changes, agent);
      for (const s of skipped) {
        appendLog(this.ws, 'events', { time: now, level: 'warn', event: 'update_skipped', project, agent, index: s.index, errors: s.errors });
      }
      for (const c of changes) appendLog(this.ws, 'operations', { time: now, op: c.op, id: c.id, project, agent, commit });
      this.warnIfLarge(project, snap, applied.filter((a) => a.operation === 'create').length);
      return { applied, skipped, commit, project };
    });
  }

  /** Req 6.2: past 100 entries a project should be consolidated. */
  private warnIfLarge(project: string, snap: CatalogSnapshot, added: number): void {
    if (added === 0) return;
    const count = snap.entries.filter((e) => e.project === project).length + added;
    if (count > 100 && count - added <= 100) {
      this.warn(`project ${project} now holds ${count} entries (over 100): consider consolidating with \`bass-agents memory compact ${project}\``);
    }
  }

  /** `memory supersede <id> --by <new-id>`. */
  async supersede(id: string, by: string, opts: { project?: string } = {}): Promise<ApplyResult> {
    checkId(id);
    checkId(by, 'by');
    const found = this.locate(id, opts.project);
    this.locate(by, found.project);
    if (id === by) throw new ConflictError(`entry ${id} cannot supersede itself`);
    return this.apply([{ operation: 'supersede', target_id: id, superseded_by: by }], { project: found.project, atomic: true, label: 'supersede' });
  }

  /** `memory deprecate <id>`. Deprecating a deprecated entry changes nothing. */
  async deprecate(id: string, opts: { project?: string } = {}): Promise<ApplyResult & { unchanged?: boolean }> {
    checkId(id);
    const found = this.locate(id, opts.project);
    if (found.entry.status === 'deprecated') return { applied: [], skipped: [], commit: null, project: found.project, unchanged: true };
    return this.apply([{ operation: 'deprecate', target_id: id }], { project: found.project, atomic: true, label: 'deprecate' });
  }

  // ---------------------------------------------------------------- reads

  /** Finds an entry file by id without scanning: one stat per project and section. */
  locate(id: string, project?: string): { project: string; file: string; entry: MemoryEntry } {
    checkId(id);
    const projects = project ? [project] : this.ws.listProjects();
    for (const p of projects) {
      for (const s of SECTIONS) {
        const abs = join(this.ws.memoryDir, p, s, `${id}.json`);
        if (!existsSync(abs)) continue;
        const file = this.ws.rel(this.ws.entryPath(p, s, id));
        const r = readEntryFile(abs, file, s, id);
        if (!r.entry) throw new ValidationError(r.problems ?? [], file);
        return { project: p, file, entry: r.entry };
      }
    }
    throw new NotFoundError(`no memory entry with id ${id}${project ? ` in project ${project}` : ''}`);
  }

  private readEntry(project: string, id: string): MemoryEntry {
    return this.locate(id, project).entry;
  }

  /** `memory show <id>`: the entry and values computed as of now. */
  show(id: string, opts: { project?: string } = {}): ShownEntry {
    const found = this.locate(id, opts.project);
    const now = this.now().getTime();
    const e = found.entry;
    const usage = this.usage.load().get(`${found.project}/${e.id}`);
    const lc = lifecycleOf(e, usage, this.decayConfig(found.project), now, initialImportance(e));
    return {
      ...found,
      computed: {
        strength: lc.strength,
        effective_confidence: lc.effective_confidence,
        confidence_label: lc.confidence_label,
        retrieval_count: lc.retrievals,
        last_accessed_at: lc.last_accessed_at,
        flags: entryFlags(e, now, this.evidenceCache.staleKeys().has(`${found.project}/${e.id}`)),
        curve: lc.curve,
        memory_type: lc.memory_type,
        importance: lc.importance,
        days_since_access: lc.days_since_access,
        decays: lc.exempt === null,
        forget_threshold: lc.threshold,
        promotion_candidate: isPromotionCandidate(e, usage),
      },
    };
  }

  /** `memory show <id> --history`: every committed version of the entry, newest first (Req 12.5). */
  async history(id: string, opts: { project?: string } = {}): Promise<EntryVersion[]> {
    const found = this.locate(id, opts.project);
    const git = await this.git();
    if (!git) return [];
    const versions = await git.history(join(this.ws.root, found.file));
    return versions.map((v) => {
      let entry: MemoryEntry | null = null;
      if (v.content) {
        try {
          entry = JSON.parse(v.content) as MemoryEntry;
        } catch {
          entry = null;
        }
      }
      return { commit: v.commit, date: v.date, author: v.author, subject: v.subject, entry };
    });
  }

  /** The projects a read covers: the named one plus global, or every project when none is chosen. */
  readProjects(explicit?: string): string[] | undefined {
    let p: string;
    try {
      p = this.project(explicit, Boolean(explicit));
    } catch (err) {
      if (err instanceof UsageError && !explicit) return undefined; // several projects, no default: read them all
      throw err;
    }
    return p === GLOBAL_PROJECT ? [p] : [p, GLOBAL_PROJECT];
  }

  /**
   * The catalog and (when needed) the text index, refreshed from disk. A long-lived process (the
   * daemon, an MCP server, a benchmark: `longLived`) keeps the whole index between queries;
   * `refresh: false` reuses them without touching the disk, for a caller that tracks changes
   * itself. A one-shot process answering one text query loads only the postings that text can
   * reach (same scores, a fraction of the cost) unless the snapshot is far behind the files, in
   * which case it loads the whole index, brings it up to date and saves it for the next process.
   */
  private loadState(text: string, refresh: boolean, wholeIndex = false, save: boolean | 'drifted' = this.longLived ? 'drifted' : true): { snap: CatalogSnapshot; index: SearchIndex | null; indexStats: QueryStats['index'] } {
    const needIndex = wholeIndex || text.trim().length > 0;
    if (!refresh && this.state && (!needIndex || this.state.index)) return { ...this.state, indexStats: null };
    const snap = this.snapshot();
    let index = this.state?.index ?? null;
    if (!needIndex && !index) {
      this.state = { snap, index: null };
      return { snap, index: null, indexStats: null };
    }
    const docs: IndexedDoc[] = snap.entries.map((se) => ({ key: se.key, stamp: se.stamp, load: () => se.entry }));
    const file = SearchIndex.snapshotPath(this.ws.localDir);
    if (!index && !this.longLived && !wholeIndex) {
      const partial = SearchIndex.loadFor(file, text);
      const plan = partial?.plan(docs);
      if (partial && plan && plan.size <= Math.max(PARTIAL_DRIFT_MIN, snap.entries.length * PARTIAL_DRIFT_SHARE)) {
        const rep = partial.sync(docs, plan);
        this.state = { snap, index: null };
        return { snap, index: partial, indexStats: { loaded_snapshot: true, partial: true, added: rep.added, replaced: rep.replaced, removed: rep.removed } };
      }
    }
    let loaded = true;
    if (!index) ({ index, loaded } = SearchIndex.load(file));
    const rep = index.sync(docs);
    if (save) this.saveIndex(index, save === 'drifted' ? 'drifted' : 'changed');
    this.state = { snap, index };
    return { snap, index, indexStats: { loaded_snapshot: loaded, partial: false, added: rep.added, replaced: rep.replaced, removed: rep.removed } };
  }

  /**
   * Re-reads changed files and brings the whole index up to date (the daemon's watcher batches
   * and reconciles call this): returns what changed.
   */
  refresh(opts: { saveIndex?: boolean | 'drifted'; paths?: string[] } = {}): { snap: CatalogSnapshot; files: number; indexed: number; changed: string[]; removed: string[]; index: QueryStats['index'] } {
    if (opts.paths && this.state?.index) {
      // A watcher batch: re-read just those files and update the index by id (the vacuum of
      // replaced entries' old postings is left to vacuumIndex, at a quiet moment).
      // Both cost what the batch's files do: the catalog keeps its maps between batches and says
      // which keys the files touched; the index follows just those, and so does the query table.
      const prev = this.state.snap;
      const snap = this.catalog.refreshPaths(prev, opts.paths);
      const index = this.state.index;
      const touched = [...snap.touched!].map(([key, se]) => [key, se && { key, stamp: se.stamp, load: () => se.entry }] as [string, IndexedDoc | null]);
      const rep = index.sync([], index.planKeys(touched), { deferVacuum: true });
      this.followSidTable(prev, snap, index);
      this.state = { snap, index };
      if (opts.saveIndex) this.saveIndex(index, opts.saveIndex === 'drifted' ? 'drifted' : 'changed');
      return { snap, files: snap.entries.length + snap.bad.length, indexed: index.size, changed: snap.changed, removed: snap.removed, index: { loaded_snapshot: true, partial: false, ...rep } };
    }
    const { snap, index, indexStats } = this.loadState('', true, true, opts.saveIndex ?? true);
    return { snap, files: snap.entries.length + snap.bad.length, indexed: index?.size ?? 0, changed: snap.changed, removed: snap.removed, index: indexStats };
  }

  /** Runs a vacuum a watcher batch deferred (the daemon calls this when no batch came for a while). */
  vacuumIndex(): boolean {
    return this.state?.index?.vacuumIfDeferred() ?? false;
  }

  /**
   * Saves the index snapshot if it changed. `'drifted'`: only once it is further behind than a
   * one-shot query patches up by itself (PARTIAL_DRIFT_*): a long-lived process calls it that way
   * at its reconciles, because a save holds the process for the whole write (~1 s at 10K entries,
   * ~12 s at 100K), and saves for good when it stops.
   */
  saveIndex(index: SearchIndex | null = this.state?.index ?? null, when: 'changed' | 'drifted' = 'changed'): void {
    if (!index) return;
    if (when === 'drifted' && index.unsavedChanges <= Math.max(PARTIAL_DRIFT_MIN, index.size * PARTIAL_DRIFT_SHARE)) return;
    try {
      index.save(SearchIndex.snapshotPath(this.ws.localDir));
    } catch {
      /* a snapshot that cannot be saved only costs speed next time */
    }
  }

  /**
   * For a long-lived process that is stopping: brings the index it holds up to date with the
   * files and saves the snapshot, for the one-shot commands that come next. Nothing when it
   * never loaded an index.
   */
  flushIndex(): void {
    if (!this.state?.index) return;
    this.loadState('', true, true, true);
  }

  /** Entries of a snapshot by MiniSearch document number, built once per snapshot and index version. */
  private sidTable(snap: CatalogSnapshot, index: SearchIndex): (StoredEntry | undefined)[] {
    const t = this.bySid;
    if (t && t.snap === snap && t.index === index && t.gen === index.generation) return t.table;
    // Filled to its length first: assigning document numbers in any order to an empty array
    // would give V8 a dictionary-backed array, several times slower to index per hit.
    const table: (StoredEntry | undefined)[] = [];
    for (let i = index.documentNumbers; i > 0; i--) table.push(undefined);
    for (const se of snap.entries) {
      const sid = index.sidOf(se.key);
      if (sid !== undefined) table[sid] = se;
    }
    this.bySid = { snap, index, gen: index.generation, table };
    return table;
  }

  /**
   * Carries the document-number table from `prev` to `snap` after a watcher batch: the entries
   * the batch touched get their new numbers; numbers of discarded documents keep a stale entry
   * that no hit can name (MiniSearch never returns a discarded document).
   */
  private followSidTable(prev: CatalogSnapshot, snap: CatalogSnapshot, index: SearchIndex): void {
    const t = this.bySid;
    if (!t || t.snap !== prev || t.index !== index || !snap.touched) return;
    for (const [key, se] of snap.touched) {
      if (!se) continue;
      const sid = index.sidOf(key);
      if (sid === undefined) continue;
      while (t.table.length <= sid) t.table.push(undefined);
      t.table[sid] = se;
    }
    this.bySid = { snap, index, gen: index.generation, table: t.table };
  }

  /** Entries of a snapshot by index key (`project/id`), built once per snapshot. */
  private keyed(snap: CatalogSnapshot): Map<string, StoredEntry> {
    if (this.byKey?.snap !== snap) this.byKey = { snap, map: new Map(snap.entries.map((se) => [se.key, se])) };
    return this.byKey.map;
  }

  /** `memory list` and `memory query` share this: filters, optional text, ranking, limit (Req 4, 15). */
  query(text: string, filters: QueryFilters, opts: QueryOptions = {}): QueryResult {
    const t0 = performance.now();
    const nowMs = this.now().getTime();
    const hasText = text.trim().length > 0;
    const { snap, index, indexStats } = this.loadState(text, opts.refresh !== false);
    interface Cand extends Candidate<EntryMeta> {
      se: StoredEntry;
    }
    const accept = compileFilters(filters, nowMs);
    const staleKeys = this.evidenceCache.staleKeys();
    const cands: Cand[] = [];
    let matchedCount = 0;
    const limit = Math.max(0, Math.min(opts.limit ?? MAX_RESULTS, MAX_RESULTS));
    if (hasText && index) {
      // Relevance does not depend on the filters (MiniSearch scores first and filters after), so
      // look up only the entries the text reaches and apply the filters to those: the same result
      // as restricting first, for the cost of the hits instead of every entry.
      // Hits come by MiniSearch's document number: a long-lived process finds their entries in a
      // table built once per catalog and index version, a one-shot query by key.
      let scores: Float64Array;
      let entryAt: (i: number) => StoredEntry | undefined;
      const raw = index.rawHits(text);
      if (raw) {
        scores = raw.scores;
        const sids = raw.sids;
        if (this.longLived) {
          const bySid = this.sidTable(snap, index);
          entryAt = (i) => bySid[sids[i]!];
        } else {
          const byKey = this.keyed(snap);
          entryAt = (i) => byKey.get(index.keyOf(sids[i]!) ?? '');
        }
      } else {
        const byKey = this.keyed(snap);
        const hits = index.hits(text);
        scores = Float64Array.from(hits, (h) => h.score);
        entryAt = (i) => byKey.get(hits[i]!.id as string);
      }
      // Filter every hit and weigh it by its priors in typed arrays, then make candidates only of
      // the hits that can still reach the first `limit` (textFloor): at 100K entries a query
      // reaches ~20,000 entries and a few hundred become candidates.
      const accepted = new Int32Array(scores.length);
      const bases = new Float64Array(scores.length);
      let n = 0;
      let max = 0;
      for (let i = 0; i < scores.length; i++) {
        const se = entryAt(i);
        if (!se || !accept(se.meta, se.project)) continue;
        const score = scores[i]!;
        bases[n] = score * textWeight(se.meta, nowMs, staleKeys.size > 0 && staleKeys.has(se.key));
        accepted[n++] = i;
        if (score > max) max = score;
      }
      const floor = textFloor(bases.subarray(0, n), limit, max);
      for (let j = 0; j < n; j++) {
        if (bases[j]! < floor) continue;
        const se = entryAt(accepted[j]!)!;
        cands.push({ project: se.project, entry: se.meta, se, relevance: scores[accepted[j]!]!, stale: staleKeys.has(se.key) });
      }
      for (const c of cands) c.relevance = max > 0 ? c.relevance! / max : 0;
      matchedCount = n;
    } else {
      for (const se of snap.entries) if (accept(se.meta, se.project)) cands.push({ project: se.project, entry: se.meta, se, stale: staleKeys.has(se.key) });
      matchedCount = cands.length;
    }
    // Decay strength and effective confidence (retrieval boosts, curve) as of now, computed for
    // the candidates ranking needs them for.
    const usage = this.usage.load();
    const cfgs = new Map<string, DecayConfig>();
    const lifecycle = (c: Cand): { strength: number; effective_confidence: number } => {
      let cfg = cfgs.get(c.project);
      if (!cfg) cfgs.set(c.project, (cfg = this.decayConfig(c.project)));
      return lifecycleOf(c.entry, usage.get(c.se.key), cfg, nowMs, c.entry.importance0);
    };
    // Rank on metadata; read the full entries of the results only.
    const ranked: QueryHit[] = rankEntries<EntryMeta, Cand>(cands, nowMs, hasText, limit, lifecycle)
      .map(({ se, entry: _meta, ...r }) => ({ ...r, entry: se.entry }));
    if (opts.includeRelated) this.addRelated(ranked, snap, filters, nowMs, limit);
    // 000 "Boost on retrieval": a result counts as a retrieval (local usage, never a commit).
    if (opts.record !== false) this.usage.recordRetrievals(ranked.map((r) => `${r.project}/${r.entry.id}`), this.now().toISOString());
    const ms = performance.now() - t0;
    return {
      results: ranked,
      stats: {
        execution_ms: Math.round(ms * 100) / 100,
        entries_scanned: snap.entries.length,
        entries_matched_filters: matchedCount,
        entries_returned: ranked.length,
        index: indexStats,
      },
    };
  }

  /** Follows related_entries (Req 4.11); related entries obey the same status and validity rules. */
  private addRelated(results: QueryHit[], snap: CatalogSnapshot, filters: QueryFilters, nowMs: number, limit: number): void {
    const byId = new Map(snap.entries.map((se) => [se.meta.id, se] as const));
    const present = new Set(results.map((r) => r.entry.id));
    const statusOnly: QueryFilters = {
      status: filters.status,
      minConfidence: filters.minConfidence,
      includeExpired: filters.includeExpired,
    };
    const extra: QueryHit[] = [];
    for (const r of results) {
      for (const rid of r.entry.related_entries) {
        if (present.has(rid) || results.length + extra.length >= limit) continue;
        const se = byId.get(rid);
        if (!se || !matchesFilters(se.meta, se.project, statusOnly, nowMs)) continue;
        present.add(rid);
        const [ranked] = rankEntries([{ project: se.project, entry: se.entry }], nowMs, false);
        extra.push({ ...ranked!, score: 0, related_to: r.entry.id });
      }
    }
    results.push(...extra);
  }

  /** A project's resolved config.yaml. */
  projectConfig(project: string): ReturnType<typeof readConfig> {
    return readConfig(this.ws.configPath(project), project, this.now().toISOString(), join(this.ws.localDir, 'cache'));
  }

  /** The project's decay configuration (config.yaml `decay`, over the defaults). */
  decayConfig(project: string): DecayConfig {
    const cfg = readConfig(this.ws.configPath(project), project, this.now().toISOString(), join(this.ws.localDir, 'cache'));
    return resolveDecay(cfg.decay as Parameters<typeof resolveDecay>[0]);
  }

  /** Appends a query to the local query log (statistics read it: Req 22.6). */
  logQuery(record: { text: string; filters: QueryFilters; result_count: number; execution_ms: number }): void {
    appendLog(this.ws, 'queries', {
      time: this.now().toISOString(),
      text: record.text,
      subject: record.filters.subject ?? null,
      scope: record.filters.scope ?? null,
      projects: record.filters.projects ?? null,
      filters: record.filters,
      result_count: record.result_count,
      execution_ms: record.execution_ms,
    });
  }

  /** Reads a project's slow-query threshold (Req 11.2). */
  slowQueryMs(project?: string): number {
    try {
      const p = this.project(project);
      return readConfig(this.ws.configPath(p), p, this.now().toISOString(), join(this.ws.localDir, 'cache')).query.slow_ms;
    } catch {
      return 200;
    }
  }

  /** `memory validate`: the validation function, against the store when a project exists. */
  async validate(doc: unknown, opts: { project?: string } = {}): Promise<{ ok: boolean; errors: Problem[] }> {
    let ctx: ValidationContext = {};
    let project: string | undefined;
    try {
      project = this.project(opts.project);
    } catch {
      project = undefined;
    }
    if (project && existsSync(join(this.ws.memoryDir, project))) {
      const snap = this.snapshot();
      const byId = new Map<string, StoredEntry>();
      const dups = new Map<string, string>();
      for (const se of snap.entries) {
        if (se.project !== project) continue;
        byId.set(se.meta.id, se);
        if (se.meta.status !== 'superseded') dups.set(se.meta.dup, se.meta.id);
      }
      ctx = { getEntry: (id) => byId.get(id)?.entry, findDuplicate: (k) => dups.get(k) };
    }
    const errors = validation().validateDocument(doc, ctx);
    // Req 13.7: secrets are reported before submission, with the paths validateDocument uses.
    const kind = validation().documentKind(doc);
    const items = kind === 'array' ? (doc as unknown[]) : [doc];
    const fields = items.map((item, i) => {
      const at = kind === 'array' ? `[${i}]` : '';
      const k = kind === 'array' ? validation().documentKind(item) : kind;
      const isUpdate = k === 'update';
      const target = isUpdate ? (item as { entry?: unknown })?.entry : item;
      return secretRules().secretFields(target, [at, isUpdate ? 'entry' : ''].filter(Boolean).join('.'));
    });
    errors.push(...(await this.scanSecrets(fields, { agent: this.agentName ?? 'unknown', operation: 'validate' })).flat());
    return { ok: errors.length === 0, errors };
  }

  // ---------------------------------------------------------------- doctor

  /**
   * `memory doctor`: checks the whole workspace without changing it: every entry file parses
   * and validates, its id matches its file name and its section its folder (the catalog does
   * this), superseded_by and related_entries point at existing entries, no two live entries
   * duplicate each other, no secret sits in an existing file, and every config.yaml is valid.
   */
  async doctor(): Promise<{ ok: boolean; checked: { files: number; projects: number }; problems: { check: string; file: string; path: string; message: string }[] }> {
    const snap = this.catalog.refresh();
    const problems: { check: string; file: string; path: string; message: string }[] = [];
    for (const b of snap.bad) for (const p of b.problems) problems.push({ check: 'entry file', file: b.file, path: p.path, message: p.message });
    const byId = new Map(snap.entries.map((se) => [se.meta.id, se]));
    const dups = new Map<string, StoredEntry>();
    for (const se of snap.entries) {
      const m = se.meta;
      if (m.superseded_by && !byId.has(m.superseded_by)) problems.push({ check: 'links', file: se.file, path: 'superseded_by', message: `points at ${m.superseded_by}, which does not exist` });
      for (const r of m.related_entries) if (!byId.has(r)) problems.push({ check: 'links', file: se.file, path: 'related_entries', message: `lists ${r}, which does not exist` });
      if (m.status !== 'superseded' && m.status !== 'archived') {
        const k = `${se.project}\u0000${m.dup}`;
        const other = dups.get(k);
        if (other) problems.push({ check: 'duplicates', file: se.file, path: 'summary', message: `duplicates ${other.meta.id} (same subject, scope and summary)` });
        else dups.set(k, se);
      }
    }
    const groups = snap.entries.map((se) => secretRules().secretFields(se.entry, se.file));
    const { scanFields } = secretScan();
    for (const f of await scanFields(groups.flat())) {
      const file = snap.entries.find((se) => f.path.startsWith(`${se.file}.`))?.file ?? f.path;
      problems.push({ check: 'secrets', file, path: f.path.slice(file.length + 1), message: secretRules().findingMessage(f) });
    }
    for (const project of this.ws.listProjects()) {
      try {
        readConfig(this.ws.configPath(project), project, this.now().toISOString());
      } catch (err) {
        const e = err as ValidationError;
        for (const p of e.problems ?? [{ path: project, message: e.message }]) problems.push({ check: 'config', file: this.ws.rel(this.ws.configPath(project)), path: p.path, message: p.message });
      }
    }
    return { ok: problems.length === 0, checked: { files: snap.entries.length + snap.bad.length, projects: this.ws.listProjects().length }, problems };
  }

  // ---------------------------------------------------------------- evidence (Req 18.5-18.7)

  /**
   * `memory validate-evidence`: file paths against the working tree (and their line ranges), git
   * permalinks of this repository for a reachable commit and path, URLs with HEAD (then GET) and
   * a short timeout; an unreachable network is "unknown", never "stale". Results are cached
   * (paths by file stamp, URLs for `urlTtlMs`); entries with stale evidence are flagged and
   * down-ranked by queries.
   */
  async validateEvidence(
    projectName?: string,
    opts: { offline?: boolean; timeoutMs?: number; urlTtlMs?: number; onProgress?: (done: number, total: number) => void } = {},
  ): Promise<EvidenceReport> {
    const projects = this.readProjects(projectName);
    const entries = this.snapshot().entries.filter((se) => (!projects || projects.includes(se.project)) && se.meta.status !== 'superseded');
    const cache = this.evidenceCache.load();
    const now = this.now();
    const ttl = opts.urlTtlMs ?? 24 * 3_600_000;
    const git = await this.git();
    const remotes = git ? (await git.remoteUrls()).map(evidenceCheck().remoteRepo).filter((r): r is { host: string; repo: string } => r !== null) : [];
    const checks: Record<string, CheckResult> = {};
    const fresh = (key: string): CheckResult | undefined => {
      const c = cache.checks[key];
      return c && now.getTime() - Date.parse(c.checked_at) < ttl ? c : undefined;
    };
    const checkOne = async (type: string, uri: string): Promise<{ key: string; result: CheckResult }> => {
      const plan = evidenceCheck().planCheck(type, uri);
      const at = now.toISOString();
      if (plan.kind === 'none') return { key: uri, result: { status: 'skipped', reason: plan.reason, checked_at: at } };
      if (plan.kind === 'file') {
        const abs = join(this.ws.root, plan.path);
        const st = statSync(abs, { throwIfNoEntry: false });
        const key = `${uri}\u0000${st ? `${st.size}:${st.mtimeMs}` : 'missing'}`;
        if (cache.checks[key]) return { key, result: cache.checks[key]! };
        if (!st || !st.isFile()) return { key, result: { status: 'stale', reason: `${plan.path} does not exist in the working tree`, checked_at: at } };
        if (plan.end !== undefined) {
          const lines = readFileSync(abs, 'utf8').split('\n').length;
          if (plan.end > lines) return { key, result: { status: 'stale', reason: `${plan.path} has ${lines} lines; the evidence cites line ${plan.end}`, checked_at: at } };
        }
        return { key, result: { status: 'ok', reason: 'file exists', checked_at: at } };
      }
      if (plan.kind === 'permalink') {
        const local = remotes.some((r) => r.host === plan.host.toLowerCase() && r.repo === plan.repo.toLowerCase());
        if (local && git) {
          const has = await git.hasPathAt(plan.commit, plan.path);
          if (has === true) return { key: uri, result: { status: 'ok', reason: `commit ${plan.commit.slice(0, 12)} has ${plan.path}`, checked_at: at } };
          if (has === false) return { key: uri, result: { status: 'stale', reason: `commit ${plan.commit.slice(0, 12)} has no ${plan.path}`, checked_at: at } };
          // The commit is not here (not fetched): ask the host like any URL.
        }
      }
      const url = plan.kind === 'url' ? plan.url : plan.url;
      const hit = fresh(url);
      if (hit) return { key: url, result: hit };
      if (opts.offline) return { key: url, result: { status: 'unknown', reason: 'not checked (--offline)', checked_at: at } };
      return { key: url, result: { ...(await probeUrl(url, opts.timeoutMs ?? 5000)), checked_at: at } };
    };
    const report: EvidenceReport = { checked: 0, ok: 0, stale: 0, unknown: 0, skipped: 0, entries: [] };
    const stale: Record<string, string[]> = { ...cache.stale };
    let done = 0;
    for (const se of entries) {
      const rows: EvidenceReport['entries'][number]['evidence'] = [];
      for (const ev of se.entry.evidence) {
        const { key, result } = await checkOne(ev.type, ev.uri);
        checks[key] = result;
        report[result.status]++;
        if (result.status !== 'skipped') report.checked++;
        rows.push({ type: ev.type, uri: ev.uri, status: result.status, reason: result.reason });
      }
      const reasons = rows.filter((r) => r.status === 'stale').map((r) => `${r.uri}: ${r.reason}`);
      if (reasons.length) stale[se.key] = reasons;
      else delete stale[se.key];
      report.entries.push({ id: se.meta.id, project: se.project, stale: reasons.length > 0, evidence: rows });
      opts.onProgress?.(++done, entries.length);
      // Let a long-lived process (the daemon) answer queries while a long check runs.
      if (done % 200 === 0) await new Promise((r) => setImmediate(r));
    }
    // Keep earlier results (other projects, URL checks still fresh), unless the cache grew large.
    const merged = Object.keys(cache.checks).length > 20_000 ? checks : { ...cache.checks, ...checks };
    this.evidenceCache.save({ v: 1, checks: merged, stale });
    return report;
  }

  // ---------------------------------------------------------------- freshness, export, import

  /** `memory check-freshness`: expired, soon-expiring and review-due entries (Req 19). */
  checkFreshness(opts: { project?: string; days?: number } = {}): (FreshnessItem & { project: string; summary: string })[] {
    const projects = this.readProjects(opts.project);
    const snap = this.snapshot();
    const mine = snap.entries.filter((se) => !projects || projects.includes(se.project));
    const byId = new Map(mine.map((se) => [se.meta.id, se]));
    return freshness().checkFreshness(
      mine.map((se) => se.meta),
      this.now().getTime(),
      opts.days ?? EXPIRY_WARNING_DAYS,
    ).map((item) => {
      const se = byId.get(item.id)!;
      return { ...item, project: se.project, summary: se.entry.summary };
    });
  }

  /** `memory export`: a project's entries (filtered) sorted by id (Req 14). */
  exportEntries(project: string, filters: QueryFilters = {}): MemoryEntry[] {
    const p = this.project(project, true);
    const accept = compileFilters({ status: 'any', minConfidence: 0, includeExpired: true, ...filters, projects: [p] }, this.now().getTime());
    return this.snapshot()
      .entries.filter((se) => accept(se.meta, se.project))
      .map((se) => se.entry)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /**
   * `memory import`: validates every entry (schema, write policy) before writing anything, then
   * writes them as one commit. An id that already exists is skipped, overwritten or merged
   * field by field (Req 14.5); the report says what happened to each.
   */
  async importEntries(
    project: string,
    docs: unknown[],
    opts: { onConflict?: 'skip' | 'overwrite' | 'merge'; source?: string; onProgress?: (done: number, total: number, phase: 'validate' | 'write') => void } = {},
  ): Promise<ImportResult> {
    const onConflict = opts.onConflict ?? 'skip';
    this.ws.projectDir(project);
    const problems: Problem[] = [];
    const entries: MemoryEntry[] = [];
    const seen = new Map<string, number>();
    docs.forEach((doc, i) => {
      if (i % 200 === 0) opts.onProgress?.(i, docs.length, 'validate');
      const r = validation().validateStoredEntry(doc, `[${i}]`);
      if (!r.ok) return void problems.push(...r.errors);
      const first = seen.get(r.value.id);
      if (first !== undefined) return void problems.push({ path: `[${i}].id`, message: `repeats the id of entry [${first}]` });
      seen.set(r.value.id, i);
      entries.push(r.value);
    });
    const agent = await this.agent();
    const secrets = await this.scanSecrets(docs.map((d, i) => secretRules().secretFields(d, `[${i}]`)), { project, agent, operation: 'import' });
    problems.push(...secrets.flat());
    if (problems.length) throw new ValidationError(problems, opts.source ?? 'import');
    return this.locked(async () => {
      const now = this.now().toISOString();
      const snap = this.snapshot();
      const existing = new Map(snap.entries.map((se) => [se.meta.id, se] as const));
      const files: string[] = [];
      const changes: CommitChange[] = [];
      const imported: ImportResult['applied'] = [];
      const skipped: ImportResult['skipped'] = [];
      if (entries.length && !this.ws.isInitialized(project)) files.push(...initProject(this.ws, project, now));
      entries.forEach((e, k) => {
        if (k % 200 === 0) opts.onProgress?.(k, entries.length, 'write');
        const index = seen.get(e.id) ?? k;
        const old = existing.get(e.id);
        if (old && old.project !== project) {
          skipped.push({ index, id: e.id, errors: [{ path: `[${index}].id`, message: `an entry with this id exists in project ${old.project}` }] });
          return;
        }
        let next = e;
        let action: 'created' | 'overwritten' | 'merged' = 'created';
        if (old) {
          if (onConflict === 'skip') {
            skipped.push({ index, id: e.id, errors: [{ path: `[${index}].id`, message: 'an entry with this id exists (--on-conflict skip)' }] });
            return;
          }
          action = onConflict === 'merge' ? 'merged' : 'overwritten';
          if (onConflict === 'merge') next = merge().mergeEntry(null, old.entry, e); // the same field-level merge as the git merge driver
          if (old.meta.section !== next.section) {
            noteWrite(join(this.ws.root, old.file));
            rmSync(join(this.ws.root, old.file), { force: true });
            files.push(join(this.ws.root, old.file));
          }
        }
        files.push(writeEntry(this.ws, project, next));
        changes.push({ op: 'import', id: e.id, summary: next.summary });
        imported.push({ index, id: e.id, action });
      });
      opts.onProgress?.(entries.length, entries.length, 'write');
      const commit = await this.commit(project, files, changes, agent);
      for (const c of changes) appendLog(this.ws, 'operations', { time: now, op: c.op, id: c.id, project, agent, commit });
      this.warnIfLarge(project, snap, imported.filter((a) => a.action === 'created').length);
      return { applied: imported, skipped, commit, project };
    });
  }

  // ---------------------------------------------------------------- agents (Req 8, 9)

  /** Fills `memory_context` with at most 10 entries when `memory_enabled` is true (Req 8). */
  prepareTask(task: unknown, opts: { project?: string; full?: boolean; refresh?: boolean } = {}): AgentTask {
    const parsed = validation().parseWith(schemas().AgentTaskSchema, task);
    if (!parsed.ok) throw new ValidationError(parsed.errors, 'AgentTask');
    const t = parsed.value;
    if (t.memory_enabled !== true) return t;
    const projects = this.readProjects(opts.project ?? t.project);
    const filters: QueryFilters = { projects, status: ['active'], scope: t.scope, subject: t.subject };
    const text = t.goal ?? '';
    let hits = this.query(text, filters, { limit: 30, refresh: opts.refresh }).results;
    if (hits.length === 0 && text) hits = this.query('', filters, { limit: 30, refresh: opts.refresh }).results;
    hits.sort(
      (a, b) =>
        b.entry.confidence - a.entry.confidence ||
        evidenceQuality(b.entry) - evidenceQuality(a.entry) ||
        b.score - a.score,
    );
    const context = hits.slice(0, 10).map((h) => {
      if (opts.full) return h.entry;
      // Req 8.9: summaries keep the task small; `bass-agents memory show <id>` has the content.
      const { content: _content, ...rest } = h.entry;
      return rest;
    });
    return { ...t, memory_context: context };
  }

  /** Applies `memory_updates` of an AgentResult (Req 9): valid ones as one commit, invalid ones skipped. */
  async applyResult(result: unknown, opts: { project?: string; agent?: string; ignoreOwnAgent?: boolean } = {}): Promise<ApplyResult> {
    const parsed = validation().parseWith(schemas().AgentResultSchema, result);
    if (!parsed.ok) throw new ValidationError(parsed.errors, 'AgentResult');
    const r = parsed.value;
    const updates = r.memory_updates ?? [];
    const agent = opts.agent ?? (opts.ignoreOwnAgent ? undefined : this.agentFromOptions) ?? r.agent_id ?? r.agent ?? undefined;
    const project = opts.project ?? r.project;
    if (updates.length === 0) return { applied: [], skipped: [], commit: null, project: this.project(project) };
    return this.apply(updates, { project, ...(agent ? { agent } : { ignoreOwnAgent: opts.ignoreOwnAgent }) });
  }

  // ---------------------------------------------------------------- lifecycle (000, 001, 003, 004)

  private decayStateFile(): string {
    return join(this.ws.localDir, 'state', 'decay.json');
  }

  /** When decay last ran, per project (local: the daemon catches up from it). */
  decayState(): Record<string, { last_run_at: string; forgotten_total: number }> {
    try {
      return JSON.parse(readFileSync(this.decayStateFile(), 'utf8')) as Record<string, { last_run_at: string; forgotten_total: number }>;
    } catch {
      return {};
    }
  }

  /**
   * `memory decay`: strength or confidence of every live entry of a project as of now, against
   * its value at the previous run (001 DecayResult). Dry run by default; `apply` forgets the
   * entries below the threshold (archive or delete) in one batch commit. Work is done in batches
   * of `batch_size` and `onBatch` hears after each (the daemon stops between batches).
   */
  async decay(
    projectName: string | undefined,
    opts: { apply?: boolean; overrides?: Parameters<typeof resolveDecay>[0]; onBatch?: (done: number, total: number) => boolean | void; resumeAfter?: string } = {},
  ): Promise<DecayReport> {
    const project = this.project(projectName, true);
    const base = this.decayConfig(project);
    const cfg = opts.overrides ? resolveDecay({ ...base, ...opts.overrides, exponential: { ...base.exponential, ...opts.overrides.exponential }, half_life: { ...base.half_life, ...opts.overrides.half_life }, periodic: { ...base.periodic, ...opts.overrides.periodic }, fsrs6: { ...base.fsrs6, ...opts.overrides.fsrs6 } }) : base;
    const threshold = cfg.forget_threshold ?? FORGET_DEFAULTS[cfg.curve];
    const t0 = performance.now();
    const nowDate = this.now();
    const now = nowDate.getTime();
    const last = this.decayState()[project];
    const lastMs = last ? Date.parse(last.last_run_at) : null;
    const usage = this.usage.load();
    const live = this.snapshot().entries.filter((se) => se.project === project && (se.meta.status === 'active' || se.meta.status === 'draft'));
    const entries: DecayReport['entries'] = [];
    const forget: StoredEntry[] = [];
    let changed = 0;
    let resumeAfter: string | null = null;
    // A stable order (by id), so an interrupted run resumes after the last id it finished even
    // though the entries it forgot are no longer live.
    live.sort((x, y) => (x.meta.id < y.meta.id ? -1 : x.meta.id > y.meta.id ? 1 : 0));
    const from = opts.resumeAfter ? live.findIndex((se) => se.meta.id > opts.resumeAfter!) : 0;
    for (let i = from < 0 ? live.length : from; i < live.length; i += cfg.batch_size) {
      for (const se of live.slice(i, i + cfg.batch_size)) {
        const u = usage.get(`${project}/${se.meta.id}`);
        const after = lifecycleOf(se.meta, u, cfg, now, se.meta.importance0);
        const before = lifecycleOf(se.meta, u, cfg, lastMs !== null && lastMs < now ? lastMs : Date.parse(se.meta.updated_at), se.meta.importance0);
        if (after.forget) forget.push(se);
        if (after.value !== before.value || after.forget) {
          changed += after.value !== before.value ? 1 : 0;
          entries.push({
            id: se.meta.id,
            before: before.value,
            after: after.value,
            factor: after.factor,
            days_since_access: after.days_since_access,
            retrievals: after.retrievals,
            memory_type: after.memory_type,
            forget: after.forget,
          });
        }
      }
      await new Promise((r) => setImmediate(r)); // between batches, other work (the daemon's queries) runs
      const done = Math.min(i + cfg.batch_size, live.length);
      if (opts.onBatch?.(done, live.length) === false && done < live.length) {
        resumeAfter = live[done - 1]!.meta.id; // stopped between batches: a later run resumes after it
        break;
      }
    }
    let commit: string | null = null;
    if (opts.apply) {
      const agent = await this.agent();
      commit = await this.locked(async () => {
        const files: string[] = [];
        const changes: CommitChange[] = [];
        const nowIso = nowDate.toISOString();
        for (const se of forget) {
          const abs = join(this.ws.root, se.file);
          if (!existsSync(abs)) continue;
          if (cfg.forget_action === 'delete') {
            noteWrite(abs);
            rmSync(abs, { force: true });
          }
          else writeEntry(this.ws, project, { ...se.entry, status: 'archived', updated_at: nowIso });
          files.push(abs);
          changes.push({ op: 'forget', id: se.meta.id, summary: `${cfg.forget_action} (${cfg.curve} below ${threshold})` });
        }
        const c = await this.commit(project, files, changes, agent);
        for (const ch of changes) appendLog(this.ws, 'operations', { time: nowIso, op: 'forget', action: cfg.forget_action, id: ch.id, project, agent, commit: c });
        const state = this.decayState();
        // An interrupted run is not a completed one: the previous run time stays until it finishes.
        const prev = state[project];
        if (resumeAfter === null) state[project] = { last_run_at: nowIso, forgotten_total: (prev?.forgotten_total ?? 0) + changes.length };
        else if (prev) prev.forgotten_total += changes.length;
        writeFileAtomic(this.decayStateFile(), JSON.stringify(state, null, 2), { fsync: false });
        this.usage.compact();
        return c;
      });
    }
    return {
      project,
      curve: cfg.curve,
      forget_threshold: threshold,
      forget_action: cfg.forget_action,
      analyzed: live.length,
      changed,
      forgotten: forget.length,
      dry_run: !opts.apply,
      previous_run_at: last?.last_run_at ?? null,
      duration_ms: Math.round((performance.now() - t0) * 100) / 100,
      entries,
      resume_after: resumeAfter,
      promotion_candidates: live.filter((se) => isPromotionCandidate(se.meta, usage.get(`${project}/${se.meta.id}`))).map((se) => se.meta.id),
      commit,
    };
  }

  /** Rewrites entries of one project under the lock in one commit; `edit` returns the new entry or null to skip. */
  private async rewrite(
    ids: string[],
    projectName: string | undefined,
    op: CommitOp,
    edit: (e: MemoryEntry, project: string) => MemoryEntry | null,
  ): Promise<{ project: string; entries: MemoryEntry[]; commit: string | null }> {
    if (ids.length === 0) throw new UsageError('name at least one entry id');
    for (const id of ids) checkId(id);
    const first = this.locate(ids[0]!, projectName);
    const project = first.project;
    const agent = await this.agent();
    return this.locked(async () => {
      const files: string[] = [];
      const changes: CommitChange[] = [];
      const out: MemoryEntry[] = [];
      for (const id of ids) {
        const found = this.locate(id, project);
        const next = edit(found.entry, project);
        if (!next) continue;
        const checked = validation().validateStoredEntry(next);
        if (!checked.ok) throw new ValidationError(checked.errors, `entry ${id}`);
        if (next.section !== found.entry.section) {
          noteWrite(join(this.ws.root, found.file));
          rmSync(join(this.ws.root, found.file), { force: true });
        }
        files.push(join(this.ws.root, found.file), writeEntry(this.ws, project, next));
        changes.push({ op, id, summary: next.summary });
        out.push(next);
      }
      const commit = await this.commit(project, files, changes, agent);
      const time = this.now().toISOString();
      for (const c of changes) appendLog(this.ws, 'operations', { time, op, id: c.id, project, agent, commit });
      return { project, entries: out, commit };
    });
  }

  /** `memory reinforce`: strength to 1 and stability up (000), importance boosted on request (001); committed. */
  async reinforce(ids: string[], opts: { project?: string; boostType?: BoostType; amount?: number } = {}): Promise<{ project: string; entries: MemoryEntry[]; commit: string | null }> {
    const now = this.now().getTime();
    return this.rewrite(ids, opts.project, 'reinforce', (e, project) => ({
      ...e,
      lifecycle: reinforceLifecycle(e, this.decayConfig(project), now, { boostType: opts.boostType, amount: opts.amount, baseImportance: initialImportance(e) }),
    }));
  }

  /** Promotes an episodic memory to semantic (003 §2.4): it stops decaying; confidence +0.1, at most 0.95. */
  async promote(id: string, opts: { project?: string } = {}): Promise<{ project: string; entries: MemoryEntry[]; commit: string | null }> {
    return this.rewrite([id], opts.project, 'promote', (e) => {
      if (memoryTypeOf(e) === 'semantic') throw new ConflictError(`entry ${id} is already semantic`);
      return { ...e, confidence: Math.max(e.confidence, Math.min(0.95, Math.round((e.confidence + 0.1) * 100) / 100)), lifecycle: { ...(e.lifecycle ?? {}), memory_type: 'semantic' }, updated_at: this.now().toISOString() };
    });
  }

  /**
   * `memory restore <id>`: an archived entry becomes active again; a deleted one is brought back
   * from git history (the last committed version) as active.
   */
  async restore(id: string, opts: { project?: string } = {}): Promise<{ project: string; entry: MemoryEntry; commit: string | null; from: 'archive' | 'history' }> {
    checkId(id);
    const now = this.now().toISOString();
    try {
      const found = this.locate(id, opts.project);
      if (found.entry.status !== 'archived') throw new ConflictError(`entry ${id} is ${found.entry.status}, not archived or deleted; nothing to restore`);
      const r = await this.rewrite([id], found.project, 'restore', (e) => ({ ...e, status: 'active', updated_at: now }));
      return { project: r.project, entry: r.entries[0]!, commit: r.commit, from: 'archive' };
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
    const git = await this.git();
    const hit = git ? await git.lastDeleted(`ai-memory/${opts.project ?? '*'}/*/${id}.json`) : null;
    if (!hit) throw new NotFoundError(`no entry ${id} in the tree or in git history${opts.project ? ` of project ${opts.project}` : ''}`);
    const project = hit.path.split('/')[1]!;
    const parsed = validation().validateStoredEntry(JSON.parse(hit.content));
    if (!parsed.ok) throw new ValidationError(parsed.errors, `${hit.path} in history`);
    const entry: MemoryEntry = { ...parsed.value, status: 'active', superseded_by: null, updated_at: now };
    const agent = await this.agent();
    const commit = await this.locked(async () => {
      const file = writeEntry(this.ws, project, entry);
      const c = await this.commit(project, [file], [{ op: 'restore', id, summary: entry.summary }], agent);
      appendLog(this.ws, 'operations', { time: now, op: 'restore', id, project, agent, commit: c });
      return c;
    });
    return { project, entry, commit, from: 'history' };
  }

  /** `memory link a b`: each in the other's related_entries (002 Req 2.6), one commit. */
  async link(a: string, b: string, opts: { project?: string; type?: string } = {}): Promise<{ project: string; entries: MemoryEntry[]; commit: string | null }> {
    if (a === b) throw new UsageError('an entry cannot be linked to itself');
    const pa = this.locate(a, opts.project).project;
    const pb = this.locate(b, opts.project).project;
    if (pa !== pb) throw new ConflictError(`entries ${a} and ${b} are in different projects (${pa}, ${pb})`);
    const now = this.now().toISOString();
    const r = await this.rewrite([a, b], pa, 'link', (e) => {
      const other = e.id === a ? b : a;
      return e.related_entries.includes(other) ? null : { ...e, related_entries: [...e.related_entries, other], updated_at: now };
    });
    if (opts.type) appendLog(this.ws, 'operations', { time: now, op: 'link', id: a, to: b, type: opts.type, project: pa });
    return r;
  }

  /** `memory related <id>`: explicit links first, then lexically similar entries (summary, subject, tags). */
  related(id: string, opts: { project?: string; limit?: number } = {}): { id: string; relation: 'linked' | 'similar'; score: number; entry: MemoryEntry }[] {
    const found = this.locate(id, opts.project);
    const limit = opts.limit ?? 10;
    const out: { id: string; relation: 'linked' | 'similar'; score: number; entry: MemoryEntry }[] = [];
    const snap = this.snapshot();
    const byId = new Map(snap.entries.filter((se) => se.project === found.project).map((se) => [se.meta.id, se]));
    for (const rid of found.entry.related_entries) {
      const se = byId.get(rid);
      if (se) out.push({ id: rid, relation: 'linked', score: 1, entry: se.entry });
    }
    const text = `${found.entry.summary} ${found.entry.subject.replace(/[._:-]/g, ' ')} ${found.entry.tags.join(' ')}`;
    const hits = this.query(text, { projects: [found.project], status: ['active'], minConfidence: 0 }, { limit: MAX_RESULTS, record: false }).results;
    for (const h of hits) {
      if (out.length >= limit) break;
      if (h.entry.id === id || out.some((o) => o.id === h.entry.id)) continue;
      out.push({ id: h.entry.id, relation: 'similar', score: h.score, entry: h.entry });
    }
    return out.slice(0, Math.max(limit, found.entry.related_entries.length));
  }

  // ---------------------------------------------------------------- extraction, consolidation, sessions

  /**
   * `memory extract`: candidate memories from free text (001 §3). Stored as drafts (one commit)
   * unless `dryRun`; candidates similar to an existing summary are not stored.
   */
  async extract(
    projectName: string | undefined,
    text: string,
    opts: { dryRun?: boolean; minConfidence?: number; source?: string; maxCandidates?: number } = {},
  ): Promise<ExtractReport> {
    const project = this.project(projectName);
    const limit = extraction().EXTRACT_LIMITS.maxTextLength;
    const truncated = text.length > limit;
    if (truncated) this.warn(`text is ${text.length} characters; only the first ${limit} are read`);
    const cands = extraction().extractCandidates(text.slice(0, limit), opts.minConfidence ?? extraction().EXTRACT_LIMITS.minConfidence).slice(0, opts.maxCandidates ?? extraction().EXTRACT_LIMITS.maxCandidates);
    const existing = this.snapshot()
      .entries.filter((se) => se.project === project && se.meta.status !== 'superseded')
      .map((se) => ({ id: se.meta.id, summary: se.entry.summary }));
    const extractions: ExtractReport['extractions'] = [];
    const updates: { index: number; entry: Record<string, unknown> }[] = [];
    for (const c of cands) {
      const dup = extraction().findSimilar(c.text, [...existing, ...updates.map((u, i) => ({ id: `candidate ${i}`, summary: String(u.entry.summary) }))]);
      const entry = extraction().candidateEntry(c, opts.source ?? 'text');
      extractions.push({ summary: String(entry.summary), type: c.type, confidence: c.confidence, span: [c.start, c.end], section: String(entry.section), stored: false, duplicate_of: dup ?? null, id: null });
      if (!dup) updates.push({ index: extractions.length - 1, entry });
    }
    let commit: string | null = null;
    if (!opts.dryRun && updates.length) {
      const r = await this.apply(
        updates.map((u) => ({ operation: 'create', entry: u.entry })),
        { project },
      );
      commit = r.commit;
      for (const a of r.applied) {
        const x = extractions[updates[a.index]!.index]!;
        x.stored = true;
        x.id = a.id;
      }
      for (const sk of r.skipped) extractions[updates[sk.index]!.index]!.skipped = sk.errors;
    }
    return {
      project,
      candidates: cands.length,
      stored: extractions.filter((x) => x.stored).length,
      deduplicated_count: extractions.filter((x) => x.duplicate_of).length,
      dry_run: Boolean(opts.dryRun),
      truncated,
      extractions,
      commit,
    };
  }

  /** `memory compact`: a reviewable consolidation plan written under .bass-agents/plans/ (nothing else changes). */
  compactPlan(projectName: string | undefined, opts: { strategy?: Strategy; summarizeAt?: number; file?: string } = {}): { plan: ConsolidationPlan; path: string } {
    const project = this.project(projectName, true);
    const entries = this.snapshot().entries.filter((se) => se.project === project);
    const imp = new Map(entries.map((se) => [se.meta.id, se.meta.lifecycle?.importance ?? se.meta.importance0]));
    const summarizeAt = opts.summarizeAt ?? (this.projectConfig(project) as { compact?: { summarize_at?: number } }).compact?.summarize_at;
    const plan = consolidate().buildPlan(project, entries.map((se) => se.entry), {
      now: this.now().toISOString(),
      strategy: opts.strategy,
      summarizeAt,
      importance: (e) => imp.get(e.id) ?? 0.5,
    });
    const path = opts.file ?? join(this.ws.localDir, 'plans', `compact-${project}-${plan.created_at.replace(/[:.]/g, '-')}.json`);
    const abs = this.ws.assertInside(resolvePath(path), 'plan file');
    writeFileAtomic(abs, `${JSON.stringify(plan, null, 2)}\n`, { fsync: false });
    return { plan, path: this.ws.rel(abs) };
  }

  /**
   * `memory compact --apply PLAN`: for each merge and summarize group, creates the new entry and
   * (merge) supersedes the originals by it; link groups are linked. One commit. A group whose
   * members changed since the plan was made is skipped and reported.
   */
  async applyPlan(planFile: string): Promise<ApplyPlanReport> {
    const abs = this.ws.assertInside(resolvePath(planFile), 'plan file');
    let plan: ConsolidationPlan;
    try {
      plan = JSON.parse(readFileSync(abs, 'utf8')) as ConsolidationPlan;
    } catch (err) {
      throw new ValidationError([{ path: planFile, message: `is not a readable plan (${(err as Error).message})` }], 'plan');
    }
    if (plan?.version !== 1 || !Array.isArray(plan.groups) || typeof plan.project !== 'string') {
      throw new ValidationError([{ path: planFile, message: 'is not a consolidation plan (version 1 with project and groups)' }], 'plan');
    }
    const project = this.project(plan.project, true);
    const current = new Map(this.snapshot().entries.filter((se) => se.project === project).map((se) => [se.meta.id, se.meta]));
    const skipped: { group: number; reason: string }[] = [];
    plan.groups.forEach((g, gi) => {
      if (g.action === 'review') return;
      const stale = g.members.find((m) => current.get(m.id)?.updated_at !== m.updated_at || current.get(m.id)?.status !== 'active');
      if (stale) skipped.push({ group: gi, reason: `entry ${stale.id} changed or is no longer active since the plan was made` });
    });
    const merged: { group: number; id: string; superseded: string[] }[] = [];
    const summaries: { group: number; id: string }[] = [];
    const linked: { group: number; ids: string[] }[] = [];
    const agent = await this.agent();
    const commit = await this.locked(async () => {
      const nowIso = this.now().toISOString();
      const files: string[] = [];
      const changes: CommitChange[] = [];
      const nextId = ulid().monotonicFactory();
      const write = (e: MemoryEntry): void => void files.push(writeEntry(this.ws, project, e));
      for (const [gi, g] of plan.groups.entries()) {
        if (skipped.some((sk) => sk.group === gi) || g.action === 'review') continue;
        const members = g.members.map((m) => this.locate(m.id, project).entry);
        if (g.action === 'link') {
          const [a, b] = members as [MemoryEntry, MemoryEntry];
          if (!a.related_entries.includes(b.id)) write({ ...a, related_entries: [...a.related_entries, b.id], updated_at: nowIso });
          if (!b.related_entries.includes(a.id)) write({ ...b, related_entries: [...b.related_entries, a.id], updated_at: nowIso });
          changes.push({ op: 'link', id: a.id, summary: `linked to ${b.id}` });
          linked.push({ group: gi, ids: [a.id, b.id] });
          continue;
        }
        const input = validation().validateEntryInput(g.result);
        if (!input.ok) {
          skipped.push({ group: gi, reason: input.errors.map((p) => `${p.path}: ${p.message}`).join('; ') });
          continue;
        }
        const id = nextId(Date.parse(nowIso));
        const created = buildEntry(input.value, id, nowIso, agent);
        write(created);
        changes.push({ op: 'consolidate', id, summary: created.summary });
        if (g.action === 'summarize') {
          summaries.push({ group: gi, id });
          continue;
        }
        for (const m of members) {
          write({ ...m, status: 'superseded', superseded_by: id, updated_at: nowIso });
          changes.push({ op: 'supersede', id: m.id, summary: `consolidated into ${id}` });
        }
        merged.push({ group: gi, id, superseded: members.map((m) => m.id) });
      }
      const c = await this.commit(project, files, changes, agent);
      for (const ch of changes) appendLog(this.ws, 'operations', { time: nowIso, op: ch.op, id: ch.id, project, agent, commit: c });
      return c;
    });
    return { project, plan: this.ws.rel(abs), merged, summaries, linked, skipped, commit };
  }

  /** `memory log`: memory commits of a project from git trailers, newest first, optionally one operation. */
  async log(projectName: string | undefined, opts: { op?: string; limit?: number } = {}): Promise<{ commit: string; date: string; agent: string | null; subject: string; changes: { id: string; op: string }[] }[]> {
    const projects = projectName ? [this.project(projectName, true)] : this.ws.listProjects();
    const git = await this.git();
    if (!git) return [];
    const out = await git.memoryLog(projects.map((p) => `ai-memory/${p}`), opts.limit ?? 50, opts.op);
    return out;
  }

  /**
   * `memory remember`: short-term (session-local, expiring, never committed) with `session`, else
   * a long-term draft observation committed like any entry (004).
   */
  async remember(projectName: string | undefined, input: string | Record<string, unknown>, opts: { session?: string; ttl?: string; shortTerm?: boolean } = {}): Promise<{ short_term: boolean; id: string; project: string; expires_at?: string; commit?: string | null }> {
    const project = this.project(projectName);
    const fields = typeof input === 'string' ? { summary: input.split('\n')[0]!.slice(0, 300), content: input } : input;
    const summary = String(fields.summary ?? '').trim();
    if (!summary) throw new ValidationError([{ path: 'text', message: 'is empty: nothing to remember' }], 'remember');
    if (opts.shortTerm) {
      if (!opts.session) throw new UsageError('--short-term needs --session NAME');
      const ttl = intervalMs(opts.ttl ?? '2h');
      if (ttl === null) throw new UsageError(`--ttl must look like 30m, 2h, 1d or 1w (got ${JSON.stringify(opts.ttl)})`);
      const found = await this.scanSecrets([secretRules().secretFields(fields)], { project, agent: await this.agent(), operation: 'remember' });
      if (found[0]!.length) throw new ValidationError(found[0]!, 'remember');
      const now = this.now();
      const entries = this.sessions.read(opts.session, now.getTime());
      const content = String(fields.content ?? summary);
      const e: ShortTermEntry = {
        id: `st-${ulid().ulid(now.getTime())}`,
        project,
        summary: summary.slice(0, 300),
        content,
        subject: String(fields.subject ?? 'session'),
        tags: Array.isArray(fields.tags) ? fields.tags.map(String) : [],
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + ttl).toISOString(),
        importance: initialImportance({ summary, content, kind: String(fields.kind ?? 'other') }),
        accesses: 0,
      };
      this.sessions.write(opts.session, [...entries, e]);
      return { short_term: true, id: e.id, project, expires_at: e.expires_at };
    }
    const entry = {
      section: 'observations',
      kind: 'other',
      subject: 'notes',
      scope: 'repo',
      content: summary,
      confidence: 0.6,
      evidence: [{ type: 'assumption', uri: 'remember:cli', note: 'remembered without evidence; confirm before relying on it' }],
      status: 'draft',
      ...fields,
      summary,
    };
    const r = await this.create(entry, { project });
    return { short_term: false, id: r.entry.id, project: r.project, commit: r.commit };
  }

  /** The unexpired short-term entries of a session matching `text` (every word as a prefix), most important first. */
  sessionHits(session: string, text: string): ShortTermEntry[] {
    const now = this.now().getTime();
    const entries = this.sessions.read(session, now);
    const terms = similarity().words(text);
    const hits = entries.filter((e) => {
      if (!terms.length) return true;
      const have = similarity().words(`${e.summary} ${e.content} ${e.subject} ${e.tags.join(' ')}`);
      return terms.some((t) => have.some((w) => w.startsWith(t)));
    });
    if (hits.length) {
      const ids = new Set(hits.map((h) => h.id));
      this.sessions.write(session, entries.map((e) => (ids.has(e.id) ? { ...e, accesses: e.accesses + 1, importance: Math.min(1, Math.round((e.importance + 0.02) * 1000) / 1000) } : e)));
    }
    return hits.sort((a, b) => b.importance - a.importance || (a.created_at < b.created_at ? 1 : -1));
  }

  /**
   * `memory session end S`: short-term entries whose importance reaches the threshold become
   * long-term observations (one commit); the rest are dropped with the session.
   */
  async sessionEnd(session: string, opts: { threshold?: number } = {}): Promise<{ session: string; promoted: { short_term_id: string; id: string; project: string }[]; dropped: number; commit: string | null }> {
    checkSession(session);
    if (!this.sessions.exists(session)) throw new NotFoundError(`no short-term session ${session}`);
    const threshold = opts.threshold ?? 0.5;
    const entries = this.sessions.read(session, this.now().getTime());
    const keep = entries.filter((e) => e.importance >= threshold);
    const promoted: { short_term_id: string; id: string; project: string }[] = [];
    let commit: string | null = null;
    const byProject = new Map<string, ShortTermEntry[]>();
    for (const e of keep) byProject.set(e.project, [...(byProject.get(e.project) ?? []), e]);
    for (const [project, list] of byProject) {
      const r = await this.apply(
        list.map((e) => ({
          operation: 'create',
          entry: {
            section: 'observations',
            kind: 'other',
            subject: e.subject,
            scope: 'repo',
            summary: e.summary,
            content: e.content,
            tags: [...new Set([...e.tags, 'session'])],
            confidence: 0.6,
            evidence: [{ type: 'assumption', uri: `session:${session}`, note: `kept from short-term memory (importance ${e.importance})` }],
            lifecycle: { importance: e.importance, memory_type: 'episodic' },
          },
        })),
        { project },
      );
      commit = r.commit ?? commit;
      for (const a of r.applied) promoted.push({ short_term_id: list[a.index]!.id, id: a.id, project });
    }
    this.sessions.remove(session);
    return { session, promoted, dropped: entries.length - promoted.length, commit };
  }

  // ---------------------------------------------------------------- context and statistics

  /** `memory sync-context <project>`: writes ai-context/<project>.md, committing it when it changed. */
  /** The ai-context document of a project as of now, without writing it. */
  renderContext(projectName: string, opts: { budget?: number } = {}): { project: string; text: string; included: number; omitted: number } {
    const project = this.project(projectName, true);
    // The daemon's watcher keeps its catalog current; others stat the files first.
    const snap = this.watched && this.state ? this.state.snap : this.snapshot();
    const items = snap.entries.filter((se) => se.project === project).map((se) => ({ meta: se.meta, entry: () => se.entry }));
    return { project, ...renderContextOf(project, items, this.now().getTime(), opts.budget ?? DEFAULT_CONTEXT_BUDGET) };
  }

  async syncContext(projectName: string, opts: { budget?: number } = {}): Promise<{ path: string; changed: boolean; included: number; omitted: number; commit: string | null }> {
    const r = this.renderContext(projectName, opts);
    const project = r.project;
    const file = this.ws.assertInside(join(this.ws.contextDir, `${project}.md`), 'context file');
    const changed = !existsSync(file) || readFileSync(file, 'utf8') !== r.text;
    let commit: string | null = null;
    if (changed) {
      commit = await this.locked(async () => {
        noteWrite(file);
        writeFileAtomic(file, r.text);
        return this.commit(project, [file], [{ op: 'update', id: `ai-context/${project}.md`, summary: `sync-context (${r.included} entries)` }], await this.agent());
      });
    }
    return { path: this.ws.rel(file), changed, included: r.included, omitted: r.omitted, commit };
  }

  /**
   * getStatistics (Req 22): one project or all, optionally within a date range. Without a range
   * the entry counts come from an aggregate kept per project selection and updated only for the
   * entries whose files changed since the last call (Req 22.9); logs are read incrementally.
   * `refresh: false` (a caller that tracks changes itself) skips re-reading the files.
   */
  getStatistics(project?: string, range: DateRange = {}, opts: { refresh?: boolean } = {}): Statistics {
    const projects = project ? [this.project(project, true)] : undefined;
    const snap = opts.refresh === false ? (this.state?.snap ?? this.lastSnap ?? this.snapshot()) : this.snapshot();
    const operations = this.logs.read<OperationRecord>(this.ws, 'operations').filter((o) => !projects || projects.includes(o.project));
    const queries = this.logs.read<QueryRecord & { projects: string[] | null }>(this.ws, 'queries').filter(
      (q) => !projects || !q.projects || q.projects.some((p) => projects.includes(p)),
    );
    const staleIds = new Set([...this.evidenceCache.staleKeys()].map((k) => k.slice(k.indexOf('/') + 1)));
    const nowMs = this.now().getTime();
    const mineOf = (): StoredEntry[] => snap.entries.filter((se) => !projects || projects.includes(se.project));
    if (range.start_date || range.end_date) {
      return computeStatistics({ project: projects?.[0] ?? null, entries: mineOf().map((se) => se.meta), operations, queries, range, nowMs, staleIds });
    }
    const key = projects ? projects.join(',') : '*';
    let st = this.aggregates.get(key);
    if (!st) this.aggregates.set(key, (st = { agg: new EntryAggregate(), seen: new Map() }));
    // The same catalog snapshot as last time: no entry changed, only the logs are read again.
    if (st.snap === snap) return statisticsFrom(st.agg, { project: projects?.[0] ?? null, operations, queries, range, nowMs, staleIds });
    st.snap = snap;
    const mine = mineOf();
    const present = new Set<string>();
    for (const se of mine) {
      present.add(se.key);
      const old = st.seen.get(se.key);
      if (old?.stamp === se.stamp) continue;
      if (old) st.agg.remove(old.meta);
      st.agg.add(se.meta);
      st.seen.set(se.key, { stamp: se.stamp, meta: se.meta });
    }
    for (const [k, old] of st.seen) {
      if (present.has(k)) continue;
      st.agg.remove(old.meta);
      st.seen.delete(k);
    }
    return statisticsFrom(st.agg, { project: projects?.[0] ?? null, operations, queries, range, nowMs, staleIds });
  }

}

/**
 * The live entries of a project by duplicate key (Req 16.6), for one apply. A batch of a few
 * updates looks each key up in the entries' raw catalog rows (a substring test per row, parsing
 * only the rows that mention the key: a create at 10K entries parsed every row, ~15 ms, ten
 * times that at 100K); a larger batch builds the whole map once. Changes made by the batch
 * itself are kept on top.
 */
function duplicateIndex(entries: StoredEntry[], project: string, updates: number): { get(k: string): string | undefined; set(k: string, id: string): void; delete(k: string): void } {
  const own = new Map<string, string | null>();
  let all: Map<string, string> | undefined;
  const lookup = (k: string): string | undefined => {
    if (updates > 4) {
      if (!all) {
        all = new Map();
        for (const se of entries) if (se.project === project && se.meta.status !== 'superseded') all.set(se.meta.dup, se.meta.id);
      }
      return all.get(k);
    }
    const needle = `"${k}"`;
    let found: string | undefined;
    for (const se of entries) if (se.project === project && se.mentions(needle) && se.meta.dup === k && se.meta.status !== 'superseded') found = se.meta.id;
    own.set(k, found ?? null);
    return found;
  };
  return {
    get: (k) => (own.has(k) ? (own.get(k) ?? undefined) : lookup(k)),
    set: (k, id) => void own.set(k, id),
    delete: (k) => void own.set(k, null),
  };
}

function stripEntryPrefix(problems: Problem[]): Problem[] {
  return problems.map((p) => ({ ...p, path: p.path.replace(/^entry\.?/, '') || '(root)' }));
}

/** The daemon's jobs (decay, freshness, evidence, ai-context), one at a time, resumable across a stop; due times read the service clock. */
import { existsSync } from 'node:fs';
import { isContextWorthy } from '../core/context.js';
import { intervalMs } from '../core/lifecycle.js';
import { keyOfFile, type CatalogSnapshot, type StoredEntry } from '../store/catalog.js';
import { tryOr, writeFileAtomic } from '../store/fsutil.js';
import { readNoFollow } from '../store/state-dir.js';
import { GLOBAL_PROJECT } from '../store/workspace.js';
import { collectGarbage } from '../service/semantic.js';
import * as uc from '../service/use-cases.js';
import type { Daemon } from './daemon.js';

interface JobState {
  last_run_at: string | null;
  /** decay: where an interrupted run stopped, per project. */
  cursor?: Record<string, string>;
  runs: number;
  last_error?: string | null;
}

type JobName = 'decay' | 'freshness' | 'context' | 'evidence';

interface State {
  jobs: Record<JobName, JobState>;
  /** decay: last completed run per project (intervals are per project). */
  decay_projects: Record<string, string>;
}

const emptyJob = (): JobState => ({ last_run_at: null, runs: 0 });

export interface JobOptions {
  freshnessMs: number;
  evidenceMs: number;
  /** Whether HEAD moved a moment ago: jobs' commits wait, not to hold git's index lock while the user's checkout or rebase needs it. */
  gitBusy?: () => boolean;
  /** Work the jobs let finish first (a first start's vectors: the two's garbage would add up). */
  before?: () => Promise<void>;
  /** Brings the daemon's catalog and index up to date after a job's own writes. */
  afterWrite: () => void;
}

/** What the jobs use of their daemon (its own caller: jobs write and warn as the daemon). */
type JobHost = Pick<Daemon, 'engine' | 'own' | 'paths' | 'log' | 'status' | 'metrics'>;

/** ai-context regeneration waits for changes to be quiet this long (a burst is one commit)... */
const CONTEXT_QUIET_MS = 2000;
/** ...but no longer than this after the first change (a steady stream of writes). */
const CONTEXT_MAX_WAIT_MS = 30_000;

export class Jobs {
  private state: State = { jobs: { decay: emptyJob(), freshness: emptyJob(), context: emptyJob(), evidence: emptyJob() }, decay_projects: {} };
  private chain: Promise<void> = Promise.resolve();
  /** Jobs queued or running: a tick must not queue one again (a long check would pile up). */
  private readonly pending = new Set<JobName>();
  private stopping = false;
  private readonly contextDue = new Set<string>();
  private contextTimer: NodeJS.Timeout | undefined;
  /** performance.now() of the first change the armed regeneration waits for. */
  private contextSince = 0;

  constructor(
    private readonly d: JobHost,
    private readonly opts: JobOptions,
  ) {
    const saved = tryOr(() => JSON.parse(readNoFollow(d.paths.state, 'utf8')) as Partial<State> | null, null); // (else a first start)
    this.state = { jobs: { ...this.state.jobs, ...saved?.jobs }, decay_projects: saved?.decay_projects ?? {} };
    d.status.jobs = this.state.jobs;
  }

  private now(): number {
    return this.d.own.now().getTime();
  }

  save(): void {
    writeFileAtomic(this.d.paths.state, `${JSON.stringify(this.state, null, 2)}\n`, { fsync: true });
  }

  /** Queues a job behind the one running; errors are recorded, never thrown. */
  run(name: JobName, fn: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(async () => {
      while (this.opts.gitBusy?.() && !this.stopping) await new Promise((r) => setTimeout(r, 250));
      await this.opts.before?.();
      if (this.stopping && name !== 'context') return;
      const job = this.state.jobs[name];
      try {
        await fn();
        job.last_error = null;
      } catch (err) {
        job.last_error = (err as Error).message;
        this.d.status.recordError(`job ${name}`, err);
      }
      job.runs++;
      job.last_run_at = this.d.own.now().toISOString();
      this.save();
    });
    return this.chain;
  }

  private decayDue(project: string): boolean {
    const every = intervalMs(this.d.engine.decayConfig(project, this.d.own.now()).interval) ?? 86_400_000;
    const last = this.state.decay_projects[project];
    return !last || this.now() - Date.parse(last) >= every || Boolean(this.state.jobs.decay.cursor?.[project]);
  }

  private async decay(): Promise<void> {
    for (const project of this.d.engine.ws.listProjects()) {
      if (this.stopping) return;
      if (!this.d.engine.ws.isInitialized(project) || !this.decayDue(project)) continue;
      const cursor = this.state.jobs.decay.cursor ?? (this.state.jobs.decay.cursor = {});
      const end = this.d.metrics.decayDuration.startTimer();
      const r = await uc.decay(this.d.engine, this.d.own, project, { apply: true, resumeAfter: cursor[project], onBatch: () => !this.stopping });
      end();
      this.d.metrics.forgotten.inc(r.forgotten);
      if (r.resume_after !== null) {
        cursor[project] = r.resume_after;
        this.d.log.info({ event: 'decay_interrupted', project, resume_after: r.resume_after });
      } else {
        delete cursor[project];
        this.state.decay_projects[project] = this.d.own.now().toISOString();
      }
      this.d.log.info({ event: 'decay', project, analyzed: r.analyzed, forgotten: r.forgotten, ms: r.duration_ms, commit: r.commit });
      this.opts.afterWrite();
    }
  }

  private async freshness(): Promise<void> {
    const items = uc.checkFreshness(this.d.engine, this.d.own, { days: 7 });
    this.d.status.expiring_entries = items.slice(0, 50).map((i) => ({ id: i.id, project: i.project, state: i.state, valid_to: i.valid_to }));
    for (const i of items) this.d.log.info({ event: 'freshness', id: i.id, project: i.project, state: i.state, valid_to: i.valid_to, days: i.days });
  }

  private async evidence(): Promise<void> {
    const r = await uc.validateEvidence(this.d.engine, this.d.own, undefined, { timeoutMs: 5000, rows: false });
    this.d.status.stale_evidence_entries = r.stale_entries ?? 0;
    this.d.log.info({ event: 'evidence', checked: r.checked, ok: r.ok, stale: r.stale, unknown: r.unknown });
  }

  private due(job: JobState, every: number): boolean {
    return !job.last_run_at || this.now() - Date.parse(job.last_run_at) >= every;
  }

  /** The scheduler tick: starts the jobs that are due (and, at start, those missed while down). */
  tick(): void {
    if (this.stopping) return;
    const ws = this.d.engine.ws;
    if (ws.listProjects().some((p) => ws.isInitialized(p) && this.decayDue(p))) this.once('decay', () => this.decay());
    if (this.due(this.state.jobs.freshness, this.opts.freshnessMs)) this.once('freshness', () => this.freshness());
    if (this.due(this.state.jobs.evidence, this.opts.evidenceMs)) this.once('evidence', () => this.evidence());
  }

  /** Queues a scheduled job unless it is already queued or running. */
  private once(name: JobName, fn: () => Promise<void>): void {
    if (this.pending.has(name)) return;
    this.pending.add(name);
    // A full collection before and after (see collectGarbage): each job would grow the heap on the last one's garbage.
    void this.run(name, () => {
      collectGarbage();
      return fn().finally(() => {
        this.pending.delete(name);
        collectGarbage();
      });
    });
  }

  /** Regenerates ai-context of projects whose context-worthy entries changed (`snap`: a batch's `touched`, or the whole snapshot). */
  scheduleContext(changedFiles: string[], snap: CatalogSnapshot | undefined): void {
    const now = this.now();
    const touched = snap?.touched;
    let byFile: Map<string, StoredEntry> | undefined;
    const entryOf = (f: string): StoredEntry | undefined => {
      if (touched) {
        const se = touched.get(keyOfFile(f));
        return se && se.file === f ? se : undefined;
      }
      byFile ??= new Map((snap?.entries ?? []).map((x) => [x.file, x]));
      return byFile.get(f);
    };
    for (const f of changedFiles) {
      const project = f.split('/')[1];
      if (!project || project === GLOBAL_PROJECT || this.contextDue.has(project)) continue;
      const se = entryOf(f);
      // A removed or demoted entry may have been in the context: regenerate unless it clearly never was.
      if (!se || isContextWorthy(se.entry, now) || existsSync(`${this.d.engine.ws.contextDir}/${project}.md`)) this.contextDue.add(project);
    }
    if (this.contextDue.size) this.armContext();
  }

  private armContext(): void {
    const now = performance.now();
    if (this.contextTimer) clearTimeout(this.contextTimer);
    else this.contextSince = now;
    const wait = Math.max(0, Math.min(CONTEXT_QUIET_MS, this.contextSince + CONTEXT_MAX_WAIT_MS - now));
    this.contextTimer = setTimeout(() => {
      this.contextTimer = undefined;
      void this.run('context', async () => {
        for (const p of [...this.contextDue]) {
          this.contextDue.delete(p);
          if (!this.d.engine.ws.isInitialized(p)) continue;
          const r = await uc.syncContext(this.d.engine, this.d.own, p);
          if (r.changed) this.d.log.info({ event: 'context_regenerated', project: p, commit: r.commit });
        }
      });
    }, wait);
  }

  /** Stops scheduling; the running job finishes its batch and its cursor is saved. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.contextTimer) clearTimeout(this.contextTimer);
    await this.chain.catch(() => undefined);
    this.save();
  }
}

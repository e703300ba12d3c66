/** The one write transaction, `withWrite`: its steps are docs/ARCHITECTURE.md "The write path". */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { commitMessage, serializeEntry, type CommitChange } from '../core/entry.js';
import { BusyError, ConflictError, InterruptedError, ValidationError, type Problem } from '../core/errors.js';
import type { MemoryEntry } from '../core/schema.js';
import type { SecretFinding } from '../core/secrets.js';
import { tryOr, writeFileAtomic } from '../store/fsutil.js';
import type { GitRepo } from '../store/git.js';
import { INDEX_LOCK_WAIT_MS, type IndexChange } from '../store/git-commit.js';
import { keepGitViewIf } from '../store/git-view.js';
import { checkId } from '../store/workspace.js';
import { headFromFiles, writeBlocker } from '../store/git-state.js';
import { Journal } from '../store/journal.js';
import { appendLogs } from '../store/local-log.js';
import { lockTimeout, withLock } from '../store/lock.js';
import { ensureDrivers, gitAttributesText, projectFiles } from '../store/entries.js';
import { modules, type Engine } from './engine.js';
import type { Caller } from './caller.js';
import { recoverWrite } from './recovery.js';
import { gitDirOf, stateDirOf as localStateOf } from '../store/state-dir.js';

/** Files written between two journal lines and two checks for a signal. */
const CHUNK = 256;

interface Staged {
  /** null: remove the file. */
  text: string | null;
  entry?: MemoryEntry;
  /** The file a moved entry was read from: its old texts count as known to the secret scan. */
  previous?: string;
  /** Under an id just made: no earlier version to compare texts with. */
  fresh?: boolean;
  /**
   * A default staged because the work tree lacks the file: dropped when HEAD holds it (a sparse
   * checkout or a deletion hid it), so a team's committed file is never replaced unseen.
   */
  unlessInHead?: boolean;
}

interface WriteOptions {
  project: string;
  /** Default: caller.agent. */
  agent?: string;
  /** Files only, no commit: resolving a merge the user has in progress (`doctor --fix`). */
  noCommit?: boolean;
  onProgress?: (done: number, total: number, phase: 'write') => void;
}

/** What `fn` stages; nothing touches the disk until `fn` returns. */
export class WriteTx {
  readonly project: string;
  readonly agent: string;
  readonly now: Date;
  readonly nowIso: string;
  private readonly staged = new Map<string, Staged>();
  private readonly sectionDirs = new Map<string, string>();
  private readonly changes: CommitChange[] = [];
  private readonly logRecords: Record<string, unknown>[] = [];
  private initialized: boolean | undefined;

  constructor(
    private readonly engine: Engine,
    private readonly caller: Caller,
    private readonly opts: WriteOptions & { agent: string },
    private readonly git: GitRepo | null,
    private readonly stateDir: string,
    private readonly signals: SignalTrap | null,
  ) {
    this.project = opts.project;
    this.agent = opts.agent;
    this.now = caller.now();
    this.nowIso = this.now.toISOString();
  }

  put(entry: MemoryEntry, opts: { from?: string; fresh?: boolean } = {}): string {
    this.ensureProject();
    // A section folder is checked once (path checks add up over a large apply); finish() checks every file.
    checkId(entry.id);
    let dir = this.sectionDirs.get(entry.section);
    if (dir === undefined) this.sectionDirs.set(entry.section, (dir = this.engine.ws.sectionDir(this.project, entry.section)));
    const abs = join(dir, `${entry.id}.json`);
    const previous = opts.from !== abs ? opts.from : undefined;
    if (previous) this.remove(previous);
    this.staged.set(abs, { text: serializeEntry(entry), entry, previous, fresh: opts.fresh });
    return abs;
  }

  remove(abs: string): void {
    this.staged.set(abs, { text: null });
  }

  putFile(abs: string, text: string, opts: { unlessInHead?: boolean } = {}): void {
    this.staged.set(abs, { text, unlessInHead: opts.unlessInHead });
  }

  /** The project's folder files, and in git the attributes that select the merge driver, as `memory init` lays them down. */
  ensureProject(): void {
    if (this.initialized) return;
    for (const f of projectFiles(this.engine.ws, this.project, this.nowIso)) if (!this.staged.has(f.abs)) this.putFile(f.abs, f.text, { unlessInHead: true });
    if (this.git) {
      const attrs = join(this.engine.ws.memoryDir, '.gitattributes');
      const text = this.staged.has(attrs) ? null : gitAttributesText(attrs);
      if (text !== null) this.putFile(attrs, text, { unlessInHead: !existsSync(attrs) });
    }
    this.initialized = true;
  }

  /** A change for the commit's trailers and, unless `log` is false, a line of the operation log (the commit appended). */
  change(
    c: CommitChange,
    log: Record<string, unknown> | false = { time: this.nowIso, op: c.op, id: c.id, project: this.project, agent: c.agent ?? this.agent },
  ): void {
    this.changes.push(c);
    if (log) this.logRecords.push(log);
  }

  /** Lets a signal in (long loops call this); throws when one came. */
  async checkpoint(): Promise<void> {
    await new Promise((r) => setImmediate(r));
    if (this.signals?.signal) throw new InterruptedError(this.signals.signal);
  }

  async finish(): Promise<string | null> {
    const { git, stateDir } = this;
    if (this.staged.size === 0) return null;
    await this.checkpoint();
    await this.scanSecrets();
    this.validate();
    if (git) await this.keepCommittedFiles(git);
    if (this.staged.size === 0) return null;
    const ws = this.engine.ws;
    const files = [...this.staged.keys()];
    ws.assertMemoryPaths(files);
    const rels = files.map((f) => ws.rel(f));
    const autoCommit = this.engine.projectConfig(this.project, this.now).git.autoCommit && !this.opts.noCommit;
    const useGit = autoCommit ? git : null;
    if (autoCommit && !git) this.caller.warn(`${ws.root} is not a git repository: memory was written, but no history is kept`);
    const journal = Journal.begin(stateDir, { root: ws.root, head: git ? headFromFiles(git.gitDir) : null });
    let moved = false;
    try {
      const made = new Set<string>(); // folders made (or found) by this write: one mkdir each
      for (let i = 0; i < files.length; i += CHUNK) {
        const chunk = files.slice(i, i + CHUNK);
        journal.addPaths(rels.slice(i, i + CHUNK));
        for (const abs of chunk) {
          const s = this.staged.get(abs)!;
          if (s.text === null) rmSync(abs, { force: true });
          else {
            const dir = dirname(abs);
            if (!made.has(dir)) {
              mkdirSync(dir, { recursive: true });
              made.add(dir);
            }
            // With git the commit is the durable copy (the journal covers a crash before it).
            writeFileAtomic(abs, s.text, { fsync: !useGit, dirExists: true });
          }
        }
        this.opts.onProgress?.(Math.min(files.length, i + CHUNK), files.length, 'write');
        await this.checkpoint();
      }
      // A running daemon hears now rather than from its watcher later.
      if (this.engine.onWrite) await this.engine.onWrite(files, this.caller).catch(() => undefined);
      let indexChange: IndexChange | undefined;
      const committing = useGit?.commitPaths(files, commitMessage(this.project, this.changes, this.agent), {
        runHooks: this.engine.projectConfig(this.project, this.now).commit?.hooks === 'run',
        warn: (m) => this.caller.warn(m),
        indexLockWaitMs: lockTimeout(this.caller.env, INDEX_LOCK_WAIT_MS),
        onIndexLock: (note) => journal.note({ index_lock: note }),
        onIndexInstalled: (change) => (indexChange = change),
        onCommitted: (commit, parent) => {
          moved = true;
          journal.note({ commit });
          this.engine.onCommit?.(commit, parent, files);
        },
      });
      committing?.catch(() => undefined); // awaited below: not an unhandled rejection meanwhile
      // Before git runs (its first step awaits): the texts are handed over, not parsed again (a failure only costs the next command a re-read).
      tryOr(() => this.engine.catalog.noteWritten(rels, new Map(files.map((f, k) => [rels[k]!, this.staged.get(f)!]))), undefined);
      const commit = (await committing) ?? null;
      // Saves the next command a git listing of every entry file.
      if (indexChange) tryOr(() => this.engine.catalog.carryGitView(indexChange!), undefined);
      appendLogs(
        ws,
        'operations',
        this.logRecords.map((r) => ({ ...r, commit })),
      );
      journal.end();
      if (this.signals?.signal) this.caller.warn(`${this.signals.signal} came after the commit was made: the write is complete`);
      return commit;
    } catch (err) {
      journal.close();
      if (!moved) await recoverWrite(this.engine, this.caller, git, stateDir).catch(() => undefined);
      // A Ctrl-C reaches git too (the process group): report the signal, not git's failure.
      if (!moved && this.signals?.signal && !(err instanceof InterruptedError)) throw new InterruptedError(this.signals.signal);
      throw err;
    }
  }

  /** Drops staged defaults of files HEAD holds (Staged.unlessInHead). */
  private async keepCommittedFiles(git: GitRepo): Promise<void> {
    const defaults = [...this.staged].filter(([, s]) => s.unlessInHead).map(([abs]) => abs);
    if (!defaults.length) return;
    const paths = defaults.map((f) => git.repoPath(f));
    const blobs = await git.blobsAt('HEAD', paths);
    for (const [k, f] of defaults.entries()) if (blobs.has(paths[k]!)) this.staged.delete(f);
  }

  /** New or changed text fields are scanned; a finding refuses the whole write, naming file, field and rule, never the value. */
  private async scanSecrets(): Promise<void> {
    const { secretFields, findingMessage } = modules.secretRules();
    const { knownClean, scanFields } = modules.secretScan();
    // The agent's name goes into the commit and the logs: scanned like a field.
    const fields: { path: string; text: string }[] = [{ path: 'agent', text: this.agent }];
    for (const [abs, s] of this.staged) {
      if (!s.entry) continue;
      // Texts the pre-scan found clean need no comparison.
      const texts = secretFields(s.entry).filter((f) => !knownClean(f.text));
      if (!texts.length) continue;
      const known = new Set<string>();
      for (const old of s.fresh ? [] : [abs, s.previous]) {
        if (!old || !existsSync(old)) continue;
        // An unreadable old version: everything is scanned.
        for (const f of tryOr(() => secretFields(JSON.parse(readFileSync(old, 'utf8'))), [])) known.add(`${f.path}\u0000${f.text}`);
      }
      const rel = this.engine.ws.rel(abs);
      for (const f of texts) if (!known.has(`${f.path}\u0000${f.text}`)) fields.push({ path: `${rel}: ${f.path}`, text: f.text });
    }
    const findings = await scanFields(fields);
    if (!findings.length) return;
    auditSecrets(this.engine, this.nowIso, { operation: this.changes[0]?.op ?? 'write', project: this.project, agent: this.agent }, findings);
    throw new ValidationError(
      findings.map((f) => ({ path: f.path, message: findingMessage(f) })),
      'write',
    );
  }

  private validate(): void {
    const problems: Problem[] = [];
    for (const [abs, s] of this.staged) {
      if (!s.entry) continue;
      const r = modules.validation().validateStoredEntry(s.entry);
      if (!r.ok) problems.push(...r.errors.map((p) => ({ ...p, path: `${this.engine.ws.rel(abs)}: ${p.path}` })));
    }
    if (problems.length) throw new ValidationError(problems, 'write');
  }
}

/** Audit log of refused secrets: field, rule and position, never the value (nor the writer's name when it holds one). */
export function auditSecrets(engine: Engine, time: string, who: { operation: string; project?: string; agent: string }, findings: SecretFinding[]): void {
  const named = findings.some((f) => f.path === 'agent');
  appendLogs(
    engine.ws,
    'audit',
    findings.map((f) => ({
      time,
      event: 'secret_rejected',
      operation: who.operation,
      project: who.project ?? null,
      agent: named ? null : who.agent,
      path: f.path,
      rule: f.rule,
      line: f.line,
      column: f.column,
    })),
  );
}

/** Where the lock and the journal live: the git dir, or the local state folder outside git. */
function stateDirOf(engine: Engine, git: GitRepo | null): string {
  if (git) return git.stateDir;
  engine.ws.ensureLocal({ force: true });
  return engine.ws.local('state', true);
}

/** Runs `fn` as one write; the commit is null when nothing changed or outside git. */
export async function withWrite<T>(
  engine: Engine,
  caller: Caller,
  opts: WriteOptions,
  fn: (tx: WriteTx) => Promise<T> | T,
): Promise<{ value: T; commit: string | null }> {
  const git = await engine.git();
  const agent = opts.agent ?? (await caller.agent(engine));
  // Any write registers the merge driver the memory asks for (a clone that never ran init would
  // merge entries with conflict markers), and so does the write that lays the attributes down.
  const drivers = async (): Promise<void> => {
    if (!git || engine.mergeDriverChecked || !existsSync(join(engine.ws.memoryDir, '.gitattributes'))) return;
    engine.mergeDriverChecked = true;
    await ensureDrivers(git, engine.ws.root, caller.env).catch(() => undefined);
  };
  await drivers();
  if (git && !caller.allowDetached && !opts.noCommit) {
    const why = writeBlocker(git.gitDir);
    if (why) throw new ConflictError(`refusing to write memory: ${why}; pass --allow-detached (or BASS_AGENTS_ALLOW_DETACHED=1) to write here anyway`);
  }
  engine.checkSparse();
  const stateDir = stateDirOf(engine, git);
  return withLock(
    engine.ws,
    'write',
    async () => {
      keepGitViewIf(!(await recoverWrite(engine, caller, git, stateDir)), engine.ws.root);
      const signals = engine.longLived ? null : trapSignals();
      try {
        const tx = new WriteTx(engine, caller, { ...opts, agent }, git, stateDir, signals);
        const value = await fn(tx);
        const commit = await tx.finish();
        await drivers();
        return { value, commit };
      } finally {
        signals?.release();
      }
    },
    { env: caller.env, dir: stateDir },
  );
}

/** Whether a writer left a journal here: a few stats, no git process (every CLI command asks first). */
export function hasPendingJournal(root: string): boolean {
  const gitDir = gitDirOf(root)?.gitDir;
  if (gitDir) return existsSync(join(gitDir, 'bass-agents', 'journal'));
  return existsSync(join(localStateOf(root).dir, 'state', 'journal'));
}

/** Recovers a killed writer's journal if the lock is free now (a holder is alive and recovers its own); null: nothing done. */
export async function recoverPending(engine: Engine, caller: Caller): Promise<{ kept: number; undone: number; ignored: number } | null> {
  const git = await engine.git();
  const stateDir = stateDirOf(engine, git);
  try {
    // A read never waits for git's index lock: the journal then stays for a later command.
    return await withLock(engine.ws, 'write', () => recoverWrite(engine, caller, git, stateDir, 0), { env: caller.env, dir: stateDir, timeoutMs: 0 });
  } catch (err) {
    if (err instanceof BusyError) return null;
    throw err;
  }
}

interface SignalTrap {
  signal: 'SIGINT' | 'SIGTERM' | null;
  release(): void;
}

/** SIGINT/SIGTERM set a flag the write checks between chunks; a second exits at once (the journal lets the next writer clean up). */
function trapSignals(): SignalTrap {
  const handlers = (['SIGINT', 'SIGTERM'] as const).map((sig) => {
    const h = (): void => {
      if (trap.signal) process.exit(sig === 'SIGINT' ? 130 : 143);
      trap.signal = sig;
    };
    process.on(sig, h);
    return [sig, h] as const;
  });
  const trap: SignalTrap = { signal: null, release: () => handlers.forEach(([sig, h]) => process.off(sig, h)) };
  return trap;
}

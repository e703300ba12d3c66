/**
 * The write transaction: the one place that takes the write lock, journals, writes memory files
 * and commits. Every write of every front end goes through `withWrite`:
 *
 *   refuse a detached HEAD or a rebase/merge/cherry-pick/bisect in progress → lock (in the git
 *   dir) → finish or undo what a killed writer left → `fn(tx)` stages entries and files →
 *   secret scan of every new or changed text field → validation of every staged entry → memory
 *   paths only → journal (fsynced before any file is touched) → atomic file writes, in chunks
 *   that a SIGINT/SIGTERM can stop → one git commit (HEAD and the user's index move together
 *   under git's index.lock) → operation log → journal removed.
 *
 * A failure or an interruption before HEAD moved puts every touched file back as HEAD has it.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { commitMessage, serializeEntry, type CommitChange } from '../core/entry.js';
import { BusyError, ConflictError, InterruptedError, ValidationError, type Problem } from '../core/errors.js';
import type { MemoryEntry } from '../core/schema.js';
import type { SecretFinding } from '../core/secrets.js';
import { writeFileAtomic } from '../store/fsutil.js';
import type { GitRepo } from '../store/git.js';
import { INDEX_LOCK_WAIT_MS, type IndexChange } from '../store/git-commit.js';
import { checkId } from '../store/workspace.js';
import { headFromFiles } from '../store/git-state.js';
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
  /** New content, or null to remove the file. */
  text: string | null;
  entry?: MemoryEntry;
  /** The file this entry was read from when it moves (another section): its old texts count as known. */
  previous?: string;
  /** An entry under an id just made: no earlier version of it to compare texts with. */
  fresh?: boolean;
  /**
   * A default (config.yaml, .gitattributes...) staged because the file is missing from the work
   * tree: dropped when HEAD holds the file (a sparse checkout or a deletion in the work tree hid
   * it), so that a team's committed file is never replaced by defaults unseen.
   */
  unlessInHead?: boolean;
}

interface WriteOptions {
  /** The project the commit message names. */
  project: string;
  /** The writer (default: the caller's, caller.agent). */
  agent?: string;
  /** What the audit log names as the operation of a refused secret. */
  operation: string;
  /** Write the files and make no commit: the resolution of a merge the user has in progress (`doctor --fix`). */
  noCommit?: boolean;
  onProgress?: (done: number, total: number, phase: 'write') => void;
}

/** What `fn` stages inside a transaction. Nothing touches the disk until `fn` returns. */
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

  /** Stages an entry of this transaction's project at its place (`fresh`: under an id just made); returns the absolute path. */
  put(entry: MemoryEntry, opts: { from?: string; fresh?: boolean } = {}): string {
    this.ensureProject();
    // The section folder is checked once per transaction (a path check walks and resolves the
    // folders, which adds up over a large apply); finish() checks every file before writing.
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

  /** Stages a memory file that is not an entry (config.yaml, .gitattributes, ai-context); `unlessInHead`: see Staged. */
  putFile(abs: string, text: string, opts: { unlessInHead?: boolean } = {}): void {
    this.staged.set(abs, { text, unlessInHead: opts.unlessInHead });
  }

  /**
   * Creates the project's folder files with the first entry (once per transaction), and in a git
   * repository the attributes that select the field-level merge driver, as `memory init` does.
   */
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

  /**
   * Records a change for the commit message (a `Memory-Id`/`Memory-Op` pair) and, unless `log`
   * is false, a line of the operation log: `log` (default: time, op, id, project, agent) with
   * the commit appended.
   */
  change(
    c: CommitChange,
    log: Record<string, unknown> | false = { time: this.nowIso, op: c.op, id: c.id, project: this.project, agent: c.agent ?? this.agent },
  ): void {
    this.changes.push(c);
    if (log) this.logRecords.push(log);
  }

  /** Lets signals be handled (a long loop calls this now and then); throws when one came. */
  async checkpoint(): Promise<void> {
    await new Promise((r) => setImmediate(r));
    if (this.signals?.signal) throw new InterruptedError(this.signals.signal);
  }

  /** Scans, validates, journals, writes and commits what was staged; the commit or null. */
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
            // With git the commit is the copy that counts, as durable as git makes its own commits
            // (the journal covers a crash before it); without git, the file is fsynced.
            writeFileAtomic(abs, s.text, { fsync: !useGit, dirExists: true });
          }
        }
        this.opts.onProgress?.(Math.min(files.length, i + CHUNK), files.length, 'write');
        await this.checkpoint();
      }
      // Tell a running daemon right away (it would see the files through its watcher a little later).
      if (this.engine.onWrite) await this.engine.onWrite(files, this.caller).catch(() => undefined);
      let indexChange: IndexChange | undefined;
      const committing = useGit?.commitPaths(files, commitMessage(this.project, this.changes, this.agent), {
        runHooks: this.engine.projectConfig(this.project, this.now).commit?.hooks === 'run',
        warn: (m) => this.caller.warn(m),
        indexLockWaitMs: lockTimeout(this.caller.env, INDEX_LOCK_WAIT_MS),
        onIndexLock: (note) => journal.indexLock(note),
        onIndexInstalled: (change) => (indexChange = change),
        onCommitted: (commit, parent) => {
          moved = true;
          journal.committed(commit);
          this.engine.onCommit?.(commit, parent, files);
        },
      });
      committing?.catch(() => undefined); // awaited below; this only keeps it from being reported as unhandled meanwhile
      try {
        // (A no-op in the daemon: its watcher keeps its catalog.) It runs before git does (the
        // commit's first step awaits), so the files' texts are handed over rather than parsed again.
        const texts = new Map(files.map((f, k) => [rels[k]!, this.staged.get(f)!]));
        this.engine.catalog.noteWritten([...texts.keys()], texts);
      } catch {
        /* a cache that cannot be updated only costs the next command a re-read */
      }
      const commit = (await committing) ?? null;
      try {
        // The next command need not list every entry file with git again (a no-op in the daemon).
        if (indexChange) this.engine.catalog.carryGitView(indexChange);
      } catch {
        /* only costs the next command a listing */
      }
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
      if (!moved) await recoverWrite(this.engine, this.caller, git, stateDir).catch(() => undefined); // undo this write's files now
      // A Ctrl-C reaches git too (the whole process group): what stopped the write is the signal.
      if (!moved && this.signals?.signal && !(err instanceof InterruptedError)) throw new InterruptedError(this.signals.signal);
      throw err;
    }
  }

  /** Drops the staged defaults of files HEAD holds (see Staged.unlessInHead): one git process, only when there are any. */
  private async keepCommittedFiles(git: GitRepo): Promise<void> {
    const defaults = [...this.staged].filter(([, s]) => s.unlessInHead).map(([abs]) => abs);
    if (!defaults.length) return;
    const blobs = await git.blobsAt(
      'HEAD',
      defaults.map((f) => git.repoPath(f)),
    );
    for (const f of defaults) if (blobs.has(git.repoPath(f))) this.staged.delete(f);
  }

  /**
   * Every text field of every staged entry that is new or changed (against the file it replaces)
   * is scanned; a finding refuses the whole transaction (exit 1), naming file, field and rule,
   * never the value, and goes to the audit log.
   */
  private async scanSecrets(): Promise<void> {
    const { secretFields, findingMessage } = modules.secretRules();
    const { knownClean, scanFields } = modules.secretScan();
    // The agent's name goes into the commit message and the logs: it is scanned like a field.
    const fields: { path: string; text: string }[] = [{ path: 'agent', text: this.agent }];
    for (const [abs, s] of this.staged) {
      if (!s.entry) continue;
      // Texts scanned before the lock (all of a batch's, as a rule) need no name or comparison.
      const texts = secretFields(s.entry).filter((f) => !knownClean(f.text));
      if (!texts.length) continue;
      const known = new Set<string>();
      for (const old of s.fresh ? [] : [abs, s.previous]) {
        if (!old || !existsSync(old)) continue;
        try {
          for (const f of secretFields(JSON.parse(readFileSync(old, 'utf8')))) known.add(`${f.path}\u0000${f.text}`);
        } catch {
          /* unreadable old version: scan everything */
        }
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

  /** Every staged entry is a valid stored entry. */
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

/**
 * Records refused secrets in the audit log: field, rule and position, never the value (nor the
 * writer's name when that is what holds one).
 */
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

/** Where the lock and the journal live: git's own folder, or `state/` of the local state folder outside git. */
function stateDirOf(engine: Engine, git: GitRepo | null): string {
  if (git) return git.stateDir;
  engine.ws.ensureLocal({ force: true });
  return engine.ws.local('state', true);
}

/**
 * Runs `fn` as one write: see the module comment. Returns what `fn` returned and the commit
 * (null when nothing changed, or outside git).
 */
export async function withWrite<T>(
  engine: Engine,
  caller: Caller,
  opts: WriteOptions,
  fn: (tx: WriteTx) => Promise<T> | T,
): Promise<{ value: T; commit: string | null }> {
  const git = await engine.git();
  const agent = opts.agent ?? (await caller.agent(engine));
  // A repository whose memory asks for the field-level merge driver gets it registered by any
  // write (a clone that never ran init would otherwise merge entries with conflict markers), and
  // so does the write that lays down the attributes (a project's first, without init).
  const drivers = async (): Promise<void> => {
    if (!git || engine.mergeDriverChecked || !existsSync(join(engine.ws.memoryDir, '.gitattributes'))) return;
    engine.mergeDriverChecked = true;
    await ensureDrivers(git, engine.ws.root, caller.env).catch(() => undefined);
  };
  await drivers();
  if (git && !caller.allowDetached && !opts.noCommit) {
    const why = git.writeBlocker();
    if (why) throw new ConflictError(`refusing to write memory: ${why}; pass --allow-detached (or BASS_AGENTS_ALLOW_DETACHED=1) to write here anyway`);
  }
  engine.checkSparse();
  const stateDir = stateDirOf(engine, git);
  return withLock(
    engine.ws,
    'write',
    async () => {
      await recoverWrite(engine, caller, git, stateDir);
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

/**
 * Whether a writer left a journal here, found with a few stats and no git process (every CLI
 * command asks before it runs, so a read after a kill does not show the dead writer's files).
 */
export function hasPendingJournal(root: string): boolean {
  const gitDir = gitDirOf(root)?.gitDir;
  if (gitDir) return existsSync(join(gitDir, 'bass-agents', 'journal'));
  return existsSync(join(localStateOf(root).dir, 'state', 'journal'));
}

/**
 * Recovers a journal left by a killed writer, if the write lock is free right now (a writer that
 * holds it is alive and finishes or recovers its own work). Returns null when there was nothing
 * to do or the lock was busy.
 */
export async function recoverPending(engine: Engine, caller: Caller): Promise<{ kept: number; undone: number; ignored: number } | null> {
  const git = await engine.git();
  const stateDir = stateDirOf(engine, git);
  try {
    // (A read never waits for git's index lock: then the journal stays for a later command.)
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

/**
 * While a write holds the lock, SIGINT and SIGTERM only set a flag that the write checks between
 * chunks (then it puts its files back and exits 130/143). A second signal exits at once: the
 * journal lets the next writer finish the cleanup.
 */
function trapSignals(): SignalTrap {
  const trap: SignalTrap = {
    signal: null,
    release: () => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    },
  };
  const on = (sig: 'SIGINT' | 'SIGTERM') => (): void => {
    if (trap.signal) process.exit(sig === 'SIGINT' ? 130 : 143);
    trap.signal = sig;
  };
  const onInt = on('SIGINT');
  const onTerm = on('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return trap;
}

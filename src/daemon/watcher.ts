/**
 * What the daemon watches, in batches of paths: `ai-memory/`'s structure (chokidar), each section
 * folder (fs.watch), and HEAD, whose move is a batch of the memory paths the commits differ in.
 */
import { existsSync, watch as fsWatch, type FSWatcher as NodeFsWatcher } from 'node:fs';
import type { FSWatcher } from 'chokidar';
import { join } from 'node:path';
import { SECTIONS } from '../core/constants.js';
import type { GitRepo } from '../store/git.js';
import { headFromFiles } from '../store/git-state.js';
import type { Workspace } from '../store/workspace.js';
import { tryOr } from '../try.js';

export interface WatcherHooks {
  /** A batch of workspace-relative paths (entry files, or folders: a full refresh). */
  onBatch(paths: Set<string>): void;
  onEvent(kind: string, path: string): void;
  onError(where: string, err: unknown): void;
}

export class DaemonWatcher {
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private chokidar: FSWatcher | undefined;
  private readonly sections = new Map<string, NodeFsWatcher>();
  private gitWatch: NodeFsWatcher | undefined;
  private headPoll: NodeJS.Timeout | undefined;
  private head: string | null = null;
  private headCheck: Promise<void> | null = null;
  headMoves = 0;
  /** When (performance.now()) someone other than this daemon last moved HEAD. */
  lastHeadMoveAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly ws: Workspace,
    private readonly git: GitRepo | null,
    private readonly debounceMs: number,
    private readonly hooks: WatcherHooks,
  ) {}

  private event(kind: string, relPath: string): void {
    this.hooks.onEvent(kind, relPath);
    this.pending.add(relPath);
    if (!this.timer) this.timer = setTimeout(() => this.flush(), this.debounceMs);
  }

  /** Hands over what is pending now (before a command, so its answer includes it). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const batch = new Set(this.pending);
    this.pending.clear();
    try {
      this.hooks.onBatch(batch);
    } catch (err) {
      this.hooks.onError('batch', err);
    }
  }

  async start(): Promise<void> {
    const { watch } = await import('chokidar');
    const memRoot = this.ws.memoryDir;
    const ignored = (p: string): boolean => /(^|[/\\])\.bass-agents([/\\]|$)/.test(p) || /\.lock([/\\]|$)/.test(p) || /(^|[/\\])\.[^/\\]*\.tmp$/.test(p);
    // Structure only: inside a section folder chokidar re-reads the whole folder on each new file
    // (docs/daemon.md); what either watcher misses, the reconcile finds as drift. atomic: false:
    // our batches already absorb editors' unlink/add pairs.
    this.chokidar = watch(memRoot, { ignored, ignoreInitial: true, persistent: true, atomic: false, depth: 1 });
    this.watchSections();
    this.chokidar.on('all', (event, file) => {
      if (event === 'addDir' || event === 'unlinkDir') this.watchSections();
      this.event(event, this.ws.rel(file));
    });
    this.chokidar.on('error', (err) => this.hooks.onError('watcher', err));
    await new Promise<void>((resolve) => this.chokidar!.once('ready', () => resolve()));
    this.watchHead();
  }

  /** Watches every section folder there is, and stops watching those gone. */
  watchSections(): void {
    const want = new Set<string>();
    for (const project of this.ws.listProjects()) {
      for (const section of SECTIONS) {
        const dir = join(this.ws.memoryDir, project, section);
        if (!existsSync(dir)) continue;
        want.add(dir);
        if (this.sections.has(dir)) continue;
        try {
          const w = fsWatch(dir, { persistent: false }, (kind, name) => {
            const file = name ? String(name) : '';
            // No name (some platforms): the folder's path makes a full refresh.
            if (!file) this.event(kind, this.ws.rel(dir));
            else if (file.endsWith('.json') && !file.startsWith('.')) this.event(kind, this.ws.rel(join(dir, file)));
          });
          w.on('error', (err) => {
            w.close();
            this.sections.delete(dir);
            this.hooks.onError('watcher', err);
            this.event('error', this.ws.rel(dir)); // not an entry file: the next batch refreshes everything
          });
          this.sections.set(dir, w);
        } catch (err) {
          this.hooks.onError('watcher', err);
        }
      }
    }
    for (const [dir, w] of this.sections) {
      if (want.has(dir)) continue;
      w.close();
      this.sections.delete(dir);
    }
  }

  /** git's HEAD: an fs.watch on the git dir, and a one-second poll as the net. */
  private watchHead(): void {
    if (!this.git) return;
    this.head = headFromFiles(this.git.gitDir);
    // Without it the poll still runs.
    tryOr(() => {
      this.gitWatch = fsWatch(this.git!.gitDir, { persistent: false }, (_kind, name) => {
        if (name === 'HEAD' || name === 'packed-refs' || name === 'ORIG_HEAD') void this.checkHead();
      });
      this.gitWatch.on('error', () => this.gitWatch?.close());
    }, undefined);
    this.headPoll = setInterval(() => void this.checkHead(), 1000);
    this.headPoll.unref();
  }

  /** When HEAD moved, the memory paths the two commits differ in become a batch (a full refresh when git cannot say); callers await it before answering. */
  checkHead(): Promise<void> {
    if (!this.git) return Promise.resolve();
    if (this.headCheck) return this.headCheck;
    const now = headFromFiles(this.git.gitDir);
    if (now === this.head) return Promise.resolve();
    const before = this.head;
    this.head = now;
    this.headMoves++;
    this.lastHeadMoveAt = performance.now();
    this.headCheck = (async () => {
      const git = this.git!;
      const diff = before && now ? git.run(['diff-tree', '-r', '--name-only', '-z', '--no-renames', before, now, '--', git.repoPath(this.ws.memoryDir)]) : null;
      const paths = (await diff?.catch(() => null))?.split('\0').flatMap((p) => (p ? [this.ws.rel(join(git.toplevel, p))] : []));
      this.watchSections();
      for (const p of paths ?? [this.ws.rel(this.ws.memoryDir)]) this.pending.add(p);
      this.flush();
    })().finally(() => {
      this.headCheck = null;
    });
    return this.headCheck;
  }

  /** This daemon's own commit moved HEAD from `parent`: its changed `files` are known without asking git. */
  ownCommit(commit: string, parent: string | null, files: string[]): void {
    if (this.headCheck || this.head !== parent) return; // someone else moved HEAD too: checkHead finds out
    this.head = commit;
    // Memory paths only, as checkHead's diff-tree names them.
    const memory = `${this.ws.rel(this.ws.memoryDir)}/`;
    for (const f of files) if (this.ws.rel(f).startsWith(memory)) this.pending.add(this.ws.rel(f));
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    if (this.headPoll) clearInterval(this.headPoll);
    this.gitWatch?.close();
    await this.chokidar?.close();
    for (const w of this.sections.values()) w.close();
  }
}

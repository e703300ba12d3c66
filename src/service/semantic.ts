/**
 * Semantic search: which entries need a vector, computing them (in the background in the daemon,
 * a few inline for a one-shot `query --semantic`), the cached vectors, and the similarity
 * function a query fuses with its lexical score (ops/query.ts).
 *
 * What is embedded is an entry's summary: the one-sentence statement every entry has, short
 * enough for the model's window. A project turns it off with `query.semantic: off` in its
 * config.yaml; `auto` (the default) and `on` use it when the model packages are installed.
 */
import type { CatalogSnapshot, StoredEntry } from '../store/catalog.js';
import { VectorStore, textHash } from '../index/vectors.js';
import type { Embedder } from './embedder.js';
import type { Caller } from './caller.js';
import type { Engine } from './engine.js';
import type { QueryOptions } from './ops/query.js';

/** A long-lived process saves the vectors about this often while it computes them, and on close. */
export const SAVE_EVERY_MS = 30_000;

type SemanticState = 'off' | 'unavailable' | 'loading' | 'indexing' | 'ready' | 'failed';

interface SemanticStatus {
  /** Whether semantic search answers queries (some project has it on and the model is loaded). */
  enabled: boolean;
  state: SemanticState;
  model: string | null;
  /** Entries that should have a vector (projects with semantic search on), how many do, and their bytes. */
  entries: number;
  vectors_current: number;
  vector_bytes: number;
  error?: string;
}

/**
 * A full collection, when the process was started with `--expose-gc` (the daemon): before and
 * after a large pass (a first start's vectors, a scheduled job), so that it does not grow the
 * heap on the garbage of the work before it, nor leave its own for the next.
 */
export const collectGarbage = (): void => (globalThis as { gc?: () => void }).gc?.();

/** A pass that embeds this many texts or more starts and ends with a full collection. */
const LARGE_PASS = 1024;

/** The text embedded for an entry. */
export const embeddedText = (e: { summary: string }): string => e.summary;

/** An entry whose vector is missing or out of date; its text is read when it is embedded (or when its hash had to be checked). */
interface Pending {
  se: StoredEntry;
  text?: string;
}

export class Semantic {
  private readonly engine: Engine;
  private embedder: Embedder | null = null;
  private store: VectorStore | null = null;
  state: SemanticState = 'loading';
  private error: string | undefined;
  private counts = { entries: 0, current: 0 };
  private running: Promise<void> | null = null;
  private again = false;
  private lastSave = 0;
  private closed = false;
  /** Keys changed since the last pass that embedded (null: not known; see noteTouched). */
  private touched: Set<string> | null = null;
  /** The keys of entries with semantic search on, as of that pass. */
  private known = new Set<string>();

  constructor(engine: Engine) {
    this.engine = engine;
  }

  /** Uses `embedder` (null: the model is not installed) and loads the vectors cached for its model. */
  attach(embedder: Embedder | null, error?: string): void {
    this.embedder = embedder;
    if (!embedder) {
      this.state = error ? 'failed' : 'unavailable';
      this.error = error;
      return;
    }
    this.engine.ws.local('cache'); // checked before anything in it is read
    this.store = VectorStore.load(VectorStore.path(this.engine.ws.localDir), embedder.model, embedder.dims);
    this.state = 'ready';
  }

  get ready(): boolean {
    return this.embedder !== null && this.store !== null;
  }

  /**
   * A watcher batch changed or removed these keys (undefined: it cannot say which, so the next
   * pass looks at every entry). A daemon's write then costs a look at its own entries, not at all.
   */
  noteTouched(keys: Iterable<string> | undefined): void {
    if (!keys) this.touched = null;
    else if (this.touched) for (const k of keys) this.touched.add(k);
  }

  /**
   * Entries of projects with semantic search on whose vector is missing or out of date; drops rows
   * of entries gone. `consume`: the caller embeds what is returned, so the keys noted since the
   * last such pass are done with (only those are looked at when the snapshot can find them by key).
   * `deferReads`: an entry whose stamp is not the one its vector was stored at is returned as it
   * is, its text read (and a stored vector of that text found) by the caller between its chunks,
   * rather than here, all at once.
   */
  pending(snap: CatalogSnapshot, consume = false, deferReads = false): Pending[] {
    const store = this.store;
    if (!store) return [];
    const on = new Map<string, boolean>();
    const enabled = (project: string): boolean => {
      let yes = on.get(project);
      if (yes === undefined) on.set(project, (yes = semanticOn(this.engine, project)));
      return yes;
    };
    const out: Pending[] = [];
    // Only an entry that has a vector under another stamp is read here (its text may be the
    // same): a long-lived process does not keep every entry's text, and while a first indexing
    // runs, reading thousands of files at every refresh would slow every write and query.
    const look = (se: StoredEntry): void => {
      let text: string | undefined;
      if (deferReads ? !store.isStamped(se.key, se.stamp) : !store.isCurrent(se.key, se.stamp, () => textHash((text = embeddedText(se.entry)))))
        out.push({ se, text });
    };
    const touched = this.touched;
    if (consume && touched && snap.byKey) {
      this.touched = new Set();
      for (const key of touched) {
        const se = snap.byKey.get(key);
        if (se && enabled(se.project)) {
          this.known.add(key);
          look(se);
        } else if (this.known.delete(key)) store.retain((k) => k !== key);
      }
      this.counts = { entries: this.known.size, current: this.known.size - out.length };
      return out;
    }
    const keys = new Set<string>();
    for (const se of snap.entries) {
      if (!enabled(se.project)) continue;
      keys.add(se.key);
      look(se);
    }
    store.retain((k) => keys.has(k));
    this.counts = { entries: keys.size, current: keys.size - out.length };
    this.known = keys;
    if (consume) this.touched = new Set();
    return out;
  }

  /**
   * Computes missing vectors. The daemon calls it after every refresh with `latest` (the catalog
   * it holds); one pass at a time, and a call during a pass makes the pass look again when it
   * ends. `max` caps the texts embedded (a one-shot query embeds a few, not thousands).
   */
  index(latest: () => CatalogSnapshot | undefined, opts: { max?: number; saveEveryMs?: number } = {}): Promise<void> {
    if (!this.ready || this.closed) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = async (): Promise<void> => {
      // Off the caller's path: finding what needs a vector walks every entry (a daemon calls this
      // from its refresh, right before it answers a write).
      await new Promise((r) => setImmediate(r));
      let collectAfter = false;
      do {
        this.again = false;
        const snap = latest();
        if (!snap) return;
        // (A background pass reads the entries' texts chunk by chunk, between which queries go first.)
        const background = opts.max === undefined;
        const missing = this.pending(snap, background, background).slice(0, opts.max ?? Infinity);
        if (missing.length) this.state = 'indexing';
        if (missing.length >= LARGE_PASS) {
          await this.engine.quiet(); // a caller's request is not kept waiting for the collection
          collectGarbage();
          collectAfter = true;
        }
        const step = this.embedder!.chunk;
        for (let i = 0; i < missing.length && !this.closed; i += step) {
          // One job at a time, and the event loop between jobs: a caller's request that came in
          // meanwhile is read, and runs alone (this waits until it is answered).
          if (i) {
            await new Promise((r) => setImmediate(r));
            await this.engine.quiet();
          }
          const chunk = missing.slice(i, i + step);
          // Read now; an entry whose file went bad since is left for the next refresh to sort out.
          const ready = chunk.filter((p) => {
            try {
              p.text ??= embeddedText(p.se.readOnce());
              return true;
            } catch {
              return false;
            }
          });
          if (!ready.length) continue;
          // A text whose vector is stored (a stamp that moved, another branch's text) is linked, not embedded.
          const fresh = ready.filter((p) => !this.store!.isCurrent(p.se.key, p.se.stamp, () => textHash(p.text!)));
          const vectors = fresh.length
            ? await this.embedder!.embed(
                fresh.map((p) => p.text!),
                'background',
              )
            : [];
          fresh.forEach((p, k) => this.store!.put(p.se.key, p.se.stamp, textHash(p.text!), vectors[k]!)); // one vector per text
          this.counts.current += ready.length;
          if (Date.now() - this.lastSave > (opts.saveEveryMs ?? SAVE_EVERY_MS)) this.save();
        }
      } while (this.again && !this.closed);
      this.state = 'ready';
      // A long-lived caller embeds an entry or two after every write: rewriting the whole file for
      // each would cost more than the embedding. It saves at most every SAVE_EVERY_MS, and on close.
      if (opts.saveEveryMs === undefined || Date.now() - this.lastSave > opts.saveEveryMs) this.save();
      else this.saveLater(opts.saveEveryMs);
      if (collectAfter) {
        await this.engine.quiet();
        collectGarbage();
      }
    };
    this.running = run()
      .catch((err: unknown) => {
        this.state = 'failed';
        this.error = err instanceof Error ? err.message : String(err);
      })
      .finally(() => (this.running = null));
    return this.running;
  }

  /** Resolves once the model is loaded and no pass runs, or after `maxMs` (polled: for work that should not overlap a first pass). */
  async settled(maxMs: number): Promise<void> {
    for (const end = Date.now() + maxMs; (this.state === 'loading' || this.running) && !this.closed && Date.now() < end;)
      await new Promise((r) => setTimeout(r, 100));
  }

  /** The similarity function of a query text, or undefined when semantic search cannot answer. */
  async similarity(text: string): Promise<((key: string) => number | undefined) | undefined> {
    if (!this.ready || !text.trim() || this.state === 'failed') return undefined;
    if (this.store!.size === 0) return undefined;
    const [v] = await this.embedder!.embed([text], 'query');
    return v && this.store!.similarity(v);
  }

  private saveTimer: NodeJS.Timeout | undefined;

  private saveLater(ms: number): void {
    this.saveTimer ??= setTimeout(() => {
      this.saveTimer = undefined;
      if (!this.closed) this.save();
    }, ms).unref();
  }

  save(): void {
    this.lastSave = Date.now();
    if (!this.store?.dirty) return;
    try {
      if (!this.engine.ws.ensureLocal()) return;
      this.engine.ws.local('cache', true);
      this.store.save(VectorStore.path(this.engine.ws.localDir));
    } catch {
      /* a cache that cannot be saved only costs time later */
    }
  }

  status(snap?: CatalogSnapshot): SemanticStatus {
    if (snap && this.store && !this.running) this.pending(snap, false, true); // a status reads no entry file
    return {
      enabled: this.ready && this.state !== 'failed',
      state: this.state,
      model: this.embedder?.model ?? null,
      entries: this.counts.entries,
      vectors_current: this.counts.current,
      vector_bytes: this.store?.bytes ?? 0,
      ...(this.error ? { error: this.error } : {}),
    };
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.running;
    this.save();
    await this.embedder?.close();
  }
}

/** What `memory doctor` reports about semantic search, without loading the model. */
export interface SemanticReport {
  model_installed: boolean;
  /** Projects whose config turns it off. */
  projects_off: string[];
  /** Entries of the other projects, and how many have a current vector in the cache. */
  entries: number;
  vectors_current: number;
  model: string | null;
}

/** Whether a project has semantic search on (`query.semantic` is not `off`). */
function semanticOn(engine: Engine, project: string): boolean {
  try {
    return engine.projectConfig(project).query.semantic !== 'off';
  } catch {
    return true;
  }
}

export function semanticReport(engine: Engine, entries: readonly StoredEntry[], installed: boolean): SemanticReport {
  const off = engine.ws.listProjects().filter((p) => !semanticOn(engine, p));
  const mine = entries.filter((se) => !off.includes(se.project));
  engine.ws.local('cache');
  const store = VectorStore.load(VectorStore.path(engine.ws.localDir));
  let current = 0;
  if (store.model) for (const se of mine) if (store.isCurrent(se.key, se.stamp, () => textHash(embeddedText(se.entry)))) current++;
  return { model_installed: installed, projects_off: off, entries: mine.length, vectors_current: current, model: store.model || null };
}

/**
 * The semantic part of a query of `text`, for `query`'s options: from the engine's attached
 * embedder when there is one; otherwise, when `ask` (`--semantic`), the model is loaded in this
 * process and at most `inlineMax` missing vectors are computed first (a daemon computes the
 * rest). Undefined when semantic search cannot answer (no model, no vectors, empty text).
 */
export async function semanticFor(engine: Engine, caller: Caller, text: string, ask = false, inlineMax = 64): Promise<QueryOptions['semantic']> {
  if (!text.trim()) return undefined;
  // Never a second model in a process whose own is still loading (a daemon running a
  // `query --semantic`): that query is lexical until it is ready.
  if (!engine.semantic?.ready && ask && engine.semantic?.state !== 'loading') {
    const { minilmEmbedder, staticEmbedder } = await import('./embedder.js');
    (engine.semantic ??= new Semantic(engine)).attach(engine.env.BASS_AGENTS_SEMANTIC === 'minilm' ? await minilmEmbedder() : staticEmbedder());
    await engine.semantic.index(() => engine.snapshot(caller.warn), { max: inlineMax });
  }
  if (!engine.semantic?.ready) return undefined;
  // A long-lived process without a watcher (an MCP server) notices new entries at each query.
  // (Never a one-shot CLI: it embedded its few above, and must not stay alive for the rest.)
  if (engine.longLived && !engine.watched) void engine.indexSemantic();
  const similarity = await engine.semantic.similarity(text);
  return similarity ? { similarity } : undefined;
}

/** Whether semantic search is on and how many vectors are current (null: none attached in this process). */
export function semanticStatus(engine: Engine): SemanticStatus | null {
  return engine.semantic?.status(engine.rm.current) ?? null;
}

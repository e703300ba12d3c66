/**
 * Semantic search: which entries need a vector, computing them (in the background in the daemon,
 * a few inline for a one-shot `query --semantic`), and the similarity a query fuses with its
 * lexical score. An entry's summary is embedded (every entry has one, short enough for the model) as the index
 * holds it, without the names it addresses someone by.
 */
import { unaddressed } from '../index/options.js';
import type { CatalogSnapshot, StoredEntry } from '../store/catalog.js';
import { tryOr } from '../store/fsutil.js';
import { VectorStore, textHash } from '../index/vectors.js';
import type { Embedder } from './embedder.js';
import type { Caller } from './caller.js';
import type { Engine } from './engine.js';
import type { QueryOptions } from './ops/query.js';

/** How often a long-lived process saves vectors while it computes them (and on close). */
export const SAVE_EVERY_MS = 30_000;

type SemanticState = 'off' | 'unavailable' | 'loading' | 'indexing' | 'ready' | 'failed';

/** A full collection under `--expose-gc` (the daemon), around a large pass: it neither grows the heap on the garbage before it nor leaves its own. */
export const collectGarbage = (): void => (globalThis as { gc?: () => void }).gc?.();

const LARGE_PASS = 1024;

export const embeddedText = (e: { summary: string }): string => unaddressed(e.summary);

/** An entry whose vector is missing or out of date; `text` once read. */
type Pending = { se: StoredEntry; text?: string };

export class Semantic {
  private embedder: Embedder | null = null;
  private store: VectorStore | null = null;
  state: SemanticState = 'loading';
  private error: string | undefined;
  private counts = { entries: 0, current: 0 };
  private running: Promise<void> | null = null;
  private again = false;
  private lastSave = 0;
  private closed = false;
  /** Keys changed since the last embedding pass (null: not known), and the keys with semantic search on as of it. */
  private touched: Set<string> | null = null;
  private known = new Set<string>();

  constructor(private readonly engine: Engine) {}

  /** `embedder` null: not installed. Loads the vectors cached for its model. */
  attach(embedder: Embedder | null, error?: string): void {
    this.embedder = embedder;
    if (!embedder) {
      this.state = error ? 'failed' : 'unavailable';
      this.error = error;
      return;
    }
    this.engine.ws.local('cache'); // checked before it is read
    this.store = VectorStore.load(VectorStore.path(this.engine.ws.localDir), embedder.model, embedder.dims);
    this.state = 'ready';
  }

  get ready(): boolean {
    return this.embedder !== null && this.store !== null;
  }

  /** Keys a watcher batch changed (undefined: unknown, the next pass looks at all): a daemon's write costs a look at its own entries only. */
  noteTouched(keys: Iterable<string> | undefined): void {
    if (!keys) this.touched = null;
    else if (this.touched) for (const k of keys) this.touched.add(k);
  }

  /**
   * Entries of projects with semantic search on whose vector is missing or out of date; drops rows
   * of entries gone. `consume`: the caller embeds the result, so only the keys touched since are
   * looked at next time. `deferReads`: an entry whose stamp moved is returned unread, for the
   * caller to read between its chunks rather than all at once here.
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
    // A long-lived process keeps no entry's text: reading thousands of files at every refresh
    // during a first indexing would slow every write and query.
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

  /** Computes missing vectors, one pass at a time (a call during a pass makes it look again); `max` caps a one-shot query's. */
  index(latest: () => CatalogSnapshot | undefined, opts: { max?: number; saveEveryMs?: number } = {}): Promise<void> {
    if (!this.ready || this.closed) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = async (): Promise<void> => {
      // Off the caller's path: finding what needs a vector walks every entry.
      await new Promise((r) => setImmediate(r));
      let collectAfter = false;
      do {
        this.again = false;
        const snap = latest();
        if (!snap) return;
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
          // Between jobs a request that came in meanwhile runs alone.
          if (i) {
            await new Promise((r) => setImmediate(r));
            await this.engine.quiet();
          }
          const chunk = missing.slice(i, i + step);
          // A file gone bad since is left for the next refresh.
          const ready = chunk.filter((p) => tryOr(() => typeof (p.text ??= embeddedText(p.se.readOnce())) === 'string', false));
          if (!ready.length) continue;
          // A text whose vector is stored (another stamp, another branch) is linked, not embedded.
          const fresh = ready.filter((p) => !this.store!.isCurrent(p.se.key, p.se.stamp, () => textHash(p.text!)));
          const vectors = fresh.length ? await this.embedder!.embed(fresh.map((p) => p.text!)) : [];
          fresh.forEach((p, k) => this.store!.put(p.se.key, p.se.stamp, textHash(p.text!), vectors[k]!)); // one vector per text
          this.counts.current += ready.length;
          if (Date.now() - this.lastSave > (opts.saveEveryMs ?? SAVE_EVERY_MS)) this.save();
        }
      } while (this.again && !this.closed);
      this.state = 'ready';
      // After each write a long-lived caller embeds an entry or two: rewriting the file each time would cost more.
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

  /** Resolves once the model is loaded and no pass runs, or after `maxMs`. */
  async settled(maxMs: number): Promise<void> {
    for (const end = Date.now() + maxMs; (this.state === 'loading' || this.running) && !this.closed && Date.now() < end;)
      await new Promise((r) => setTimeout(r, 100));
  }

  async similarity(text: string): Promise<ReturnType<VectorStore['similarity']> | undefined> {
    if (!this.ready || !text.trim() || this.state === 'failed' || this.store!.size === 0) return undefined;
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

  /** `entries`: of projects with semantic search on. */
  status(snap?: CatalogSnapshot) {
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

function semanticOn(engine: Engine, project: string): boolean {
  return tryOr(() => engine.projectConfig(project).query.semantic !== 'off', true);
}

/** What `memory doctor` reports about semantic search, without loading the model. */
export function semanticReport(engine: Engine, entries: readonly StoredEntry[], installed: boolean) {
  const off = engine.ws.listProjects().filter((p) => !semanticOn(engine, p));
  const mine = entries.filter((se) => !off.includes(se.project));
  engine.ws.local('cache');
  const store = VectorStore.load(VectorStore.path(engine.ws.localDir));
  let current = 0;
  if (store.model) for (const se of mine) if (store.isCurrent(se.key, se.stamp, () => textHash(embeddedText(se.entry)))) current++;
  return { model_installed: installed, projects_off: off, entries: mine.length, vectors_current: current, model: store.model || null };
}

/**
 * The semantic part of a query: from the engine's embedder, else with `ask` (`--semantic`) loaded
 * here with at most `inlineMax` missing vectors computed first. Undefined when it cannot answer.
 */
export async function semanticFor(engine: Engine, caller: Caller, text: string, ask = false, inlineMax = 64): Promise<QueryOptions['semantic']> {
  if (!text.trim()) return undefined;
  // Never a second model in a process whose own is loading: lexical until it is ready.
  if (!engine.semantic?.ready && ask && engine.semantic?.state !== 'loading') {
    const { minilmEmbedder, staticEmbedder } = await import('./embedder.js');
    (engine.semantic ??= new Semantic(engine)).attach(engine.env.BASS_AGENTS_SEMANTIC === 'minilm' ? await minilmEmbedder() : staticEmbedder());
    await engine.semantic.index(() => engine.snapshot(caller.warn), { max: inlineMax });
  }
  if (!engine.semantic?.ready) return undefined;
  // An MCP server (no watcher) notices new entries at each query; a one-shot CLI must not stay alive for them.
  if (engine.longLived && !engine.watched) void engine.indexSemantic();
  const similarity = await engine.semantic.similarity(text);
  return similarity ? { similarity } : undefined;
}

export function semanticStatus(engine: Engine) {
  return engine.semantic?.status(engine.rm.current) ?? null;
}

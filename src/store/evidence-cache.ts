/**
 * Results of evidence checks (docs/local-state.md), each file read once per version. The stale
 * entries have a small file of their own (every query reads it; the checks at 10K slow a cold
 * query); the anchors' lines are sorted by key, so a read parses only its results' lines. And the network probe.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { AnchorRecord, AnchorStatus } from '../core/anchors.js';
import type { EvidenceStatus } from '../core/evidence.js';
import { lazy } from '../lazy.js';
import { tryOr, writeFileAtomic } from './fsutil.js';
import { readNoFollow } from './state-dir.js';
import type { Workspace } from './workspace.js';

const evidenceCheck = lazy<typeof import('../core/evidence.js')>('./core/evidence.js');

/** HEAD (GET when HEAD is refused) with a timeout; network trouble is unknown, never stale. */
export async function probeUrl(url: string, timeoutMs: number): Promise<{ status: EvidenceStatus; reason: string }> {
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

export interface CheckResult {
  status: EvidenceStatus;
  reason: string;
  checked_at: string;
}

export interface EvidenceCacheFile {
  checks: Record<string, CheckResult>;
  /** `project/id` → why its evidence is stale. */
  stale: Record<string, string[]>;
}

const CHECKS = 'evidence.json';
const STALE = 'evidence-stale.json';
const ANCHORS = 'evidence-anchors.txt';
/** The first two files' layout: another version is not read (the next check rewrites it). */
const VERSION = 2;

export class EvidenceCache {
  private readonly dir: string;
  private readonly memo = new Map<string, { stamp: string; value: unknown }>();
  /** Statuses told from a file's content at read time, by entry, URI and the file's stamp. */
  readonly statusMemo = new Map<string, AnchorStatus>();

  constructor(private readonly ws: Workspace) {
    this.dir = join(ws.localDir, 'cache');
  }

  /** A file parsed by `parse`, once per version of it; undefined when missing or unreadable. */
  private read<T>(name: string, parse: (bytes: Buffer) => T): T | undefined {
    this.ws.local('cache'); // checked before it is read
    const file = `${this.dir}/${name}`; // (normalized: join() costs a little on every result)
    const st = statSync(file, { throwIfNoEntry: false });
    if (!st) return undefined;
    const stamp = `${st.size}:${st.mtimeMs}`;
    const hit = this.memo.get(name);
    if (hit?.stamp === stamp) return hit.value as T | undefined;
    const value = tryOr(() => parse(readNoFollow(file)), undefined); // corrupt, or gone meanwhile: as if missing
    this.memo.set(name, { stamp, value });
    return value;
  }

  private write(name: string, data: string): void {
    this.ws.ensureLocal({ force: true });
    this.ws.local('cache', true);
    writeFileAtomic(join(this.dir, name), data, { fsync: false });
    this.memo.delete(name);
  }

  private section<T extends object>(name: string, field: string): { value: T; keys: Set<string> } | undefined {
    return this.read(name, (b) => {
      const d = JSON.parse(b.toString('utf8')) as Record<string, unknown>;
      const value = d[field];
      if (d.v !== VERSION || typeof value !== 'object' || value === null) throw new Error('another version');
      return { value: value as T, keys: new Set(Object.keys(value)) };
    });
  }

  private anchorBytes(): { bytes: Buffer; byKey: Map<string, Map<string, AnchorRecord> | undefined> } | undefined {
    return this.read(ANCHORS, (bytes) => {
      if (this.statusMemo.size > 50_000) this.statusMemo.clear();
      return { bytes, byKey: new Map() };
    });
  }

  /** What the last check recorded for each URI of the entry `key` (project/id), by URI. */
  anchorsOf(key: string): Map<string, AnchorRecord> | undefined {
    const m = this.anchorBytes();
    if (!m) return undefined;
    if (m.byKey.has(key)) return m.byKey.get(key);
    const b = m.bytes;
    const want = Buffer.from(key);
    let recs: Map<string, AnchorRecord> | undefined;
    for (let lo = 0, hi = b.length; lo < hi;) {
      const mid = (lo + hi) >>> 1;
      const start = mid === 0 ? 0 : b.lastIndexOf(10, mid - 1) + 1;
      const tab = b.indexOf(9, start);
      const end = b.indexOf(10, start);
      if (tab < 0 || end < 0 || tab > end) break;
      const order = Buffer.compare(b.subarray(start, tab), want);
      if (order === 0) {
        recs = tryOr(() => new Map((JSON.parse(b.toString('utf8', tab + 1, end)) as AnchorRecord[]).map((r) => [r.uri, r])), undefined);
        break;
      }
      if (order < 0) lo = end + 1;
      else hi = start;
    }
    m.byKey.set(key, recs);
    return recs;
  }

  /** Every entry's records (for a check of some projects to keep the others'). */
  allAnchors(): Map<string, AnchorRecord[]> {
    const out = new Map<string, AnchorRecord[]>();
    for (const line of this.anchorBytes()?.bytes.toString('utf8').split('\n') ?? []) {
      const tab = line.indexOf('\t');
      const recs = tab < 0 ? undefined : tryOr(() => JSON.parse(line.slice(tab + 1)) as AnchorRecord[], undefined);
      if (recs) out.set(line.slice(0, tab), recs); // (a torn line: that entry is checked again)
    }
    return out;
  }

  saveAnchors(records: Map<string, AnchorRecord[]>): void {
    // Each key's bytes made once, not twice per comparison.
    const keys = [...records.keys()].filter((k) => records.get(k)!.length && !/[\t\n]/.test(k)).map((k) => ({ k, b: Buffer.from(k) }));
    keys.sort((x, y) => Buffer.compare(x.b, y.b));
    this.write(ANCHORS, keys.map(({ k }) => `${k}\t${JSON.stringify(records.get(k))}\n`).join(''));
    this.statusMemo.clear();
  }

  load(): EvidenceCacheFile {
    return {
      checks: this.section<EvidenceCacheFile['checks']>(CHECKS, 'checks')?.value ?? {},
      stale: this.section<EvidenceCacheFile['stale']>(STALE, 'stale')?.value ?? {},
    };
  }

  /** Keys of entries flagged stale (one set per version of the file). */
  staleKeys(): Set<string> {
    return this.section(STALE, 'stale')?.keys ?? new Set();
  }

  save(data: EvidenceCacheFile): void {
    this.write(CHECKS, `${JSON.stringify({ v: VERSION, checks: data.checks })}\n`);
    this.write(STALE, `${JSON.stringify({ v: VERSION, stale: data.stale })}\n`);
  }
}

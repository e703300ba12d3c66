/**
 * Results of evidence checks, local: `cache/evidence.json` of the local state folder.
 * Per URI (with the file's stamp for paths, so an edit re-checks) the status and reason; per
 * entry (`project/id`) the reasons it is stale, which queries read to flag and down-rank.
 * The stale keys alone are also written to `evidence-stale.json`: every query needs them, and
 * at 10K checked entries the whole file is large enough to slow a cold query. What the check
 * found for each URI of an entry (`AnchorRecord`, for its status at read time) is in
 * `evidence-anchors.txt`, a line per entry (`key<TAB>JSON`), sorted by key: a read finds the lines
 * of its few results by binary search over the bytes and decodes and parses only those.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { AnchorRecord, AnchorStatus } from '../core/anchors.js';
import type { EvidenceStatus } from '../core/evidence-check.js';
import { writeFileAtomic } from './fsutil.js';
import { readNoFollow } from './state-dir.js';
import type { Workspace } from './workspace.js';

export interface CheckResult {
  status: EvidenceStatus;
  reason: string;
  checked_at: string;
}

export interface EvidenceCacheFile {
  v: 1;
  checks: Record<string, CheckResult>;
  /** `project/id` → why its evidence is stale. */
  stale: Record<string, string[]>;
}

export class EvidenceCache {
  private file: string;
  private staleFile: string;
  private memo: { stamp: string; data: EvidenceCacheFile; staleKeys?: Set<string> } | undefined;
  /** The stale keys read from evidence-stale.json, by the stamp of the evidence.json they describe. */
  private keysMemo: { stamp: string; keys: Set<string> } | undefined;

  private readonly ws: Workspace;
  private anchorsFile: string;
  private anchorsMemo: { stamp: string; bytes: Buffer; byKey: Map<string, Map<string, AnchorRecord> | undefined> } | undefined;
  /** Statuses told from a file's content at read time, by entry, URI and the file's stamp. */
  readonly statusMemo = new Map<string, AnchorStatus>();

  constructor(ws: Workspace) {
    this.ws = ws;
    this.file = join(ws.localDir, 'cache', 'evidence.json');
    this.staleFile = join(ws.localDir, 'cache', 'evidence-stale.json');
    this.anchorsFile = join(ws.localDir, 'cache', 'evidence-anchors.txt');
  }

  /** What the last check recorded for each URI of the entry `key` (project/id), by URI. */
  anchorsOf(key: string): Map<string, AnchorRecord> | undefined {
    this.ws.local('cache'); // checked before anything in it is read
    const st = statSync(this.anchorsFile, { throwIfNoEntry: false });
    if (!st) return undefined;
    const stamp = `${st.size}:${st.mtimeMs}`;
    if (this.anchorsMemo?.stamp !== stamp) {
      let bytes: Buffer = Buffer.alloc(0);
      try {
        bytes = readNoFollow(this.anchorsFile);
      } catch {
        /* gone meanwhile: no records */
      }
      this.anchorsMemo = { stamp, bytes, byKey: new Map() };
      if (this.statusMemo.size > 50_000) this.statusMemo.clear();
    }
    const m = this.anchorsMemo;
    if (m.byKey.has(key)) return m.byKey.get(key);
    // The lines are sorted by key (as bytes): a binary search over the bytes finds the entry's line,
    // and only that line is decoded and parsed (a read wants a few of 10K).
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
        try {
          recs = new Map((JSON.parse(b.toString('utf8', tab + 1, end)) as AnchorRecord[]).map((r) => [r.uri, r]));
        } catch {
          recs = undefined;
        }
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
    let text = '';
    try {
      this.ws.local('cache');
      text = readNoFollow(this.anchorsFile, 'utf8');
    } catch {
      return out;
    }
    for (const line of text.split('\n')) {
      const tab = line.indexOf('\t');
      if (tab < 0) continue;
      try {
        out.set(line.slice(0, tab), JSON.parse(line.slice(tab + 1)) as AnchorRecord[]);
      } catch {
        /* a torn line: that entry is checked again */
      }
    }
    return out;
  }

  saveAnchors(records: Map<string, AnchorRecord[]>): void {
    this.ws.ensureLocal({ force: true });
    this.ws.local('cache', true);
    const lines: string[] = [];
    // Each key's bytes made once (not twice per comparison: 10K keys made ~280K buffers).
    const keys = [...records.keys()].map((k) => ({ k, b: Buffer.from(k) })).sort((x, y) => Buffer.compare(x.b, y.b));
    for (const { k } of keys) {
      const rs = records.get(k)!;
      if (rs.length && !/[\t\n]/.test(k)) lines.push(`${k}\t${JSON.stringify(rs)}\n`);
    }
    writeFileAtomic(this.anchorsFile, lines.join(''), { fsync: false });
    this.anchorsMemo = undefined;
    this.statusMemo.clear();
  }

  load(): EvidenceCacheFile {
    this.ws.local('cache'); // checked before anything in it is read
    const st = statSync(this.file, { throwIfNoEntry: false });
    if (!st) return { v: 1, checks: {}, stale: {} };
    const stamp = `${st.size}:${st.mtimeMs}`;
    if (this.memo?.stamp === stamp) return this.memo.data;
    try {
      const data = JSON.parse(readNoFollow(this.file, 'utf8')) as EvidenceCacheFile;
      if (data.v === 1 && data.checks && data.stale) {
        this.memo = { stamp, data };
        return data;
      }
    } catch {
      /* corrupt: start over */
    }
    return { v: 1, checks: {}, stale: {} };
  }

  /** Keys of entries flagged stale (built once per version of the file: queries ask on every call). */
  staleKeys(): Set<string> {
    if (!this.memo) {
      // A process that has not read the whole cache reads just the keys, when they match it, once
      // per version of evidence.json (a daemon asks on every query).
      this.ws.local('cache');
      const st = statSync(this.file, { throwIfNoEntry: false });
      if (!st) return new Set();
      const stamp = `${st.size}:${st.mtimeMs}`;
      if (this.keysMemo?.stamp === stamp) return this.keysMemo.keys;
      try {
        const small = JSON.parse(readNoFollow(this.staleFile, 'utf8')) as { of: string; keys: string[] };
        if (small.of === stamp && Array.isArray(small.keys)) {
          this.keysMemo = { stamp, keys: new Set(small.keys) };
          return this.keysMemo.keys;
        }
      } catch {
        /* missing or corrupt: read the whole cache below */
      }
    }
    const data = this.load();
    if (this.memo?.data === data) return (this.memo.staleKeys ??= new Set(Object.keys(data.stale)));
    return new Set(Object.keys(data.stale));
  }

  save(data: EvidenceCacheFile): void {
    this.ws.ensureLocal({ force: true });
    this.ws.local('cache', true);
    writeFileAtomic(this.file, `${JSON.stringify(data)}\n`, { fsync: false });
    this.memo = undefined;
    this.keysMemo = undefined;
    // Names the version of evidence.json it summarizes: a stale summary is never believed.
    const st = statSync(this.file);
    writeFileAtomic(this.staleFile, JSON.stringify({ of: `${st.size}:${st.mtimeMs}`, keys: Object.keys(data.stale) }), { fsync: false });
  }
}

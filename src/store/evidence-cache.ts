/**
 * Results of evidence checks (002 Req 18.5-18.7), local: `cache/evidence.json` of the local state folder.
 * Per URI (with the file's stamp for paths, so an edit re-checks) the status and reason; per
 * entry (`project/id`) the reasons it is stale, which queries read to flag and down-rank.
 * The stale keys alone are also written to `evidence-stale.json`: every query needs them, and
 * at 10K checked entries the whole file is 1 MB (12 ms of a cold query to parse).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
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

  constructor(ws: Workspace) {
    this.ws = ws;
    this.file = join(ws.localDir, 'cache', 'evidence.json');
    this.staleFile = join(ws.localDir, 'cache', 'evidence-stale.json');
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

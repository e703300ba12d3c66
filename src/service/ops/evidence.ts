/** `memory validate-evidence [--fix]` (docs/ARCHITECTURE.md "Evidence that follows the code"). */
import type { CatalogSnapshot } from '../../store/catalog.js';
import { join } from 'node:path';
import { confirmation, type AnchorRecord, type AnchorStatus } from '../../core/anchors.js';
import type { EvidenceStatus } from '../../core/evidence.js';
import { probeUrl, type CheckResult } from '../../store/evidence-cache.js';
import { hasPathAt, remoteUrls } from '../../store/git-log.js';
import { modules, type Engine } from '../engine.js';
import type { Caller } from '../caller.js';
import { collectGarbage } from '../semantic.js';
import { rewriteEntries } from './batch.js';
import { checkAnchors, type AnchorItem } from './anchor-check.js';

interface EvidenceRow {
  type: string;
  uri: string;
  status: EvidenceStatus;
  reason: string;
  /** File evidence: where its code is now against where it was written. */
  anchor?: AnchorStatus;
  /** Moved: what `--fix` writes. */
  to?: string;
}

/**
 * File evidence through git (anchor-check.ts), permalinks of this repository by commit and path,
 * URLs by the network probe (unreachable: "unknown", never "stale"; cached for `urlTtlMs`). What
 * is found per URI is recorded for reads; entries whose evidence changed or is gone are flagged.
 */
export async function validateEvidence(
  engine: Engine,
  caller: Caller,
  projectName?: string,
  opts: {
    offline?: boolean;
    timeoutMs?: number;
    urlTtlMs?: number;
    fix?: boolean;
    onProgress?: (done: number, total: number) => void;
    /** false: counts only (`stale_entries` set, no rows), for the daemon. */
    rows?: boolean;
  } = {},
) {
  const projects = caller.readProjects(engine, projectName);
  const entries = engine.snapshot(caller.warn).entries.filter((se) => (!projects || projects.includes(se.project)) && se.meta.status !== 'superseded');
  // Only evidence and confirmation are kept: every entry's text at once would swell a daemon's heap.
  const cited = entries.map((se) => {
    const e = se.readOnce();
    return { se, evidence: e.evidence, seen: confirmation(e) };
  });
  // Every entry just read is garbage: collected at once in a daemon (elsewhere a no-op), whose first start peaked in this job.
  collectGarbage();
  const cache = engine.evidenceCache.load();
  const now = caller.now();
  const ttl = opts.urlTtlMs ?? 24 * 3_600_000;
  const git = await engine.git();
  const remotes = git ? (await remoteUrls(git)).map(modules.evidenceCheck().remoteRepo).filter((r): r is { host: string; repo: string } => r !== null) : [];
  const plan = modules.evidenceCheck().planCheck;
  const items: AnchorItem[] = [];
  for (const { se, evidence } of cited) {
    const anchors = evidence.flatMap((ev) => {
      const p = plan(ev.type, ev.uri);
      return p.kind === 'file' ? [{ uri: ev.uri, anchor: p.anchor }] : [];
    });
    if (anchors.length) items.push({ key: se.key, id: se.meta.id, anchors });
  }
  const found = await checkAnchors(engine, items);
  collectGarbage(); // (and every entry's versions read from git)
  const checks: Record<string, CheckResult> = {};
  const checkUrl = async (type: string, uri: string): Promise<{ status: EvidenceStatus; reason: string }> => {
    const p = plan(type, uri);
    if (p.kind === 'none') return { status: 'skipped', reason: p.reason };
    if (p.kind === 'permalink') {
      const local = remotes.some((r) => r.host === p.host.toLowerCase() && r.repo === p.repo.toLowerCase());
      if (local && git) {
        const has = await hasPathAt(git, p.commit, p.path);
        if (has === true) return { status: 'ok', reason: `commit ${p.commit.slice(0, 12)} has ${p.path}` };
        if (has === false) return { status: 'stale', reason: `commit ${p.commit.slice(0, 12)} has no ${p.path}` };
        // Not fetched here: ask the host like any URL.
      }
    }
    const url = p.kind === 'file' ? uri : p.url;
    const hit = cache.checks[url];
    if (hit && now.getTime() - Date.parse(hit.checked_at) < ttl) return (checks[url] = hit);
    if (opts.offline) return { status: 'unknown', reason: 'not checked (--offline)' };
    const r: CheckResult = { ...(await probeUrl(url, opts.timeoutMs ?? 5000)), checked_at: now.toISOString() };
    return (checks[url] = r);
  };
  const report = {
    checked: 0,
    ok: 0,
    stale: 0,
    unknown: 0,
    skipped: 0,
    anchors: { current: 0, moved: 0, changed: 0, missing: 0 },
    entries: [] as { id: string; project: string; stale: boolean; evidence: EvidenceRow[] }[],
  };
  const stale: Record<string, string[]> = { ...cache.stale };
  const records = engine.evidenceCache.allAnchors();
  const fixes = new Map<string, { from: string; to: string }[]>();
  let done = 0;
  let staleEntries = 0;
  for (const { se, evidence, seen } of cited) {
    const rows: EvidenceRow[] = [];
    const recs: AnchorRecord[] = [];
    for (const ev of evidence) {
      const a = found.get(se.key)?.get(ev.uri);
      let row: EvidenceRow;
      if (a) {
        row = { type: ev.type, uri: ev.uri, status: a.status === 'changed' || a.status === 'missing' ? 'stale' : 'ok', reason: a.reason, anchor: a.status };
        if (a.fix) row.to = a.fix;
        report.anchors[a.status]++;
        recs.push({ ...a.record, seen });
        if (a.fix) fixes.set(se.key, [...(fixes.get(se.key) ?? []), { from: ev.uri, to: a.fix }]);
      } else {
        const r = await checkUrl(ev.type, ev.uri);
        row = { type: ev.type, uri: ev.uri, status: r.status, reason: r.reason };
        if (r.status === 'stale') recs.push({ uri: ev.uri, status: 'missing', seen });
      }
      report[row.status]++;
      if (row.status !== 'skipped') report.checked++;
      rows.push(row);
    }
    const reasons = rows.filter((r) => r.status === 'stale').map((r) => `${r.uri}: ${r.reason}`);
    if (reasons.length) stale[se.key] = reasons;
    else delete stale[se.key];
    if (reasons.length) staleEntries++;
    if (recs.length) records.set(se.key, recs);
    else records.delete(se.key);
    if (opts.rows !== false) report.entries.push({ id: se.meta.id, project: se.project, stale: reasons.length > 0, evidence: rows });
    found.delete(se.key); // what is reported is kept, not the whole result
    opts.onProgress?.(++done, entries.length);
    // A daemon answers queries while a long check runs.
    if (done % 200 === 0) {
      await new Promise((r) => setImmediate(r));
      await engine.quiet();
    }
  }
  // `--fix`: the URIs rewritten, and a commit per project.
  const fixedNow = opts.fix && fixes.size ? await applyFixes(engine, caller, entries, fixes, records) : undefined;
  // Earlier results stay (other projects, fresh URL checks) unless the cache grew large.
  const merged = Object.keys(cache.checks).length > 20_000 ? checks : { ...cache.checks, ...checks };
  engine.evidenceCache.save({ checks: merged, stale });
  engine.evidenceCache.saveAnchors(records);
  return { ...report, ...fixedNow, ...(opts.rows === false ? { stale_entries: staleEntries } : {}) };
}

/** The URIs that moved, a commit per project; their records then describe the new URIs. */
async function applyFixes(
  engine: Engine,
  caller: Caller,
  entries: CatalogSnapshot['entries'],
  fixes: Map<string, { from: string; to: string }[]>,
  records: Map<string, AnchorRecord[]>,
) {
  const fixed: { id: string; project: string; from: string; to: string }[] = [];
  const items = entries.flatMap((se) => {
    const moves = new Map(fixes.get(se.key)?.map((f) => [f.from, f.to]));
    if (!moves.size) return [];
    const e = se.entry;
    for (const [from, to] of moves) fixed.push({ id: e.id, project: se.project, from, to });
    records.set(
      se.key,
      (records.get(se.key) ?? []).map((r) => (moves.has(r.uri) ? { ...r, uri: moves.get(r.uri)!, status: 'current' as const, to: undefined } : r)),
    );
    const entry = { ...e, evidence: e.evidence.map((ev) => (moves.has(ev.uri) ? { ...ev, uri: moves.get(ev.uri)! } : ev)) };
    return [{ project: se.project, abs: join(engine.ws.root, se.file), entry, op: 'update' as const, summary: 'evidence moved with the code' }];
  });
  const commits = await rewriteEntries(engine, caller, items);
  return { fixed, commits };
}

/**
 * `memory validate-evidence` (002 Req 18.5-18.7): file paths against the working tree, git
 * permalinks of this repository, URLs through the network probe; results cached; entries with
 * stale evidence flagged (queries down-rank them).
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { EvidenceStatus } from '../../core/evidence-check.js';
import type { CheckResult } from '../../store/evidence-cache.js';
import { hasPathAt, remoteUrls } from '../../store/git-log.js';
import { probeUrl } from '../../store/http-probe.js';
import { modules, type ServiceContext } from '../context.js';

export interface EvidenceReport {
  checked: number;
  ok: number;
  stale: number;
  unknown: number;
  skipped: number;
  entries: { id: string; project: string; stale: boolean; evidence: { type: string; uri: string; status: EvidenceStatus; reason: string }[] }[];
}

/**
 * `memory validate-evidence`: file paths against the working tree (and their line ranges), git
 * permalinks of this repository for a reachable commit and path, URLs with HEAD (then GET) and
 * a short timeout; an unreachable network is "unknown", never "stale". Results are cached
 * (paths by file stamp, URLs for `urlTtlMs`); entries with stale evidence are flagged and
 * down-ranked by queries.
 */
export async function validateEvidence(
  ctx: ServiceContext,
  projectName?: string,
  opts: { offline?: boolean; timeoutMs?: number; urlTtlMs?: number; onProgress?: (done: number, total: number) => void } = {},
): Promise<EvidenceReport> {
  const projects = ctx.readProjects(projectName);
  const entries = ctx.snapshot().entries.filter((se) => (!projects || projects.includes(se.project)) && se.meta.status !== 'superseded');
  const cache = ctx.evidenceCache.load();
  const now = ctx.now();
  const ttl = opts.urlTtlMs ?? 24 * 3_600_000;
  const git = await ctx.git();
  const remotes = git ? (await remoteUrls(git)).map(modules.evidenceCheck().remoteRepo).filter((r): r is { host: string; repo: string } => r !== null) : [];
  const checks: Record<string, CheckResult> = {};
  const fresh = (key: string): CheckResult | undefined => {
    const c = cache.checks[key];
    return c && now.getTime() - Date.parse(c.checked_at) < ttl ? c : undefined;
  };
  const checkOne = async (type: string, uri: string): Promise<{ key: string; result: CheckResult }> => {
    const plan = modules.evidenceCheck().planCheck(type, uri);
    const at = now.toISOString();
    if (plan.kind === 'none') return { key: uri, result: { status: 'skipped', reason: plan.reason, checked_at: at } };
    if (plan.kind === 'file') {
      const abs = join(ctx.ws.root, plan.path);
      const st = statSync(abs, { throwIfNoEntry: false });
      const key = `${uri}\u0000${st ? `${st.size}:${st.mtimeMs}` : 'missing'}`;
      if (cache.checks[key]) return { key, result: cache.checks[key] };
      if (!st || !st.isFile()) return { key, result: { status: 'stale', reason: `${plan.path} does not exist in the working tree`, checked_at: at } };
      if (plan.end !== undefined) {
        const lines = readFileSync(abs, 'utf8').split('\n').length;
        if (plan.end > lines)
          return { key, result: { status: 'stale', reason: `${plan.path} has ${lines} lines; the evidence cites line ${plan.end}`, checked_at: at } };
      }
      return { key, result: { status: 'ok', reason: 'file exists', checked_at: at } };
    }
    if (plan.kind === 'permalink') {
      const local = remotes.some((r) => r.host === plan.host.toLowerCase() && r.repo === plan.repo.toLowerCase());
      if (local && git) {
        const has = await hasPathAt(git, plan.commit, plan.path);
        if (has === true) return { key: uri, result: { status: 'ok', reason: `commit ${plan.commit.slice(0, 12)} has ${plan.path}`, checked_at: at } };
        if (has === false) return { key: uri, result: { status: 'stale', reason: `commit ${plan.commit.slice(0, 12)} has no ${plan.path}`, checked_at: at } };
        // The commit is not here (not fetched): ask the host like any URL.
      }
    }
    const url = plan.kind === 'url' ? plan.url : plan.url;
    const hit = fresh(url);
    if (hit) return { key: url, result: hit };
    if (opts.offline) return { key: url, result: { status: 'unknown', reason: 'not checked (--offline)', checked_at: at } };
    return { key: url, result: { ...(await probeUrl(url, opts.timeoutMs ?? 5000)), checked_at: at } };
  };
  const report: EvidenceReport = { checked: 0, ok: 0, stale: 0, unknown: 0, skipped: 0, entries: [] };
  const stale: Record<string, string[]> = { ...cache.stale };
  let done = 0;
  for (const se of entries) {
    const rows: EvidenceReport['entries'][number]['evidence'] = [];
    for (const ev of se.entry.evidence) {
      const { key, result } = await checkOne(ev.type, ev.uri);
      checks[key] = result;
      report[result.status]++;
      if (result.status !== 'skipped') report.checked++;
      rows.push({ type: ev.type, uri: ev.uri, status: result.status, reason: result.reason });
    }
    const reasons = rows.filter((r) => r.status === 'stale').map((r) => `${r.uri}: ${r.reason}`);
    if (reasons.length) stale[se.key] = reasons;
    else delete stale[se.key];
    report.entries.push({ id: se.meta.id, project: se.project, stale: reasons.length > 0, evidence: rows });
    opts.onProgress?.(++done, entries.length);
    // Let a long-lived process (the daemon) answer queries while a long check runs.
    if (done % 200 === 0) await new Promise((r) => setImmediate(r));
  }
  // Keep earlier results (other projects, URL checks still fresh), unless the cache grew large.
  const merged = Object.keys(cache.checks).length > 20_000 ? checks : { ...cache.checks, ...checks };
  ctx.evidenceCache.save({ v: 1, checks: merged, stale });
  return report;
}

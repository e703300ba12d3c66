/**
 * How to check an evidence URI, pure: what kind of check it needs, and how
 * a check's outcome reads. The IO (files, git, HTTP) is in service/ops/evidence.ts (validateEvidence).
 */
import { parseAnchor, type Anchor } from './anchors.js';

export type EvidenceStatus = 'ok' | 'stale' | 'unknown' | 'skipped';

export type EvidenceCheck =
  | { kind: 'file'; path: string; anchor: Anchor }
  | { kind: 'permalink'; host: string; repo: string; commit: string; path: string; url: string }
  | { kind: 'url'; url: string }
  | { kind: 'none'; reason: string };

const PERMALINK = /^https?:\/\/([^/\s]+)\/(.+?)\/(?:-\/)?(?:blob|tree|raw|src)\/([0-9a-f]{7,40})\/([^#?\s]+)(?:#L(\d+)(?:-L?(\d+))?)?$/;

export function planCheck(type: string, uri: string): EvidenceCheck {
  if (type === 'assumption') return { kind: 'none', reason: 'an assumption has nothing to check' };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(uri)) {
    const [, host, repo, commit, path] = PERMALINK.exec(uri) ?? [];
    if (host && repo && commit && path) return { kind: 'permalink', host, repo: repo.replace(/\.git$/, ''), commit, path: decodeURIComponent(path), url: uri };
    if (/^https?:\/\//i.test(uri)) return { kind: 'url', url: uri };
    return { kind: 'none', reason: 'not a file path or an http(s) URL' };
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(uri) && !/^[a-z]:[\\/]/i.test(uri)) return { kind: 'none', reason: 'not a file path or an http(s) URL' };
  const anchor = parseAnchor(uri) ?? { path: uri };
  return { kind: 'file', path: anchor.path, anchor };
}

/** The `owner/repo` of a git remote URL (https or ssh form), lower-cased, or null. */
export function remoteRepo(remoteUrl: string): { host: string; repo: string } | null {
  const [, https, ssh, repo] = /^(?:https?:\/\/(?:[^@/]+@)?([^/]+)\/|(?:ssh:\/\/)?[^@]+@([^:/]+)[:/])(.+?)(?:\.git)?\/?$/.exec(remoteUrl.trim()) ?? [];
  const host = https ?? ssh;
  return host && repo ? { host: host.toLowerCase(), repo: repo.toLowerCase() } : null;
}

/** Reads an HTTP status: gone is stale; reachable is ok; auth walls and server trouble are unknown. */
export function httpStatus(code: number): { status: EvidenceStatus; reason: string } {
  if (code >= 200 && code < 400) return { status: 'ok', reason: `HTTP ${code}` };
  if (code === 404 || code === 410) return { status: 'stale', reason: `HTTP ${code}: the page is gone` };
  return { status: 'unknown', reason: `HTTP ${code}` };
}

/** Evidence URIs, pure: the right form for its type, and how `validate-evidence` checks one and reads the outcome (the IO: service/ops/evidence.ts). */
import { parseAnchor, SYMBOL_NAME, type Anchor } from './anchors.js';
import type { EvidenceType } from './schema.js';
import { tryOr } from '../try.js';

/** Git permalinks: GitHub/Gitea `/blob/<ref>/<path>`, GitLab `/-/blob/`, Bitbucket `/src/<ref>/`, commits. */
const GIT_PERMALINK = /^https?:\/\/[^/\s]+\/[^\s]+\/(?:-\/)?(?:blob|tree|src|raw|commit|commits)\/[^\s]+$/;

/** Ticket URLs: GitHub/Gitea issues and pulls, GitLab issues and MRs, Jira, Linear, Azure DevOps, Shortcut. */
const TICKET_PATTERNS: RegExp[] = [
  /^https?:\/\/[^/\s]+\/[^/\s]+\/[^/\s]+\/(?:-\/)?(?:issues|pull|pulls|merge_requests)\/\d+(?:[#?/][^\s]*)?$/,
  /^https?:\/\/[^/\s]+\/(?:[^\s]*\/)?browse\/[A-Z][A-Z0-9_]+-\d+(?:[#?/][^\s]*)?$/,
  /^https?:\/\/linear\.app\/[^/\s]+\/issue\/[A-Za-z][A-Za-z0-9]*-\d+(?:[#?/][^\s]*)?$/,
  /^https?:\/\/[^/\s]+\/[^\s]*_workitems\/edit\/\d+(?:[#?/][^\s]*)?$/,
  /^https?:\/\/app\.shortcut\.com\/[^/\s]+\/story\/\d+(?:[#?/][^\s]*)?$/,
];

/** Paths that hold credentials; evidence must never point at them. */
const SENSITIVE_PATH = [
  /(^|\/)\.env(\.[^/]*)?$/i,
  /(^|\/)id_(rsa|dsa|ecdsa|ed25519)(\.pub)?$/i,
  /(^|\/)\.(npmrc|pypirc|netrc|git-credentials|aws\/credentials|docker\/config\.json|kube\/config)$/i,
  /(^|\/)\.ssh\//i,
  /\.(pem|key|p12|pfx|keystore|jks)$/i,
];

/** Query-string parameters that carry credentials. */
const SECRET_QUERY_PARAM =
  /^(access_token|token|api_key|apikey|key|secret|client_secret|password|passwd|pwd|sig|signature|x-amz-signature|x-amz-credential|auth|private_token)$/i;

const URL_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/** Why a repository-relative file path is refused (absolute, NUL, backslashes, `..` out of the repository), or null. */
export function checkRepoPath(p: string): string | null {
  if (p.includes('\0')) return 'must not contain a NUL byte';
  if (p.includes('\\')) return 'must use "/" as the separator, not "\\"';
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p) || p.startsWith('~')) return 'must be a path relative to the repository root, not an absolute path';
  let depth = 0;
  for (const seg of p.split('/')) {
    if (seg === '..') depth--;
    else if (seg !== '' && seg !== '.') depth++;
    if (depth < 0) return 'must stay inside the repository (it climbs out with "..")';
  }
  return depth === 0 ? 'must name a file' : null;
}

const checkSensitive = (pathPart: string): string | null =>
  SENSITIVE_PATH.some((re) => re.test(pathPart)) ? 'points at a file that holds credentials; cite a non-secret file instead' : null;

/** Checks a URL for embedded credentials and token-bearing query strings. */
export function checkUrlSafety(uri: string): string | null {
  const u = tryOr(() => new URL(uri), null);
  if (!u) return 'is not a valid URL';
  if (u.username || u.password) return 'must not embed credentials (user:password@host)';
  for (const key of u.searchParams.keys()) if (SECRET_QUERY_PARAM.test(key)) return `must not carry a credential in its query string (parameter "${key}")`;
  return checkSensitive(decodeURIComponent(u.pathname));
}

function checkPathLike(uri: string): string | null {
  const a = parseAnchor(uri) ?? { path: uri };
  if (a.symbol && !SYMBOL_NAME.test(a.symbol))
    return 'names a symbol that is not a name: after "#symbol=" give letters, digits, "_" or "$" (dotted parts allowed)';
  return checkRepoPath(a.path) ?? checkSensitive(a.path);
}

/** Returns an error message when `uri` does not have the form `type` needs, else null. */
export function checkEvidenceUri(type: EvidenceType, uri: string): string | null {
  if (uri.trim() !== uri) return 'must not start or end with white space';
  if (type === 'assumption') return null;
  const url = URL_SCHEME.test(uri);
  const unsafe = url ? checkUrlSafety(uri) : null;
  if (unsafe) return unsafe;
  switch (type) {
    case 'code':
      if (url) return GIT_PERMALINK.test(uri) ? null : 'must be a git permalink (https://host/owner/repo/blob/<commit>/<path>) or a repository file path';
      return checkPathLike(uri);
    case 'ticket':
      return TICKET_PATTERNS.some((re) => re.test(uri))
        ? null
        : 'must be a ticket URL (a GitHub/GitLab issue or pull request, Jira /browse/KEY-1, Linear /issue/KEY-1, ...)';
    case 'doc':
      if (url) return /^https?:\/\//i.test(uri) ? null : 'must be an http(s) URL or a repository file path';
      return checkPathLike(uri);
    default:
      // artifact, log, screenshot: any URL or a repository file path.
      return url ? null : checkPathLike(uri);
  }
}

// ---------------------------------------------------------------- checking that it still resolves

export type EvidenceStatus = 'ok' | 'stale' | 'unknown' | 'skipped';

export type EvidenceCheck =
  | { kind: 'file'; path: string; anchor: Anchor }
  | { kind: 'permalink'; host: string; repo: string; commit: string; path: string; url: string }
  | { kind: 'url'; url: string }
  | { kind: 'none'; reason: string };

const PERMALINK = /^https?:\/\/([^/\s]+)\/(.+?)\/(?:-\/)?(?:blob|tree|raw|src)\/([0-9a-f]{7,40})\/([^#?\s]+)(?:#L(\d+)(?:-L?(\d+))?)?$/;

export function planCheck(type: string, uri: string): EvidenceCheck {
  if (type === 'assumption') return { kind: 'none', reason: 'an assumption has nothing to check' };
  const [, host, repo, commit, path] = PERMALINK.exec(uri) ?? [];
  if (host && repo && commit && path) return { kind: 'permalink', host, repo: repo.replace(/\.git$/, ''), commit, path: decodeURIComponent(path), url: uri };
  if (/^https?:\/\//i.test(uri)) return { kind: 'url', url: uri };
  // Another scheme (a drive letter is a path).
  if (URL_SCHEME.test(uri) || (/^[a-z][a-z0-9+.-]*:/i.test(uri) && !/^[a-z]:[\\/]/i.test(uri)))
    return { kind: 'none', reason: 'not a file path or an http(s) URL' };
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
  return code === 404 || code === 410 ? { status: 'stale', reason: `HTTP ${code}: the page is gone` } : { status: 'unknown', reason: `HTTP ${code}` };
}

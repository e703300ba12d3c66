/**
 * `memory diff [<range>] [--staged]`: both sides read from git for core/memory-diff.ts, and the
 * memories whose cited code the range changed (cited-code.ts). Without a range: the branch against
 * its upstream's (else main's or master's) merge base, else the uncommitted changes against HEAD;
 * `A..B`; `A...B` from their merge base; `R` as `R...HEAD`; `--staged`: the index against HEAD.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../../core/errors.js';
import type { MemoryDiff } from '../../core/memory-diff.js';
import type { MemoryEntry } from '../../core/schema.js';
import { lazy } from '../../lazy.js';
import type { GitRepo } from '../../store/git.js';
import { tryOr } from '../../store/fsutil.js';
import type { Engine } from '../engine.js';
import type { Caller } from '../caller.js';
import { citedCode } from './cited-code.js';

const core = lazy<typeof import('../../core/memory-diff.js')>('./core/memory-diff.js');
const render = lazy<typeof import('../../core/memory-diff-render.js')>('./core/memory-diff-render.js');

const PATHS = ['ai-memory', 'ai-context'];

type Side = { rev: string; label: string } | { index: true; label: string } | { worktree: true; label: string };

const verify = async (git: GitRepo, rev: string): Promise<string | null> =>
  (await git.run(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`]).catch(() => '')).trim() || null;

async function mergeBase(git: GitRepo, a: string, b: string): Promise<string> {
  const out = await git.run(['merge-base', a, b]).catch(() => null);
  if (out === null) throw new UsageError(`${a} and ${b} have no common history`);
  return out.trim();
}

async function mustVerify(git: GitRepo, rev: string): Promise<string> {
  const sha = await verify(git, rev);
  if (!sha) throw new UsageError(`${rev} is not a commit, branch or tag here`);
  return sha;
}

async function sides(git: GitRepo, range: string | undefined, staged: boolean): Promise<{ base: Side; head: Side }> {
  if (staged) {
    if (range) throw new UsageError('give a range or --staged, not both');
    return { base: { rev: 'HEAD', label: 'HEAD' }, head: { index: true, label: 'index' } };
  }
  if (range) {
    if (range.startsWith('-')) throw new UsageError(`${range} is not a range (A..B, A...B or a commit)`);
    const three = range.split('...');
    const ends = three.length === 2 ? three : range.split('..');
    // `R` alone is `R...HEAD`.
    const [a, b] = (ends.length === 2 ? ends : [range, 'HEAD']).map((r) => r || 'HEAD') as [string, string];
    const head = await mustVerify(git, b);
    const from = await mustVerify(git, a);
    if (ends.length === 2 && three.length !== 2) return { base: { rev: from, label: a }, head: { rev: head, label: b } };
    return { base: { rev: await mergeBase(git, from, head), label: `merge-base(${a}, ${b})` }, head: { rev: head, label: b } };
  }
  const head = await verify(git, 'HEAD');
  if (head) {
    const upstream = (await git.run(['rev-parse', '--abbrev-ref', '--symbolic-full-name', '@{u}']).catch(() => '')).trim() || null;
    const branch = (await git.run(['rev-parse', '--abbrev-ref', 'HEAD']).catch(() => '')).trim();
    for (const other of [upstream, 'main', 'master']) {
      if (!other || other === branch) continue;
      const sha = await verify(git, other);
      if (!sha) continue;
      const base: string | null = await mergeBase(git, sha, head).catch(() => null);
      if (base && base !== head) return { base: { rev: base, label: `merge-base(${other}, HEAD)` }, head: { rev: head, label: branch || 'HEAD' } };
    }
  }
  return { base: { rev: 'HEAD', label: 'HEAD' }, head: { worktree: true, label: 'working tree' } };
}

function nameStatus(out: string): { status: string; path: string }[] {
  const parts = out.split('\0').filter((x) => x !== '');
  const rows: { status: string; path: string }[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) rows.push({ status: parts[i]!, path: parts[i + 1]! }); // i + 1 < length
  return rows;
}

export async function memoryDiff(engine: Engine, caller: Caller, opts: { range?: string; staged?: boolean; project?: string } = {}): Promise<MemoryDiff> {
  const git = await engine.git();
  if (!git) throw new UsageError(`${engine.ws.root} is not a git repository: memory diff compares commits`);
  const { base, head } = await sides(git, opts.range, Boolean(opts.staged));
  const baseRev = 'rev' in base ? base.rev : 'HEAD';
  const hasBase = (await verify(git, baseRev)) !== null;
  const memoryPaths = PATHS.map((p) => git.repoPath(join(engine.ws.root, p)));
  // What makes `git diff` compare the two sides; a new side's files as added.
  const between = 'rev' in head ? [baseRev, head.rev] : 'index' in head ? ['--cached', baseRev] : [baseRev];
  const added = async (...args: string[]): Promise<{ status: string; path: string }[]> => {
    const out = await git.run(['ls-files', ...args, '-z', '--', ...memoryPaths]);
    return out
      .split('\0')
      .filter(Boolean)
      .map((path) => ({ status: 'A', path }));
  };
  // No commit yet: everything on the new side is new.
  const rows = hasBase ? nameStatus(await git.run(['diff', '--name-status', '-z', '--no-renames', ...between, '--', ...memoryPaths])) : await added();
  if (hasBase && 'worktree' in head) rows.push(...(await added('--others', '--exclude-standard')));

  // Relative to the workspace (the repository may be larger).
  const prefix = git.repoPath(engine.ws.root).replace(/^\.$/, '');
  const rel = (p: string): string => (prefix && p.startsWith(`${prefix}/`) ? p.slice(prefix.length + 1) : p);
  const wanted = rows.filter((r) => !opts.project || rel(r.path).startsWith(`ai-memory/${opts.project}/`) || rel(r.path) === `ai-context/${opts.project}.md`);
  const headName = (p: string): string => ('index' in head ? `:${p}` : 'rev' in head ? `${head.rev}:${p}` : '');
  const blobs = await git.readBlobs([
    ...wanted.filter((r) => r.status !== 'A' && hasBase).map((r) => `${baseRev}:${r.path}`),
    ...('worktree' in head ? [] : wanted.filter((r) => r.status !== 'D').map((r) => headName(r.path))),
  ]);
  const files = wanted.map((r) => {
    const before = r.status === 'A' || !hasBase ? null : (blobs.get(`${baseRev}:${r.path}`)?.toString('utf8') ?? null);
    let after: string | null = null;
    if (r.status !== 'D') {
      if ('worktree' in head) {
        const abs = join(git.toplevel, r.path);
        after = existsSync(abs) ? readFileSync(abs, 'utf8') : null;
      } else after = blobs.get(headName(r.path))?.toString('utf8') ?? null;
    }
    return { path: rel(r.path), before, after };
  });

  // The live entries of the touched projects on the new side, for duplicates.
  const projects = [...new Set(files.map((f) => /^ai-memory\/([^/]+)\//.exec(f.path)?.[1]).filter((p): p is string => Boolean(p)))];
  const live = new Map(projects.map((p) => [p, [] as MemoryEntry[]]));
  if (projects.length && !('rev' in head)) {
    for (const se of engine.snapshot(caller.warn).entries) live.get(se.project)?.push(se.entry);
  } else if (projects.length && 'rev' in head) {
    const listing = await git.run(['ls-tree', '-r', '-z', '--name-only', head.rev, '--', ...projects.map((p) => git.repoPath(join(engine.ws.memoryDir, p)))]);
    const names = listing.split('\0').filter((p) => p.endsWith('.json'));
    const all = await git.readBlobs(names.map((p) => `${head.rev}:${p}`));
    for (const p of names) {
      const list = live.get(/ai-memory\/([^/]+)\/[^/]+\/[^/]+\.json$/.exec(p)?.[1] ?? '');
      const b = all.get(`${head.rev}:${p}`);
      // An unreadable one is reported as a bad file if it is part of the change.
      if (list && b) tryOr(() => list.push(JSON.parse(b.toString('utf8')) as MemoryEntry), 0);
    }
  }
  const d = core().diffMemory({ base: base.label, head: head.label }, files, live);
  if (hasBase) {
    const touched = new Set(files.map((f) => /\/([^/]+)\.json$/.exec(f.path)?.[1]).filter((x): x is string => Boolean(x)));
    d.cited_code = await citedCode(engine, git, {
      base: baseRev,
      sides: between,
      touched,
      project: opts.project,
    });
  }
  return d;
}

export function renderDiff(d: MemoryDiff, format: string): string {
  if (format === 'json') return `${JSON.stringify(d, null, 2)}\n`;
  if (format === 'markdown') return render().renderMarkdown(d);
  if (format === 'text') return render().renderText(d);
  throw new UsageError(`format must be text, markdown or json (got ${JSON.stringify(format).slice(0, 40)})`);
}

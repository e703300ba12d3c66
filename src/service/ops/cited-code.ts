/**
 * The memories a change invalidates (`memory diff`'s `cited_code`): the entries live on the base
 * side whose evidence cites code the change moved, modified or deleted. git says what changed
 * (names with rename detection, then `-U0` hunks of the cited files only) and `git grep` finds
 * the entries citing a changed path, so the cost follows the change, not the size of memory.
 * Evidence is read as the base side has it: keeping it current before is `validate-evidence`'s job.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { citedChange, type Anchor, type FileFate } from '../../core/anchors.js';
import type { CitedCode } from '../../core/memory-diff.js';
import type { MemoryEntry } from '../../core/schema.js';
import { addHunks, diffFates, readTexts } from '../../store/code-changes.js';
import type { GitRepo } from '../../store/git.js';
import { modules, type ServiceContext } from '../context.js';

export interface CitedOptions {
  /** The base commit, and the arguments that make `git diff` compare the two sides. */
  base: string;
  sides: string[];
  /** The head side's blob name of a repository path (`rev:path`, `:path`), or null for the working tree. */
  headName: (p: string) => string | null;
  /** Ids of entries the change wrote. */
  touched: Set<string>;
  project?: string;
}

export async function citedCode(ctx: ServiceContext, git: GitRepo, o: CitedOptions): Promise<CitedCode[]> {
  const prefix = git.repoPath(ctx.ws.root).replace(/^\.$/, '');
  const toWs = (p: string): string | null => (!prefix ? p : p.startsWith(`${prefix}/`) ? p.slice(prefix.length + 1) : null);
  const toRepo = (p: string): string => (prefix ? `${prefix}/${p}` : p);
  const isMemory = (p: string): boolean => /^(ai-memory|ai-context)\//.test(p);
  const fates = await diffFates(git, o.sides);
  const changed = new Set<string>();
  for (const p of fates.keys()) {
    const w = toWs(p);
    if (w !== null && !isMemory(w)) changed.add(w);
  }
  if (!changed.size) return [];
  const memoryDir = git.repoPath(ctx.ws.memoryDir);
  const listing = await git
    .gitStdin(['grep', '-l', '-z', '-F', '--full-name', '--no-color', '-f', '-', o.base, '--', memoryDir], `${[...changed].join('\n')}\n`)
    .catch(() => ''); // exit 1: nothing matches
  const names = listing.split('\0').filter((n) => n.endsWith('.json'));
  const texts = await readTexts(git, names);
  const plan = modules.evidenceCheck().planCheck;
  const cands: { e: MemoryEntry; project: string; uri: string; anchor: Anchor }[] = [];
  for (const n of names) {
    const m = /ai-memory\/([^/]+)\/[^/]+\/[^/]+\.json$/.exec(n);
    if (!m || (o.project && m[1] !== o.project)) continue;
    let e: MemoryEntry;
    try {
      e = JSON.parse(texts.get(n) ?? '') as MemoryEntry;
    } catch {
      continue;
    }
    if ((e.status !== 'active' && e.status !== 'draft') || !Array.isArray(e.evidence)) continue;
    for (const ev of e.evidence) {
      const p = plan(String(ev.type), String(ev.uri));
      if (p.kind === 'file' && changed.has(p.anchor.path)) cands.push({ e, project: m[1], uri: ev.uri, anchor: p.anchor });
    }
  }
  if (!cands.length) return [];
  const needHunks = new Set(cands.filter((c) => c.anchor.lines || c.anchor.symbol).map((c) => toRepo(c.anchor.path)));
  await addHunks(git, o.sides, fates, (p) => needHunks.has(p));
  // The fates by workspace path; a file renamed out of the workspace is gone from it.
  const wsFate = (p: string): FileFate | undefined => {
    const f = fates.get(toRepo(p));
    if (!f) return undefined;
    const to = toWs(f.to);
    return to === null ? { status: 'D', to: p } : { ...f, to };
  };
  // Symbols need the file on both sides, and so does a line range the hunks touch (it may have
  // moved elsewhere unchanged).
  const needsText = (c: (typeof cands)[number]): boolean =>
    wsFate(c.anchor.path)?.status !== 'D' &&
    Boolean(c.anchor.symbol || (c.anchor.lines && citedChange(c.anchor, wsFate(c.anchor.path))?.change === 'modified'));
  const withText = new Set(cands.filter(needsText));
  const headOf = (c: (typeof cands)[number]): string => fates.get(toRepo(c.anchor.path))!.to;
  const blobNames = [...withText].flatMap((c) =>
    [c.anchor.lines ? `${o.base}:${toRepo(c.anchor.path)}` : null, o.headName(headOf(c))].filter((x): x is string => x !== null),
  );
  const blobs = await readTexts(git, blobNames);
  const headText = (repoPath: string): string | undefined => {
    const name = o.headName(repoPath);
    if (name !== null) return blobs.get(name);
    try {
      return readFileSync(join(git.toplevel, repoPath), 'utf8');
    } catch {
      return undefined;
    }
  };
  const out: CitedCode[] = [];
  for (const c of cands) {
    const texts = withText.has(c) ? [blobs.get(`${o.base}:${toRepo(c.anchor.path)}`), headText(headOf(c))] : [];
    const r = citedChange(c.anchor, wsFate(c.anchor.path), texts[0], texts[1]);
    if (r)
      out.push({
        id: c.e.id,
        project: c.project,
        uri: c.uri,
        change: r.change,
        ...(r.to ? { to: r.to } : {}),
        summary: c.e.summary,
        touched: o.touched.has(c.e.id),
      });
  }
  return out.sort((a, b) => (a.project + a.id + a.uri < b.project + b.id + b.uri ? -1 : 1));
}

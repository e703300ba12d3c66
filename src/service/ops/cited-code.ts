/**
 * `memory diff`'s `cited_code`: the base side's live entries whose evidence cites code the change
 * moved, modified or deleted (docs/ARCHITECTURE.md "Evidence that follows the code"). Evidence is
 * read as the base side has it: keeping it current is `validate-evidence`'s job.
 */
import { join } from 'node:path';
import { citedChange, parseAnchor, parseRaw, type Anchor, type FileFate } from '../../core/anchors.js';
import type { CitedCode } from '../../core/memory-diff.js';
import type { MemoryEntry } from '../../core/schema.js';
import { addHunks, diffFates } from '../../store/code-changes.js';
import type { GitRepo } from '../../store/git.js';
import { tryOr } from '../../store/fsutil.js';
import { modules, type Engine } from '../engine.js';
import { readCited } from './evidence-status.js';

/** `o.base`: the base commit, `o.sides`: the arguments that make `git diff` compare the two sides, `o.touched`: ids the change wrote. */
export async function citedCode(
  engine: Engine,
  git: GitRepo,
  o: { base: string; sides: string[]; touched: Set<string>; project?: string },
): Promise<CitedCode[]> {
  const prefix = git.repoPath(engine.ws.root).replace(/^\.$/, '');
  const toWs = (p: string): string | null => (!prefix ? p : p.startsWith(`${prefix}/`) ? p.slice(prefix.length + 1) : null);
  const toRepo = (p: string): string => (prefix ? `${prefix}/${p}` : p);
  const fates = await diffFates(git, o.sides);
  const changed = new Set<string>();
  for (const p of fates.keys()) {
    const w = toWs(p);
    if (w !== null && !/^(ai-memory|ai-context)\//.test(w)) changed.add(w); // code, not memory
  }
  if (!changed.size) return [];
  // The base side's entry files citing a changed path: one `git grep` of the work tree for a fixed
  // string (a tree's grep inflates every blob; a string per path or a regex cost more still), and
  // those that differ from the base side read from it instead.
  const memoryDir = git.repoPath(engine.ws.memoryDir);
  const [listing, differ] = await Promise.all([
    git.run(['grep', '-z', '-F', '--full-name', '--no-color', '"uri":', '--', memoryDir]).catch(() => ''), // exit 1: no match
    git.run(['diff', '--raw', '-z', '--no-abbrev', '--no-renames', o.base, '--', memoryDir]),
  ]);
  const atBase = parseRaw(differ); // changed or removed since the base side: its blob there
  const texts = new Map<string, string>();
  for (const line of listing.split('\n')) {
    const nul = line.indexOf('\0');
    const file = line.slice(0, nul);
    const uri = /"uri": *"([^"]*)"/.exec(line.slice(nul + 1))?.[1];
    const path = uri === undefined ? undefined : parseAnchor(uri)?.path;
    if (path === undefined || !changed.has(path) || atBase.has(file) || texts.has(file)) continue;
    const text = readCited(engine.ws, join(git.toplevel, file));
    if (text !== undefined) texts.set(file, text);
  }
  const before = await git.readBlobs([...atBase.values()].map((f) => f.blobs![0]));
  for (const [file, f] of atBase) if (before.has(f.blobs![0])) texts.set(file, before.get(f.blobs![0])!.toString());
  const plan = modules.evidenceCheck().planCheck;
  const cands: { e: MemoryEntry; project: string; uri: string; anchor: Anchor }[] = [];
  for (const [n, text] of texts) {
    const project = /ai-memory\/([^/]+)\/[^/]+\/[^/]+\.json$/.exec(n)?.[1];
    if (!project || (o.project && project !== o.project)) continue;
    const e = tryOr(() => JSON.parse(text) as MemoryEntry, null);
    if (!e || (e.status !== 'active' && e.status !== 'draft') || !Array.isArray(e.evidence)) continue;
    for (const ev of e.evidence) {
      const p = plan(String(ev.type), String(ev.uri));
      if (p.kind === 'file' && changed.has(p.anchor.path)) cands.push({ e, project, uri: ev.uri, anchor: p.anchor });
    }
  }
  if (!cands.length) return [];
  const needHunks = new Set(cands.filter((c) => c.anchor.lines || c.anchor.symbol).map((c) => toRepo(c.anchor.path)));
  await addHunks(git, o.sides, fates, (p) => needHunks.has(p));
  // By workspace path; renamed out of the workspace is gone.
  const wsFate = (p: string): FileFate | undefined => {
    const f = fates.get(toRepo(p));
    if (!f) return undefined;
    const to = toWs(f.to);
    return to === null ? { status: 'D', to: p } : { ...f, to };
  };
  // Symbols need both sides' file, and so does a line range the hunks touch (it may have moved unchanged).
  const needsText = (c: (typeof cands)[number]): boolean =>
    wsFate(c.anchor.path)?.status !== 'D' &&
    Boolean(c.anchor.symbol || (c.anchor.lines && citedChange(c.anchor, wsFate(c.anchor.path))?.change === 'modified'));
  const withText = new Set(cands.filter(needsText));
  // By blob id; a working-tree file (all zeros: not hashed) from the disk.
  const fateOf = (c: (typeof cands)[number]): FileFate => fates.get(toRepo(c.anchor.path))!;
  const blobs = await git.readBlobs(
    [...withText].flatMap((c) => [...(c.anchor.lines ? [fateOf(c).blobs?.[0]] : []), fateOf(c).blobs?.[1]]).filter((b): b is string => !!b && !/^0+$/.test(b)),
  );
  const headText = (f: FileFate): string | undefined => {
    const b = f.blobs?.[1];
    return b && !/^0+$/.test(b) ? blobs.get(b)?.toString() : readCited(engine.ws, join(git.toplevel, f.to));
  };
  const out: CitedCode[] = [];
  for (const c of cands) {
    const texts = withText.has(c) ? [blobs.get(fateOf(c).blobs?.[0] ?? '')?.toString(), headText(fateOf(c))] : [];
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

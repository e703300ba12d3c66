/**
 * `memory doctor --fix`: entry files that hold git conflict markers (merged without the
 * bass-agents merge driver) are merged field by field from the merge's own sides (the index's
 * stages while the merge is in progress, else the sides the markers hold), as the driver would
 * have. Committed like any write; while the user's merge is in progress the files are written
 * and left for their merge commit.
 */
import { join } from 'node:path';
import { conflictSides, hasConflictMarkers } from '../../core/conflicts.js';
import type { MemoryEntry } from '../../core/schema.js';
import { mergeEntry } from '../../core/merge.js';
import type { GitRepo } from '../../store/git.js';
import { readFileSync } from 'node:fs';
import { modules, type ServiceContext } from '../context.js';
import { withWrite } from '../transaction.js';

export interface ConflictFix {
  file: string;
  id: string | null;
  merged: boolean;
  /** Why a file could not be merged (a side that is not a valid entry). */
  reason?: string;
}

/** Entry files (workspace-relative) whose content holds conflict markers. */
export function conflictedFiles(ctx: ServiceContext): string[] {
  const snap = ctx.catalog.refresh();
  return snap.bad
    .map((b) => b.file)
    .filter((f) => {
      try {
        return hasConflictMarkers(readFileSync(join(ctx.ws.root, f), 'utf8'));
      } catch {
        return false;
      }
    });
}

function parseSide(text: string | null, label: string): MemoryEntry | null {
  if (text === null || !text.trim()) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`${label} side is not valid JSON (${(err as Error).message})`, { cause: err });
  }
  const r = modules.validation().validateStoredEntry(raw);
  if (!r.ok) throw new Error(`${label} side is not a valid entry (${r.errors.map((p) => `${p.path}: ${p.message}`).join('; ')})`);
  return r.value;
}

/** The sides of a conflicted file: git's index stages during a merge, else the markers' own. */
async function sidesOf(git: GitRepo | null, abs: string, text: string): Promise<{ base: string | null; ours: string; theirs: string } | null> {
  if (git) {
    const path = git.repoPath(abs);
    const stage = (n: number): Promise<string | null> =>
      git.run(['show', `:${n}:${path}`]).then(
        (t) => t,
        () => null,
      );
    const [base, ours, theirs] = await Promise.all([stage(1), stage(2), stage(3)]);
    if (ours !== null && theirs !== null) return { base, ours, theirs };
  }
  return conflictSides(text);
}

export async function fixConflicts(ctx: ServiceContext): Promise<{ fixed: ConflictFix[]; commits: string[]; in_merge: boolean }> {
  const git = await ctx.git();
  const inMerge = git !== null && git.writeBlocker() !== null;
  const byProject = new Map<string, { abs: string; entry: MemoryEntry }[]>();
  const fixed: ConflictFix[] = [];
  for (const file of conflictedFiles(ctx)) {
    const abs = join(ctx.ws.root, file);
    try {
      const sides = await sidesOf(git, abs, readFileSync(abs, 'utf8'));
      if (!sides) throw new Error('its conflict markers do not nest');
      const ours = parseSide(sides.ours, 'our');
      const theirs = parseSide(sides.theirs, 'their');
      if (!ours || !theirs) throw new Error('a side is empty');
      if (ours.id !== theirs.id) throw new Error(`the sides are different entries (${ours.id}, ${theirs.id})`);
      const base = (() => {
        try {
          return parseSide(sides.base, 'the ancestor');
        } catch {
          return null; // an unreadable ancestor: merge as two additions
        }
      })();
      const merged = mergeEntry(base, ours, theirs);
      const project = file.split('/')[1] ?? '';
      byProject.set(project, [...(byProject.get(project) ?? []), { abs, entry: merged }]);
      fixed.push({ file, id: merged.id, merged: true });
    } catch (err) {
      fixed.push({ file, id: null, merged: false, reason: (err as Error).message });
    }
  }
  const commits: string[] = [];
  const agent = await ctx.agent();
  for (const [project, items] of byProject) {
    const { commit } = await withWrite(ctx, { project, agent, operation: 'doctor --fix', noCommit: inMerge }, (tx) => {
      for (const { abs, entry } of items) {
        tx.put(entry, { from: abs });
        tx.change({ op: 'update', id: entry.id, summary: 'merged the two sides of a git conflict field by field' });
      }
    });
    if (commit) commits.push(commit);
  }
  return { fixed, commits, in_merge: inMerge };
}

/**
 * `memory doctor --fix`: entry files with conflict markers or unmerged in git's index are merged
 * field by field from the merge's sides (index stages while git has them, else the markers'), as
 * the driver would have. Mid-merge they are written and `git add`ed, the commit left to the user.
 */
import { join } from 'node:path';
import { conflictSides, hasConflictMarkers, mergeEntry } from '../../core/merge.js';
import type { MemoryEntry } from '../../core/schema.js';
import type { GitRepo } from '../../store/git.js';
import { writeBlocker } from '../../store/git-state.js';
import { readFileSync } from 'node:fs';
import { modules, type Engine } from '../engine.js';
import type { Caller } from '../caller.js';
import { rewriteEntries } from './batch.js';
import { orThrow, tryOr } from '../../try.js';

/** Memory files (workspace-relative) unmerged in git's index. */
export async function unmergedFiles(engine: Engine): Promise<string[]> {
  const git = await engine.git();
  if (!git) return [];
  const dirs = [engine.ws.memoryDir, engine.ws.contextDir].map((d) => git.repoPath(d));
  const listed = await git.run(['ls-files', '-u', '-z', '--', ...dirs]).catch(() => '');
  const paths = new Set(
    listed
      .split('\0')
      .filter(Boolean)
      .map((l) => l.slice(l.indexOf('\t') + 1)),
  );
  return [...paths].map((p) => engine.ws.rel(join(git.toplevel, p))).sort();
}

export function conflictedFiles(engine: Engine): string[] {
  const snap = engine.catalog.refresh();
  return snap.bad.map((b) => b.file).filter((f) => tryOr(() => hasConflictMarkers(readFileSync(join(engine.ws.root, f), 'utf8')), false));
}

function parseSide(text: string | null, label: string): MemoryEntry | null {
  if (text === null || !text.trim()) return null;
  const raw = orThrow<string, unknown>(JSON.parse, text, (err) => new Error(`${label} side is not valid JSON (${err.message})`, { cause: err }));
  const r = modules.validation().validateStoredEntry(raw);
  if (!r.ok) throw new Error(`${label} side is not a valid entry (${r.errors.map((p) => `${p.path}: ${p.message}`).join('; ')})`);
  return r.value;
}

async function sidesOf(git: GitRepo | null, abs: string, text: string): Promise<{ base: string | null; ours: string; theirs: string } | null> {
  if (git) {
    const path = git.repoPath(abs);
    const stage = (n: number): Promise<string | null> => git.run(['show', `:${n}:${path}`]).catch(() => null);
    const [base, ours, theirs] = await Promise.all([stage(1), stage(2), stage(3)]);
    if (ours !== null && theirs !== null) return { base, ours, theirs };
  }
  return conflictSides(text);
}

export async function fixConflicts(engine: Engine, caller: Caller) {
  const git = await engine.git();
  const unmerged = (await unmergedFiles(engine)).filter((f) => f.endsWith('.json'));
  const inMerge = git !== null && writeBlocker(git.gitDir) !== null;
  const items: Parameters<typeof rewriteEntries>[2] = [];
  // `reason`: why a file could not be merged (a side that is not a valid entry).
  const fixed: { file: string; id: string | null; merged: boolean; reason?: string }[] = [];
  for (const file of [...new Set([...conflictedFiles(engine), ...unmerged])].sort()) {
    const abs = join(engine.ws.root, file);
    try {
      const sides = await sidesOf(git, abs, readFileSync(abs, 'utf8'));
      if (!sides) throw new Error('its conflict markers do not nest');
      const ours = parseSide(sides.ours, 'our');
      const theirs = parseSide(sides.theirs, 'their');
      if (!ours || !theirs) throw new Error('a side is empty');
      if (ours.id !== theirs.id) throw new Error(`the sides are different entries (${ours.id}, ${theirs.id})`);
      const base = tryOr(() => parseSide(sides.base, 'the ancestor'), null); // null: an unreadable ancestor, two additions
      const merged = mergeEntry(base, ours, theirs);
      items.push({ project: file.split('/')[1] ?? '', abs, entry: merged, op: 'update', summary: 'merged the two sides of a git conflict field by field' });
      fixed.push({ file, id: merged.id, merged: true });
    } catch (err) {
      fixed.push({ file, id: null, merged: false, reason: (err as Error).message });
    }
  }
  const noCommit = (project: string): boolean => inMerge || items.some((i) => i.project === project && unmerged.includes(engine.ws.rel(i.abs)));
  const commits = await rewriteEntries(engine, caller, items, noCommit);
  const resolved = fixed.filter((f) => f.merged && unmerged.includes(f.file)).map((f) => f.file);
  if (resolved.length) await git!.run(['add', '--', ...resolved.map((f) => git!.repoPath(join(engine.ws.root, f)))]);
  return { fixed, commits, in_merge: inMerge, resolved };
}

/**
 * Links to entries that do not exist (`doctor --fix`, `deprecate` of such an entry): superseded
 * by one gone, an entry becomes deprecated (replaced, by nothing known); gone related entries are dropped.
 */
export async function fixLinks(engine: Engine, caller: Caller, only?: ReadonlySet<string>) {
  const snap = engine.catalog.refresh();
  const ids = new Set(snap.entries.map((se) => se.meta.id));
  const items: Parameters<typeof rewriteEntries>[2] = [];
  const fixed: { file: string; id: string; change: string }[] = [];
  const now = caller.now().toISOString();
  for (const se of snap.entries) {
    const m = se.meta;
    if (only && !only.has(m.id)) continue;
    const gone = m.superseded_by && !ids.has(m.superseded_by) ? m.superseded_by : null;
    const lost = m.related_entries.filter((r) => !ids.has(r));
    if (!gone && !lost.length) continue;
    const e = se.entry;
    const entry: MemoryEntry = {
      ...e,
      ...(gone ? { status: 'deprecated' as const, superseded_by: null } : {}),
      related_entries: e.related_entries.filter((r) => ids.has(r)),
      updated_at: now,
    };
    const change = [
      gone ? `deprecated: superseded_by named ${gone}, which does not exist` : '',
      lost.length ? `dropped related entries that do not exist: ${lost.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join('; ');
    items.push({ project: se.project, abs: join(engine.ws.root, se.file), entry, op: entry.status === 'deprecated' ? 'deprecate' : 'update', summary: change });
    fixed.push({ file: se.file, id: m.id, change });
  }
  const commits = await rewriteEntries(engine, caller, items);
  return { fixed, commits };
}

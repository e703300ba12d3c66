/** One entry: by id (`locate`), with values as of now (`show`), its committed versions (`show --history`). */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SECTIONS } from '../../core/constants.js';
import { NotFoundError, UsageError, ValidationError } from '../../core/errors.js';
import { initialImportance, isPromotionCandidate, lifecycleOf } from '../../core/lifecycle.js';
import { entryFlags } from '../../core/query.js';
import type { MemoryEntry } from '../../core/schema.js';
import { readEntryFile } from '../../store/catalog.js';
import { history as gitHistory } from '../../store/git-log.js';
import { checkId } from '../../store/workspace.js';
import { showable } from '../../core/redact.js';
import type { Engine } from '../engine.js';
import type { Caller } from '../caller.js';
import { tryOr } from '../../store/fsutil.js';

export type ShownEntry = ReturnType<typeof show>;
/** One committed version; `before`: in the commit's first parent (null: not there). */
export type EntryVersion = Awaited<ReturnType<typeof history>>[number];

/** By id without scanning (a stat per project and section), or by a unique prefix as git takes a commit's. */
export function locate(engine: Engine, caller: Caller, id: string, project?: string): { project: string; file: string; entry: MemoryEntry } {
  checkId(id);
  const projects = project ? [project] : engine.ws.listProjects();
  for (const p of projects) {
    for (const s of SECTIONS) {
      const abs = join(engine.ws.memoryDir, p, s, `${id}.json`);
      if (!existsSync(abs)) continue;
      const file = engine.ws.rel(engine.ws.entryPath(p, s, id));
      const r = readEntryFile(abs, file, s, id);
      if (!r.entry) throw new ValidationError(r.problems ?? [], file);
      return { project: p, file, entry: r.entry };
    }
  }
  if (id.length >= MIN_PREFIX) {
    const hits: { project: string; section: (typeof SECTIONS)[number]; id: string }[] = [];
    for (const p of projects) {
      for (const s of SECTIONS) {
        for (const n of tryOr(() => readdirSync(join(engine.ws.memoryDir, p, s)), []))
          if (n.startsWith(id) && n.endsWith('.json') && !n.startsWith('.')) hits.push({ project: p, section: s, id: n.slice(0, -5) });
      }
    }
    const [only] = hits;
    if (only && hits.length === 1) return locate(engine, caller, only.id, only.project);
    if (hits.length > 1) {
      const some = hits.slice(0, 10).map((h) => `${h.id} (${h.project})`);
      throw new UsageError(`id prefix ${id} is ambiguous: it starts ${hits.length} entries: ${some.join(', ')}${hits.length > 10 ? ', …' : ''}`);
    }
  }
  const where = project ? ` in project ${project}` : '';
  // Repeated only when plainly not a secret (a token pasted as an id).
  throw new NotFoundError(
    showable(id) ? `no memory entry with id ${id}${where}` : `no memory entry with the id given${where} (not repeated: it is long or looks like a secret)`,
  );
}

const MIN_PREFIX = 4;

export function show(engine: Engine, caller: Caller, id: string, opts: { project?: string } = {}) {
  const found = locate(engine, caller, id, opts.project);
  const now = caller.now().getTime();
  const e = found.entry;
  const usage = engine.usage.load().get(`${found.project}/${e.id}`);
  const lc = lifecycleOf(e, usage, engine.decayConfig(found.project, caller.now()), now, initialImportance(e));
  return {
    ...found,
    computed: {
      strength: lc.strength,
      effective_confidence: lc.effective_confidence,
      confidence_label: lc.confidence_label,
      retrieval_count: lc.retrievals,
      last_accessed_at: lc.last_accessed_at,
      flags: entryFlags(e, now, engine.evidenceCache.staleKeys().has(`${found.project}/${e.id}`)),
      curve: lc.curve,
      memory_type: lc.memory_type,
      importance: lc.importance,
      days_since_access: lc.days_since_access,
      decays: lc.exempt === null,
      forget_threshold: lc.threshold,
      promotion_candidate: isPromotionCandidate(e, usage),
    },
  };
}

export async function history(engine: Engine, caller: Caller, id: string, opts: { project?: string } = {}) {
  const found = locate(engine, caller, id, opts.project);
  const git = await engine.git();
  if (!git) return [];
  const versions = await gitHistory(git, join(engine.ws.root, found.file));
  const parse = (text: string | null): MemoryEntry | null => tryOr(() => (text ? (JSON.parse(text) as MemoryEntry) : null), null);
  return versions.map(({ content, before, merge, ...v }) => ({ ...v, entry: parse(content), before: parse(before), merge }));
}

/** Results delivered for use count as retrieved (local usage, never a commit). */
export function recordDelivered(engine: Engine, caller: Caller, hits: { project: string; entry: { id: string } }[]): void {
  const keys = hits.map((h) => `${h.project}/${h.entry.id}`);
  engine.usage.recordRetrievals(keys, caller.now().toISOString());
}

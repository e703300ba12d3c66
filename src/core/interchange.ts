/** Export and import formats, pure: JSON or JSONL sorted by id, and the MCP memory server's `memory.jsonl`. */
import { nodeCrypto } from '../node-crypto.js';
import { CONTENT_MAX, SUBJECT_MAX, SUMMARY_MAX, TAG_MAX } from './constants.js';
import { ValidationError, type Problem } from './errors.js';
import { buildEntry, cut } from './entry.js';
import type { MemoryEntry } from './schema.js';
import { shown } from './redact.js';
import { ulidFromDigest } from './names.js';
import type { NormalizedInput } from './validate.js';

export type ExportFormat = 'json' | 'jsonl';

/** Entries sorted by id, as a JSON array or one JSON object per line (git-friendly). */
export function renderExport(entries: readonly MemoryEntry[], format: ExportFormat): string {
  const sorted = [...entries].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return format === 'jsonl' ? sorted.map((e) => JSON.stringify(e)).join('\n') + (sorted.length ? '\n' : '') : `${JSON.stringify(sorted, null, 2)}\n`;
}

/** Reads an export: a JSON array, a single JSON object, or JSONL. Errors name the line. */
export function parseExport(text: string, source: string): unknown[] {
  const trimmed = text.trim();
  if (!trimmed) return [];
  // A whole-document array or object (one entry file, pretty-printed) first, then JSONL.
  try {
    const v = JSON.parse(trimmed) as unknown;
    return Array.isArray(v) ? v : [v];
  } catch (err) {
    if (trimmed.startsWith('[')) throw new ValidationError([{ path: source, message: `not valid JSON (${(err as Error).message})` }], 'import');
  }
  const problems: Problem[] = [];
  const out = jsonLines(trimmed, source, problems).map((l) => l.value);
  if (problems.length) throw new ValidationError(problems, 'import');
  return out;
}

/** The JSON value of each line that is not blank, with where it is; a line that is not JSON is a problem naming it. */
function jsonLines(text: string, source: string, problems: Problem[]): { at: string; value: unknown }[] {
  const out: { at: string; value: unknown }[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    try {
      out.push({ at: `${source}:${i + 1}`, value: JSON.parse(line) });
    } catch (err) {
      problems.push({ path: `${source}:${i + 1}`, message: `not valid JSON (${(err as Error).message})` });
    }
  });
  return out;
}

// ---------------------------------------------------------------- MCP memory server

/** Parses the MCP memory server's memory.jsonl (`{"type":"entity",...}` / `{"type":"relation",...}` lines). */
export function parseMcpMemory(text: string, source: string) {
  const entities = new Map<string, { name: string; entityType: string; observations: string[] }>();
  const relations: { from: string; to: string; relationType: string }[] = [];
  const problems: Problem[] = [];
  for (const { at, value } of jsonLines(text, source, problems)) {
    const o = (value ?? {}) as Record<string, unknown>;
    if (o.type !== 'entity' && o.type !== 'relation') problems.push({ path: `${at}: type`, message: `must be "entity" or "relation" (got ${shown(o.type)})` });
    else if (o.type === 'relation') {
      if (typeof o.from !== 'string' || typeof o.to !== 'string') problems.push({ path: at, message: 'a relation needs string "from" and "to"' });
      else relations.push({ from: o.from, to: o.to, relationType: typeof o.relationType === 'string' ? o.relationType : 'related_to' });
    } else if (typeof o.name !== 'string' || !o.name.trim()) problems.push({ path: `${at}: name`, message: 'must be a non-empty string' });
    else {
      const obs = Array.isArray(o.observations) ? o.observations.filter((x): x is string => typeof x === 'string') : [];
      const prev = entities.get(o.name);
      if (prev) prev.observations.push(...obs);
      else entities.set(o.name, { name: o.name, entityType: typeof o.entityType === 'string' ? o.entityType : 'entity', observations: obs });
    }
  }
  if (problems.length) throw new ValidationError(problems, 'MCP memory file');
  return { entities: [...entities.values()], relations };
}

const slug = (s: string, n: number): string =>
  cut(
    s
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}._:-]+/gu, '-')
      .replace(/^-+|-+$/g, '') || 'entity',
    n,
  );

/** One entry per entity, its id from the name (a second import finds the same ids); observations are unverified: `assumption`, confidence 0.6. */
export function mcpMemoryToEntries(graph: ReturnType<typeof parseMcpMemory>, opts: { now: string; agent: string; source: string }): MemoryEntry[] {
  const idOf = (name: string): string => ulidFromDigest(nodeCrypto().createHash('sha1').update(name).digest('hex'));
  const names = new Set(graph.entities.map((e) => e.name));
  return graph.entities.map((ent) => {
    const rels = graph.relations.filter((r) => (r.from === ent.name || r.to === ent.name) && names.has(r.from) && names.has(r.to));
    const relLines = rels.map((r) => `- ${r.from} ${r.relationType} ${r.to}`);
    const obsLines = ent.observations.map((o) => `- ${o}`);
    const content = cut(
      [...obsLines, ...(relLines.length ? ['', 'Relations:', ...relLines] : [])].join('\n') || `${ent.name} (${ent.entityType})`,
      CONTENT_MAX,
    );
    const summary = cut(`${ent.name} (${ent.entityType})${ent.observations[0] ? `: ${ent.observations[0]}` : ''}`.replace(/\s+/g, ' '), SUMMARY_MAX);
    const related = [...new Set(rels.map((r) => idOf(r.from === ent.name ? r.to : r.from)))].filter((id) => id !== idOf(ent.name));
    const entry: NormalizedInput = {
      section: 'observations',
      kind: 'other',
      subject: slug(ent.name, SUBJECT_MAX),
      scope: 'repo',
      summary,
      content,
      tags: [slug(ent.entityType, TAG_MAX)],
      confidence: 0.6,
      evidence: [{ type: 'assumption', uri: `mcp-memory:${opts.source}#${ent.name}`, note: 'imported from the MCP memory server' }],
      status: 'active',
      related_entries: related,
      valid_from: null,
      valid_to: null,
    };
    return buildEntry(entry, idOf(ent.name), opts.now, opts.agent);
  });
}

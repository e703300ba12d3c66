/** `memory extract`: candidate memories from free text, stored as drafts (one commit) unless `dryRun`; those an entry already says are not. */
import type { Problem } from '../../core/errors.js';
import { modules, type Engine } from '../engine.js';
import type { Caller } from '../caller.js';
import { apply } from './apply.js';
import { scanGroups } from './batch.js';

export async function extract(
  engine: Engine,
  caller: Caller,
  projectName: string | undefined,
  text: string,
  opts: { dryRun?: boolean; minConfidence?: number; source?: string; maxCandidates?: number } = {},
) {
  const project = caller.project(engine, projectName);
  const { EXTRACT_LIMITS: limits, extractCandidates, findSimilar, candidateEntry } = modules.extraction();
  const truncated = text.length > limits.maxTextLength;
  if (truncated) caller.warn(`text is ${text.length} characters; only the first ${limits.maxTextLength} are read`);
  const max = opts.maxCandidates ?? limits.maxCandidates;
  const cands = extractCandidates(text.slice(0, limits.maxTextLength), opts.minConfidence ?? limits.minConfidence).slice(0, max);
  const live = engine.snapshot(caller.warn).entries.filter((se) => se.project === project && se.meta.status !== 'superseded');
  const existing = live.map((se) => ({ id: se.meta.id, summary: se.entry.summary }));
  const subjects = [...new Set(live.map((se) => se.meta.subject))].sort();
  const updates: { index: number; entry: Record<string, unknown> }[] = [];
  const extractions = cands.map((c, index) => {
    // Known if either the matched words or their whole sentence say what an entry already says.
    const known = [...existing, ...updates.map((u, i) => ({ id: `candidate ${i}`, summary: String(u.entry.summary) }))];
    const dup = findSimilar(c.text, known) ?? findSimilar(c.sentence || c.text, known);
    const entry = candidateEntry(c, opts.source ?? 'text', subjects);
    if (!dup) updates.push({ index, entry });
    return {
      summary: String(entry.summary),
      type: c.type,
      confidence: Number(entry.confidence),
      span: [c.start, c.end],
      section: String(entry.section),
      stored: false,
      duplicate_of: dup ?? null,
      id: null as string | null,
      skipped: undefined as Problem[] | undefined,
    };
  });
  let commit: string | null = null;
  const at = (k: number): (typeof extractions)[number] => extractions[updates[k]!.index]!;
  if (!opts.dryRun && updates.length) {
    const creates = updates.map((u) => ({ operation: 'create', entry: u.entry }));
    const r = await apply(engine, caller, creates, { project });
    commit = r.commit;
    for (const a of r.applied) Object.assign(at(a.index), { stored: true, id: a.id });
    for (const sk of r.skipped) at(sk.index).skipped = sk.errors;
  } else if (updates.length) {
    // A dry run says the same about secrets as a real run.
    const fields = updates.map((u, i) => modules.secretRules().secretFields(u.entry, `[${i}].entry`));
    const found = await scanGroups(engine, caller, fields, { project, agent: caller.knownAgent, operation: 'extract' });
    for (const [i, errors] of found.entries()) if (errors.length) at(i).skipped = errors;
  }
  // Never printed back: the text holds the secret.
  for (const x of extractions)
    if (x.skipped?.some((p) => /looks like a secret/.test(p.message))) x.summary = '[withheld: it contains what looks like a secret]';
  return {
    project,
    candidates: cands.length,
    stored: extractions.filter((x) => x.stored).length,
    deduplicated_count: extractions.filter((x) => x.duplicate_of).length,
    dry_run: Boolean(opts.dryRun),
    truncated,
    extractions,
    commit,
  };
}

/**
 * Checks without writing: `memory validate` (an input against the schema, the write policy, the
 * store and the secret rules), `memory doctor` (the whole workspace), `memory check-freshness`.
 */
import { semanticReport } from '../semantic.js';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { MERGE_DRIVER } from '../../store/entries.js';
import { EXPIRY_WARNING_DAYS } from '../../core/query.js';
import type { ValidationError, Problem } from '../../core/errors.js';
import type { ValidationContext } from '../../core/validate.js';
import type { StoredEntry } from '../../store/catalog.js';
import { readConfig } from '../../store/config.js';
import { tryOr } from '../../store/fsutil.js';
import { isLegacyId } from '../../core/names.js';
import { shown } from '../../core/redact.js';
import { modules, type Engine } from '../engine.js';
import type { Caller } from '../caller.js';
import { BatchState, scanGroups } from './batch.js';
import { conflictedFiles, unmergedFiles } from './conflicts.js';

export async function validate(engine: Engine, caller: Caller, doc: unknown, opts: { project?: string } = {}): Promise<{ ok: boolean; errors: Problem[] }> {
  const project = tryOr(() => caller.project(engine, opts.project), undefined);
  const st = project && existsSync(join(engine.ws.memoryDir, project)) ? new BatchState(engine.snapshot(caller.warn), project, Infinity) : undefined;
  const vctx: ValidationContext = st ? { getEntry: st.getEntry, findDuplicate: (k) => st.dupKeys.get(k) } : {};
  const errors = modules.validation().validateDocument(doc, vctx);
  // Secrets too, with the paths validateDocument uses: every string of each item.
  const kind = modules.validation().documentKind(doc);
  const items = kind === 'array' ? (doc as unknown[]) : [doc];
  const fields = items.map((item, i) => modules.secretRules().secretFields(item, kind === 'array' ? `[${i}]` : ''));
  errors.push(...(await scanGroups(engine, caller, fields, { agent: caller.knownAgent, operation: 'validate' })).flat());
  return { ok: errors.length === 0, errors };
}

/** A warning (a merge driver this clone lacks: a CI checkout never registers one) does not fail the check. */
export interface DoctorProblem {
  check: string;
  level?: 'warning';
  file: string;
  path: string;
  message: string;
}

/** `memory doctor`: the whole workspace checked (files, links, duplicates, secrets, configs, merge driver), nothing changed. */
export async function doctor(engine: Engine, caller: Caller) {
  const snap = engine.catalog.refresh();
  const problems: DoctorProblem[] = [];
  const add = (check: string, file: string, path: string, message: string, level?: 'warning'): number =>
    problems.push({ check, ...(level ? { level } : {}), file, path, message });
  const within = (file: string, path: string): string => (path.startsWith(file) ? path.slice(file.length).replace(/^:\s*/, '') : path);
  const marked = conflictedFiles(engine);
  const conflicted = new Set(marked);
  for (const file of await unmergedFiles(engine)) {
    if (conflicted.has(file)) continue; // its markers are reported below
    conflicted.add(file);
    add(
      'unmerged',
      file,
      '',
      file.endsWith('.json')
        ? "is unmerged in git's index (the merge driver did not run); `bass-agents memory doctor --fix` merges the two sides field by field and marks it resolved (by hand: `git checkout -m <file>` redoes the merge with the driver, then `git add <file>`)"
        : "is unmerged in git's index; take either side (`git checkout --theirs <file>`), run `bass-agents memory sync-context <project>` and `git add <file>`",
    );
  }
  problems.push(...(await driverProblems(engine)));
  for (const file of marked) {
    if (problems.some((p) => p.file === file)) continue;
    add(
      'conflict',
      file,
      '',
      'holds git conflict markers (merged without the bass-agents merge driver); `bass-agents memory doctor --fix` merges the two sides field by field',
    );
  }
  for (const b of snap.bad) if (!conflicted.has(b.file)) for (const p of b.problems) add('entry file', b.file, within(b.file, p.path), p.message);
  const byId = new Map(snap.entries.map((se) => [se.meta.id, se]));
  const dups = new Map<string, StoredEntry>();
  for (const se of snap.entries) {
    const m = se.meta;
    if (isLegacyId(m.id))
      add('ids', se.file, 'id', 'is not a ULID (an earlier version imported it): the entry stays readable; new entries and imports take ULIDs only', 'warning');
    if (m.superseded_by && !byId.has(m.superseded_by))
      add('links', se.file, 'superseded_by', `points at ${shown(m.superseded_by, { bare: true })}, which does not exist`);
    for (const r of m.related_entries) if (!byId.has(r)) add('links', se.file, 'related_entries', `lists ${shown(r, { bare: true })}, which does not exist`);
    if (m.status !== 'superseded' && m.status !== 'archived') {
      const k = `${se.project}\u0000${m.dup}`;
      const other = dups.get(k);
      if (other) add('duplicates', se.file, 'summary', `duplicates ${other.meta.id} (same subject, scope and summary)`);
      else dups.set(k, se);
    }
  }
  const { secretFields, findingMessage } = modules.secretRules();
  for (const f of await modules.secretScan().scanFields(snap.entries.flatMap((se) => secretFields(se.entry, se.file)))) {
    const file = snap.entries.find((se) => f.path.startsWith(`${se.file}.`))?.file ?? f.path;
    add('secrets', file, f.path.slice(file.length + 1), findingMessage(f));
  }
  for (const project of engine.ws.listProjects()) {
    const abs = engine.ws.configPath(project);
    try {
      readConfig(abs, project, caller.now().toISOString());
    } catch (err) {
      const e = err as ValidationError;
      for (const p of e.problems ?? [{ path: '', message: e.message }]) add('config', engine.ws.rel(abs), within(abs, p.path), p.message);
    }
  }
  const { modelInstalled } = await import('../embedder.js');
  return {
    ok: problems.every((p) => p.level === 'warning'),
    checked: { files: snap.entries.length + snap.bad.length, projects: engine.ws.listProjects().length },
    problems,
    semantic: semanticReport(engine, snap.entries, await modelInstalled()),
  };
}

/** The merge driver the memory's .gitattributes names: registered, and its program there (else git merges entries line by line). */
async function driverProblems(engine: Engine): Promise<DoctorProblem[]> {
  const git = await engine.git();
  const attrs = join(engine.ws.memoryDir, '.gitattributes');
  if (!git || !existsSync(attrs) || !readFileSync(attrs, 'utf8').includes(`merge=${MERGE_DRIVER}`)) return [];
  const command = (await git.run(['config', '--get', `merge.${MERGE_DRIVER}.driver`]).catch(() => '')).trim();
  const fix = '`bass-agents memory doctor --fix` (or `memory init <project>`) registers it for this installation';
  // The program and script it names, when paths (git runs drivers from the work tree's top).
  const missing = (command.match(/'[^']*'|"[^"]*"|\S+/g) ?? [])
    .slice(0, 2)
    .map((w) => w.replace(/^['"]|['"]$/g, ''))
    .filter((w) => w.includes('/'))
    .find((w) => !existsSync(resolve(git.toplevel, w)));
  const message = !command
    ? `names the merge driver ${MERGE_DRIVER}, which this clone has not registered; ${fix}`
    : missing && `git's merge driver runs ${missing}, which does not exist; ${fix}`;
  return message ? [{ check: 'merge driver', level: 'warning', file: engine.ws.rel(attrs), path: '', message }] : [];
}

export function checkFreshness(engine: Engine, caller: Caller, opts: { project?: string; days?: number } = {}) {
  const projects = caller.readProjects(engine, opts.project);
  const snap = engine.snapshot(caller.warn);
  const mine = snap.entries.filter((se) => !projects || projects.includes(se.project));
  const byId = new Map(mine.map((se) => [se.meta.id, se]));
  const metas = mine.map((se) => se.meta);
  const items = modules.freshness().checkFreshness(metas, caller.now().getTime(), opts.days ?? EXPIRY_WARNING_DAYS);
  return items.map((item) => ({ ...item, project: byId.get(item.id)!.project, summary: byId.get(item.id)!.entry.summary }));
}

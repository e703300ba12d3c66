/**
 * Write commands: init, create, apply, supersede, deprecate, apply-result, validate.
 * Each one parses → calls MemoryService → renders.
 */
import type { Argv } from 'yargs';
import type { ApplyResult } from '../../service/memory-service.js';
import { formatProblem } from '../../core/errors.js';
import { type GlobalArgs, out, printJson, progressBar, readJsonInput, service, writeViaDaemon } from '../io.js';
import { io } from '../stdio.js';

type A = GlobalArgs & Record<string, unknown>;

/** Problems of skipped updates printed one per line before the rest are counted. */
const MAX_SKIPPED_LINES = 20;

function renderApply(r: ApplyResult, json: boolean): number {
  if (json) printJson({ applied: r.applied, skipped: r.skipped, commit: r.commit });
  else {
    for (const a of r.applied) {
      if (a.operation === 'create') out(`[${a.index}] created ${a.id}`);
      else if (a.operation === 'supersede') out(`[${a.index}] superseded ${a.target_id} by ${a.id}`);
      else out(`[${a.index}] deprecated ${a.id}`);
    }
    // The first problems, then a count: a batch of thousands must not bury its summary line.
    const lines = r.skipped.flatMap((s) => s.errors.map((p) => `skipped [${s.index}]: ${formatProblem(p)}`));
    for (const line of lines.slice(0, MAX_SKIPPED_LINES)) io().stderr.write(`${line}\n`);
    if (lines.length > MAX_SKIPPED_LINES)
      io().stderr.write(`… and ${lines.length - MAX_SKIPPED_LINES} more problems in ${r.skipped.length} skipped updates (--json lists them all)\n`);
    out(
      r.commit
        ? `commit ${r.commit.slice(0, 12)} (${r.applied.length} applied, ${r.skipped.length} skipped)`
        : `${r.applied.length} applied, ${r.skipped.length} skipped, no commit`,
    );
  }
  return r.skipped.length ? 1 : 0;
}

/**
 * The project an AgentResult goes to when no --project is given, as the direct path decides it:
 * its own `project` field, else this process's default. (A daemon must not fall back to its own
 * environment's default.) Undefined when that default cannot be resolved: the direct path then
 * reports it in its own order.
 */
function resultProject(svc: ReturnType<typeof service>, input: unknown): string | undefined {
  const own = (input as { project?: unknown } | null)?.project;
  if (typeof own === 'string' && own) return own;
  try {
    return svc.project(undefined);
  } catch {
    return undefined;
  }
}

export function registerWrite(y: Argv<GlobalArgs>): Argv<GlobalArgs> {
  return y
    .command(
      'init <project>',
      'create ai-memory/<project>/ with config.yaml and register the merge driver (idempotent; in a fresh clone only the driver)',
      (c) => c.positional('project', { type: 'string', demandOption: true }),
      async (a: A) => {
        const r = await service(a).init(String(a.project));
        if (a.json) printJson(r);
        else out(r.created ? `initialized ${r.path}${r.commit ? ` (commit ${r.commit.slice(0, 12)})` : ''}` : `${r.path} is already initialized`);
      },
    )
    .command(
      'remove-project <project>',
      'remove a project that holds no entries (a mistaken init or import), with its ai-context file, in one commit',
      (c) => c.positional('project', { type: 'string', demandOption: true }),
      async (a: A) => {
        const r = await service(a).removeProject(String(a.project));
        if (a.json) printJson(r);
        else out(`removed project ${r.project} (${r.removed.length} files)${r.commit ? `; commit ${r.commit.slice(0, 12)}` : ''}`);
      },
    )
    .command(
      'create [project]',
      'create one entry from a JSON object (the entry part of a Memory_Update); re-creating a superseded or deprecated fact is refused unless --force',
      (c) =>
        c
          .positional('project', { type: 'string' })
          .option('file', { alias: 'f', type: 'string', describe: 'JSON file, or - for stdin' })
          .option('force', { type: 'boolean', describe: 'write it even if it restates a superseded or deprecated entry' }),
      async (a: A) => {
        const input = readJsonInput(a.file as string | undefined);
        const svc = service(a);
        const project = svc.project(a.project || undefined);
        // A forced create is written here: the daemon's group commit checks every create.
        const force = a.force === true;
        const r = (force ? undefined : await writeViaDaemon(svc, 'create', input, project)) ?? (await svc.create(input, { project, force }));
        if (a.json) printJson(r.entry);
        else out(r.entry.id);
      },
    )
    .command(
      'apply [project]',
      'apply a JSON array of Memory_Update (create/supersede/deprecate) as one commit',
      (c) => c.positional('project', { type: 'string' }).option('file', { alias: 'f', type: 'string', describe: 'JSON file, or - for stdin' }),
      async (a: A) => {
        const input = readJsonInput(a.file as string | undefined);
        const svc = service(a);
        const project = svc.project(a.project || undefined);
        // A large batch shows its progress on a terminal (through a daemon, the daemon does the work).
        const big = Array.isArray(input) && input.length >= 500;
        const onProgress = big ? progressBar(Boolean(a.json), 'write') : undefined;
        const r = (await writeViaDaemon(svc, 'apply', input, project)) ?? (await svc.apply(input, { project, onProgress }));
        io().setExitCode(renderApply(r, Boolean(a.json)));
      },
    )
    .command(
      'apply-result [project]',
      'apply the memory_updates of an AgentResult JSON',
      (c) => c.positional('project', { type: 'string' }).option('file', { alias: 'f', type: 'string', describe: 'AgentResult JSON file, or - for stdin' }),
      async (a: A) => {
        const input = readJsonInput(a.file as string | undefined);
        const svc = service(a);
        const explicit = (a.project as string) || undefined;
        const target = explicit ?? resultProject(svc, input);
        const r = (target ? await writeViaDaemon(svc, 'applyResult', input, target) : undefined) ?? (await svc.applyResult(input, { project: explicit }));
        io().setExitCode(renderApply(r, Boolean(a.json)));
      },
    )
    .command(
      'supersede <id>',
      'mark an entry superseded by another (both must exist)',
      (c) =>
        c
          .positional('id', { type: 'string', demandOption: true })
          .option('by', { type: 'string', demandOption: true, describe: 'id of the replacement entry' }),
      async (a: A) => {
        const svc = service(a);
        const r = await svc.supersede(String(a.id), String(a.by), { project: a.project });
        const entry = svc.locate(String(a.id)).entry;
        if (a.json) printJson({ applied: r.applied, skipped: r.skipped, commit: r.commit, entry });
        else out(`superseded ${String(a.id)} by ${String(a.by)}${r.commit ? ` (commit ${r.commit.slice(0, 12)})` : ''}`);
      },
    )
    .command(
      'deprecate <id>',
      'mark an entry deprecated: historically relevant, no longer current',
      (c) => c.positional('id', { type: 'string', demandOption: true }),
      async (a: A) => {
        const svc = service(a);
        const r = await svc.deprecate(String(a.id), { project: a.project });
        const entry = svc.locate(String(a.id)).entry;
        if (a.json) printJson({ applied: r.applied, skipped: r.skipped, commit: r.commit, entry });
        else if (r.unchanged) out(`${String(a.id)} is already deprecated`);
        else out(`deprecated ${String(a.id)}${r.commit ? ` (commit ${r.commit.slice(0, 12)})` : ''}`);
      },
    )
    .command(
      'validate [project]',
      'check an entry, a Memory_Update, or an array of them, without writing',
      (c) => c.positional('project', { type: 'string' }).option('file', { alias: 'f', type: 'string', describe: 'JSON file, or - for stdin' }),
      async (a: A) => {
        const input = readJsonInput(a.file as string | undefined);
        const r = await service(a).validate(input, { project: a.project || undefined });
        if (a.json) printJson(r);
        else if (r.ok) out('ok: valid');
        else for (const p of r.errors) io().stderr.write(`error: ${formatProblem(p)}\n`);
        io().setExitCode(r.ok ? 0 : 1);
      },
    );
}

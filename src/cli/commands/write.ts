/**
 * Write commands: init, create, apply, supersede, deprecate, apply-result, validate.
 * Each one parses → calls its use case → renders.
 */
import type { Argv } from 'yargs';
import * as uc from '../../service/use-cases.js';
import type { ApplyResult } from '../../service/ops/apply.js';
import { formatProblem } from '../../core/errors.js';
import { type GlobalArgs, type Cli } from '../io.js';

type A = GlobalArgs & Record<string, unknown>;

/** Problems of skipped updates printed one per line before the rest are counted. */
const MAX_SKIPPED_LINES = 20;

function renderApply(k: Cli, r: ApplyResult, json: boolean): number {
  if (json) k.printJson({ applied: r.applied, skipped: r.skipped, commit: r.commit });
  else {
    for (const a of r.applied) {
      if (a.operation === 'create') k.out(`[${a.index}] created ${a.id}`);
      else if (a.operation === 'supersede') k.out(`[${a.index}] superseded ${a.target_id} by ${a.id}`);
      else k.out(`[${a.index}] deprecated ${a.id}`);
    }
    // The first problems, then a count: a batch of thousands must not bury its summary line.
    const lines = r.skipped.flatMap((s) => s.errors.map((p) => `skipped [${s.index}]: ${formatProblem(p)}`));
    for (const line of lines.slice(0, MAX_SKIPPED_LINES)) k.caller.stderr.write(`${line}\n`);
    if (lines.length > MAX_SKIPPED_LINES)
      k.caller.stderr.write(`… and ${lines.length - MAX_SKIPPED_LINES} more problems in ${r.skipped.length} skipped updates (--json lists them all)\n`);
    k.out(
      r.commit
        ? `commit ${r.commit.slice(0, 12)} (${r.applied.length} applied, ${r.skipped.length} skipped)`
        : `${r.applied.length} applied, ${r.skipped.length} skipped, no commit`,
    );
  }
  return r.skipped.length ? 1 : 0;
}

export function registerWrite(y: Argv<GlobalArgs>, k: Cli): Argv<GlobalArgs> {
  return y
    .command(
      'init <project>',
      'create ai-memory/<project>/ with config.yaml and register the merge driver (idempotent; in a fresh clone only the driver)',
      (c) => c.positional('project', { type: 'string', demandOption: true }),
      async (a: A) => {
        const r = await uc.init(...k.open(a), String(a.project));
        if (a.json) k.printJson(r);
        else k.out(r.created ? `initialized ${r.path}${r.commit ? ` (commit ${r.commit.slice(0, 12)})` : ''}` : `${r.path} is already initialized`);
      },
    )
    .command(
      'remove-project <project>',
      'remove a project that holds no entries (a mistaken init or import), with its ai-context file, in one commit',
      (c) => c.positional('project', { type: 'string', demandOption: true }),
      async (a: A) => {
        const r = await uc.removeProject(...k.open(a), String(a.project));
        if (a.json) k.printJson(r);
        else k.out(`removed project ${r.project} (${r.removed.length} files)${r.commit ? `; commit ${r.commit.slice(0, 12)}` : ''}`);
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
        const input = k.readJsonInput(a.file as string | undefined);
        const [engine, caller] = k.open(a);
        const project = caller.project(engine, a.project || undefined);
        const r = await uc.create(engine, caller, input, { project, force: a.force === true });
        if (a.json) k.printJson(r.entry);
        else k.out(r.entry.id);
      },
    )
    .command(
      'apply [project]',
      'apply a JSON array of Memory_Update (create/supersede/deprecate) as one commit',
      (c) => c.positional('project', { type: 'string' }).option('file', { alias: 'f', type: 'string', describe: 'JSON file, or - for stdin' }),
      async (a: A) => {
        const input = k.readJsonInput(a.file as string | undefined);
        const [engine, caller] = k.open(a);
        const project = caller.project(engine, a.project || undefined);
        // A large batch shows its progress on a terminal.
        const big = Array.isArray(input) && input.length >= 500;
        const onProgress = big ? k.progressBar(Boolean(a.json), 'write') : undefined;
        const r = await uc.apply(engine, caller, input, { project, onProgress });
        k.caller.setExitCode(renderApply(k, r, Boolean(a.json)));
      },
    )
    .command(
      'apply-result [project]',
      'apply the memory_updates of an AgentResult JSON',
      (c) => c.positional('project', { type: 'string' }).option('file', { alias: 'f', type: 'string', describe: 'AgentResult JSON file, or - for stdin' }),
      async (a: A) => {
        const input = k.readJsonInput(a.file as string | undefined);
        const [engine, caller] = k.open(a);
        const r = await uc.applyResult(engine, caller, input, { project: a.project || undefined });
        k.caller.setExitCode(renderApply(k, r, Boolean(a.json)));
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
        const [engine, caller] = k.open(a);
        const r = await uc.supersede(engine, caller, String(a.id), String(a.by), { project: a.project });
        const entry = uc.locate(engine, caller, String(a.id)).entry;
        if (a.json) k.printJson({ applied: r.applied, skipped: r.skipped, commit: r.commit, entry });
        else k.out(`superseded ${String(a.id)} by ${String(a.by)}${r.commit ? ` (commit ${r.commit.slice(0, 12)})` : ''}`);
      },
    )
    .command(
      'deprecate <id>',
      'mark an entry deprecated: historically relevant, no longer current',
      (c) => c.positional('id', { type: 'string', demandOption: true }),
      async (a: A) => {
        const [engine, caller] = k.open(a);
        const r = await uc.deprecate(engine, caller, String(a.id), { project: a.project });
        const entry = uc.locate(engine, caller, String(a.id)).entry;
        if (a.json) k.printJson({ applied: r.applied, skipped: r.skipped, commit: r.commit, entry });
        else if (r.unchanged) k.out(`${String(a.id)} is already deprecated`);
        else k.out(`deprecated ${String(a.id)}${r.commit ? ` (commit ${r.commit.slice(0, 12)})` : ''}`);
      },
    )
    .command(
      'validate [project]',
      'check an entry, a Memory_Update, or an array of them, without writing',
      (c) => c.positional('project', { type: 'string' }).option('file', { alias: 'f', type: 'string', describe: 'JSON file, or - for stdin' }),
      async (a: A) => {
        const input = k.readJsonInput(a.file as string | undefined);
        const r = await uc.validate(...k.open(a), input, { project: a.project || undefined });
        if (a.json) k.printJson(r);
        else if (r.ok) k.out('ok: valid');
        else for (const p of r.errors) k.caller.stderr.write(`error: ${formatProblem(p)}\n`);
        k.caller.setExitCode(r.ok ? 0 : 1);
      },
    );
}

/** Write commands: init, remove-project, create, apply, apply-result, supersede, deprecate, validate. */
import * as uc from '../../service/use-cases.js';
import type { ApplyResult } from '../../service/ops/apply.js';
import { formatProblem } from '../../core/errors.js';
import { JSON_FILE, type Cli, type Command, commitNote } from '../io.js';

function renderApply(k: Cli, r: ApplyResult, json: boolean): number {
  if (json) k.printJson({ applied: r.applied, skipped: r.skipped, commit: r.commit });
  else {
    for (const a of r.applied) {
      if (a.operation === 'create') k.out(`[${a.index}] created ${a.id}`);
      else if (a.operation === 'supersede') k.out(`[${a.index}] superseded ${a.target_id} by ${a.id}`);
      else k.out(`[${a.index}] deprecated ${a.id}`);
    }
    const lines = r.skipped.flatMap((s) => s.errors.map((p) => `skipped [${s.index}]: ${formatProblem(p)}`));
    k.capped(lines, (l) => k.err(l), `problems in ${r.skipped.length} skipped updates`);
    k.out(
      r.commit
        ? `commit ${r.commit.slice(0, 12)} (${r.applied.length} applied, ${r.skipped.length} skipped)`
        : `${r.applied.length} applied, ${r.skipped.length} skipped, no commit`,
    );
  }
  return r.skipped.length ? 1 : 0;
}

export const writeCommands: Command[] = [
  {
    cmd: 'init <project>',
    describe: 'create ai-memory/<project>/ with config.yaml and register the merge driver (idempotent; in a fresh clone only the driver)',
    async run(k, a) {
      const r = await uc.init(...k.open(a), String(a.project));
      k.print(a, r, r.created ? `initialized ${r.path}${commitNote(r.commit, ' (commit ', ')')}` : `${r.path} is already initialized`);
    },
  },
  {
    cmd: 'remove-project <project>',
    describe: 'remove a project that holds no entries (a mistaken init or import), with its ai-context file, in one commit',
    async run(k, a) {
      const r = await uc.removeProject(...k.open(a), String(a.project));
      k.print(a, r, `removed project ${r.project} (${r.removed.length} files)${commitNote(r.commit)}`);
    },
  },
  {
    cmd: 'create [project]',
    describe: 'create one entry from a JSON object (the entry part of a Memory_Update); re-creating a superseded or deprecated fact is refused unless --force',
    options: { file: JSON_FILE, force: { type: 'boolean', describe: 'write it even if it restates a superseded or deprecated entry' } },
    async run(k, a) {
      const input = k.readJsonInput(a.file as string | undefined);
      const [engine, caller] = k.open(a);
      const r = await uc.create(engine, caller, input, { project: caller.project(engine, a.project || undefined), force: a.force === true });
      k.print(a, r.entry, r.entry.id);
    },
  },
  {
    cmd: 'apply [project]',
    describe: 'apply a JSON array of Memory_Update (create/supersede/deprecate) as one commit',
    options: { file: JSON_FILE },
    async run(k, a) {
      const input = k.readJsonInput(a.file as string | undefined);
      const [engine, caller] = k.open(a);
      const project = caller.project(engine, a.project || undefined);
      const onProgress = Array.isArray(input) && input.length >= 500 ? k.progressBar(Boolean(a.json), 'write') : undefined;
      k.caller.setExitCode(renderApply(k, await uc.apply(engine, caller, input, { project, onProgress }), Boolean(a.json)));
    },
  },
  {
    cmd: 'apply-result [project]',
    describe: 'apply the memory_updates of an AgentResult JSON',
    options: { file: { ...JSON_FILE, describe: 'AgentResult JSON file, or - for stdin' } },
    async run(k, a) {
      const input = k.readJsonInput(a.file as string | undefined);
      const r = await uc.applyResult(...k.open(a), input, { project: a.project || undefined });
      k.caller.setExitCode(renderApply(k, r, Boolean(a.json)));
    },
  },
  {
    cmd: 'supersede <id>',
    describe: 'mark an entry superseded by another (both must exist)',
    options: { by: { type: 'string', demandOption: true, describe: 'id of the replacement entry' } },
    async run(k, a) {
      const [engine, caller] = k.open(a);
      const r = await uc.supersede(engine, caller, String(a.id), String(a.by), { project: a.project });
      const entry = uc.locate(engine, caller, String(a.id)).entry;
      const text = `superseded ${String(a.id)} by ${String(a.by)}${commitNote(r.commit, ' (commit ', ')')}`;
      k.print(a, { applied: r.applied, skipped: r.skipped, commit: r.commit, entry }, text);
    },
  },
  {
    cmd: 'deprecate <id>',
    describe: 'mark an entry deprecated: historically relevant, no longer current',
    async run(k, a) {
      const [engine, caller] = k.open(a);
      const r = await uc.deprecate(engine, caller, String(a.id), { project: a.project });
      const entry = uc.locate(engine, caller, String(a.id)).entry;
      const text = r.unchanged ? `${String(a.id)} is already deprecated` : `deprecated ${String(a.id)}${commitNote(r.commit, ' (commit ', ')')}`;
      k.print(a, { applied: r.applied, skipped: r.skipped, commit: r.commit, entry }, text);
    },
  },
  {
    cmd: 'validate [project]',
    describe: 'check an entry, a Memory_Update, or an array of them, without writing',
    options: { file: JSON_FILE },
    async run(k, a) {
      const input = k.readJsonInput(a.file as string | undefined);
      const r = await uc.validate(...k.open(a), input, { project: a.project || undefined });
      if (a.json) k.printJson(r);
      else if (r.ok) k.out('ok: valid');
      else for (const p of r.errors) k.err(`error: ${formatProblem(p)}`);
      k.caller.setExitCode(r.ok ? 0 : 1);
    },
  },
];

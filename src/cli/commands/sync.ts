/** merge-driver (git calls it for entry files), diff, textconv, doctor and sync. */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { renderDiff } from '../../service/ops/diff.js';
import * as uc from '../../service/use-cases.js';
import { ValidationError } from '../../core/errors.js';
import { serializeEntry } from '../../core/entry.js';
import type { MemoryEntry } from '../../core/schema.js';
import type { Command } from '../io.js';
import { orThrow } from '../../try.js';

type Validate = typeof import('../../core/validate.js').validateStoredEntry;

function readSide(validateStoredEntry: Validate, file: string, label: string, path: string, allowEmpty: boolean): MemoryEntry | null {
  const text = readFileSync(file, 'utf8');
  if (!text.trim() && allowEmpty) return null;
  const raw: unknown = orThrow(
    JSON.parse,
    text,
    (err) => new ValidationError([{ path: `${path} (${label})`, message: `is not valid JSON (${err.message})` }], 'merge'),
  );
  return checked(validateStoredEntry, raw, path, label);
}

/** `raw` as a valid stored entry, else its problems named by file and side. */
function checked(validateStoredEntry: Validate, raw: unknown, path: string, label: string): MemoryEntry {
  const r = validateStoredEntry(raw);
  if (r.ok) return r.value;
  throw new ValidationError(
    r.errors.map((p) => ({ ...p, path: `${path} (${label}): ${p.path}` })),
    'merge',
  );
}

export const syncCommands: Command[] = [
  {
    cmd: 'merge-driver <base> <ours> <theirs> [path]',
    describe: 'git merge driver for one entry file (registered by init): field-level three-way merge, never conflict markers',
    async run(_k, a) {
      const { validateStoredEntry } = await import('../../core/validate.js'); // zod only for this command
      const { mergeEntry } = await import('../../core/merge.js');
      const path = String(a.path ?? a.ours);
      const base = readSide(validateStoredEntry, String(a.base), 'base', path, true);
      const ours = readSide(validateStoredEntry, String(a.ours), 'ours', path, false)!;
      const theirs = readSide(validateStoredEntry, String(a.theirs), 'theirs', path, false)!;
      if (ours.id !== theirs.id) throw new ValidationError([{ path, message: `the two sides are different entries (${ours.id}, ${theirs.id})` }], 'merge');
      const merged = checked(validateStoredEntry, mergeEntry(base, ours, theirs), path, 'merged');
      writeFileSync(String(a.ours), serializeEntry(merged)); // git takes %A as the result
    },
  },
  {
    cmd: 'diff [range]',
    describe:
      'the review view of a change: each entry created, superseded, deprecated, edited (field by field) or removed by hand, what a reviewer should check, and the memories whose cited code the change moved, modified or deleted; default: this branch against its upstream or main',
    options: {
      range: { describe: 'A..B, A...B (from their merge base), or a commit (as commit...HEAD)' },
      staged: { type: 'boolean', describe: 'the index against HEAD' },
      format: { type: 'string', choices: ['text', 'markdown', 'json'], describe: 'default text; markdown fits a pull-request comment' },
      'check-cited': {
        type: 'boolean',
        describe: 'exit 1 when the range changes code cited by memories it leaves untouched (update, supersede or reinforce them)',
      },
    },
    async run(k, a) {
      const [engine, caller] = k.open(a);
      const d = await uc.diff(engine, caller, { range: a.range as string | undefined, staged: Boolean(a.staged), project: a.project || undefined });
      k.caller.stdout.write(renderDiff(d, a.json ? 'json' : String(a.format ?? 'text')));
      // Entries removed by hand, unreadable or invalid files and secrets fail a CI check.
      if (d.warnings.some((w) => w.level === 'error')) k.caller.setExitCode(1);
      const left = d.cited_code.filter((c) => !c.touched);
      if (a['check-cited'] && left.length) {
        const ids = [...new Set(left.map((c) => c.id))];
        k.err(
          `${ids.length} ${ids.length === 1 ? 'memory cites' : 'memories cite'} code this change moved, modified or deleted and ${ids.length === 1 ? 'was' : 'were'} not updated: ${ids.slice(0, 10).join(', ')}${ids.length > 10 ? ` and ${ids.length - 10} more` : ''}; update or supersede ${ids.length === 1 ? 'it' : 'them'}, or re-confirm with \`memory reinforce <id>\` (moved evidence: \`memory validate-evidence --fix\`)`,
        );
        k.caller.setExitCode(1);
      }
    },
  },
  {
    cmd: 'textconv <file>',
    describe: 'print an entry file one field per line (git runs it to diff entry files; registered by init)',
    async run(k, a) {
      const { entryAsText } = await import('../../core/memory-diff-render.js');
      k.caller.stdout.write(entryAsText(readFileSync(resolve(k.caller.cwd, String(a.file)), 'utf8')));
    },
  },
  {
    cmd: 'doctor',
    describe: 'check the whole workspace: entry files, ids and folders, links, duplicates, secrets, conflicts, config; exit 1 on problems',
    options: {
      fix: {
        type: 'boolean',
        describe:
          'register the merge driver, merge conflicted or unmerged entries field by field (left for your commit while git holds a merge), and repair links to entries that do not exist',
      },
    },
    async run(k, a) {
      const [engine, caller] = k.open(a);
      if (a.fix) {
        await uc.registerMergeDriver(engine, caller);
        const f = await uc.fixConflicts(engine, caller);
        for (const x of f.fixed) k.err(x.merged ? `fixed: ${x.file}: merged the two sides of its conflict` : `not fixed: ${x.file}: ${x.reason}`);
        if (f.in_merge && f.fixed.some((x) => x.merged))
          k.err('a merge is in progress: the merged files are written and marked resolved; finish the merge when you are ready');
        else if (f.resolved.length) k.err('the merged files are written and marked resolved (git add); commit them when you are ready');
        for (const x of (await uc.fixLinks(engine, caller)).fixed) k.err(`fixed: ${x.file}: ${x.change}`);
      }
      const r = await uc.doctor(engine, caller);
      if (a.json) k.printJson(r);
      else {
        for (const p of r.problems) k.err(`${p.level ? `${p.level}: ` : ''}${p.check}: ${p.file}${p.path ? `: ${p.path}` : ''}: ${p.message}`);
        const warnings = r.problems.length;
        if (r.ok)
          k.out(
            `ok: ${r.checked.files} entry files in ${r.checked.projects} projects, no problems${warnings ? ` (${warnings} warning${warnings > 1 ? 's' : ''})` : ''}`,
          );
        const s = r.semantic;
        const off = s.projects_off.length ? `; off in config for ${s.projects_off.join(', ')}` : '';
        k.out(
          s.model_installed
            ? `semantic search: model installed; ${s.vectors_current} of ${s.entries} entries have a current vector (a running daemon computes the rest)${off}`
            : `semantic search: off, the embedding table in the package could not be read (search is lexical)${off}`,
        );
      }
      k.caller.setExitCode(r.ok ? 0 : 1);
    },
  },
  {
    cmd: 'sync',
    describe: "bring the upstream's memory in (entries merge field by field) and re-validate it; --push pushes when every unpushed commit is a memory commit",
    options: {
      remote: { type: 'string', describe: "default: the branch's upstream remote, else origin" },
      branch: { type: 'string', describe: "default: the branch's upstream branch, else the current branch" },
      push: {
        type: 'boolean',
        describe: 'push too, when every unpushed commit is a memory commit (otherwise the others are named and nothing is pushed)',
      },
      'force-push-branch': { type: 'boolean', describe: 'with --push: push the branch even with commits that are not memory commits' },
    },
    async run(k, a) {
      const r = await uc.sync(...k.open(a), {
        remote: a.remote as string | undefined,
        branch: a.branch as string | undefined,
        push: a.push === true,
        forcePushBranch: a['force-push-branch'] === true,
      });
      k.print(a, r, `${r.pulled ? 'pulled and merged' : 'up to date'}; ${r.pushed ? 'pushed' : 'not pushed'}${r.head ? ` (HEAD ${r.head.slice(0, 12)})` : ''}`);
      for (const b of r.bad) for (const p of b.problems) k.warn(`${p.path}: ${p.message}`);
      if (r.not_pushed_because?.length) {
        k.err(`error: not pushed: ${r.not_pushed_because.length} unpushed commit(s) change more than memory, and sync pushes memory only:`);
        for (const c of r.not_pushed_because) k.err(`  ${c.commit.slice(0, 12)} ${c.subject}`);
        k.err('push them yourself when they are ready, or pass --force-push-branch to push the whole branch');
      }
      if (r.bad.length || r.not_pushed_because?.length) k.caller.setExitCode(1);
    },
  },
];

/** extract, compact, log, remember and session. */
import * as uc from '../../service/use-cases.js';
import { STRATEGIES } from '../../core/constants.js';
import type { Strategy } from '../../core/consolidate.js';
import { UsageError } from '../../core/errors.js';
import { tryOr } from '../../try.js';
import { clip, type Cli, type Command, commitNote } from '../io.js';

function readText(k: Cli, file: unknown, text: unknown): string {
  if (text !== undefined) return String(text);
  if (file === undefined) throw new UsageError('give --file F (or - for stdin) or --text "..."');
  return k.readTextInput(String(file)).text;
}

export const consolidationCommands: Command[] = [
  {
    cmd: 'extract [project]',
    describe: 'candidate memories from free text (decisions, fixes, notes, ...), stored as drafts unless --dry-run',
    options: {
      file: { alias: 'f', type: 'string', describe: 'text file, or - for stdin' },
      text: { type: 'string' },
      'dry-run': { type: 'boolean' },
      'min-confidence': { type: 'number', describe: 'default 0.5' },
    },
    async run(k, a) {
      const text = readText(k, a.file, a.text);
      const r = await uc.extract(...k.open(a), a.project || undefined, text, {
        dryRun: Boolean(a['dry-run']),
        minConfidence: a['min-confidence'] as number | undefined,
        source: a.file ? String(a.file) : 'text',
      });
      // A refused candidate (a secret, an invalid field) is a rejected write: exit 1, like apply.
      k.caller.setExitCode(r.extractions.some((x) => x.skipped?.length) ? 1 : 0);
      if (a.json) return k.printJson(r);
      if (!r.extractions.length) return k.out('no candidate memories found');
      k.table(
        r.extractions.map((x) => [
          x.type,
          x.confidence.toFixed(2),
          x.stored ? (x.id ?? '') : x.duplicate_of ? `duplicate of ${x.duplicate_of}` : x.skipped?.length ? 'refused' : r.dry_run ? '(dry run)' : 'skipped',
          clip(x.summary, 80),
        ]),
        ['PATTERN', 'CONF', 'STORED', 'SUMMARY'],
      );
      r.extractions.forEach((x, i) => {
        for (const p of x.skipped ?? []) k.err(`refused candidate ${i}: ${p.path}: ${p.message}`);
      });
      k.out(`${r.candidates} candidates, ${r.stored} stored as drafts, ${r.deduplicated_count} already known${commitNote(r.commit)}`);
    },
  },
  {
    cmd: 'compact [project]',
    describe: 'consolidation: write a reviewable plan (nothing changes); --apply PLAN carries it out in one commit',
    options: {
      apply: { type: 'string', describe: 'plan file to apply' },
      plan: { type: 'string', describe: 'where to write the plan (default: plans/ of the local state folder, in the git dir)' },
      strategy: { type: 'string', choices: STRATEGIES, describe: 'default keep_highest_importance' },
      'summarize-at': { type: 'number', describe: 'subjects with this many live entries get a summary entry (default 10)' },
    },
    async run(k, a) {
      const [engine, caller] = k.open(a);
      if (a.apply !== undefined) {
        const r = await uc.applyPlan(engine, caller, String(a.apply));
        if (r.skipped.length) k.caller.setExitCode(1);
        if (a.json) return k.printJson(r);
        k.out(
          `merged ${r.merged.length} groups, ${r.summaries.length} summaries, ${r.linked.length} links; skipped ${r.skipped.length}${commitNote(r.commit)}`,
        );
        for (const s of r.skipped) k.out(`  skipped group ${s.group}: ${s.reason}`);
        return;
      }
      const { plan, path } = uc.compactPlan(engine, caller, a.project || undefined, {
        strategy: a.strategy as Strategy | undefined,
        summarizeAt: a['summarize-at'] as number | undefined,
        file: a.plan as string | undefined,
      });
      if (a.json) return k.printJson({ ...plan, path });
      const count = (k: string): number => plan.groups.filter((g) => g.action === k).length;
      k.out(path);
      k.out(
        `${count('merge')} groups to merge, ${count('review')} to review, ${count('link')} pairs to link, ${count('summarize')} subjects to summarize; ${plan.superseded_candidates.length} superseded entries are cleanup candidates`,
      );
      k.out(`review the plan, then: bass-agents memory compact --apply ${path}`);
    },
  },
  {
    cmd: 'log [project]',
    describe: 'memory commits (from git trailers), newest first; --op to filter (e.g. consolidate, forget)',
    options: { op: { type: 'string' }, limit: { type: 'number', describe: 'default 50' } },
    async run(k, a) {
      const rows = await uc.log(...k.open(a), a.project || undefined, { op: a.op as string | undefined, limit: a.limit as number | undefined });
      if (a.json) return k.printJson(rows);
      if (!rows.length) return k.out('no memory commits');
      k.table(
        rows.map((r) => [
          r.commit.slice(0, 12),
          r.date.slice(0, 19).replace('T', ' '),
          r.agent ?? '',
          r.changes
            .map((c) => `${c.op} ${c.id}`)
            .join(', ')
            .slice(0, 90),
        ]),
        ['COMMIT', 'DATE', 'AGENT', 'CHANGES'],
      );
    },
  },
  {
    cmd: 'remember [project]',
    describe: 'remember text: --short-term --session S [--ttl 2h] keeps it in the session only; without, a draft observation is committed',
    options: {
      'short-term': { type: 'boolean' },
      session: { type: 'string' },
      ttl: { type: 'string', describe: 'short-term lifetime: 30m, 2h (default), 1d' },
      important: { type: 'boolean', describe: 'short-term: keep it when the session ends (an "Important:" note is kept too)' },
      file: { alias: 'f', type: 'string', describe: 'text, or a JSON object with summary/content/subject/tags; - for stdin' },
      text: { type: 'string' },
    },
    async run(k, a) {
      const raw = readText(k, a.file, a.text);
      const input = raw.trim().startsWith('{') ? tryOr((): string | Record<string, unknown> => JSON.parse(raw) as Record<string, unknown>, raw) : raw;
      if (a.session && !a['short-term']) throw new UsageError('--session is for short-term memory: add --short-term');
      const r = await uc.remember(...k.open(a), a.project || undefined, input, {
        shortTerm: Boolean(a['short-term']),
        session: a.session as string | undefined,
        ttl: a.ttl as string | undefined,
        important: Boolean(a.important),
      });
      if (a.json) return k.printJson(r);
      k.out(
        r.short_term
          ? `remembered ${r.id} in session ${String(a.session)} until ${r.expires_at}`
          : `remembered ${r.id} as a draft observation${commitNote(r.commit)}`,
      );
    },
  },
  {
    cmd: 'session <action> <name>',
    describe: 'end a short-term session: important entries become long-term observations, the rest are dropped',
    options: { action: { choices: ['end'] }, threshold: { type: 'number', describe: 'minimum importance to keep (default 0.5)' } },
    async run(k, a) {
      const r = await uc.sessionEnd(...k.open(a), String(a.name), { threshold: a.threshold as number | undefined });
      k.print(a, r, `session ${r.session} ended: ${r.promoted.length} kept as long-term memory, ${r.dropped} dropped${commitNote(r.commit)}`);
    },
  },
];

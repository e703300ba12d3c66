/** Lifecycle commands: decay, reinforce, promote, restore, link, related. */
import * as uc from '../../service/use-cases.js';
import { CURVES, type Curve } from '../../core/lifecycle.js';
import { clip, type Command, commitNote } from '../io.js';

/** Each curve's settings, as options of `decay` for one run: --stability-hours sets exponential.stability_hours. */
const CURVE_OPTIONS: Record<string, string[]> = {
  exponential: ['stability-hours'],
  half_life: ['half-life-days', 'function', 'min-importance', 'access-weight'],
  periodic: ['base-rate', 'max-rate', 'period-days', 'floor'],
  fsrs6: ['stability-days'],
};

/** `o` without its undefined values; undefined when none is left. */
function defined<T extends object>(o: T): T | undefined {
  const e = Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
  return Object.keys(e).length ? e : undefined;
}

function entriesText(r: { entries: { id: string; summary: string }[]; commit: string | null }, verb: string): string {
  return [...r.entries.map((e) => `${verb} ${e.id}  ${clip(e.summary, 70)}`), ...(r.commit ? [`commit ${r.commit.slice(0, 12)}`] : [])].join('\n');
}

export const lifecycleCommands: Command[] = [
  {
    cmd: 'decay [project]',
    describe: 'show (default) or --apply decay: strength/confidence now vs the last run; forget entries below the threshold in one commit',
    options: {
      apply: { type: 'boolean', describe: 'forget (archive or delete) the entries below the threshold' },
      curve: { type: 'string', choices: CURVES },
      'forget-threshold': { type: 'number' },
      'forget-action': { type: 'string', choices: ['archive', 'delete'] },
      ...Object.fromEntries(
        Object.entries(CURVE_OPTIONS).flatMap(([curve, names]) => names.map((n) => [n, { type: 'number', describe: `${curve.replace('_', '-')} curve` }])),
      ),
      function: { type: 'string', choices: ['exponential', 'linear', 'step'], describe: 'half-life curve' },
    },
    async run(k, a) {
      const overrides = defined({
        curve: a.curve as Curve | undefined,
        forget_threshold: a['forget-threshold'] as number | undefined,
        forget_action: a['forget-action'] as 'archive' | 'delete' | undefined,
        ...Object.fromEntries(
          Object.entries(CURVE_OPTIONS).map(([curve, names]) => [curve, defined(Object.fromEntries(names.map((n) => [n.replaceAll('-', '_'), a[n]])))]),
        ),
      });
      const r = await uc.decay(...k.open(a), a.project || undefined, { apply: Boolean(a.apply), overrides });
      if (a.json) return k.printJson(r);
      k.out(
        `${r.project}: ${r.curve} curve, ${r.analyzed} live entries, ${r.changed} changed since ${r.previous_run_at ?? 'they were written'}, ${r.forgotten} below ${r.forget_threshold}`,
      );
      if (r.entries.length) {
        k.table(
          r.entries
            .slice(0, 50)
            .map((e) => [
              e.id,
              e.memory_type,
              e.before.toFixed(3),
              e.after.toFixed(3),
              e.factor.toFixed(3),
              e.days_since_access.toFixed(1),
              String(e.retrievals),
              e.forget ? r.forget_action : '',
            ]),
          ['ID', 'TYPE', 'BEFORE', 'AFTER', 'FACTOR', 'DAYS', 'RETRIEVALS', 'FORGET'],
        );
        if (r.entries.length > 50) k.out(`… ${r.entries.length - 50} more (--json lists all)`);
      }
      if (r.promotion_candidates.length)
        k.out(`promotion candidates (episodic, retrieved 5+ times, confidence > 0.6): ${r.promotion_candidates.join(', ')} — bass-agents memory promote <id>`);
      if (r.dry_run)
        k.out(r.forgotten ? `dry run: nothing changed; --apply would ${r.forget_action} ${r.forgotten} entries in one commit` : 'dry run: nothing changed');
      else k.out(`${r.forgotten} entries ${r.forget_action === 'delete' ? 'deleted' : 'archived'}${commitNote(r.commit, ' in commit ')}`);
    },
  },
  {
    cmd: 'reinforce <ids..>',
    describe: 'explicit re-memorize: strength to 1, stability up; optionally boost importance',
    options: {
      ids: { array: true },
      'boost-type': { type: 'string', choices: ['additive', 'multiplicative', 'set_value'] },
      amount: { type: 'number', describe: 'boost amount (default 0.1)' },
    },
    async run(k, a) {
      const r = await uc.reinforce(...k.open(a), (a.ids as string[]).map(String), {
        project: a.project,
        boostType: a['boost-type'] as 'additive' | 'multiplicative' | 'set_value' | undefined,
        amount: a.amount as number | undefined,
      });
      k.print(a, r, entriesText(r, 'reinforced'));
    },
  },
  {
    cmd: 'promote <id>',
    describe: 'promote an episodic memory to semantic (it stops decaying)',
    async run(k, a) {
      const r = await uc.promote(...k.open(a), String(a.id), { project: a.project });
      k.print(a, r, entriesText(r, 'promoted'));
    },
  },
  {
    cmd: 'restore <id>',
    describe: 'bring back a forgotten entry: archived ones become active, deleted ones return from git history',
    async run(k, a) {
      const r = await uc.restore(...k.open(a), String(a.id), { project: a.project });
      k.print(a, r, `restored ${r.entry.id} from ${r.from === 'archive' ? 'the archive' : 'git history'}${commitNote(r.commit)}`);
    },
  },
  {
    cmd: 'link <a> <b>',
    describe: "relate two entries (each goes into the other's related_entries)",
    options: { type: { type: 'string', describe: 'relationship name, recorded in the operation log' } },
    async run(k, a) {
      const r = await uc.link(...k.open(a), String(a.a), String(a.b), { project: a.project, type: a.type as string | undefined });
      k.print(a, r, r.entries.length ? `linked ${String(a.a)} and ${String(a.b)}${commitNote(r.commit)}` : 'already linked');
    },
  },
  {
    cmd: 'related <id>',
    describe: 'entries related to one: explicit links first, then lexically similar ones',
    options: { limit: { type: 'number' } },
    run(k, a) {
      const r = uc.related(...k.open(a), String(a.id), { project: a.project, limit: a.limit as number | undefined });
      if (a.json) return k.printJson(r.map((x) => ({ ...x.entry, meta: { relation: x.relation, score: x.score } })));
      if (!r.length) return k.out('no related entries');
      k.table(
        r.map((x) => [x.id, x.relation, x.score.toFixed(3), x.entry.subject, clip(x.entry.summary, 70)]),
        ['ID', 'RELATION', 'SCORE', 'SUBJECT', 'SUMMARY'],
      );
    },
  },
];

/** Lifecycle commands: decay, reinforce, promote, restore, link, related. */
import * as uc from '../../service/use-cases.js';
import { UsageError } from '../../core/errors.js';
import { CURVES, type Curve } from '../../core/lifecycle.js';
import { type Args, clip, type Command } from '../io.js';

const num = (a: Args, name: string): number | undefined => {
  const v = a[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new UsageError(`--${name} must be a number (got ${JSON.stringify(v)})`);
  return v;
};

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
      'stability-hours': { type: 'number', describe: 'exponential curve' },
      'half-life-days': { type: 'number', describe: 'half-life curve' },
      function: { type: 'string', choices: ['exponential', 'linear', 'step'], describe: 'half-life curve' },
      'min-importance': { type: 'number', describe: 'half-life curve floor' },
      'access-weight': { type: 'number', describe: 'half-life curve' },
      'base-rate': { type: 'number', describe: 'periodic curve' },
      'max-rate': { type: 'number', describe: 'periodic curve' },
      'period-days': { type: 'number', describe: 'periodic curve' },
      floor: { type: 'number', describe: 'periodic curve' },
      'stability-days': { type: 'number', describe: 'fsrs6 curve' },
    },
    async run(k, a) {
      const clean = <T extends object>(o: T): T | undefined => {
        const e = Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
        return Object.keys(e).length ? e : undefined;
      };
      const overrides = clean({
        curve: a.curve as Curve | undefined,
        forget_threshold: num(a, 'forget-threshold'),
        forget_action: a['forget-action'] as 'archive' | 'delete' | undefined,
        exponential: clean({ stability_hours: num(a, 'stability-hours') }),
        half_life: clean({
          half_life_days: num(a, 'half-life-days'),
          function: a.function as 'exponential' | 'linear' | 'step' | undefined,
          min_importance: num(a, 'min-importance'),
          access_weight: num(a, 'access-weight'),
        }),
        periodic: clean({ base_rate: num(a, 'base-rate'), max_rate: num(a, 'max-rate'), period_days: num(a, 'period-days'), floor: num(a, 'floor') }),
        fsrs6: clean({ stability_days: num(a, 'stability-days') }),
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
      else k.out(`${r.forgotten} entries ${r.forget_action === 'delete' ? 'deleted' : 'archived'}${r.commit ? ` in commit ${r.commit.slice(0, 12)}` : ''}`);
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
        amount: num(a, 'amount'),
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
      k.print(
        a,
        r,
        `restored ${r.entry.id} from ${r.from === 'archive' ? 'the archive' : 'git history'}${r.commit ? `; commit ${r.commit.slice(0, 12)}` : ''}`,
      );
    },
  },
  {
    cmd: 'link <a> <b>',
    describe: "relate two entries (each goes into the other's related_entries)",
    options: { type: { type: 'string', describe: 'relationship name, recorded in the operation log' } },
    async run(k, a) {
      const r = await uc.link(...k.open(a), String(a.a), String(a.b), { project: a.project, type: a.type as string | undefined });
      k.print(a, r, r.entries.length ? `linked ${String(a.a)} and ${String(a.b)}${r.commit ? `; commit ${r.commit.slice(0, 12)}` : ''}` : 'already linked');
    },
  },
  {
    cmd: 'related <id>',
    describe: 'entries related to one: explicit links first, then lexically similar ones',
    options: { limit: { type: 'number' } },
    run(k, a) {
      const r = uc.related(...k.open(a), String(a.id), { project: a.project, limit: num(a, 'limit') });
      if (a.json) return k.printJson(r.map((x) => ({ ...x.entry, meta: { relation: x.relation, score: x.score } })));
      if (!r.length) return k.out('no related entries');
      k.table(
        r.map((x) => [x.id, x.relation, x.score.toFixed(3), x.entry.subject, clip(x.entry.summary, 70)]),
        ['ID', 'RELATION', 'SCORE', 'SUBJECT', 'SUMMARY'],
      );
    },
  },
];

/**
 * Lifecycle commands: decay, reinforce, promote, restore, link, related.
 */
import type { Argv } from 'yargs';
import * as uc from '../../service/use-cases.js';
import { UsageError } from '../../core/errors.js';
import { CURVES, type Curve } from '../../core/lifecycle.js';
import { type GlobalArgs, clip, type Cli } from '../io.js';

type A = GlobalArgs & Record<string, unknown>;

const num = (a: A, name: string): number | undefined => {
  const v = a[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new UsageError(`--${name} must be a number (got ${JSON.stringify(v)})`);
  return v;
};

function printEntries(k: Cli, r: { project: string; entries: { id: string; summary: string }[]; commit: string | null }, verb: string): void {
  for (const e of r.entries) k.out(`${verb} ${e.id}  ${clip(e.summary, 70)}`);
  if (r.commit) k.out(`commit ${r.commit.slice(0, 12)}`);
}

export function registerLifecycle(y: Argv<GlobalArgs>, k: Cli): Argv<GlobalArgs> {
  return y
    .command(
      'decay [project]',
      'show (default) or --apply decay: strength/confidence now vs the last run; forget entries below the threshold in one commit',
      (c) =>
        c
          .positional('project', { type: 'string' })
          .option('apply', { type: 'boolean', describe: 'forget (archive or delete) the entries below the threshold' })
          .option('curve', { type: 'string', choices: CURVES as unknown as string[] })
          .option('forget-threshold', { type: 'number' })
          .option('forget-action', { type: 'string', choices: ['archive', 'delete'] })
          .option('stability-hours', { type: 'number', describe: 'exponential curve' })
          .option('half-life-days', { type: 'number', describe: 'half-life curve' })
          .option('function', { type: 'string', choices: ['exponential', 'linear', 'step'], describe: 'half-life curve' })
          .option('min-importance', { type: 'number', describe: 'half-life curve floor' })
          .option('access-weight', { type: 'number', describe: 'half-life curve' })
          .option('base-rate', { type: 'number', describe: 'periodic curve' })
          .option('max-rate', { type: 'number', describe: 'periodic curve' })
          .option('period-days', { type: 'number', describe: 'periodic curve' })
          .option('floor', { type: 'number', describe: 'periodic curve' })
          .option('stability-days', { type: 'number', describe: 'fsrs6 curve' }),
      async (a: A) => {
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
          k.out(
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
            ),
          );
          if (r.entries.length > 50) k.out(`… ${r.entries.length - 50} more (--json lists all)`);
        }
        if (r.promotion_candidates.length)
          k.out(
            `promotion candidates (episodic, retrieved 5+ times, confidence > 0.6): ${r.promotion_candidates.join(', ')} — bass-agents memory promote <id>`,
          );
        if (r.dry_run)
          k.out(r.forgotten ? `dry run: nothing changed; --apply would ${r.forget_action} ${r.forgotten} entries in one commit` : 'dry run: nothing changed');
        else k.out(`${r.forgotten} entries ${r.forget_action === 'delete' ? 'deleted' : 'archived'}${r.commit ? ` in commit ${r.commit.slice(0, 12)}` : ''}`);
      },
    )
    .command(
      'reinforce <ids..>',
      'explicit re-memorize: strength to 1, stability up; optionally boost importance',
      (c) =>
        c
          .positional('ids', { type: 'string', array: true })
          .option('boost-type', { type: 'string', choices: ['additive', 'multiplicative', 'set_value'] })
          .option('amount', { type: 'number', describe: 'boost amount (default 0.1)' }),
      async (a: A) => {
        const r = await uc.reinforce(...k.open(a), (a.ids as string[]).map(String), {
          project: a.project,
          boostType: a['boost-type'] as 'additive' | 'multiplicative' | 'set_value' | undefined,
          amount: num(a, 'amount'),
        });
        if (a.json) k.printJson(r);
        else printEntries(k, r, 'reinforced');
      },
    )
    .command(
      'promote <id>',
      'promote an episodic memory to semantic (it stops decaying)',
      (c) => c.positional('id', { type: 'string', demandOption: true }),
      async (a: A) => {
        const r = await uc.promote(...k.open(a), String(a.id), { project: a.project });
        if (a.json) k.printJson(r);
        else printEntries(k, r, 'promoted');
      },
    )
    .command(
      'restore <id>',
      'bring back a forgotten entry: archived ones become active, deleted ones return from git history',
      (c) => c.positional('id', { type: 'string', demandOption: true }),
      async (a: A) => {
        const r = await uc.restore(...k.open(a), String(a.id), { project: a.project });
        if (a.json) k.printJson(r);
        else k.out(`restored ${r.entry.id} from ${r.from === 'archive' ? 'the archive' : 'git history'}${r.commit ? `; commit ${r.commit.slice(0, 12)}` : ''}`);
      },
    )
    .command(
      'link <a> <b>',
      "relate two entries (each goes into the other's related_entries)",
      (c) =>
        c
          .positional('a', { type: 'string', demandOption: true })
          .positional('b', { type: 'string', demandOption: true })
          .option('type', { type: 'string', describe: 'relationship name, recorded in the operation log' }),
      async (a: A) => {
        const r = await uc.link(...k.open(a), String(a.a), String(a.b), { project: a.project, type: a.type as string | undefined });
        if (a.json) k.printJson(r);
        else k.out(r.entries.length ? `linked ${String(a.a)} and ${String(a.b)}${r.commit ? `; commit ${r.commit.slice(0, 12)}` : ''}` : 'already linked');
      },
    )
    .command(
      'related <id>',
      'entries related to one: explicit links first, then lexically similar ones',
      (c) => c.positional('id', { type: 'string', demandOption: true }).option('limit', { type: 'number' }),
      (a: A) => {
        const r = uc.related(...k.open(a), String(a.id), { project: a.project, limit: num(a, 'limit') });
        if (a.json) return k.printJson(r.map((x) => ({ ...x.entry, meta: { relation: x.relation, score: x.score } })));
        if (!r.length) return k.out('no related entries');
        k.out(
          k.table(
            r.map((x) => [x.id, x.relation, x.score.toFixed(3), x.entry.subject, clip(x.entry.summary, 70)]),
            ['ID', 'RELATION', 'SCORE', 'SUBJECT', 'SUMMARY'],
          ),
        );
      },
    );
}

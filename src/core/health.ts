/**
 * Health of the statistics, pure: each metric green, yellow or red by the thresholds in
 * docs/dashboard.md, with the words that say why. Shares are of the entries they concern.
 */
import type { Statistics } from './stats.js';

export type Level = 'green' | 'yellow' | 'red';

export interface Health {
  avg_confidence: Level;
  low_confidence: Level;
  stale_evidence: Level;
  superseded: Level;
  expiring: Level;
  overall: Level;
  /** Why the overall level is what it is: the metrics at that level, in words with their numbers. */
  reasons: string[];
}

const band = (value: number, greenMax: number, yellowMax: number): Level => (value <= greenMax ? 'green' : value <= yellowMax ? 'yellow' : 'red');
const pct = (x: number): string => `${Math.round(x * 100)}%`;

export function health(s: Statistics): Health {
  const n = Math.max(1, s.total_entries);
  const active = Math.max(1, s.entries_by_status.active ?? 0);
  const expiring = s.entries_approaching_expiry.length;
  // Each metric's level, and the words that say why.
  const metrics: Record<Exclude<keyof Health, 'overall' | 'reasons'>, [Level, string]> = {
    avg_confidence: [
      s.total_entries === 0 || s.avg_confidence >= 0.7 ? 'green' : s.avg_confidence >= 0.5 ? 'yellow' : 'red',
      `average confidence ${s.avg_confidence.toFixed(2)}`,
    ],
    low_confidence: [
      band(s.low_confidence_count / n, 0.1, 0.25),
      `${s.low_confidence_count} of ${s.total_entries} low-confidence (${pct(s.low_confidence_count / n)})`,
    ],
    stale_evidence: [band(s.stale_evidence_count / n, 0, 0.05), `${s.stale_evidence_count} of ${s.total_entries} with stale evidence`],
    superseded: [band(s.superseded_percentage, 30, 50), `${s.superseded_percentage}% superseded (memory compact)`],
    // Expiry is a state entry's normal life: a warning when a tenth of the live entries expire within the week, never an issue.
    expiring: [expiring / active > 0.1 ? 'yellow' : 'green', `${expiring} of ${s.entries_by_status.active ?? 0} active expiring within 7 days`],
  };
  const levels = Object.fromEntries(Object.entries(metrics).map(([k, [level]]) => [k, level])) as Record<keyof typeof metrics, Level>;
  const all = Object.values(levels);
  const overall: Level = all.includes('red') ? 'red' : all.includes('yellow') ? 'yellow' : 'green';
  const reasons = overall === 'green' ? [] : Object.values(metrics).flatMap(([level, words]) => (level === overall ? [words] : []));
  return { ...levels, overall, reasons };
}

/** The date range of a dashboard filter, as of `now`. */
export function rangeFor(filter: '7d' | '30d' | 'all', now: Date): { start_date?: string } {
  if (filter === 'all') return {};
  const days = filter === '7d' ? 7 : 30;
  return { start_date: new Date(now.getTime() - days * 86_400_000).toISOString() };
}

/**
 * Health of the statistics (002 Req 23.9), pure: each watched metric is green (healthy), yellow
 * (warning) or red (an issue), by thresholds documented in docs/dashboard.md.
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
}

const band = (value: number, greenMax: number, yellowMax: number): Level => (value <= greenMax ? 'green' : value <= yellowMax ? 'yellow' : 'red');

export function health(s: Statistics): Health {
  const n = Math.max(1, s.total_entries);
  const h = {
    avg_confidence: s.total_entries === 0 ? 'green' : s.avg_confidence >= 0.7 ? 'green' : s.avg_confidence >= 0.5 ? 'yellow' : 'red',
    low_confidence: band(s.low_confidence_count / n, 0.1, 0.25),
    stale_evidence: band(s.stale_evidence_count / n, 0, 0.05),
    superseded: band(s.superseded_percentage, 30, 50),
    expiring: band(s.entries_approaching_expiry.length, 0, 3),
  } as Omit<Health, 'overall'>;
  const levels = Object.values(h);
  return { ...h, overall: levels.includes('red') ? 'red' : levels.includes('yellow') ? 'yellow' : 'green' };
}

/** The date range of a dashboard filter, as of `now`. */
export function rangeFor(filter: '7d' | '30d' | 'all', now: Date): { start_date?: string } {
  if (filter === 'all') return {};
  const days = filter === '7d' ? 7 : 30;
  return { start_date: new Date(now.getTime() - days * 86_400_000).toISOString() };
}

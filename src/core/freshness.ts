/** Freshness, pure: entries past or near their valid_to, and entries due for review. */
import type { EntryLike } from './meta.js';

const DAY_MS = 86_400_000;

export type FreshnessState = 'expired' | 'expiring' | 'review_due';

export interface FreshnessItem {
  id: string;
  state: FreshnessState;
  subject: string;
  valid_to: string | null;
  /** Days until valid_to (negative once past), or days since the review fell due. */
  days: number;
  review_interval?: string;
}

/** Milliseconds of an ISO 8601 duration (P1Y2M3W4DT5H6M7S; a year is 365 days, a month 30), or null. */
export function durationMs(d: string): number | null {
  const m = /^P(?!$)(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?=\d)(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(d);
  if (!m) return null;
  const n = (i: number): number => Number(m[i] ?? 0);
  return (n(1) * 365 + n(2) * 30 + n(3) * 7 + n(4)) * DAY_MS + n(5) * 3_600_000 + n(6) * 60_000 + n(7) * 1000;
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

/** Active entries that are expired, expire within `days`, or are due for review; most urgent first. */
export function checkFreshness(entries: readonly EntryLike[], now: number, days = 7): FreshnessItem[] {
  const out: FreshnessItem[] = [];
  for (const e of entries) {
    if (e.status !== 'active') continue;
    if (e.valid_to) {
      const left = (Date.parse(e.valid_to) - now) / DAY_MS;
      if (left <= days) out.push({ id: e.id, state: left < 0 ? 'expired' : 'expiring', subject: e.subject, valid_to: e.valid_to, days: round1(left) });
    }
    if (e.review_interval) {
      const every = durationMs(e.review_interval);
      if (every !== null) {
        const overdue = (now - (Date.parse(e.updated_at) + every)) / DAY_MS;
        if (overdue >= 0)
          out.push({ id: e.id, state: 'review_due', subject: e.subject, valid_to: e.valid_to, days: round1(overdue), review_interval: e.review_interval });
      }
    }
  }
  const rank: Record<FreshnessState, number> = { expired: 0, expiring: 1, review_due: 2 };
  return out.sort((a, b) => rank[a.state] - rank[b.state] || (a.state === 'review_due' ? b.days - a.days : a.days - b.days) || (a.id < b.id ? -1 : 1));
}

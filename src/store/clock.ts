/** The one clock (DESIGN.md "Time"): `BASS_AGENTS_NOW=<ISO 8601>` fixes "now" for every command, the daemon and tests. */
import { UsageError } from '../core/errors.js';
import { normalizeTimestamp } from '../core/time.js';

export type Clock = () => Date;

export function clockFromEnv(env: NodeJS.ProcessEnv = process.env): Clock {
  const fixed = env.BASS_AGENTS_NOW;
  if (!fixed) return () => new Date();
  const iso = normalizeTimestamp(fixed);
  if (!iso) throw new UsageError(`BASS_AGENTS_NOW must be an ISO 8601 timestamp such as 2026-01-31T12:00:00Z (got ${JSON.stringify(fixed)})`);
  const t = new Date(iso);
  return () => new Date(t.getTime());
}

/** Timestamps (no dependencies, so the read path can use them without loading the validator). */

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** Parses an ISO 8601 timestamp to its canonical UTC form, or returns null. */
export function normalizeTimestamp(value: string): string | null {
  if (!ISO_8601.test(value)) return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

/** `iso` as ms if it is exactly as `toISOString` writes it, else NaN: comparing the numbers is comparing the texts. */
export function canonicalMs(iso: string): number {
  if (iso.length !== 24) return NaN;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) && new Date(ms).toISOString() === iso ? ms : NaN;
}

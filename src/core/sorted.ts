/** Index of the first of `sorted` (ascending by a string of theirs, `of`, in JavaScript string order) whose string is not less than `key`. */
export function lowerBoundBy<T>(sorted: readonly T[], key: string, of: (item: T) => string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (of(sorted[mid]!) < key)
      lo = mid + 1; // lo <= mid < hi <= sorted.length
    else hi = mid;
  }
  return lo;
}

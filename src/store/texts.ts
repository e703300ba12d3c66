/** Strings by position, each made only when asked for: a cold command looks at a few of 10K, and making them all would be most of what reading the cache costs. */
export interface Texts {
  readonly length: number;
  get(i: number): string;
  /** Whether string `i` is `s.slice(from, to)` (without making either when that can be helped). */
  equals(i: number, s: string, from: number, to: number): boolean;
}

/** Texts in a buffer: string `i` is the bytes [starts[i], starts[i + 1]). */
export class ByteTexts implements Texts {
  constructor(
    private readonly bytes: Buffer,
    private readonly starts: Uint32Array,
    /** Every byte below 0x80: read as latin1 (a straight copy), else decoded as UTF-8. */
    private readonly ascii: boolean,
  ) {}

  get length(): number {
    return this.starts.length - 1;
  }

  get(i: number): string {
    return this.bytes.toString(this.ascii ? 'latin1' : 'utf8', this.starts[i], this.starts[i + 1]);
  }

  // Compared as strings made natively: a loop over characters runs interpreted in a cold process.
  equals(i: number, s: string, from: number, to: number): boolean {
    if (this.ascii && (this.starts[i + 1] ?? 0) - (this.starts[i] ?? 0) !== to - from) return false;
    return this.get(i) === s.slice(from, to);
  }
}

/** Texts taken from a base where `from[i] >= 0` (its position there), else from `extra[-1 - from[i]]`. */
export class MergedTexts implements Texts {
  constructor(
    private readonly base: Texts,
    private readonly from: Int32Array,
    private readonly extra: readonly string[],
  ) {}

  get length(): number {
    return this.from.length;
  }

  private pick(i: number): number | string {
    const f = this.from[i];
    if (f === undefined) throw new RangeError(`no text at ${i}`);
    return f >= 0 ? f : (this.extra[-1 - f] ?? '');
  }

  get(i: number): string {
    const p = this.pick(i);
    return typeof p === 'string' ? p : this.base.get(p);
  }

  equals(i: number, s: string, from: number, to: number): boolean {
    const p = this.pick(i);
    return typeof p === 'string' ? p.length === to - from && s.startsWith(p, from) : this.base.equals(p, s, from, to);
  }
}

/** The first position of [0, n) where `below` is false (it holds for a run of positions from 0): a binary search. */
export function firstNotBelow(n: number, below: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (below(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first of `sorted` (JavaScript string order) not less than `key`. */
export const lowerBoundText = (sorted: Texts, key: string): number => firstNotBelow(sorted.length, (i) => sorted.get(i) < key);

/** The position of `key` in `sorted`, if it is there. */
export function positionOfText(sorted: Texts, key: string): number | undefined {
  const at = lowerBoundText(sorted, key);
  return at < sorted.length && sorted.equals(at, key, 0, key.length) ? at : undefined;
}

/** The UTF-8 bytes of the strings and where each starts; null if one does not survive the trip (a lone surrogate). */
export function encodeTexts(items: readonly string[]): { starts: Uint32Array; bytes: Buffer; ascii: boolean } | null {
  const joined = items.join('');
  const ascii = !/[^\x00-\x7f]/.test(joined);
  const starts = new Uint32Array(items.length + 1);
  let end = 0;
  if (ascii) {
    items.forEach((t, i) => (starts[i + 1] = end += t.length));
    return { starts, bytes: Buffer.from(joined, 'latin1'), ascii };
  }
  const parts: Buffer[] = [];
  for (const [i, t] of items.entries()) {
    const b = Buffer.from(t, 'utf8');
    if (b.toString('utf8') !== t) return null;
    parts.push(b);
    starts[i + 1] = end += b.length;
  }
  return { starts, bytes: Buffer.concat(parts), ascii };
}

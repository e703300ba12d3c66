/** The fields filters and ranking read, as columns beside the metadata rows: parsing 10K rows would be most of a cold `list` or `query`. */
import { ENTRY_KEY_ORDER, EVIDENCE_TYPES, KINDS, STATUSES, type EvidenceType } from '../core/constants.js';
import type { EntryMeta } from '../core/meta.js';
import type { MemoryEntry } from '../core/schema.js';
import { canonicalMs } from '../core/time.js';
import type { CatalogFile } from './catalog-cache.js';

/**
 * The numeric columns. `ev`: codes into `evs` (evidence types as digits of EVIDENCE_TYPES); `vf`,
 * `vt`: into `dates`, -1 for null; `lc`: into `lcs` (lifecycle JSON), -1 for none; `updMs`:
 * `updated_at` in ms when in `toISOString`'s form (text order is time order), else NaN.
 */
export const NUMERIC = {
  kind: Int8Array,
  status: Int8Array,
  conf: Float64Array,
  ev: Int32Array,
  updMs: Float64Array,
  scope: Int32Array,
  subject: Int32Array,
  vf: Int32Array,
  vt: Int32Array,
  imp0: Float64Array,
  lc: Int32Array,
} as const;
export type NumericColumn = keyof typeof NUMERIC;
export const NUMERIC_COLUMNS = Object.keys(NUMERIC) as NumericColumn[];
export const TABLES = ['evs', 'dates', 'lcs', 'scopes', 'subjects'] as const;

export type CachedColumns = { [K in NumericColumn]: InstanceType<(typeof NUMERIC)[K]> } & Record<(typeof TABLES)[number], string[]>;

export const numericColumns = (n: number): Pick<CachedColumns, NumericColumn> =>
  Object.fromEntries(NUMERIC_COLUMNS.map((k) => [k, new NUMERIC[k](n)])) as Pick<CachedColumns, NumericColumn>;

/**
 * The catalog's texts, a string per file each: `paths` relative to the root, sorted (JavaScript
 * string order); `rows` each usable file's metadata row (a JSON array, saved as ASCII), '' for a bad one; the rest
 * columns read as text (updated_at, the duplicate key, created_at).
 */
export const TEXT_TABLES = ['paths', 'upd', 'dup', 'crt', 'rows'] as const;
export type TextTable = (typeof TEXT_TABLES)[number];
type EncodedColumns = CachedColumns & Record<'upd' | 'dup' | 'crt', string[]>;

/** The columns of these metadata (null: a bad file, whose columns are never read), coded on from `tables`. */
export function encodeColumns(metas: readonly (EntryMeta | null)[], tables?: Pick<CachedColumns, (typeof TABLES)[number]>): EncodedColumns {
  const c: EncodedColumns = {
    ...numericColumns(metas.length),
    evs: [...(tables?.evs ?? [])],
    upd: [],
    dates: [...(tables?.dates ?? [])],
    dup: [],
    crt: [],
    lcs: [...(tables?.lcs ?? [])],
    scopes: [...(tables?.scopes ?? [])],
    subjects: [...(tables?.subjects ?? [])],
  };
  const date = (d: string | null): number => (d === null ? -1 : codeIn(c.dates, d));
  // Every meta is a validated entry's (the catalog holds no other), so each value has its code.
  metas.forEach((m, i) => {
    c.upd.push(m?.updated_at ?? '');
    c.dup.push(m?.dup ?? '');
    c.crt.push(m?.created_at ?? '');
    if (!m) return;
    c.kind[i] = KINDS.indexOf(m.kind);
    c.status[i] = STATUSES.indexOf(m.status);
    c.conf[i] = m.confidence;
    c.ev[i] = codeIn(c.evs, m.evidence.map((e) => EVIDENCE_TYPES.indexOf(e.type)).join(''));
    c.updMs[i] = canonicalMs(m.updated_at);
    c.scope[i] = codeIn(c.scopes, m.scope);
    c.subject[i] = codeIn(c.subjects, m.subject);
    c.vf[i] = date(m.valid_from);
    c.vt[i] = date(m.valid_to);
    c.imp0[i] = m.importance0;
    c.lc[i] = m.lifecycle === undefined ? -1 : codeIn(c.lcs, JSON.stringify(m.lifecycle));
  });
  return c;
}

/** A catalog row: an entry's metadata as a JSON array in a fixed field order (smaller and faster to parse than an object), and back. */
// Every key of an entry file but the texts, in the files' order, then the fields derived from it.
export const META_KEYS: readonly (keyof EntryMeta)[] = [
  ...ENTRY_KEY_ORDER.filter((k): k is Exclude<typeof k, 'summary' | 'content'> => k !== 'summary' && k !== 'content'),
  'dup',
  'importance0',
];

export const metaRow = (m: EntryMeta): unknown[] => META_KEYS.map((k) => (k === 'evidence' ? m.evidence.map((e) => e.type) : (m[k] ?? null)));

export function metaFromRow(v: unknown[]): EntryMeta {
  // One literal with every key, in META_KEYS order: V8 gives all metas one compact shape (built by a loop of keyed stores they took more memory: benchmarks.md R14).
  const m = {
    id: v[0],
    section: v[1],
    kind: v[2],
    subject: v[3],
    scope: v[4],
    tags: v[5],
    confidence: v[6],
    evidence: (v[7] as string[]).map((type) => ({ type })),
    status: v[8],
    superseded_by: v[9],
    related_entries: v[10],
    valid_from: v[11],
    valid_to: v[12],
    review_interval: v[13] ?? undefined,
    created_by: v[14],
    created_at: v[15],
    updated_at: v[16],
    lifecycle: v[17] ?? undefined,
    dup: v[18],
    importance0: v[19],
  };
  return m as unknown as EntryMeta;
}

const tableCodes = new WeakMap<string[], Map<string, number>>();

function codeIn(table: string[], value: string): number {
  let codes = tableCodes.get(table);
  if (!codes) {
    codes = new Map(table.map((v, i) => [v, i]));
    tableCodes.set(table, codes);
  }
  let code = codes.get(value);
  if (code === undefined) {
    code = table.length;
    table.push(value);
    codes.set(value, code);
  }
  return code;
}

/** `table[code]`; a code outside it throws (a loaded cache is consistent by construction). */
export function item<T>(table: ArrayLike<T>, code: number | undefined, what: string): T {
  const v = code === undefined ? undefined : table[code];
  if (v === undefined) throw new Error(`catalog cache: no ${what} numbered ${code}`);
  return v;
}

const EVIDENCE_OF: { type: EvidenceType }[][] = [];

/** A cached entry's metadata: fields from the columns, the rest from its row parsed on first use. */
export class ColumnMeta implements EntryMeta {
  private parsed: EntryMeta | undefined;
  private evidenceList: { type: EvidenceType }[] | undefined;
  private lifecycleValue: MemoryEntry['lifecycle'] | undefined;
  private readonly cols: CachedColumns;

  constructor(
    private readonly file: CatalogFile,
    private at: number,
    /** The file's path relative to the root, when known. */
    private path?: string,
  ) {
    this.cols = file.cols;
  }

  /** Moves to position `at`: a reader of thousands of entries that keeps none moves one object along. */
  moveTo(at: number): this {
    this.at = at;
    this.path = this.parsed = this.evidenceList = this.lifecycleValue = undefined;
    return this;
  }

  private code(c: ArrayLike<number>): number {
    return item(c, this.at, 'position');
  }

  private date(c: Int32Array): string | null {
    const d = this.code(c);
    return d < 0 ? null : item(this.cols.dates, d, 'date');
  }

  private get row(): EntryMeta {
    return (this.parsed ??= metaFromRow(JSON.parse(this.file.rows.get(this.at)) as unknown[]));
  }

  private get rel(): string {
    return (this.path ??= this.file.paths.get(this.at));
  }

  // The cache holds only files whose id matches their name and section their folder.
  get id(): string {
    const f = this.rel;
    return f.slice(f.lastIndexOf('/') + 1, -'.json'.length);
  }
  get section(): EntryMeta['section'] {
    const f = this.rel;
    const end = f.lastIndexOf('/');
    return f.slice(f.lastIndexOf('/', end - 1) + 1, end) as EntryMeta['section'];
  }
  get kind(): EntryMeta['kind'] {
    return item(KINDS, this.code(this.cols.kind), 'kind');
  }
  get status(): EntryMeta['status'] {
    return item(STATUSES, this.code(this.cols.status), 'status');
  }
  get confidence(): number {
    return this.code(this.cols.conf);
  }
  get scope(): string {
    return item(this.cols.scopes, this.code(this.cols.scope), 'scope');
  }
  get subject(): string {
    return item(this.cols.subjects, this.code(this.cols.subject), 'subject');
  }
  get updated_at(): string {
    return this.file.upd.get(this.at);
  }
  get valid_from(): string | null {
    return this.date(this.cols.vf);
  }
  get valid_to(): string | null {
    return this.date(this.cols.vt);
  }
  get evidence(): { type: EvidenceType }[] {
    if (this.evidenceList) return this.evidenceList;
    const codes = item(this.cols.evs, this.code(this.cols.ev), 'evidence shape');
    const type = (d: string): { type: EvidenceType } => ({ type: item(EVIDENCE_TYPES, +d, 'evidence type') });
    // One shared list per evidence shape when there is one type (most entries).
    return codes.length === 1 ? (EVIDENCE_OF[+codes] ??= [type(codes)]) : (this.evidenceList = [...codes].map(type));
  }
  get tags(): string[] {
    return this.row.tags;
  }
  get superseded_by(): string | null {
    return this.row.superseded_by;
  }
  get related_entries(): string[] {
    return this.row.related_entries;
  }
  get review_interval(): MemoryEntry['review_interval'] {
    return this.row.review_interval;
  }
  get created_by(): string {
    return this.row.created_by;
  }
  get created_at(): string {
    return this.parsed ? this.parsed.created_at : this.file.crt.get(this.at);
  }
  get lifecycle(): MemoryEntry['lifecycle'] {
    if (this.parsed) return this.parsed.lifecycle;
    const code = this.code(this.cols.lc);
    return code < 0 ? undefined : (this.lifecycleValue ??= JSON.parse(item(this.cols.lcs, code, 'lifecycle')) as MemoryEntry['lifecycle']);
  }
  get dup(): string {
    return this.file.dup.get(this.at);
  }
  get importance0(): number {
    return this.code(this.cols.imp0);
  }

  toJSON(): EntryMeta {
    return this.row;
  }
}

/**
 * The fields every entry's filters and ranking read, kept in the catalog cache's header as
 * columns beside its metadata rows: a `list` or `query` of 10K entries tests each entry's status,
 * confidence, scope, validity and evidence, and parsing 10K rows for that cost ~40 ms of a cold
 * command. A cached entry's metadata is a `ColumnMeta`, which answers those fields from the
 * columns and parses its row only when something asks for another field (tags, lifecycle, the
 * duplicate hash: a few entries, or a command that reads them all anyway).
 */
import { EVIDENCE_TYPES, KINDS, STATUSES, type EvidenceType } from '../core/constants.js';
import type { EntryMeta } from '../core/meta.js';
import type { MemoryEntry } from '../core/schema.js';
import { metaFromRow, metaRow } from './meta-row.js';

/** The metadata rows of a loaded catalog cache, by position (catalog-cache.ts). */
export interface Rows {
  readonly length: number;
  get(i: number): string;
}

/** Parallel to the cache's files; -1 in `kind` marks a position without columns (a bad file, or a value they cannot hold). */
export interface Columns {
  kind: number[];
  status: number[];
  conf: number[];
  /** Evidence types as digits (indexes into EVIDENCE_TYPES), in order. */
  ev: string[];
  upd: string[];
  scope: number[];
  subject: number[];
  vf: (string | null)[];
  vt: (string | null)[];
  /** The duplicate hash (a daemon's write looks every entry's up once; parsing 100K rows for it held ~200 MB). */
  dup: string[];
  /** The distinct scopes and subjects that `scope` and `subject` index. */
  scopes: string[];
  subjects: string[];
}

/** Columns with no positions; `tables`: start from these tables (codes copied from them stay valid). */
export function emptyColumns(tables?: Pick<Columns, 'scopes' | 'subjects'>): Columns {
  return {
    kind: [],
    status: [],
    conf: [],
    ev: [],
    upd: [],
    scope: [],
    subject: [],
    vf: [],
    vt: [],
    dup: [],
    scopes: [...(tables?.scopes ?? [])],
    subjects: [...(tables?.subjects ?? [])],
  };
}

/** Whether `c` is a well-formed set of columns for `n` files. */
export function validColumns(c: unknown, n: number): c is Columns {
  const x = c as Columns | null;
  return (
    typeof x === 'object' &&
    x !== null &&
    Array.isArray(x.scopes) &&
    Array.isArray(x.subjects) &&
    (['kind', 'status', 'conf', 'ev', 'upd', 'scope', 'subject', 'vf', 'vt', 'dup'] as const).every((k) => Array.isArray(x[k]) && x[k].length === n)
  );
}

/** Codes of a table's values, made when a new value must be encoded. */
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

/** Appends (or, with `at`, sets) the columns of one file: its metadata, or null for a file without any. */
export function putColumns(c: Columns, m: EntryMeta | null, at = c.kind.length): void {
  const kind = m ? KINDS.indexOf(m.kind) : -1;
  const status = m ? STATUSES.indexOf(m.status) : -1;
  let ev = '';
  if (m) for (const e of m.evidence) ev += String(EVIDENCE_TYPES.indexOf(e.type));
  const ok = m && kind >= 0 && status >= 0 && !ev.includes('-') && typeof m.confidence === 'number';
  c.kind[at] = ok ? kind : -1;
  c.status[at] = ok ? status : -1;
  c.conf[at] = ok ? m.confidence : 0;
  c.ev[at] = ok ? ev : '';
  c.upd[at] = ok ? m.updated_at : '';
  c.scope[at] = ok ? codeIn(c.scopes, m.scope) : -1;
  c.subject[at] = ok ? codeIn(c.subjects, m.subject) : -1;
  c.vf[at] = ok ? m.valid_from : null;
  c.vt[at] = ok ? m.valid_to : null;
  c.dup[at] = ok ? m.dup : '';
}

/** Appends position `i` of `from` to `to`, whose tables start with `from`'s. */
export function copyColumns(to: Columns, from: Columns, i: number): void {
  to.kind.push(from.kind[i]);
  to.status.push(from.status[i]);
  to.conf.push(from.conf[i]);
  to.ev.push(from.ev[i]);
  to.upd.push(from.upd[i]);
  to.scope.push(from.scope[i]);
  to.subject.push(from.subject[i]);
  to.vf.push(from.vf[i]);
  to.vt.push(from.vt[i]);
  to.dup.push(from.dup[i]);
}

/** The columns in a new order (`order[j]` is the old position of the new j). */
export function permuteColumns(c: Columns, order: number[]): Columns {
  const out = emptyColumns(c);
  for (const i of order) copyColumns(out, c, i);
  return out;
}

const EVIDENCE_OF: { type: EvidenceType }[][] = [];

/**
 * A cached entry's metadata: the filter and ranking fields from the columns, the rest from its
 * row, parsed on first use. Behaves as the EntryMeta parsed from the row would, field by field.
 */
export class ColumnMeta implements EntryMeta {
  private parsed: EntryMeta | undefined;
  private evidenceList: { type: EvidenceType }[] | undefined;
  /** The row until it is parsed (a long-lived process would otherwise hold both). */
  private text: string | undefined;
  /** Where the row is, until it is first asked for. */
  private rows: Rows | undefined;

  constructor(
    private readonly cols: Columns,
    private at: number,
    /** The row (a JSON array) this metadata stands for, or the rows it is at position `at` of. */
    line: string | Rows,
    /** Path of the file relative to the root: `ai-memory/<project>/<section>/<id>.json`. */
    private file: string,
  ) {
    if (typeof line === 'string') this.text = line;
    else this.rows = line;
  }

  /**
   * Makes this the metadata of position `at` of the same columns and `rows` instead (a reader
   * that looks at thousands of entries one after another, and keeps none of them, moves one
   * object along rather than making one per entry).
   */
  moveTo(at: number, rows: Rows, file: string): this {
    this.at = at;
    this.file = file;
    this.rows = rows;
    this.text = undefined;
    this.parsed = undefined;
    this.evidenceList = undefined;
    return this;
  }

  /** The row as text, while it has not been parsed (then undefined). */
  get unparsed(): string | undefined {
    if (this.rows) {
      this.text = this.rows.get(this.at);
      this.rows = undefined;
    }
    return this.text;
  }

  /** The row this metadata stands for. */
  get line(): string {
    return this.unparsed ?? JSON.stringify(metaRow(this.row));
  }

  /** Whether position `at` of `cols` has columns. */
  static usable(cols: Columns | undefined, at: number): cols is Columns {
    return cols !== undefined && cols.kind[at] >= 0;
  }

  private get row(): EntryMeta {
    if (!this.parsed) {
      this.parsed = metaFromRow(JSON.parse(this.unparsed!) as unknown[]);
      this.text = undefined;
    }
    return this.parsed;
  }

  // The cache holds only files whose id matches their name and section their folder.
  get id(): string {
    return this.file.slice(this.file.lastIndexOf('/') + 1, -'.json'.length);
  }
  get section(): EntryMeta['section'] {
    const end = this.file.lastIndexOf('/');
    return this.file.slice(this.file.lastIndexOf('/', end - 1) + 1, end) as EntryMeta['section'];
  }
  get kind(): EntryMeta['kind'] {
    return KINDS[this.cols.kind[this.at]];
  }
  get status(): EntryMeta['status'] {
    return STATUSES[this.cols.status[this.at]];
  }
  get confidence(): number {
    return this.cols.conf[this.at];
  }
  get scope(): string {
    return this.cols.scopes[this.cols.scope[this.at]];
  }
  get subject(): string {
    return this.cols.subjects[this.cols.subject[this.at]];
  }
  get updated_at(): string {
    return this.cols.upd[this.at];
  }
  get valid_from(): string | null {
    return this.cols.vf[this.at];
  }
  get valid_to(): string | null {
    return this.cols.vt[this.at];
  }
  get evidence(): { type: EvidenceType }[] {
    if (this.evidenceList) return this.evidenceList;
    const codes = this.cols.ev[this.at];
    // One shared list per evidence shape when there is one type (most entries).
    if (codes.length === 1) return (EVIDENCE_OF[+codes] ??= [{ type: EVIDENCE_TYPES[+codes] }]);
    return (this.evidenceList = [...codes].map((d) => ({ type: EVIDENCE_TYPES[+d] })));
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
    return this.row.created_at;
  }
  get lifecycle(): MemoryEntry['lifecycle'] {
    return this.row.lifecycle;
  }
  get dup(): string {
    return this.cols.dup[this.at];
  }
  get importance0(): number {
    return this.row.importance0;
  }

  /** A plain object with every field (for code that copies or compares metadata). */
  toJSON(): EntryMeta {
    return this.row;
  }
}

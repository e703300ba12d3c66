/**
 * Evidence that follows the code, the pure part: URIs as anchors, git diff hunks, what a change did to a cited
 * location, and fingerprints that tell a moved range from a changed one without git.
 */
import { declarationLines, splitLines, symbolExtent } from './symbols.js';

export type AnchorStatus = 'current' | 'moved' | 'changed' | 'missing';
export type CodeChange = 'moved' | 'modified' | 'deleted';

const RANK: Record<AnchorStatus, number> = { current: 0, moved: 1, changed: 2, missing: 3 };

/** The worst of some statuses (`current` for none). */
export function worstStatus(xs: Iterable<AnchorStatus>): AnchorStatus {
  let w: AnchorStatus = 'current';
  for (const x of xs) if (RANK[x] > RANK[w]) w = x;
  return w;
}

export interface Anchor {
  path: string;
  /** Cited lines, first and last (inclusive). */
  lines?: [number, number];
  symbol?: string;
  /** How the URI wrote its lines (`#L5-L7` or `:5-7`), kept when it is rewritten. */
  colon?: boolean;
}

export const SYMBOL_NAME = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/;

/** A path-form URI as an anchor; null for URLs and other schemes. */
export function parseAnchor(uri: string): Anchor | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(uri) && !/^[a-z][a-z0-9+.-]*:\d/i.test(uri)) return null;
  const [, symPath, symbol] = /^(.+?)#symbol=(.+)$/.exec(uri) ?? [];
  if (symPath && symbol) return { path: symPath, symbol };
  const [, path, l1, l2, c1, c2] = /^(.+?)(?:#L(\d+)(?:-L?(\d+))?|:(\d+)(?:-(\d+))?)$/.exec(uri) ?? [];
  if (!path) return { path: uri };
  const start = Number(l1 ?? c1);
  const end = Number(l2 ?? c2 ?? start);
  return { path, lines: [start, end], ...(c1 !== undefined ? { colon: true } : {}) };
}

export function anchorUri(a: Anchor): string {
  if (a.symbol) return `${a.path}#symbol=${a.symbol}`;
  if (!a.lines) return a.path;
  const [s, e] = a.lines;
  return a.colon ? `${a.path}:${s}${e !== s ? `-${e}` : ''}` : `${a.path}#L${s}${e !== s ? `-L${e}` : ''}`;
}

// ---------------------------------------------------------------- hunks

export interface Hunk {
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
}

/** Where lines `s..e` are after a change with these hunks (`git diff -U0`, in order); null when a hunk touches them. */
export function mapLines(hunks: readonly Hunk[], s: number, e: number): [number, number] | null {
  let delta = 0;
  for (const h of hunks) {
    if (h.oldCount === 0) {
      // An insertion after old line oldStart: inside the range when it falls between two of its lines.
      if (h.oldStart >= s && h.oldStart < e) return null;
      if (h.oldStart < s) delta += h.newCount;
    } else if (h.oldStart + h.oldCount - 1 < s) delta += h.newCount - h.oldCount;
    else if (h.oldStart <= e) return null;
  }
  return [s + delta, e + delta];
}

/** What git said happened to one file: modified, deleted, renamed (`to`, with `hunks` if edited), type changed. */
export interface FileFate {
  status: 'M' | 'D' | 'R' | 'T';
  to: string;
  /** Hunks of the change (absent: not read, or a rename without edits). */
  hunks?: Hunk[];
  similarity?: number;
  /** The blob ids before and after (after: all zeros for a working-tree file git did not hash). */
  blobs?: [string, string];
}

/** The fate of each old path in `git diff --raw -z -M --no-abbrev` output (additions and copies left out). */
export function parseRaw(out: string): Map<string, FileFate> {
  const parts = out.split('\0');
  const fates = new Map<string, FileFate>();
  for (let i = 0; i < parts.length;) {
    const head = parts[i++]!.replace(/^\n/, ''); // i < parts.length
    const [, a = '', b = '', kind, score] = /^:\d+ \d+ ([0-9a-f]+) ([0-9a-f]+) ([A-Z])(\d*)$/.exec(head) ?? [];
    if (!kind) continue;
    const from = parts[i++];
    const to = kind === 'R' || kind === 'C' ? parts[i++] : from;
    if (from === undefined || to === undefined) break; // output cut short
    if (kind === 'R') fates.set(from, { status: 'R', to, similarity: Number(score) || 0, blobs: [a, b] });
    else if (kind === 'M' || kind === 'D' || kind === 'T') fates.set(from, { status: kind, to, blobs: [a, b] });
  }
  return fates;
}

/** A path as git prints it in a patch: C-quoted when it holds unusual characters (octal escapes are bytes of its UTF-8). */
function unquote(p: string): string {
  if (!p.startsWith('"')) return p.replace(/\t$/, '');
  const esc: Record<string, string> = { n: '\n', t: '\t', a: '\x07', b: '\b', f: '\f', r: '\r', v: '\v' };
  // The escapes are ASCII, so they are decoded over the text's bytes (one latin1 character each).
  const bytes = Buffer.from(p.slice(1, p.lastIndexOf('"')), 'utf8')
    .toString('latin1')
    .replace(/\\([0-7]{3}|.)/g, (_, c: string) => (c.length === 3 ? String.fromCharCode(parseInt(c, 8)) : (esc[c] ?? c)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/** The hunks of each file of a `git diff -U0` patch, by old path. */
export function parsePatch(text: string): Map<string, Hunk[]> {
  const out = new Map<string, Hunk[]>();
  let from: string | null = null;
  let hunks: Hunk[] | null = null;
  for (const line of text.split('\n')) {
    if (line.startsWith('diff --git ')) {
      hunks = [];
      from = null;
      // `a/P b/P` when the two halves are equal (a patch without ---/+++ lines, e.g. a mode change).
      const rest = line.slice(11);
      const half = (rest.length - 1) / 2;
      if (Number.isInteger(half) && rest.slice(2, half) === rest.slice(half + 3)) from = rest.slice(2, half);
    } else if (hunks && line.startsWith('rename from ')) from = unquote(line.slice(12));
    else if (hunks && line.startsWith('--- ')) {
      const p = line.slice(4);
      if (p !== '/dev/null') from = unquote(p).replace(/^a\//, '');
    } else if (hunks && line.startsWith('@@ ')) {
      const m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
      if (m && from !== null) {
        hunks.push({
          oldStart: Number(m[1]),
          oldCount: m[2] === undefined ? 1 : Number(m[2]),
          newStart: Number(m[3]),
          newCount: m[4] === undefined ? 1 : Number(m[4]),
        });
        out.set(from, hunks);
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------- what a change did

/**
 * What a change did to the code an anchor cites (null: left alone). A symbol counts by its extent after the change,
 * as `git log -L :<name>:<file>` takes it; the texts let a range the hunks touch be found moved elsewhere unchanged.
 */
export function citedChange(a: Anchor, fate: FileFate | undefined, baseText?: string, headText?: string): { change: CodeChange; to?: string } | null {
  if (!fate) return null;
  if (fate.status === 'D') return { change: 'deleted' };
  const renamed = fate.status === 'R' && fate.to !== a.path;
  const hunks = fate.hunks ?? [];
  if (a.symbol) {
    const [at] = headText === undefined ? [] : declarationLines(headText, a.symbol, fate.to);
    if (at === undefined) return { change: 'deleted' };
    const to = renamed ? anchorUri({ ...a, path: fate.to }) : undefined;
    const [s, e] = symbolExtent(headText!, fate.to, at);
    const touched = hunks.some((h) => (h.newCount === 0 ? h.newStart >= s && h.newStart < e : h.newStart <= e && h.newStart + h.newCount - 1 >= s));
    if (touched) return { change: 'modified', ...(to ? { to } : {}) };
    return renamed ? { change: 'moved', to } : null;
  }
  if (!a.lines) {
    if (fate.status === 'R' && hunks.length === 0 && (fate.similarity ?? 100) >= 100) return renamed ? { change: 'moved', to: fate.to } : null;
    return { change: 'modified', ...(renamed ? { to: fate.to } : {}) };
  }
  const mapped =
    mapLines(hunks, a.lines[0], a.lines[1]) ?? (baseText !== undefined && headText !== undefined ? relocate(baseText, headText, a.lines[0], a.lines[1]) : null);
  if (!mapped) return { change: 'modified', ...(renamed ? { to: fate.to } : {}) };
  return !renamed && mapped[0] === a.lines[0] ? null : { change: 'moved', to: anchorUri({ ...a, path: fate.to, lines: mapped }) };
}

/** Where an anchor's code is now, from its fate since the evidence was written: the status and, when moved, the new anchor. */
export function followAnchor(a: Anchor, fate: FileFate | undefined): { status: AnchorStatus; to?: Anchor } {
  if (fate?.status === 'D') return { status: 'missing' };
  const path = fate?.status === 'R' ? fate.to : a.path;
  const lines = a.lines && fate ? mapLines(fate.hunks ?? [], a.lines[0], a.lines[1]) : a.lines;
  if (lines === null) return { status: 'changed' };
  return path === a.path && lines?.[0] === a.lines?.[0] ? { status: 'current' } : { status: 'moved', to: { ...a, path, ...(lines && { lines }) } };
}

// ---------------------------------------------------------------- fingerprints

/** FNV-1a of a line, without a trailing CR. */
function lineHash(l: string): number {
  let h = 0x811c9dc5;
  const n = l.endsWith('\r') ? l.length - 1 : l.length;
  for (let i = 0; i < n; i++) h = Math.imul(h ^ l.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

function blockHash(hs: ArrayLike<number>, from: number, n: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < from + n; i++) h = Math.imul(h ^ hs[i]!, 0x01000193) >>> 0; // callers keep from + n <= hs.length
  return h;
}

/** A fingerprint of lines `s..e` of `text` (their count, the first line's hash and the block's). */
export function fingerprint(text: string, s: number, e: number): string {
  const hs = splitLines(text)
    .slice(s - 1, e)
    .map(lineHash);
  return `${hs.length}:${(hs[0] ?? 0).toString(36)}:${blockHash(hs, 0, hs.length).toString(36)}`;
}

/** Every line (1-based) where the fingerprinted lines start in `text`. */
function matches(text: string, fp: string): number[] {
  const [n, first, block] = fp.split(':');
  const count = Number(n);
  const hs = splitLines(text).map(lineHash);
  const out: number[] = [];
  // A fingerprint of no lines (a range written end first) matches nowhere.
  if (!(count > 0)) return out;
  for (let i = 0; i + count <= hs.length; i++) if (hs[i]!.toString(36) === first && blockHash(hs, i, count).toString(36) === block) out.push(i + 1);
  return out;
}

/**
 * Where lines `s..e` of `before` are, unchanged and together, in `after`: only when they appear there exactly once and
 * hold text enough to be told apart (20 letters or digits, the threshold `git blame -M` uses).
 */
export function relocate(before: string, after: string, s: number, e: number): [number, number] | null {
  const block = splitLines(before).slice(s - 1, e);
  if (block.length !== e - s + 1 || block.join('').replace(/[^A-Za-z0-9]/g, '').length < 20) return null;
  const [at, other] = matches(after, fingerprint(before, s, e));
  return at !== undefined && other === undefined ? [at, at + e - s] : null;
}

// ---------------------------------------------------------------- status at read time

/** What the last evidence check found for one URI, kept locally so a read can tell its status from the file alone (`stamp` empty: differed from HEAD). */
export interface AnchorRecord {
  uri: string;
  status: AnchorStatus;
  path?: string;
  lines?: [number, number];
  fp?: string;
  stamp?: string;
  /** Where `--fix` would move it (as of HEAD). */
  to?: string;
  /** The entry's `confirmation` when checked: an entry updated or re-confirmed since is judged anew. */
  seen?: string;
}

/** What says someone looked at an entry again: an update (`updated_at`) or `reinforce` (`lifecycle.reviewed_at`). */
export const confirmation = (e: { updated_at?: string; lifecycle?: { reviewed_at?: string } }): string =>
  `${e.updated_at ?? ''}|${e.lifecycle?.reviewed_at ?? ''}`;

/** The status of an anchor in a file's current text (null: no file), from what the last check recorded (without one: present or missing). */
export function statusInText(a: Anchor, text: string | null, rec?: AnchorRecord): AnchorStatus {
  if (text === null) return 'missing';
  const path = rec?.path ?? a.path;
  if (a.symbol) return declarationLines(text, a.symbol, path).length === 0 ? 'missing' : path !== a.path ? 'moved' : 'current';
  if (!a.lines) return rec?.status === 'moved' ? 'moved' : 'current';
  if (rec?.status === 'changed') return 'changed';
  if (!rec?.fp) return a.lines[1] <= splitLines(text).length ? 'current' : 'missing';
  // Where the fingerprinted lines start now, nearest to where they were.
  const near = (rec.lines ?? a.lines)[0];
  const at = matches(text, rec.fp).reduce<number | null>((best, m) => (best === null || Math.abs(m - near) < Math.abs(best - near) ? m : best), null);
  return at === null ? 'changed' : at === a.lines[0] && path === a.path ? 'current' : 'moved';
}

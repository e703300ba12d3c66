/**
 * The git side of `validate-evidence`: each file URI followed from the commit that wrote it to
 * HEAD through git's renames and hunks, checked against HEAD's file (lines past its end, the
 * symbol), then against the working tree by content (the cited lines' fingerprint).
 */
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import {
  anchorUri,
  fingerprint,
  followAnchor,
  relocate,
  statusInText,
  type Anchor,
  type AnchorRecord,
  type AnchorStatus,
  type FileFate,
} from '../../core/anchors.js';
import { declarationLines, splitLines } from '../../core/symbols.js';
import { evidenceSince, fatesSince } from '../../store/code-changes.js';
import type { Engine } from '../engine.js';
import { readCited } from './evidence-status.js';

export interface AnchorItem {
  key: string;
  id: string;
  anchors: { uri: string; anchor: Anchor }[];
}

interface AnchorResult {
  /** In the working tree. */
  status: AnchorStatus;
  reason: string;
  record: AnchorRecord;
  /** Moved: the URI `--fix` writes. */
  fix?: string;
}

const lineWord = (a: Anchor): string => (a.lines![0] === a.lines![1] ? `line ${a.lines![0]}` : `lines ${a.lines![0]}-${a.lines![1]}`);

export async function checkAnchors(engine: Engine, items: AnchorItem[]): Promise<Map<string, Map<string, AnchorResult>>> {
  const git = await engine.git();
  const head = git ? await git.head() : null;
  const prefix = git ? git.repoPath(engine.ws.root).replace(/^\.$/, '') : '';
  const toRepo = (p: string): string => (prefix ? `${prefix}/${p}` : p);
  const fromRepo = (p: string): string | null => (!prefix ? p : p.startsWith(`${prefix}/`) ? p.slice(prefix.length + 1) : null);
  let since = new Map<string, Map<string, string | null>>();
  let fates = new Map<string, Map<string, FileFate>>();
  if (git && head) {
    const ids = new Map<string, Set<string>>();
    for (const it of items) for (const a of it.anchors) ids.set(it.id, (ids.get(it.id) ?? new Set()).add(a.uri));
    since = await evidenceSince(git, ids, [git.repoPath(engine.ws.memoryDir)]);
    const hunksFor = new Set(items.flatMap((it) => it.anchors.filter((a) => a.anchor.lines || a.anchor.symbol).map((a) => toRepo(a.anchor.path))));
    const commits = new Set<string>();
    for (const m of since.values()) for (const s of m.values()) if (s) commits.add(s);
    fates = await fatesSince(git, head, [...commits], (p) => hunksFor.has(p));
  }

  const followed = items.flatMap((it) =>
    it.anchors.map(({ uri, anchor }) => {
      const at = since.get(it.id)?.get(uri) ?? null;
      const fate = at ? fates.get(at)?.get(toRepo(anchor.path)) : undefined;
      const f = followAnchor(anchor, fate);
      const to = f.to ? fromRepo(f.to.path) : anchor.path;
      // Renamed out of the workspace: gone from here.
      const status: AnchorStatus = to === null ? 'missing' : f.status;
      return { key: it.key, uri, anchor, at, fate, status, target: f.to && to ? { ...f.to, path: to } : anchor };
    }),
  );
  // Lines the hunks touched may have moved unchanged: looked for in HEAD's file, read by blob id
  // (`rev:path` walks a folder of maybe thousands of files).
  const touched = followed.filter((f) => f.status === 'changed' && f.at && f.fate?.blobs);
  if (touched.length && git && head) {
    const texts = await git.readBlobs(touched.flatMap((f) => f.fate!.blobs!));
    for (const f of touched) {
      const [was, now] = f.fate!.blobs!.map((b) => texts.get(b)?.toString());
      const at = was !== undefined && now !== undefined ? relocate(was, now, f.anchor.lines![0], f.anchor.lines![1]) : null;
      const path = fromRepo(f.fate!.to);
      if (at && path !== null) Object.assign(f, { status: 'moved', target: { ...f.anchor, path, lines: at } });
    }
  }
  const wantsText = (a: Anchor): boolean => Boolean(a.lines || a.symbol);
  const headTexts = new Map<string, string>();
  if (git && head) {
    const want = [
      ...new Set(followed.filter((f) => f.at && wantsText(f.anchor) && (f.status === 'current' || f.status === 'moved')).map((f) => toRepo(f.target.path))),
    ];
    const blobOf = want.length ? await git.blobsAt(head, want) : new Map<string, string>();
    const texts = await git.readBlobs([...blobOf.values()]);
    for (const [p, b] of blobOf) if (texts.has(b)) headTexts.set(`${head}:${p}`, texts.get(b)!.toString());
  }
  const files = new Map<string, { text: string | null; stamp: string; link: boolean }>();
  /** A working-tree file's text (null: none; '': not read, a link or only its presence wanted); links are never followed. */
  const worktree = (p: string, read: boolean): { text: string | null; stamp: string; link: boolean } => {
    let w = files.get(p);
    if (!w || (read && w.text === '' && !w.link)) {
      const st = lstatSync(join(engine.ws.root, p), { throwIfNoEntry: false });
      const link = st?.isSymbolicLink() ?? false;
      const text = !st || (!link && !st.isFile()) ? null : link || !read ? '' : (readCited(engine.ws, join(engine.ws.root, p)) ?? '');
      files.set(p, (w = { text, stamp: st ? `${st.size}:${st.mtimeMs}` : '', link }));
    }
    return w;
  };

  const out = new Map<string, Map<string, AnchorResult>>();
  for (const f of followed) {
    const { anchor: a, target } = f;
    const wt = worktree(target.path, wantsText(a));
    const headText = f.at && head ? headTexts.get(`${head}:${toRepo(target.path)}`) : undefined;
    let status: AnchorStatus = f.status;
    let reason = '';
    let record: AnchorRecord;
    if (!f.at || (wantsText(a) && headText === undefined && !f.fate && wt.text !== null)) {
      // Written against the working tree, or a file HEAD lacks: nothing to follow.
      status = wt.link && wt.text !== null ? 'current' : statusInText(a, wt.text);
      const fp = a.lines && status === 'current' && wt.text ? fingerprint(wt.text, a.lines[0], a.lines[1]) : undefined;
      record = { uri: f.uri, status, ...(fp ? { fp } : {}), stamp: wt.stamp };
    } else {
      if ((status === 'current' || status === 'moved') && wantsText(a)) {
        if (headText === undefined) status = 'missing';
        else if (target.lines && target.lines[1] > splitLines(headText).length) {
          status = 'missing';
          reason = `${target.path} has ${splitLines(headText).length} lines; the evidence cites line ${target.lines[1]}`;
        } else if (a.symbol && declarationLines(headText, a.symbol, target.path).length === 0) {
          status = 'missing';
          reason = `${target.path} declares no ${a.symbol}`;
        }
      }
      const ok = status === 'current' || status === 'moved';
      // Where the code is, when not where the URI says (records stay small).
      record = {
        uri: f.uri,
        status,
        ...(target.path !== a.path ? { path: target.path } : {}),
        ...(target.lines && target.lines[0] !== a.lines?.[0] ? { lines: target.lines } : {}),
        ...(ok && target.lines && headText ? { fp: fingerprint(headText, target.lines[0], target.lines[1]) } : {}),
        ...(status === 'moved' ? { to: anchorUri(target) } : {}),
      };
      const headStatus = status;
      if (wt.text === null) status = 'missing';
      else if (!wantsText(a) || wt.link || wt.text === headText) record.stamp = wt.stamp;
      else {
        status = statusInText(a, wt.text, record);
        record.stamp = ''; // differs from HEAD: every read compares the content
      }
      if (headStatus === 'changed')
        reason = `${lineWord(a)} of ${a.path} changed since the evidence was written${f.at ? ` (in ${f.at.slice(0, 12)})` : ''}: re-check it`;
    }
    if (!reason) {
      if (status === 'missing')
        reason = a.symbol && wt.text !== null ? `${target.path} declares no ${a.symbol}` : `${target.path} does not exist in the working tree`;
      else if (status === 'changed') reason = `${lineWord(a)} of ${a.path} changed in the working tree: re-check it`;
      else if (status === 'moved') reason = `moved to ${record.to ?? anchorUri(target)} (validate-evidence --fix rewrites it)`;
      else reason = a.symbol ? `${a.symbol} is declared` : a.lines ? `${lineWord(a)} unchanged` : 'file exists';
    }
    const m = out.get(f.key) ?? new Map<string, AnchorResult>();
    m.set(f.uri, { status, reason, record, ...(record.to && record.status === 'moved' ? { fix: record.to } : {}) });
    out.set(f.key, m);
  }
  return out;
}

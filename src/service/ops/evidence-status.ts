/**
 * `meta.evidence_status` at read time, without git: the last check's record per URI against the
 * file now. The stamp the check saw keeps its status; a changed file's cited lines are looked for
 * by content; a URI unchecked (or whose entry changed since) is current when its target exists.
 */
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { confirmation, parseAnchor, statusInText, worstStatus, type AnchorStatus } from '../../core/anchors.js';
import type { StoredEntry } from '../../store/catalog.js';
import { readNoFollow } from '../../store/state-dir.js';
import { tryOr } from '../../store/fsutil.js';
import type { Workspace } from '../../store/workspace.js';
import type { Engine } from '../engine.js';

export function evidenceStatusOf(engine: Engine, se: StoredEntry): AnchorStatus {
  const recs = engine.evidenceCache.anchorsOf(se.key);
  const memo = engine.evidenceCache.statusMemo;
  // Updated or re-confirmed since the check: what it found no longer stands.
  const seen = recs && confirmation(se.entry);
  const statusOf = (uri: string): AnchorStatus | undefined => {
    const found = recs?.get(uri);
    const rec = found && found.seen === seen ? found : undefined;
    const a = parseAnchor(uri);
    if (!a) return rec?.status; // a URL: as last checked
    const abs = join(engine.ws.root, rec?.path ?? a.path);
    const st = lstatSync(abs, { throwIfNoEntry: false });
    if (!st || (!st.isFile() && !st.isSymbolicLink())) return 'missing';
    const stamp = `${st.size}:${st.mtimeMs}`;
    if (rec?.stamp && rec.stamp === stamp) return rec.status;
    // A symbolic link is not followed; a whole file needs only to be there.
    if (st.isSymbolicLink() || (!a.lines && !a.symbol)) return rec?.status === 'moved' ? 'moved' : 'current';
    const key = `${se.key}\u0000${uri}\u0000${stamp}\u0000${rec?.fp ?? ''}`;
    let s = memo.get(key);
    if (s === undefined) {
      const text = readCited(engine.ws, abs);
      s = text === undefined ? 'current' : statusInText(a, text, rec);
      memo.set(key, s);
    }
    return s;
  };
  return worstStatus(se.entry.evidence.flatMap((ev) => (ev.type === 'assumption' ? [] : (statusOf(ev.uri) ?? []))));
}

/** A cited file's text, never through a link nor from outside the workspace (a committed folder link could point anywhere). */
export const readCited = (ws: Workspace, abs: string): string | undefined => tryOr(() => readNoFollow(ws.assertInside(abs), 'utf8'), undefined);

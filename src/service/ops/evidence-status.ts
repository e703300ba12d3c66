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
  const out: AnchorStatus[] = [];
  // Updated or re-confirmed since the check: what it found no longer stands.
  const seen = recs && confirmation(se.entry);
  for (const ev of se.entry.evidence) {
    if (ev.type === 'assumption') continue;
    const found = recs?.get(ev.uri);
    const rec = found && found.seen === seen ? found : undefined;
    const a = parseAnchor(ev.uri);
    if (!a) {
      if (rec) out.push(rec.status); // a URL: as last checked
      continue;
    }
    const path = rec?.path ?? a.path;
    const abs = join(engine.ws.root, path);
    const st = lstatSync(abs, { throwIfNoEntry: false });
    if (!st || (!st.isFile() && !st.isSymbolicLink())) {
      out.push('missing');
      continue;
    }
    const stamp = `${st.size}:${st.mtimeMs}`;
    if (rec?.stamp && rec.stamp === stamp) {
      out.push(rec.status);
      continue;
    }
    // A symbolic link is not followed; a whole file needs only to be there.
    if (st.isSymbolicLink() || (!a.lines && !a.symbol)) {
      out.push(rec?.status === 'moved' ? 'moved' : 'current');
      continue;
    }
    const key = `${se.key}\u0000${ev.uri}\u0000${stamp}\u0000${rec?.fp ?? ''}`;
    let s = memo.get(key);
    if (s === undefined) {
      const text = readCited(engine.ws, abs);
      s = text === undefined ? 'current' : statusInText(a, text, rec);
      memo.set(key, s);
    }
    out.push(s);
  }
  return worstStatus(out);
}

/** A cited file's text, never through a link nor from outside the workspace (a committed folder link could point anywhere). */
export function readCited(ws: Workspace, abs: string): string | undefined {
  return tryOr(() => readNoFollow(ws.assertInside(abs), 'utf8'), undefined);
}

/**
 * `meta.evidence_status` at read time, without git: each URI's record from the last check (its
 * file's stamp then, where its lines were and their fingerprint) against the file now. A file
 * with the stamp the check saw keeps the check's status; a changed one is read and its cited
 * lines looked for by content (moved, or changed); a URI the check has not seen is current when
 * its file, lines or symbol exist, and so is one whose entry was updated or re-confirmed since the
 * check. Told once per file stamp in a process.
 */
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { confirmation, parseAnchor, statusInText, worstStatus, type AnchorStatus } from '../../core/anchors.js';
import type { StoredEntry } from '../../store/catalog.js';
import { readNoFollow } from '../../store/state-dir.js';
import type { Workspace } from '../../store/workspace.js';
import type { Engine } from '../engine.js';

/** The worst status of an entry's evidence (`current` when it has nothing checkable). */
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
      if (rec) out.push(rec.status); // a URL: as the last check found it
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

/**
 * A cited file's text, never through a link and never from outside the workspace (a committed
 * folder link could point anywhere): undefined when it cannot be read so.
 */
export function readCited(ws: Workspace, abs: string): string | undefined {
  try {
    ws.assertInside(abs);
    return readNoFollow(abs, 'utf8');
  } catch {
    return undefined;
  }
}

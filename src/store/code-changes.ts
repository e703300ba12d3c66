/**
 * What git says a change did to code: renames, deletions and the `-U0` hunks of edited files, for
 * one `git diff` (the review view) or for many commits against one (evidence written at different
 * commits, checked against HEAD); and the commit that put each evidence URI into an entry.
 */
import { confirmation, parsePatch, parseRaw, type FileFate, type Hunk } from '../core/anchors.js';
import type { GitRepo } from './git.js';
import { tryOr } from './fsutil.js';

/** Flags that keep a user's diff settings (prefixes, external tools, relative paths) out of what is parsed. */
const FLAGS = ['--no-color', '--no-ext-diff', '--no-textconv', '-M', '--src-prefix=a/', '--dst-prefix=b/', '--no-relative', '--no-abbrev'];
const LITERAL = { GIT_LITERAL_PATHSPECS: '1' };

function withHunks(fates: Map<string, FileFate>, hunks: Map<string, Hunk[]>): void {
  for (const [p, f] of fates) {
    const h = hunks.get(p);
    if (h) f.hunks = h;
  }
}

/** Paths whose hunks are wanted, with their rename targets (both sides in the pathspec keep the rename). */
function hunkPaths(fates: Map<string, FileFate>, want: (p: string) => boolean): string[] {
  const out = new Set<string>();
  for (const [p, f] of fates) {
    if ((f.status === 'M' || f.status === 'R' || f.status === 'T') && want(p)) {
      out.add(p);
      out.add(f.to);
    }
  }
  return [...out];
}

/** The fate of each path changed between the sides `git diff <sides>` compares (`A B`, `--cached A`, `A`). */
export const diffFates = async (git: GitRepo, sides: string[]): Promise<Map<string, FileFate>> =>
  parseRaw(await git.run(['diff', '--raw', '-z', ...FLAGS, ...sides]));

/** Adds the hunks of the paths `want` names to their fates (one `git diff -U0`). */
export async function addHunks(git: GitRepo, sides: string[], fates: Map<string, FileFate>, want: (p: string) => boolean): Promise<void> {
  const paths = hunkPaths(fates, want);
  if (paths.length) withHunks(fates, parsePatch(await git.run(['diff', '-U0', ...FLAGS, ...sides, '--', ...paths], '', LITERAL)));
}

/** Segments of a `diff-tree --stdin --always --format=%x01%H` output, one per input line. */
const segments = (out: string): string[] => out.split('\x01').slice(1);

/** By since-commit, the fate of each path changed from it to `head` (one `diff-tree --stdin` for names, one for hunks). */
export async function fatesSince(git: GitRepo, head: string, since: string[], want: (p: string) => boolean): Promise<Map<string, Map<string, FileFate>>> {
  const out = new Map<string, Map<string, FileFate>>();
  const list = since.filter((s) => s !== head);
  if (!list.length) return out;
  // A line "<head> <since>" diffs since → head (the second commit stands as the first's parent).
  const input = list.map((s) => `${head} ${s}\n`).join('');
  const tree = ['diff-tree', '--stdin', '--always', '-r', '--format=%x01%H', ...FLAGS];
  // --always: one segment per line of input, in order.
  segments(await git.run([...tree, '-z', '--raw'], input)).forEach((seg, i) => out.set(list[i]!, parseRaw(seg.slice(seg.indexOf('\0') + 1))));
  const paths = [...new Set([...out.values()].flatMap((f) => hunkPaths(f, want)))];
  if (paths.length)
    segments(await git.run([...tree, '-p', '-U0', '--', ...paths], input, LITERAL)).forEach((seg, i) => withHunks(out.get(list[i]!)!, parsePatch(seg)));
  return out;
}

/**
 * Per entry id and evidence URI (`items`), the commit since which it has held: the oldest of the
 * newest run of versions holding it with the same `updated_at` and `lifecycle.reviewed_at` (an
 * update or a `reinforce` says someone looked again); null when not committed yet.
 */
export async function evidenceSince(
  git: GitRepo,
  items: Map<string, Set<string>>,
  memoryPaths: string[],
  maxVersions = 64,
): Promise<Map<string, Map<string, string | null>>> {
  const log = await git.run(['log', '--topo-order', '--no-renames', '--raw', '--no-abbrev', '-z', '--format=%x01%H', '--', ...memoryPaths]).catch(() => '');
  // Per entry id, its commits newest first, with the blobs its file had there (none: removed).
  // Blobs are read by id: looking `commit:path` up walks a section folder of thousands of files.
  const versions = new Map<string, { commit: string; blobs: string[] }[]>();
  for (const seg of segments(log)) {
    const nul = seg.indexOf('\0');
    const commit = seg.slice(0, nul);
    const parts = seg.slice(nul + 1).split('\0');
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const blob = /^\n?:\d+ \d+ [0-9a-f]+ ([0-9a-f]+) /.exec(parts[i]!)?.[1]; // i + 1 < parts.length
      const id = /([^/]+)\.json$/.exec(parts[i + 1]!)?.[1];
      if (!blob || !id || !items.has(id)) continue;
      const vs = versions.get(id) ?? [];
      let last = vs[vs.length - 1];
      if (last?.commit !== commit) vs.push((last = { commit, blobs: [] }));
      if (!/^0+$/.test(blob)) last.blobs.push(blob);
      versions.set(id, vs);
    }
  }
  const result = new Map<string, Map<string, string | null>>();
  // Per entry: the URIs still held by every version read so far, and the last commit holding them.
  const pending = new Map<string, { uris: Set<string>; at: string | null; seen?: string }>();
  for (const [id, uris] of items) {
    result.set(id, new Map([...uris].map((u) => [u, null])));
    if (versions.has(id)) pending.set(id, { uris: new Set(uris), at: null });
  }
  for (let k = 0; k < maxVersions && pending.size; k++) {
    const names: string[] = [];
    for (const id of pending.keys()) names.push(...(versions.get(id)![k]?.blobs ?? []));
    // Only what each version says is kept: 10K entries' texts at once would all be held.
    const said = new Map<string, { seen: string; uris: string[] }>();
    await git.streamBlobs(names, (b, bytes) => {
      type Said = { evidence?: { uri?: string }[]; updated_at?: string; lifecycle?: { reviewed_at?: string } };
      const e = tryOr(() => JSON.parse(bytes.toString('utf8')) as Said, undefined); // none: not an entry there, nothing held
      if (e) said.set(b, { seen: confirmation(e), uris: (e.evidence ?? []).map((x) => String(x.uri)) });
    });
    for (const [id, st] of pending) {
      const v = versions.get(id)![k];
      let held = new Set<string>();
      for (const b of v?.blobs ?? []) {
        const e = said.get(b);
        if (e === undefined) continue;
        st.seen ??= e.seen;
        if (e.seen === st.seen) held = new Set(e.uris);
      }
      for (const u of [...st.uris]) {
        if (v && held.has(u)) continue;
        // Not held by this version: it came in with the one after it.
        result.get(id)!.set(u, st.at);
        st.uris.delete(u);
      }
      if (v) {
        st.at = v.commit;
        for (const u of st.uris) result.get(id)!.set(u, v.commit);
      }
      if (!v || st.uris.size === 0) pending.delete(id);
    }
  }
  return result;
}

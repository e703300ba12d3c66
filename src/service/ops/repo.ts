/**
 * The repository side: `memory init` (project files, merge driver), and `memory sync` (pull with
 * the field-level merge driver, re-validate, push).
 */
import { join } from 'node:path';
import { BusyError, ConflictError, GitError, UsageError } from '../../core/errors.js';
import type { BadFile } from '../../store/catalog.js';
import { MERGE_DRIVER, gitAttributesText, mergeDriverCommand } from '../../store/entries.js';
import type { ServiceContext } from '../context.js';
import { withWrite } from '../transaction.js';

/** `memory init <project>`: idempotent; creates and commits config.yaml when new. */
export async function init(
  ctx: ServiceContext,
  project: string,
): Promise<{ project: string; created: boolean; commit: string | null; path: string; merge_driver: boolean }> {
  ctx.ws.projectDir(project); // validates the name and the path
  const mergeDriver = await registerMergeDriver(ctx);
  const agent = await ctx.agent();
  const { value: created, commit } = await withWrite(ctx, { project, agent, operation: 'init' }, (tx) => {
    const created = !ctx.ws.isInitialized(project);
    tx.ensureProject();
    const attrs = join(ctx.ws.memoryDir, '.gitattributes');
    const text = mergeDriver ? gitAttributesText(attrs) : null;
    if (text !== null) tx.putFile(attrs, text);
    tx.change({ op: 'init', id: project }, created ? { time: tx.nowIso, op: 'init', project, agent } : false);
    return created;
  });
  return { project, created, commit, path: ctx.ws.rel(ctx.ws.projectDir(project)), merge_driver: mergeDriver };
}

/**
 * Registers the memory merge driver in the repository's local git config (a fresh clone needs
 * this once: `memory init` does it, and so does any write in a repository whose memory asks for
 * it). Returns false outside git.
 */
export async function registerMergeDriver(ctx: ServiceContext): Promise<boolean> {
  const git = await ctx.git();
  if (!git) return false;
  await git.ensureMergeDriver(MERGE_DRIVER, mergeDriverCommand(ctx.env));
  return true;
}

/**
 * `memory sync`: pull (memory files merge through the driver), re-validate what arrived, push.
 * Refused while a merge, rebase, cherry-pick or bisect of the user's is in progress or HEAD is
 * detached: sync never finishes or aborts work it did not start. A merge of its own that git
 * cannot finish is aborted, so nothing is left half-merged. A push that loses a race pulls and
 * tries again.
 */
export async function sync(
  ctx: ServiceContext,
  opts: { remote?: string; branch?: string; push?: boolean } = {},
): Promise<{ pulled: boolean; pushed: boolean; head: string | null; bad: BadFile[]; attempts: number }> {
  const git = await ctx.git();
  if (!git) throw new UsageError(`${ctx.ws.root} is not a git repository: there is nothing to sync`);
  const blocked = git.writeBlocker();
  if (blocked) throw new ConflictError(`refusing to sync: ${blocked}; sync leaves your own git work alone`);
  await registerMergeDriver(ctx);
  const remote = opts.remote ?? 'origin';
  const branch = opts.branch ?? (await git.run(['rev-parse', '--abbrev-ref', 'HEAD'])).trim();
  for (let attempt = 1; attempt <= 5; attempt++) {
    let pulled = false;
    try {
      await git.run(['fetch', '--quiet', remote, branch]);
      const behind = (await git.run(['rev-list', '--count', `HEAD..${remote}/${branch}`]).catch(() => '0')).trim();
      if (behind !== '0') {
        await git.run(['merge', '--no-edit', '--quiet', `${remote}/${branch}`]);
        pulled = true;
      }
    } catch (err) {
      // Only the merge this call started can be in progress here (sync refuses to start in one).
      const inMerge = await git.run(['rev-parse', '-q', '--verify', 'MERGE_HEAD']).then(
        () => true,
        () => false,
      );
      if (inMerge) await git.run(['merge', '--abort']).catch(() => undefined);
      const conflicted = String((err as Error).message)
        .split('\n')
        .filter((l) => /CONFLICT|error:|fatal:/.test(l))
        .slice(0, 5)
        .join('; ');
      throw new ConflictError(
        `sync stopped: git could not merge ${remote}/${branch} (${conflicted || (err as Error).message.trim()}); nothing was merged, resolve it with git and run sync again`,
      );
    }
    const snap = ctx.snapshot();
    if (opts.push === false) return { pulled, pushed: false, head: await git.head(), bad: snap.bad, attempts: attempt };
    try {
      await git.run(['push', '--quiet', remote, `HEAD:${branch}`]);
      return { pulled, pushed: true, head: await git.head(), bad: snap.bad, attempts: attempt };
    } catch (err) {
      if (!/rejected|fetch first|non-fast-forward/i.test(String((err as Error).message)))
        throw new GitError(`push to ${remote} failed: ${String((err as Error).message).trim()}`);
      await new Promise((r) => setTimeout(r, 50 * attempt + Math.random() * 100));
    }
  }
  throw new BusyError(`sync gave up after 5 attempts: ${remote}/${branch} kept moving`);
}

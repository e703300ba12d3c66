/** The repository side: `memory init`, `memory remove-project`, `memory sync`. */
import { existsSync, readdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { BusyError, ConflictError, GitError, NotFoundError, UsageError } from '../../core/errors.js';
import { entryPath } from '../../store/catalog.js';
import type { GitRepo } from '../../store/git.js';
import { writeBlocker } from '../../store/git-state.js';
import { ensureDrivers } from '../../store/entries.js';
import { tryOr } from '../../store/fsutil.js';
import type { Engine } from '../engine.js';
import type { Caller } from '../caller.js';
import { withWrite } from '../transaction.js';

export async function init(engine: Engine, caller: Caller, project: string) {
  engine.ws.projectDir(project); // validates the name
  const mergeDriver = await registerMergeDriver(engine, caller);
  const { value: created, commit } = await withWrite(engine, caller, { project }, (tx) => {
    const created = !engine.ws.isInitialized(project);
    tx.ensureProject();
    tx.change({ op: 'init', id: project }, created ? { time: tx.nowIso, op: 'init', project, agent: tx.agent } : false);
    return created;
  });
  return { project, created, commit, path: engine.ws.rel(engine.ws.projectDir(project)), merge_driver: mergeDriver };
}

/**
 * `memory remove-project <project>`: a project without entries (entries are never deleted), with
 * its ai-context file, in one commit. Only config.yaml and empty folders are accounted for: any
 * other file (an unreadable entry, a link, a file it does not know) stops it, named.
 */
export async function removeProject(engine: Engine, caller: Caller, project: string): Promise<{ project: string; removed: string[]; commit: string | null }> {
  const dir = engine.ws.projectDir(project);
  if (!existsSync(dir)) throw new NotFoundError(`project ${project} does not exist under ai-memory/`);
  const snap = engine.snapshot(caller.warn);
  const held = snap.entries.filter((se) => se.project === project);
  if (held.length)
    throw new ConflictError(
      `project ${project} holds ${held.length} entr${held.length === 1 ? 'y' : 'ies'} (${held
        .slice(0, 3)
        .map((se) => se.meta.id)
        .join(', ')}${held.length > 3 ? ', ...' : ''}); entries are never deleted: deprecate them, or keep the project`,
    );
  const config = engine.ws.configPath(project);
  const files: string[] = [];
  const unknown: string[] = [];
  const dirs: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const p = join(e.parentPath, e.name);
    (e.isDirectory() ? dirs : p === config && e.isFile() ? files : unknown).push(p);
  }
  if (unknown.length) {
    const bad = new Map(snap.bad.map((b) => [b.file, b.problems[0]?.message] as const));
    const why = (rel: string): string => {
      if (bad.has(rel)) return `cannot be read as an entry (${bad.get(rel) ?? 'unreadable'}); \`memory doctor\` says more`;
      return entryPath(rel) ? 'is an entry file that cannot be read' : 'is not a file bass-agents knows';
    };
    throw new ConflictError(
      `project ${project} holds ${unknown.length} file${unknown.length === 1 ? '' : 's'} remove-project cannot account for; nothing was removed`,
      [
        {
          path: engine.ws.rel(dir),
          message: `holds ${unknown.length} file${unknown.length === 1 ? '' : 's'} that remove-project cannot account for (below): nothing was removed; fix or move them by hand`,
        },
        ...unknown.map((f) => ({ path: engine.ws.rel(f), message: why(engine.ws.rel(f)) })),
      ],
    );
  }
  const context = join(engine.ws.contextDir, `${project}.md`);
  if (existsSync(context)) files.push(context);
  const { commit } = await withWrite(engine, caller, { project }, (tx) => {
    for (const f of files) tx.remove(f);
    tx.change({ op: 'remove-project', id: project });
  });
  // Folders left empty go too, deepest first (a folder's path is longer than its parent's).
  for (const d of [...dirs.sort((x, y) => y.length - x.length), dir]) tryOr(() => rmdirSync(d), undefined); // fails when not empty
  return { project, removed: files.map((f) => engine.ws.rel(f)), commit };
}

/** Registers the merge driver in the local git config (a fresh clone needs it once); false outside git. */
export async function registerMergeDriver(engine: Engine, caller: Caller): Promise<boolean> {
  const git = await engine.git();
  if (!git) return false;
  await ensureDrivers(git, engine.ws.root, caller.env);
  return true;
}

/**
 * `memory sync`: merge the upstream's memory in, re-validate, and with `push` push the branch only
 * when every unpushed commit is a memory commit (else they are named; `forcePushBranch` pushes
 * anyway). Refused mid-merge/rebase, detached or with memory staged: it never finishes or aborts
 * work it did not start; its own merge that git cannot finish is aborted. A lost push race retries.
 */
export async function sync(engine: Engine, caller: Caller, opts: { remote?: string; branch?: string; push?: boolean; forcePushBranch?: boolean } = {}) {
  const git = await engine.git();
  if (!git) throw new UsageError(`${engine.ws.root} is not a git repository: there is nothing to sync`);
  const blocked = writeBlocker(git.gitDir);
  if (blocked) throw new ConflictError(`refusing to sync: ${blocked}; sync leaves your own git work alone`);
  const memoryPrefixes = [engine.ws.memoryDir, engine.ws.contextDir].map((d) => `${git.repoPath(d)}/`);
  const isMemory = (path: string): boolean => memoryPrefixes.some((p) => path.startsWith(p));
  const stagedMemory = (await git.run(['diff', '--cached', '--name-only', '-z'])).split('\0').filter(isMemory);
  if (stagedMemory.length) throw new ConflictError(`refusing to sync: memory files are staged (${stagedMemory.join(', ')}); commit or unstage them first`);
  await registerMergeDriver(engine, caller);
  const upstream = (await git.run(['rev-parse', '--abbrev-ref', '--symbolic-full-name', '@{u}']).catch(() => '')).trim();
  const remote = opts.remote ?? (upstream.includes('/') ? upstream.slice(0, upstream.indexOf('/')) : 'origin');
  const branch =
    opts.branch ??
    (upstream.includes('/') && !opts.remote ? upstream.slice(upstream.indexOf('/') + 1) : (await git.run(['rev-parse', '--abbrev-ref', 'HEAD'])).trim());
  for (let attempt = 1; attempt <= 5; attempt++) {
    let pulled = false;
    try {
      await git.run(['fetch', '--quiet', remote, branch]);
      const behind = (await git.run(['rev-list', '--count', `HEAD..${remote}/${branch}`]).catch(() => '0')).trim();
      if (behind !== '0') {
        await git.run(['merge', '--no-edit', '--quiet', `${remote}/${branch}`]);
        if (writeBlocker(git.gitDir)) throw new Error('the merge did not finish');
        pulled = true;
      }
    } catch (err) {
      // Only this call's merge can be in progress here (sync refuses to start in one); none: git refuses.
      await git.run(['merge', '--abort']).catch(() => undefined);
      const said = String((err as Error).message)
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !/^(hint:|Aborting|Please commit|Merge with strategy)/.test(l));
      throw new ConflictError(
        `sync stopped: git could not merge ${remote}/${branch} (${said.join('; ') || 'no reason given'}); nothing was merged, resolve it with git and run sync again`,
      );
    }
    const snap = engine.snapshot(caller.warn);
    // `foreign`, with --push: the commits (not memory commits) that kept the branch from being pushed.
    const done = async (pushed: boolean, foreign?: { commit: string; subject: string }[]) => ({
      pulled,
      pushed,
      head: await git.head(),
      bad: snap.bad,
      attempts: attempt,
      ...(foreign && { not_pushed_because: foreign }),
    });
    if (!opts.push) return done(false);
    const foreign = await foreignCommits(git, `${remote}/${branch}`, isMemory);
    if (foreign.length && !opts.forcePushBranch) return done(false, foreign);
    try {
      await git.run(['push', '--quiet', remote, `HEAD:${branch}`]);
      return done(true);
    } catch (err) {
      if (!/rejected|fetch first|non-fast-forward/i.test(String((err as Error).message)))
        throw new GitError(`push to ${remote} failed: ${String((err as Error).message).trim()}`);
      await new Promise((r) => setTimeout(r, 50 * attempt + Math.random() * 100));
    }
  }
  throw new BusyError(`sync gave up after 5 attempts: the remote branch kept moving`);
}

/** Commits a push of HEAD to `upstream` would carry that change more than memory. */
async function foreignCommits(git: GitRepo, upstream: string, isMemory: (path: string) => boolean) {
  const range = await git.run(['rev-parse', '-q', '--verify', upstream]).then(
    () => `${upstream}..HEAD`,
    () => 'HEAD',
  );
  const out = await git.run(['log', '--no-merges', '--format=%x1e%H%x1f%s', '--name-only', range]);
  return out.split('\x1e').flatMap((rec) => {
    const [head, ...paths] = rec.split('\n').filter(Boolean);
    const [commit = '', subject = ''] = (head ?? '').split('\x1f');
    return head && paths.some((p) => !isMemory(p)) ? [{ commit, subject }] : [];
  });
}

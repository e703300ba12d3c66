/**
 * Git, through simple-git (and `child_process` where git reads stdin, which simple-git cannot
 * feed). Memory commits are made with plumbing: `fast-import` builds the commit from our files on
 * top of HEAD, `update-ref` moves HEAD with the old commit as a compare-and-swap (see
 * commitPaths). The user's own index, staged changes and working tree are never part of the
 * commit; afterwards the real index is updated for exactly our paths (to the committed blobs), so
 * `git status` shows them clean and nothing else moves.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { SimpleGit, simpleGit as SimpleGitFactory } from 'simple-git';
import { parseCommitTrailers } from '../core/entry.js';
import { GitError } from '../core/errors.js';

/** The process environment without GIT_* keys (simple-git's environment guard refuses them). */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^git_/i.test(k) && !/^(EDITOR|PAGER|SSH_ASKPASS|PREFIX)$/i.test(k)) out[k] = v;
  }
  return { ...out, ...extra };
}

/** A file's bytes, or null when it does not exist. */
function readOrNull(abs: string): Buffer | null {
  try {
    return readFileSync(abs);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** A path as fast-import reads it: as is to the end of the line, or C-quoted when it has a quote, backslash or newline. */
function fiPath(path: string): string {
  return /["\\\n]/.test(path) ? `"${path.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"` : path;
}

/** The id git gives a blob with these bytes (no filters: fast-import stores bytes as given). */
function blobId(data: Buffer, algo: 'sha1' | 'sha256'): string {
  return createHash(algo).update(`blob ${data.length}\0`).update(data).digest('hex');
}

export interface HistoryVersion {
  commit: string;
  date: string;
  author: string;
  subject: string;
  /** The file at that commit; null where the commit removed it. */
  content: string | null;
}

export class GitRepo {
  readonly toplevel: string;
  readonly gitDir: string;
  private git: SimpleGit;
  private simpleGit: typeof SimpleGitFactory;
  private ident: { name: string; email: string } | undefined;

  private constructor(toplevel: string, gitDir: string, factory: typeof SimpleGitFactory) {
    this.toplevel = toplevel;
    this.gitDir = gitDir;
    this.simpleGit = factory;
    this.git = factory({ baseDir: toplevel });
  }

  /** The repository holding `dir`, or null when `dir` is not inside a git work tree. */
  static async open(dir: string): Promise<GitRepo | null> {
    // Loaded on first use: read-only commands never pay for it at start-up.
    const { simpleGit } = await import('simple-git');
    try {
      const out = await simpleGit({ baseDir: dir }).raw(['rev-parse', '--show-toplevel', '--absolute-git-dir']);
      const [top, gitDir] = out.trim().split('\n');
      if (!top || !gitDir) return null;
      return new GitRepo(top, gitDir, simpleGit);
    } catch {
      return null;
    }
  }

  /** Path relative to the repository top level, "/"-separated. */
  repoPath(abs: string): string {
    return relative(this.toplevel, abs).split(sep).join('/');
  }

  async head(): Promise<string | null> {
    try {
      return (await this.git.raw(['rev-parse', '-q', '--verify', 'HEAD^{commit}'])).trim() || null;
    } catch {
      return null;
    }
  }

  /** `user.name` and `user.email` from git config (one git call, remembered). */
  private async configIdentity(): Promise<{ name: string; email: string }> {
    if (this.ident) return this.ident;
    let out = '';
    try {
      out = await this.git.raw(['config', '--get-regexp', '^user\\.(name|email)$']);
    } catch {
      /* neither is set: git exits 1 */
    }
    const ident = { name: '', email: '' };
    for (const line of out.split('\n')) {
      const m = /^user\.(name|email) (.*)$/.exec(line);
      if (m) ident[m[1] as 'name' | 'email'] = m[2]!.trim(); // the last one wins, as in git
    }
    this.ident = ident;
    return ident;
  }

  /** `user.name` from git config, or null. */
  async userName(): Promise<string | null> {
    return (await this.configIdentity()).name || null;
  }

  /**
   * Commits exactly `absPaths` (files present are added, missing ones removed) on top of HEAD.
   * Returns the new commit, or null when nothing changed. Retries when HEAD moved underneath.
   *
   * Three git processes per commit (plus the user's index update): `cat-file --batch-check` says
   * what HEAD holds at those paths; `fast-import` writes the blobs, the trees along those paths
   * and the commit, onto a private ref; `update-ref --stdin` moves HEAD from the old commit to the
   * new one (a compare-and-swap) and drops the private ref, in one transaction. No index of the
   * whole tree is read or written: at 10K files the read-tree/update-index/write-tree/commit-tree
   * sequence cost several times more.
   */
  async commitPaths(absPaths: string[], message: string, agent: string): Promise<string | null> {
    const byPath = new Map(absPaths.map((p) => [this.repoPath(p), p]));
    const paths = [...byPath.keys()].sort();
    if (paths.length === 0) return null;
    const identity = await this.configIdentity();
    const name = identity.name || agent.replace(/[<>\n]/g, '') || 'bass-agents';
    const email = identity.email || 'bass-agents@localhost';
    for (let attempt = 0; attempt < 5; attempt++) {
      const files = paths.map((p) => ({ path: p, data: readOrNull(byPath.get(p)!) }));
      // HEAD, and the blob HEAD holds at each path (or "missing").
      const check = (await this.gitStdin(['cat-file', '--batch-check'], ['HEAD', ...paths.map((p) => `HEAD:${p}`)].join('\n') + '\n')).split('\n');
      const headLine = /^([0-9a-f]{40,64}) commit /.exec(check[0] ?? '');
      const head = headLine ? headLine[1]! : null;
      if (head) {
        const algo = head.length === 64 ? 'sha256' : 'sha1';
        const unchanged = files.every((f, i) => {
          const held = /^([0-9a-f]{40,64}) blob /.exec(check[i + 1] ?? '')?.[1] ?? null;
          return f.data === null ? held === null : held === blobId(f.data, algo);
        });
        if (unchanged) return null;
      }
      const ref = `refs/bass-agents/commit-${process.pid}-${randomBytes(4).toString('hex')}`;
      const marks = join(this.gitDir, `bass-agents-marks-${process.pid}-${randomBytes(4).toString('hex')}`);
      let refGone = false;
      try {
        const chunks: Buffer[] = [];
        files.forEach((f, i) => {
          if (f.data !== null) chunks.push(Buffer.from(`blob\nmark :${i + 1}\ndata ${f.data.length}\n`), f.data, Buffer.from('\n'));
        });
        const msg = Buffer.from(message.trimEnd());
        chunks.push(Buffer.from(`commit ${ref}\nmark :${files.length + 1}\ncommitter ${name} <${email}> now\ndata ${msg.length}\n`), msg, Buffer.from('\n'));
        if (head) chunks.push(Buffer.from(`from ${head}\n`));
        files.forEach((f, i) => chunks.push(Buffer.from(f.data === null ? `D ${fiPath(f.path)}\n` : `M 100644 :${i + 1} ${fiPath(f.path)}\n`)));
        chunks.push(Buffer.from('\ndone\n'));
        await this.gitStdin(['fast-import', '--quiet', '--done', '--date-format=now', `--export-marks=${marks}`], Buffer.concat(chunks));
        const marked = new Map<string, string>();
        for (const line of readFileSync(marks, 'utf8').split('\n')) {
          const m = /^:(\d+) ([0-9a-f]+)$/.exec(line);
          if (m) marked.set(m[1]!, m[2]!);
        }
        const commit = marked.get(String(files.length + 1));
        if (!commit) throw new GitError('git commit of memory failed: fast-import reported no commit');
        try {
          await this.gitStdin(['update-ref', '-m', `bass-agents: ${message.split('\n')[0]}`, '--stdin'], `${head ? `update HEAD ${commit} ${head}` : `create HEAD ${commit}`}\ndelete ${ref} ${commit}\n`);
          refGone = true;
        } catch (err) {
          if (attempt < 4 && /cannot lock ref|but expected|is at|unable to resolve/i.test(String((err as Error).message ?? err))) continue; // HEAD moved: redo on the new HEAD.
          throw err;
        }
        const present = new Map<string, string>();
        files.forEach((f, i) => {
          const blob = marked.get(String(i + 1));
          if (f.data !== null && blob) present.set(f.path, `100644,${blob},${f.path}`);
        });
        await this.syncRealIndex(paths, present);
        return commit;
      } catch (err) {
        if (err instanceof GitError) throw err;
        throw new GitError(`git commit of memory failed: ${String((err as Error).message ?? err).trim()}`);
      } finally {
        rmSync(marks, { force: true });
        // The private ref outlives a failed attempt only: drop it (a no-op when fast-import never made it).
        if (!refGone) await this.gitStdin(['update-ref', '--stdin'], `delete ${ref}\n`).catch(() => undefined);
      }
    }
    throw new GitError('git commit of memory failed: HEAD kept moving while committing');
  }

  /** Runs git with `input` on stdin (simple-git cannot feed stdin); resolves with stdout, rejects with stderr. */
  private async gitStdin(args: string[], input: string | Buffer): Promise<string> {
    const { spawn } = await import('node:child_process'); // not at start-up: read-only commands never spawn
    return new Promise((resolve, reject) => {
      const child = spawn('git', args, { cwd: this.toplevel, env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.on('data', (d: Buffer) => err.push(d));
      child.on('error', reject);
      child.on('close', (code) => {
        if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
        else reject(new Error(Buffer.concat(err).toString('utf8').trim() || `git ${args[0]} exited with ${code}`));
      });
      child.stdin.on('error', () => undefined); // git exiting early is reported through close
      child.stdin.end(input);
    });
  }

  /** Points the user's index at the committed blobs for our paths only (retrying while git holds index.lock). */
  private async syncRealIndex(paths: string[], present: Map<string, string>): Promise<void> {
    const cacheArgs = ['update-index', '--add', ...paths.filter((p) => present.has(p)).flatMap((p) => ['--cacheinfo', present.get(p)!])];
    const removed = paths.filter((p) => !present.has(p));
    for (let attempt = 0; ; attempt++) {
      try {
        if (cacheArgs.length > 2) await this.git.raw(cacheArgs);
        if (removed.length) await this.git.raw(['update-index', '--force-remove', '--', ...removed]);
        return;
      } catch (err) {
        if (attempt >= 20 || !/index\.lock/.test(String(err))) {
          process.emitWarning(`bass-agents: the commit was made, but updating the git index for memory paths failed: ${String(err)}`);
          return;
        }
        await new Promise((r) => setTimeout(r, 25 * (attempt + 1)));
      }
    }
  }

  /** Every committed version of one file, newest first (002 Req 12.5). */
  async history(absPath: string): Promise<HistoryVersion[]> {
    const p = this.repoPath(absPath);
    let log: string;
    try {
      log = await this.git.raw(['log', '--format=%H%x1f%aI%x1f%an%x1f%s%x1e', '--', p]);
    } catch {
      return [];
    }
    const versions: HistoryVersion[] = [];
    for (const rec of log.split('\x1e')) {
      const [commit, date, author, subject] = rec.trim().split('\x1f');
      if (!commit || !date) continue;
      let content: string | null = null;
      try {
        content = await this.git.raw(['show', `${commit}:${p}`]);
      } catch {
        content = null;
      }
      versions.push({ commit, date, author: author ?? '', subject: subject ?? '', content });
    }
    return versions;
  }

  /**
   * The last committed content of a file matching `pathspec` (a glob relative to the repository)
   * that is gone from HEAD: its path and bytes, from the parent of the commit that deleted it.
   */
  async lastDeleted(pathspec: string): Promise<{ path: string; content: string } | null> {
    let out: string;
    try {
      out = await this.git.raw(['log', '--diff-filter=D', '--format=%x1e%H', '--name-only', '--', pathspec]);
    } catch {
      return null;
    }
    for (const rec of out.split('\x1e')) {
      const [commit, ...files] = rec.trim().split('\n').filter(Boolean);
      if (!commit || files.length === 0) continue;
      try {
        return { path: files[0]!, content: await this.git.raw(['show', `${commit}^:${files[0]!}`]) };
      } catch {
        continue;
      }
    }
    return null;
  }

  /** Memory commits touching `paths`, newest first, with their Memory-Op trailers (optionally one op). */
  async memoryLog(paths: string[], limit: number, op?: string): Promise<{ commit: string; date: string; agent: string | null; subject: string; changes: { id: string; op: string }[] }[]> {
    let out: string;
    try {
      out = await this.git.raw(['log', '--format=%x1e%H%x1f%aI%x1f%s%x1f%b', '--', ...paths]);
    } catch {
      return [];
    }
    const rows: { commit: string; date: string; agent: string | null; subject: string; changes: { id: string; op: string }[] }[] = [];
    for (const rec of out.split('\x1e')) {
      const [commit, date, subject, body] = rec.split('\x1f');
      if (!commit?.trim() || !date) continue;
      const t = parseCommitTrailers(body ?? '');
      const changes = op ? t.changes.filter((c) => c.op === op) : t.changes;
      if (op && changes.length === 0) continue;
      rows.push({ commit: commit.trim(), date, agent: t.agent ?? null, subject: subject ?? '', changes });
      if (rows.length >= limit) break;
    }
    return rows;
  }

  /** URLs of the repository's remotes. */
  async remoteUrls(): Promise<string[]> {
    try {
      const out = await this.git.raw(['remote', '-v']);
      return [...new Set(out.split('\n').map((l) => l.split(/\s+/)[1]).filter((u): u is string => Boolean(u)))];
    } catch {
      return [];
    }
  }

  /** Whether `<commit>:<path>` exists here: true, false, or null when the commit itself is unknown (not fetched). */
  async hasPathAt(commit: string, path: string): Promise<boolean | null> {
    try {
      await this.git.raw(['cat-file', '-e', `${commit}^{commit}`]);
    } catch {
      return null;
    }
    try {
      await this.git.raw(['cat-file', '-e', `${commit}:${path}`]);
      return true;
    } catch {
      return false;
    }
  }

  /** The repository-local git config value of `key`, or null. */
  async config(key: string): Promise<string | null> {
    try {
      return (await this.git.raw(['config', '--local', '--get', key])).trim() || null;
    } catch {
      return null;
    }
  }

  /**
   * Sets a repository-local config value. simple-git refuses to write merge-driver commands unless
   * asked: only this one call gets that permission (the value is our own command line).
   */
  async setConfig(key: string, value: string): Promise<void> {
    const g = key.startsWith('merge.') ? this.simpleGit({ baseDir: this.toplevel, unsafe: { allowUnsafeMergeDriver: true } } as Parameters<typeof SimpleGitFactory>[0]) : this.git;
    await g.raw(['config', '--local', key, value]);
  }

  /** Runs a git command in the repository; resolves with stdout, rejects with git's message. */
  async run(args: string[]): Promise<string> {
    return this.git.raw(args);
  }

  /** The blob id of `path` at `rev`, or null when it is not there. */
  async blobAt(rev: string, path: string): Promise<string | null> {
    try {
      return (await this.git.raw(['rev-parse', '--verify', '-q', `${rev}:${path}`])).trim() || null;
    } catch {
      return null;
    }
  }

  /** The blob id a file's current content would have. */
  async hashFile(abs: string): Promise<string> {
    return (await this.git.raw(['hash-object', '--', abs])).trim();
  }

  /** Points the user's index entry for `path` at `blob` (or removes it when null). */
  async setIndexEntry(path: string, blob: string | null): Promise<void> {
    if (blob) await this.git.raw(['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`]);
    else await this.git.raw(['update-index', '--force-remove', '--', path]);
  }

  /** The content of `path` at `rev`. */
  async show(rev: string, path: string): Promise<string> {
    return this.git.raw(['show', `${rev}:${path}`]);
  }
}

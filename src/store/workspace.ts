/**
 * The workspace on disk: every path this tool reads or writes is built here from validated names,
 * and checked to stay inside the workspace root, also after following symlinks.
 */
import { existsSync, lstatSync, readdirSync, realpathSync as realpathJs } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { NotFoundError, UnsafePathError, UsageError } from '../core/errors.js';
import { ID_PATTERN, SECTIONS, type Section } from '../core/constants.js';
import { showable, shown } from '../core/redact.js';
import { LEGACY_PROJECT_PATTERN, RESERVED_PROJECT_NAMES, newProjectProblem } from '../core/names.js';
import { MEMORY_DIR } from './root.js';
import { checkStateFolder, readNoFollow, stateDirOf } from './state-dir.js';

export { findRoot, MEMORY_DIR } from './root.js';

// One realpath(3) call, not a JS walk with an lstat per path component (writes check every path).
const realpathSync = realpathJs.native;

export const CONTEXT_DIR = 'ai-context';
export const GLOBAL_PROJECT = 'global';
/** A plain folder name, and for a new project a slug (`newProjectProblem`); a folder already there (`exists`) keeps working whatever its case. */
export function checkProjectName(name: string, exists?: (name: string) => boolean): void {
  if (typeof name !== 'string' || name === '') throw new UsageError('project name is required');
  if (name.includes('\0') || name.includes('/') || name.includes('\\') || name === '.' || name === '..' || isAbsolute(name)) {
    throw new UnsafePathError(`project name ${shown(name)} must be a plain folder name (no "/", "\\", ".." or NUL)`, 'project');
  }
  if (LEGACY_PROJECT_PATTERN.test(name) && !RESERVED_PROJECT_NAMES.has(name) && exists?.(name)) return;
  const problem = newProjectProblem(name);
  if (problem) throw new UsageError(`${showable(name) ? `project name ${JSON.stringify(name)}` : 'the project name given'} ${problem}`);
}

/** A ULID, or an id an earlier version imported; anything else is refused without being repeated. */
export function checkId(id: string, field = 'id'): void {
  if (typeof id === 'string' && ID_PATTERN.test(id)) return;
  if (typeof id === 'string' && (id.includes('/') || id.includes('\\') || id.includes('..') || id.includes('\0'))) {
    throw new UnsafePathError('is not a memory id (it looks like a path)', field);
  }
  throw new UsageError(`${field} is not a memory id (a ULID such as 01J9ZQ4V6M3XK8T2R5N7B1C0DE)`);
}

/** The refusal of a committed path that is a link (never followed out of the repository) or not what it must be. */
export function linkRefused(rel: string, what: string, notLink = false): UnsafePathError {
  return new UnsafePathError(
    notLink
      ? `${rel} is not a ${what}; bass-agents will not read it`
      : `${rel} is a symbolic link; bass-agents does not follow links in ${MEMORY_DIR}/ (one could point out of the repository): replace it with the ${what} itself`,
    rel,
  );
}

export class Workspace {
  readonly root: string;
  readonly memoryDir: string;
  readonly contextDir: string;
  /** Local state (state-dir.ts): never in the work tree. */
  readonly state: ReturnType<typeof stateDirOf>;
  /** `state.dir`: read or write in it through `local()`. */
  readonly localDir: string;
  private realRoot: string;

  constructor(root: string, env: NodeJS.ProcessEnv = process.env) {
    this.root = resolve(root);
    this.memoryDir = join(this.root, MEMORY_DIR);
    this.contextDir = join(this.root, CONTEXT_DIR);
    this.realRoot = realpathSync(this.root);
    this.state = stateDirOf(this.root, env);
    this.localDir = this.state.dir;
    if (lstatSync(this.memoryDir, { throwIfNoEntry: false })?.isSymbolicLink()) {
      throw new UnsafePathError(
        `${MEMORY_DIR} is a symbolic link; bass-agents reads and writes memory only in a real ${MEMORY_DIR}/ folder of the repository: replace it with the folder`,
        MEMORY_DIR,
      );
    }
  }

  rel(abs: string): string {
    return relative(this.root, abs).split(sep).join('/');
  }

  /** A path as messages show it: relative to the root when inside it (local state usually is not). */
  shownPath(abs: string): string {
    const r = this.rel(abs);
    return r.startsWith('..') || isAbsolute(r) ? abs : r;
  }

  /** Refuses a path whose nearest existing ancestor resolves (through symlinks) outside the root. */
  assertInside(abs: string, what = 'path'): string {
    const full = resolve(abs);
    const lexical = relative(this.root, full);
    if (lexical.startsWith('..') || isAbsolute(lexical)) {
      throw new UnsafePathError(`${what} ${full} is outside the workspace root ${this.root}`, what);
    }
    const { probe, real } = this.realOf(full);
    if (real.startsWith('..') || isAbsolute(real)) {
      throw new UnsafePathError(`${what} ${this.rel(probe)} resolves outside the workspace root (symlink to ${realpathSync(probe)})`, what);
    }
    return full;
  }

  private realOf(full: string): { probe: string; real: string } {
    let probe = full;
    while (!existsSync(probe) && dirname(probe) !== probe) probe = dirname(probe);
    return { probe, real: relative(this.realRoot, realpathSync(probe)) };
  }

  /** assertMemoryPath for many files: the symlink checks once per folder. */
  assertMemoryPaths(files: string[]): void {
    const checkedDirs = new Map<string, string>();
    for (const abs of files) {
      const full = resolve(abs);
      const dir = dirname(full);
      const top = checkedDirs.get(dir);
      const lexical = this.rel(full);
      const [first = ''] = lexical.split('/');
      // (A file that is itself a symlink gets the whole check: it may point anywhere.)
      if (top !== undefined && first === top && lexical !== top && !lexical.startsWith('..') && !lstatSync(full, { throwIfNoEntry: false })?.isSymbolicLink())
        continue;
      this.assertMemoryPath(full);
      checkedDirs.set(dir, first);
    }
  }

  /** Refuses a path not under `ai-memory/` or `ai-context/`, lexically or through symlinks: every file a write touches passes this. */
  assertMemoryPath(abs: string): string {
    const full = this.assertInside(abs, 'memory path');
    const lexical = this.rel(full);
    const top = lexical.split('/')[0];
    if ((top !== MEMORY_DIR && top !== CONTEXT_DIR) || lexical === top) {
      throw new UnsafePathError(`${lexical} is not a memory path (under ${MEMORY_DIR}/ or ${CONTEXT_DIR}/)`, 'memory path');
    }
    const { probe, real } = this.realOf(dirname(full));
    const parts = real.split(sep);
    if (parts[0] !== top && !(parts.length === 1 && parts[0] === '' && probe === this.root)) {
      throw new UnsafePathError(`${lexical} resolves outside ${top}/ (through a symlink)`, 'memory path');
    }
    return full;
  }

  private localReady = false;

  /** Makes and checks the local state folder; false without `ai-memory/` (unless `force`): a read outside a workspace leaves nothing behind. */
  ensureLocal(opts: { force?: boolean } = {}): boolean {
    if (this.localReady) return true;
    if (!opts.force && !existsSync(this.memoryDir)) return false;
    this.checkLocal(true);
    this.localReady = true;
    return true;
  }

  /** `<local state>/<sub>`, checked the first time this process uses it (state-dir.ts), made when `make`. */
  local(sub: string, make = false): string {
    const dir = join(this.state.dir, sub);
    if (this.checkLocal(make)) checkStateFolder(this.state.base, dir, { make, mode: this.state.gitDir ? 0o777 : 0o700 });
    return dir;
  }

  /** In the git dir, folders take the repository's own modes; in the user's state folder, 0700. */
  private checkLocal(make: boolean): boolean {
    return checkStateFolder(this.state.base, this.state.dir, { make, mode: this.state.gitDir ? 0o777 : 0o700, deep: true });
  }

  projectDir(project: string): string {
    checkProjectName(project, this.hasProjectFolder);
    const dir = this.assertInside(join(this.memoryDir, project), 'project');
    if (lstatSync(dir, { throwIfNoEntry: false })?.isSymbolicLink()) throw linkRefused(`${MEMORY_DIR}/${project}`, 'project folder');
    return dir;
  }

  sectionDir(project: string, section: Section): string {
    if (!SECTIONS.includes(section)) throw new UsageError(`section must be one of: ${SECTIONS.join(', ')}`);
    return this.assertInside(join(this.projectDir(project), section), 'section');
  }

  entryPath(project: string, section: Section, id: string): string {
    checkId(id);
    return this.assertInside(join(this.projectDir(project), section, `${id}.json`), 'entry');
  }

  configPath(project: string): string {
    return join(this.projectDir(project), 'config.yaml');
  }

  isInitialized(project: string): boolean {
    return existsSync(this.configPath(project));
  }

  private readonly hasProjectFolder = (name: string): boolean => existsSync(join(this.memoryDir, name));

  /** Project folders under ai-memory/, sorted; links to folders go to `linkedProjects`, never read. */
  listProjects(): string[] {
    if (!existsSync(this.memoryDir)) return [];
    const out: string[] = [];
    const linked: string[] = [];
    for (const d of readdirSync(this.memoryDir, { withFileTypes: true })) {
      if (!LEGACY_PROJECT_PATTERN.test(d.name) || RESERVED_PROJECT_NAMES.has(d.name)) continue;
      if (d.isDirectory()) out.push(d.name);
      else if (d.isSymbolicLink()) linked.push(d.name);
    }
    this.linkedProjects = linked.sort();
    return out.sort();
  }

  linkedProjects: string[] = [];

  /** A committed file under ai-memory/ (`.gitattributes`, `.default`), or undefined; a link is refused (what is read here is cached and committed). */
  readMemoryFile(abs: string): string | undefined {
    const st = lstatSync(abs, { throwIfNoEntry: false });
    if (!st) return undefined;
    if (!st.isFile()) throw linkRefused(this.rel(abs), st.isSymbolicLink() ? 'file' : 'regular file', !st.isSymbolicLink());
    this.assertMemoryPath(abs);
    return readNoFollow(abs, 'utf8');
  }

  /** The one named, else `BASS_AGENTS_PROJECT`, else the only project (besides `global`), else `ai-memory/.default` (CLI.md). */
  resolveProject(explicit?: string, env: NodeJS.ProcessEnv = process.env, opts: { mustExist?: boolean } = {}): string {
    const chosen = explicit || env.BASS_AGENTS_PROJECT || undefined;
    if (chosen) {
      checkProjectName(chosen, this.hasProjectFolder);
      if (opts.mustExist && !existsSync(join(this.memoryDir, chosen))) {
        throw new NotFoundError(
          `project ${shown(chosen)} does not exist under ${MEMORY_DIR}/ (run: bass-agents memory init ${shown(chosen).startsWith('"') ? chosen : '<project>'})`,
        );
      }
      return chosen;
    }
    const projects = this.listProjects();
    const local = projects.filter((p) => p !== GLOBAL_PROJECT);
    if (local.length === 1 && local[0] !== undefined) return local[0];
    const name = this.readMemoryFile(join(this.memoryDir, '.default'))?.trim();
    if (name) {
      checkProjectName(name, this.hasProjectFolder);
      return name;
    }
    if (local.length === 0 && projects.length === 1 && projects[0] !== undefined) return projects[0];
    if (projects.length === 0) {
      throw new UsageError('no memory project here yet: run `bass-agents memory init <project>` or pass --project');
    }
    throw new UsageError(`several projects (${local.join(', ')}): pass --project or put the default in ${MEMORY_DIR}/.default`);
  }
}

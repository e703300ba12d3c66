/** The named errors: a stable `code`, the CLI's exit code (CLI.md) and `data`; they serialize to JSON for `--json` and MCP. And the depth limit. */

/** One problem with an input, named by its field path (e.g. `evidence[0].uri`). */
export interface Problem {
  path: string;
  message: string;
}

export type ErrorCode = 'E_VALIDATION' | 'E_CONFLICT' | 'E_USAGE' | 'E_NOT_FOUND' | 'E_BUSY' | 'E_UNSAFE_PATH' | 'E_GIT' | 'E_INTERRUPTED' | 'E_INTERNAL';

export class MemoryError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly exitCode: number,
    readonly problems: Problem[] = [],
  ) {
    super(message);
    this.name = new.target.name;
  }

  toJSON(): { code: ErrorCode; message: string; problems: Problem[] } {
    return { code: this.code, message: this.message, problems: this.problems };
  }
}

/** An error class of one code and exit code, made from its message (and problems, if any). */
function messageOnly(code: ErrorCode, exitCode: number) {
  return class extends MemoryError {
    constructor(message: string, problems: Problem[] = []) {
      super(code, message, exitCode, problems);
    }
  };
}

/** Input that fails the schema, the write policy or a secret scan (exit 1). */
export class ValidationError extends MemoryError {
  constructor(problems: Problem[], subject = 'input') {
    super('E_VALIDATION', `${subject} is invalid: ${problems.map(formatProblem).join('; ')}`, 1, problems);
  }
}

/** A state conflict: superseding a superseded entry, a duplicate, a lost race (exit 1). */
export class ConflictError extends messageOnly('E_CONFLICT', 1) {}

/** Wrong use of a command: missing argument, unknown project, bad option value (exit 2). */
export class UsageError extends messageOnly('E_USAGE', 2) {}

/** An id, project or file that does not exist (exit 3). */
export class NotFoundError extends messageOnly('E_NOT_FOUND', 3) {}

/** A lock that could not be taken in time (exit 4). */
export class BusyError extends messageOnly('E_BUSY', 4) {}

/** A path that would leave the workspace root (exit 1: the input is refused). */
export class UnsafePathError extends MemoryError {
  constructor(message: string, path = 'path') {
    super('E_UNSAFE_PATH', message, 1, [{ path, message }]);
  }
}

/** A git command that failed in a way the user must look at (exit 1). */
export class GitError extends messageOnly('E_GIT', 1) {}

/** A write stopped by SIGINT or SIGTERM at a clean point, its files put back (exit 130 or 143). */
export class InterruptedError extends MemoryError {
  constructor(signal: 'SIGINT' | 'SIGTERM') {
    super('E_INTERRUPTED', `interrupted by ${signal}: the write was stopped and nothing of it was kept`, signal === 'SIGINT' ? 130 : 143);
  }
}

export const formatProblem = (p: Problem): string => (p.path ? `${p.path}: ${p.message}` : p.message);

/** Refuses input nested deeper than `max` (validation and merging recurse: a 5,000-deep document would overflow the stack); iterative itself. */
export function checkDepth(value: unknown, what: string, max = 64): void {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d >= max) throw new ValidationError([{ path: what, message: `is nested more than ${max} levels deep` }], what);
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, d + 1]);
  }
}

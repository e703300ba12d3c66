/**
 * `ai-memory/<project>/config.yaml` (002 Req 7.12): project name, created_at and settings.
 * Read into a resolved config with defaults; a malformed file is an error naming the file and key.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { z } from 'zod';
import { ValidationError } from '../core/errors.js';
import { fieldPath } from '../core/validate.js';

export const ProjectConfigSchema = z
  .object({
    project: z.string(),
    created_at: z.string(),
    git: z.object({ autoCommit: z.boolean().default(true) }).strict().default({ autoCommit: true }),
    query: z
      .object({
        /** A query slower than this logs a performance warning (Req 11.2). */
        slow_ms: z.number().positive().default(200),
      })
      .strict()
      .default({ slow_ms: 200 }),
  })
  .passthrough();
export type ProjectConfig = z.infer<typeof ProjectConfigSchema>;

export function defaultConfig(project: string, now: string): ProjectConfig {
  return { project, created_at: now, git: { autoCommit: true }, query: { slow_ms: 200 } };
}

export function renderConfig(cfg: ProjectConfig): string {
  return `# bass-agents memory: settings of project "${cfg.project}" (committed; see docs/configuration.md)\n${stringify(cfg)}`;
}

/** Reads a project's config.yaml; defaults when the file does not exist. */
export function readConfig(file: string, project: string, now: string): ProjectConfig {
  if (!existsSync(file)) return defaultConfig(project, now);
  let raw: unknown;
  try {
    raw = parse(readFileSync(file, 'utf8')) ?? {};
  } catch (err) {
    throw new ValidationError([{ path: file, message: `not valid YAML (${(err as Error).message.split('\n')[0]})` }], 'config');
  }
  const withDefaults = { project, created_at: now, ...(raw as object) };
  const r = ProjectConfigSchema.safeParse(withDefaults);
  if (!r.success) {
    throw new ValidationError(
      r.error.issues.map((i) => ({ path: `${file}: ${fieldPath(i.path)}`, message: i.message })),
      'config',
    );
  }
  return r.data;
}

/**
 * `ai-memory/<project>/config.yaml`, resolved with defaults; a malformed file is an error naming
 * the file and key. Cached under `cache/config/` of the local state folder by the file's stamp,
 * so a query does not load yaml and zod to read one threshold. A link is never read.
 */
import { lstatSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UnsafePathError, ValidationError } from '../core/errors.js';
import { lazy } from '../lazy.js';
import { orThrow } from '../try.js';
import type { ProjectConfig } from './config-schema.js';
import { stampOf, tryOr, writeFileAtomic } from './fsutil.js';
import { readNoFollow } from './state-dir.js';

export type { ProjectConfig } from './config-schema.js';

const yaml = lazy<typeof import('yaml')>('yaml');
const configSchema = lazy<typeof import('./config-schema.js')>('./store/config-schema.js');
const validation = lazy<typeof import('../core/validate.js')>('./core/validate.js');

export function defaultConfig(project: string, now: string): ProjectConfig {
  return { project, created_at: now, git: { autoCommit: true }, query: { slow_ms: 200 } };
}

export const renderConfig = (cfg: ProjectConfig): string =>
  `# bass-agents memory: settings of project "${cfg.project}" (committed; see docs/configuration.md)\n${yaml().stringify(cfg)}`;

const readYaml = (file: string): unknown => yaml().parse(readNoFollow(file, 'utf8')) ?? {};

function parseConfig(file: string, project: string, now: string): ProjectConfig {
  const raw = orThrow(readYaml, file, (err) => new ValidationError([{ path: file, message: `not valid YAML (${err.message.split('\n')[0]})` }], 'config'));
  const withDefaults = { project, created_at: now, ...(raw as object) };
  const r = configSchema().ProjectConfigSchema.safeParse(withDefaults);
  if (!r.success)
    throw new ValidationError(
      r.error.issues.map((i) => ({ path: `${file}: ${validation().fieldPath(i.path)}`, message: i.message })),
      'config',
    );
  return r.data;
}

/** A long-lived process reads config.yaml's stamp, not its cache file, per query. */
const memo = new Map<string, { stamp: string; config: ProjectConfig }>();

/** Defaults when the file does not exist; `cacheDir` enables the stamp cache. */
export function readConfig(file: string, project: string, now: string, cacheDir?: string): ProjectConfig {
  const st = lstatSync(file, { throwIfNoEntry: false });
  if (!st) return defaultConfig(project, now);
  if (!st.isFile()) {
    const name = `${basename(dirname(file))}/config.yaml`;
    throw new UnsafePathError(
      `${name} is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}; bass-agents reads config.yaml only as a file in the repository (a link could point anywhere): replace it with the file`,
      name,
    );
  }
  if (!cacheDir) return parseConfig(file, project, now);
  const stamp = stampOf(st);
  const hit = memo.get(file);
  if (hit && hit.stamp === stamp) return hit.config;
  const cache = join(cacheDir, 'config', `${project}.json`);
  const c = tryOr(() => JSON.parse(readNoFollow(cache, 'utf8')) as { stamp: string; config: ProjectConfig }, undefined);
  const config = c?.stamp === stamp ? c.config : parseConfig(file, project, now);
  if (c?.stamp !== stamp) tryOr(() => writeFileAtomic(cache, JSON.stringify({ stamp, config }), { fsync: false }), undefined);
  memo.set(file, { stamp, config });
  return config;
}

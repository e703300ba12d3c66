/** `memory setup <client> [project]`: the client's configuration (core/setup.ts), the user's own files: written in place, never committed. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../../core/errors.js';
import type { Client } from '../../core/setup.js';
import { writeFileAtomic } from '../../store/fsutil.js';
import { launcherFor } from '../../store/install.js';
import { modules, type Engine } from '../engine.js';
import type { Caller } from '../caller.js';

export function setup(engine: Engine, caller: Caller, client: string, projectName: string | undefined, opts: { dryRun?: boolean; capture?: boolean } = {}) {
  const { CLIENTS, planSetup } = modules.setup();
  if (!(CLIENTS as readonly string[]).includes(client))
    throw new UsageError(`client must be one of: ${CLIENTS.join(', ')} (got ${JSON.stringify(client).slice(0, 40)})`);
  const project = caller.project(engine, projectName, true);
  const launcher = launcherFor(engine.ws.root, caller.env);
  const abs = (file: string): string => engine.ws.assertInside(join(engine.ws.root, file), 'configuration file');
  const read = (file: string): string | null => (existsSync(abs(file)) ? readFileSync(abs(file), 'utf8') : null);
  const plan = planSetup(client as Client, project, launcher, read, { capture: opts.capture });
  const files = plan.map((p) => ({
    file: p.file,
    action: p.before === null ? ('create' as const) : p.before === p.after ? ('unchanged' as const) : ('update' as const),
    after: p.after,
  }));
  if (!opts.dryRun) for (const f of files) if (f.action !== 'unchanged') writeFileAtomic(abs(f.file), f.after);
  return {
    client: client as Client,
    project,
    command: launcher.words,
    portable: launcher.portable, // false: a path of this machine only
    dry_run: Boolean(opts.dryRun),
    capture: Boolean(opts.capture),
    files,
  };
}

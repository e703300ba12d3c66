/**
 * The runner a daemon is handed (cli/commands/daemon.ts): a thin client's command line run by the
 * same `main` as a one-shot process, against the daemon's engine, with a caller made of the
 * client's folder, BASS_AGENTS_* environment and standard input, its output captured and sent back.
 */
import type { CliParams, Methods } from '../daemon/protocol.js';
import { Caller } from '../service/caller.js';
import type { Engine } from '../service/engine.js';
import { main } from './main.js';

export async function runForClient(p: CliParams, engine: Engine, ownEnv: NodeJS.ProcessEnv = process.env): Promise<Methods['cli']['result']> {
  const output: [1 | 2, string][] = [];
  const print = (fd: 1 | 2, text: string): void => {
    const last = output[output.length - 1];
    if (last && last[0] === fd) last[1] += text;
    else output.push([fd, text]);
  };
  // The daemon's own settings (its --agent, its project) never stand in for the caller's.
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(ownEnv)) if (!k.startsWith('BASS_AGENTS_')) env[k] = v;
  for (const [k, v] of Object.entries(p.env)) if (k.startsWith('BASS_AGENTS_')) env[k] = v;
  const caller = new Caller({
    env,
    cwd: p.cwd,
    stdout: { write: (t: string) => print(1, t) },
    stderr: { write: (t: string) => print(2, t) },
    stdin: p.stdin === null ? Buffer.alloc(0) : Buffer.from(p.stdin, 'base64'),
    columns: typeof p.columns === 'number' && p.columns > 0 ? p.columns : undefined,
  });
  const exitCode = await main(p.argv, { caller, engines: () => engine });
  return { output, exitCode };
}

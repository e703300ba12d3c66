/**
 * A command line run inside the daemon for a thin client (cli/thin.ts): the same `main` as a
 * one-shot process, with the caller's folder, BASS_AGENTS_* environment and standard input, its
 * output captured and returned. Requests the command makes to "the daemon" go straight to this
 * daemon's handler (`local`), so a create joins the same group commit as every other writer's.
 */
import type { CliParams, Methods } from '../daemon/protocol.js';
import { main } from './main.js';
import { withIo, type LocalDaemon } from './stdio.js';

export async function runCaptured(p: CliParams, local: LocalDaemon, ownEnv: NodeJS.ProcessEnv = process.env): Promise<Methods['cli']['result']> {
  const output: [1 | 2, string][] = [];
  const print = (fd: 1 | 2, text: string): void => {
    const last = output[output.length - 1];
    if (last && last[0] === fd) last[1] += text;
    else output.push([fd, text]);
  };
  let exitCode = 0;
  // The daemon's own settings (its --agent, its project) never stand in for the caller's.
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(ownEnv)) if (!k.startsWith('BASS_AGENTS_')) env[k] = v;
  for (const [k, v] of Object.entries(p.env)) if (k.startsWith('BASS_AGENTS_')) env[k] = v;
  await withIo(
    {
      stdout: { write: (t: string) => print(1, t) },
      stderr: { write: (t: string) => print(2, t) },
      env,
      cwd: p.cwd,
      stdin: p.stdin === null ? Buffer.alloc(0) : Buffer.from(p.stdin, 'base64'),
      stderrIsTTY: false,
      columns: typeof p.columns === 'number' && p.columns > 0 ? p.columns : undefined,
      setExitCode: (code) => (exitCode = code),
      local,
    },
    () => main(p.argv),
  );
  return { output, exitCode };
}

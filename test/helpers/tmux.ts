/**
 * A real terminal for tests: a detached tmux session of a given size running one shell command in
 * a folder, killed when the test finishes.
 */
import { execFileSync } from 'node:child_process';
import { onTestFinished } from 'vitest';

export const tmux = (...args: string[]): string => execFileSync('tmux', args, { encoding: 'utf8' });

export interface Terminal {
  session: string;
  /** The screen as text (`history`: the whole scrollback too). */
  pane(history?: boolean): string;
  keys(...keys: string[]): void;
}

/** Runs `command` (a shell command line) in `dir` in a `cols` x `rows` terminal; the shell lingers 30 s after it. */
export function terminal(dir: string, command: string, cols: number, rows: number): Terminal {
  const session = `bass-test-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`;
  tmux('new-session', '-d', '-s', session, '-x', String(cols), '-y', String(rows), `cd '${dir}' && ${command}; sleep 30`);
  onTestFinished(() => {
    try {
      tmux('kill-session', '-t', session);
    } catch {
      /* already gone */
    }
  });
  return {
    session,
    pane: (history = false) => tmux('capture-pane', '-p', ...(history ? ['-J', '-S', '-'] : []), '-t', session),
    keys: (...keys) => void tmux('send-keys', '-t', session, ...keys),
  };
}

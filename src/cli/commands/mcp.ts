/**
 * `memory mcp`: the MCP server on stdio (the SDK is loaded only for this command).
 */
import type { Argv } from 'yargs';
import type { GlobalArgs } from '../io.js';

export function registerMcp(y: Argv<GlobalArgs>): Argv<GlobalArgs> {
  return y.command(
    'mcp',
    'serve the memory to MCP clients (Claude Code, Cursor, ...) over stdio',
    (c) => c,
    async (a: GlobalArgs) => {
      const { serveStdio } = await import('../../mcp/server.js');
      await serveStdio({ root: a.root, project: a.project, agent: a.agent });
    },
  );
}

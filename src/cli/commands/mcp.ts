/**
 * `memory mcp`: the MCP server on stdio (the SDK is loaded only for this command); and
 * `memory mcp-call` (not listed in help), how an MCP server has a daemon run a tool call: the
 * call as JSON on standard input, the tool's result as JSON on standard output.
 */
import type { Argv } from 'yargs';
import type { ToolCall } from '../../mcp/result.js';
import { type Cli, type GlobalArgs } from '../io.js';

export function registerMcp(y: Argv<GlobalArgs>, k: Cli): Argv<GlobalArgs> {
  return y
    .command(
      'mcp',
      'serve the memory to MCP clients (Claude Code, Cursor, ...) over stdio',
      (c) => c,
      async (a: GlobalArgs) => {
        const { serveStdio } = await import('../../mcp/server.js');
        await serveStdio({ root: a.root, project: a.project, agent: a.agent, cwd: k.caller.cwd, env: k.caller.env });
      },
    )
    .command(
      'mcp-call',
      false,
      (c) => c.option('file', { alias: 'f', type: 'string', describe: 'the call as JSON, or - for stdin' }),
      async (a: GlobalArgs & { file?: string }) => {
        const call = k.readJsonInput(a.file) as ToolCall;
        const { runTool } = await import('../../mcp/calls.js');
        k.printJson(await runTool(...k.open(a), call));
      },
    );
}

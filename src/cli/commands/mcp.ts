/**
 * `memory mcp`: the MCP server on stdio (the SDK is loaded only for this command); and
 * `memory mcp-call` (not listed in help), how an MCP server has a daemon run a tool call: the
 * call as JSON on standard input, the tool's result as JSON on standard output.
 */
import type { ToolCall } from '../../mcp/result.js';
import { JSON_FILE, type Command } from '../io.js';

export const mcpCommands: Command[] = [
  {
    cmd: 'mcp',
    describe: 'serve the memory to MCP clients (Claude Code, Cursor, ...) over stdio',
    async run(k, a) {
      const { serveStdio } = await import('../../mcp/server.js');
      await serveStdio({ root: a.root, project: a.project, agent: a.agent, cwd: k.caller.cwd, env: k.caller.env });
    },
  },
  {
    cmd: 'mcp-call',
    describe: false,
    options: { file: JSON_FILE },
    // the call as JSON
    async run(k, a) {
      const call = k.readJsonInput(a.file as string | undefined) as ToolCall;
      const { runTool } = await import('../../mcp/calls.js');
      k.printJson(await runTool(...k.open(a), call));
    },
  },
];

/**
 * A tool call run where the engine is: in the MCP server's own process, or in a daemon, which
 * runs it as the command line `memory mcp-call` (cli/commands/mcp.ts) with the call on standard
 * input and prints the tool's result as JSON (or the error as `--json` does).
 */
import { UsageError } from '../core/errors.js';
import type { Caller } from '../service/caller.js';
import type { Engine } from '../service/engine.js';
import type { Session, ToolBodies, ToolCall } from './result.js';
import { maintainBodies } from './tools/maintain.js';
import { readBodies } from './tools/read.js';
import { writeBodies } from './tools/write.js';

const BODIES: ToolBodies = { ...readBodies, ...writeBodies, ...maintainBodies };

/** Tools that write: a caller whose git would commit differently runs them itself (see daemonMayWrite). */
export const WRITING_TOOLS: ReadonlySet<string> = new Set(['memory_create', 'memory_deprecate', 'memory_apply', 'memory_maintain']);

export async function runTool(engine: Engine, caller: Caller, call: ToolCall): Promise<Record<string, unknown>> {
  const body = Object.hasOwn(BODIES, call.tool) ? BODIES[call.tool] : undefined;
  if (!body) throw new UsageError(`unknown tool ${JSON.stringify(call.tool)}`);
  const session: Session = {
    project: (p) => p ?? call.project ?? undefined,
    agent: async () => call.agent ?? (await caller.agent(engine)),
  };
  return body(engine, caller, call.args, session);
}

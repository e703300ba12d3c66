/** A tool call run where the engine is: in the server, or in a daemon as `memory mcp-call`. */
import { UsageError } from '../core/errors.js';
import type { Caller } from '../service/caller.js';
import type { Engine } from '../service/engine.js';
import type { Tool, ToolCall } from './result.js';
import { maintainTools } from './tools/maintain.js';
import { readTools } from './tools/read.js';
import { writeTools } from './tools/write.js';

export const TOOLS: readonly Tool[] = [...readTools, ...writeTools, ...maintainTools];
const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));

export async function runTool(engine: Engine, caller: Caller, call: ToolCall): Promise<Record<string, unknown>> {
  const tool = BY_NAME.get(call.tool);
  if (!tool) throw new UsageError(`unknown tool ${JSON.stringify(call.tool)}`);
  // created_by: --agent, then BASS_AGENTS_AGENT, then the MCP client's name, then the git user.
  const as = call.agent ? caller.with({ agent: call.agent }) : caller;
  return tool.body(engine, as, { ...call.args, project: (call.args.project as string | undefined) ?? call.project ?? undefined });
}

/** A tool call, run where the engine is (in the server, or in a daemon as `memory mcp-call`), and its result or error (the CLI's words). */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MemoryError, UsageError, formatProblem } from '../core/errors.js';
import type { Caller } from '../service/caller.js';
import type { Engine } from '../service/engine.js';
import type { Tool } from './tool.js';
import { maintainTools } from './tools/maintain.js';
import { readTools } from './tools/read.js';
import { writeTools } from './tools/write.js';

export const TOOLS: readonly Tool[] = [...readTools, ...writeTools, ...maintainTools];
const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));

/** A tool, its arguments and the server's defaults, for a daemon (or the server) to run. */
export interface ToolCall {
  tool: string;
  args: Record<string, unknown>;
  project: string | null;
  /** --agent, BASS_AGENTS_AGENT or the client's name (null: the git user, found where the call runs). */
  agent: string | null;
}

export async function runTool(engine: Engine, caller: Caller, call: ToolCall): Promise<Record<string, unknown>> {
  const tool = BY_NAME.get(call.tool);
  if (!tool) throw new UsageError(`unknown tool ${JSON.stringify(call.tool)}`);
  // created_by: --agent, then BASS_AGENTS_AGENT, then the MCP client's name, then the git user.
  const as = call.agent ? caller.with({ agent: call.agent }) : caller;
  return tool.body(engine, as, { ...call.args, project: (call.args.project as string | undefined) ?? call.project ?? undefined });
}

export function errorResult(err: unknown): CallToolResult {
  if (err instanceof MemoryError) {
    const lines = err.problems.length ? err.problems.map((p) => formatProblem(p)) : [err.message];
    return { isError: true, content: [{ type: 'text', text: lines.join('\n') }], _meta: { code: err.code, exit_code: err.exitCode } };
  }
  return { isError: true, content: [{ type: 'text', text: `internal error: ${(err as Error)?.message ?? String(err)}` }] };
}

/** Runs a tool call: its object as structured content and as compact JSON text (what most clients show the model). */
export async function guard(fn: () => Record<string, unknown> | Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    const structured = await fn();
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  } catch (err) {
    return errorResult(err);
  }
}

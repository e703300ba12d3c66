/**
 * What every tool module shares: the service a tool calls, the project and writer it defaults to,
 * and how a result or an error goes back to the client (errors with the CLI's words, one line
 * per problem, naming the field).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { MemoryError, formatProblem } from '../core/errors.js';
import type { MemoryService } from '../service/memory-service.js';

export interface ToolContext {
  server: McpServer;
  service: MemoryService;
  /** The project a call names, else the server's `--project`. */
  project: (p?: string) => string | undefined;
  /** created_by: --agent, then BASS_AGENTS_AGENT, then the MCP client's name, then the git user. */
  agent: () => Promise<string>;
}

export const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
export const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;

/** A free-form JSON object argument (an entry, an update). */
export const objectArg = z.record(z.string(), z.unknown());
export const projectArg = z.string().optional();

export function errorResult(err: unknown): CallToolResult {
  if (err instanceof MemoryError) {
    const lines = err.problems.length ? err.problems.map((p) => formatProblem(p)) : [err.message];
    return { isError: true, content: [{ type: 'text', text: lines.join('\n') }], _meta: { code: err.code, exit_code: err.exitCode } };
  }
  return { isError: true, content: [{ type: 'text', text: `internal error: ${(err as Error)?.message ?? String(err)}` }] };
}

/** Runs a tool body: its object as structured content and as compact JSON text (what most clients show the model). */
export async function guard(fn: () => Record<string, unknown> | Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    const structured = await fn();
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  } catch (err) {
    return errorResult(err);
  }
}

/** What every tool module shares: what a call carries, and how a result or an error (the CLI's words) goes back. */
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z, type ZodRawShape } from 'zod';
import { MemoryError, formatProblem } from '../core/errors.js';
import type { Caller } from '../service/caller.js';
import type { Engine } from '../service/engine.js';

/** A tool, its arguments and the server's defaults, for a daemon (or the server) to run. */
export interface ToolCall {
  tool: string;
  args: Record<string, unknown>;
  project: string | null;
  /** --agent, BASS_AGENTS_AGENT or the client's name (null: the git user, found where the call runs). */
  agent: string | null;
}

/** A tool: what clients are told of it, and what it does with a call's (schema-checked) arguments. */
export interface Tool {
  name: string;
  config: { title: string; description: string; inputSchema: ZodRawShape; outputSchema?: ZodRawShape | z.ZodType; annotations: ToolAnnotations };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body(engine: Engine, caller: Caller, args: any): Record<string, unknown> | Promise<Record<string, unknown>>;
}

export const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
export const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;

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

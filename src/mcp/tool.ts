/** What every tool module shares: what a tool is, its annotations and common arguments. */
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z, type ZodRawShape } from 'zod';
import type { Caller } from '../service/caller.js';
import type { Engine } from '../service/engine.js';

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

/**
 * `bass-agents memory mcp`: the memory over the Model Context Protocol (stdio), for Claude Code,
 * Cursor, Codex and every MCP client. Six tools, kept short because every agent session carries
 * their descriptions: reading (tools/read.ts), writing (tools/write.ts), and the rarely used rest
 * behind one tool (tools/maintain.ts); resources and the write guide in resources.ts. Every tool
 * calls the same MemoryService as the CLI; errors come back as tool errors with the CLI's
 * messages. Nothing but protocol is written to stdout: warnings go to stderr.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { pickAgent } from '../core/filters.js';
import { MemoryService } from '../service/memory-service.js';
import { registerResources } from './resources.js';
import type { ToolContext } from './result.js';
import { registerMaintainTool } from './tools/maintain.js';
import { registerReadTools } from './tools/read.js';
import { registerWriteTools } from './tools/write.js';

export { DEFAULT_MAX_CHARS } from './tools/read.js';

export interface McpOptions {
  root?: string;
  project?: string;
  agent?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

const VERSION = '0.1.0';

/** What the server tells an agent when it connects: when to query, when to record, how to replace. */
export const INSTRUCTIONS = `The repository's durable memory: decisions, state, observations and learnings that other agents and people rely on, one reviewed JSON file per entry, committed to git.

Query before you act: call memory_query with the task's words before changing code, answering a question about this project, or recording anything. Results are summaries; memory_show gives one entry whole. Trust high confidence with code or ticket evidence; treat low confidence as a hint.

Record when you learned something the next agent needs and cannot see in the code: a decision and why, a fix and its cause, a pitfall, a measured fact. Not a diary of what you did. One fact per memory_create: subject is a key such as billing.invoices, summary one or two sentences, content says why and how you know, confidence is honest, evidence points at code paths, tickets or docs. Never write secrets: name where they live, or write [API_KEY].

When an entry no longer holds, do not add a second one: memory_create with supersedes replaces it, memory_deprecate retires it. The write-memory prompt has the full guide.`;

/** Builds the server (not yet connected): tools and resources over one MemoryService. */
export function createMcpServer(opts: McpOptions = {}): { server: McpServer; service: MemoryService } {
  const service = new MemoryService({ root: opts.root, cwd: opts.cwd, env: opts.env, longLived: true }, (m) => process.stderr.write(`warning: ${m}\n`));
  const server = new McpServer({ name: 'bass-agents-memory', version: VERSION }, { capabilities: { logging: {} }, instructions: INSTRUCTIONS });
  const t: ToolContext = {
    server,
    service,
    project: (p) => p ?? opts.project,
    agent: async () => pickAgent(opts.agent, (opts.env ?? process.env).BASS_AGENTS_AGENT, server.server.getClientVersion()?.name) ?? (await service.agent()),
  };
  registerReadTools(t);
  registerWriteTools(t);
  registerMaintainTool(t);
  registerResources(t);
  return { server, service };
}

/** Serves on stdio until the client closes the stream. */
export async function serveStdio(opts: McpOptions = {}): Promise<void> {
  const { server, service } = createMcpServer(opts);
  // A message over this size cannot be read (the stream cannot be resynchronized after it): the
  // server says so on stderr and exits 1, rather than stopping without a word.
  const maxBytes = Number(process.env.BASS_AGENTS_MCP_MAX_MESSAGE_BYTES) || MAX_MCP_MESSAGE_BYTES;
  const transport = new StdioServerTransport(process.stdin, process.stdout, { maxBufferSize: maxBytes });
  let failed = false;
  transport.onerror = (err) => {
    process.stderr.write(`bass-agents mcp: ${err.message}\n`);
    if (/exceeded maximum size/.test(err.message)) {
      process.stderr.write(`bass-agents mcp: a message over ${maxBytes} bytes cannot be read; the server stops\n`);
      failed = true;
      process.exitCode = 1;
    }
  };
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
  });
  service.startSemantic();
  await server.connect(transport);
  process.stdin.on('end', () => void server.close());
  await closed;
  await service.closeSemantic().catch(() => undefined);
  // While serving, the index snapshot is saved only once it drifted far (a save holds the process
  // for the whole write); when the client goes, it is brought up to date for the next command.
  if (!failed) service.flushIndex();
}

/** The largest JSON-RPC message the stdio server reads. */
export const MAX_MCP_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * `memory mcp` (stdio): a tool call goes to the workspace's daemon when one runs, else to this
 * server's own engine. Tool descriptions are short: every agent session carries them.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MemoryError } from '../core/errors.js';
import { pickAgent } from '../core/filters.js';
import { LOST_WRITE, daemonFor, handOver, runningPid } from '../daemon/client.js';
import { Caller } from '../service/caller.js';
import { Engine } from '../service/engine.js';
import { findRoot } from '../store/workspace.js';
import { TOOLS, errorResult, guard, runTool, type ToolCall } from './calls.js';
import { registerResources } from './resources.js';

const VERSION = '0.1.0';

const MAX_MCP_MESSAGE_BYTES = 64 * 1024 * 1024;

const INSTRUCTIONS = `The repository's durable memory: decisions, state, observations and learnings that other agents and people rely on, one reviewed JSON file per entry, committed to git.

Query before you act: call memory_query with the task's words before changing code, answering a question about this project, or recording anything. Results are summaries; memory_show gives one entry whole. Trust high confidence with code or ticket evidence; treat low confidence as a hint.

Record when you learned something the next agent needs and cannot see in the code: a decision and why, a fix and its cause, a pitfall, a measured fact. Not a diary of what you did. One fact per memory_create: subject is a key such as billing.invoices, summary one or two sentences, content says why and how you know, confidence is honest, evidence points at code paths, tickets or docs. Never write secrets: name where they live, or write [API_KEY].

When an entry no longer holds, do not add a second one: memory_create with supersedes replaces it, memory_deprecate retires it. The write-memory prompt has the full guide.`;

/** A tool call run by the daemon (`memory mcp-call`); undefined when the server must run it itself (no daemon, not delivered). */
async function viaDaemon(root: string, cwd: string, env: NodeJS.ProcessEnv, call: ToolCall, writes: boolean): Promise<CallToolResult | undefined> {
  const stdin = (): Buffer => Buffer.from(JSON.stringify(call));
  const r = await handOver({ argv: ['memory', 'mcp-call', '--file', '-', '--json'], root, cwd, env, writes, stdin });
  if (r === 'lost') return writes ? errorResult(new MemoryError('E_INTERNAL', LOST_WRITE, 1)) : undefined; // (a read is simply run again)
  // Not run, or failed before the tool ran (a tool's own errors are its result): run here, which says why.
  if (!r || r.exitCode !== 0) return undefined;
  let stdout = '';
  for (const [fd, text] of r.output) {
    if (fd === 1) stdout += text;
    else process.stderr.write(text); // warnings, as the server's own engine would give them
  }
  return JSON.parse(stdout) as CallToolResult;
}

/** Serves until the client closes the stream; its own engine opens on first use (at once when no daemon runs). */
export async function serveStdio(opts: { root?: string; project?: string; agent?: string; cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<void> {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const root = findRoot(cwd, opts.root, env);
  const caller = new Caller({ env, cwd, warn: (m) => process.stderr.write(`warning: ${m}\n`) });
  let own = undefined as Engine | undefined;
  const engine = (): Engine => {
    if (!own) (own = new Engine({ root, cwd, env, longLived: true })).startSemantic();
    return own;
  };
  const server = new McpServer({ name: 'bass-agents-memory', version: VERSION }, { capabilities: { logging: {} }, instructions: INSTRUCTIONS });
  for (const tool of TOOLS) {
    server.registerTool(tool.name, tool.config, async (args: Record<string, unknown>) => {
      const call: ToolCall = {
        tool: tool.name,
        args,
        project: opts.project ?? null,
        agent: pickAgent(opts.agent, env.BASS_AGENTS_AGENT, server.server.getClientVersion()?.name) ?? null,
      };
      const writes = !tool.config.annotations.readOnlyHint;
      return (await viaDaemon(root, cwd, env, call, writes).catch(() => undefined)) ?? guard(() => runTool(engine(), caller, call));
    });
  }
  registerResources(server, () => [engine(), caller]);
  // A message over this size cannot be read (nor the stream resynchronized): say so and exit 1.
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
  const paths = daemonFor(root, env);
  if (!paths || !runningPid(paths)) engine();
  await server.connect(transport);
  process.stdin.on('end', () => void server.close());
  await closed;
  await own?.semantic?.close().catch(() => undefined);
  // Saved while serving only once far behind (a save holds the process): brought up to date now for the next command.
  if (!failed) own?.rm.flushIndex();
}

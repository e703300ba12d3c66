/**
 * `memory setup <client>` in scratch repositories: the files each client reads, the MCP server
 * started from the written configuration by the official client, the Claude Code hook run as a
 * shell would run it, a second run that changes nothing, and the user's own content kept.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { cleanGitEnv, cli, entry, gitdir } from '../helpers/repo.js';

const env = { BASS_AGENTS_NO_DAEMON: '1' };

/** Starts the server the way the client would, from its configuration, and lists its tools. */
async function toolsFrom(dir: string, server: { command: string; args: string[] }): Promise<string[]> {
  const command = server.command === 'node' ? process.execPath : server.command;
  const transport = new StdioClientTransport({ command, args: server.args, cwd: dir, env: cleanGitEnv(dir) as Record<string, string>, stderr: 'pipe' });
  const client = new Client({ name: 'setup-test', version: '1.0.0' });
  await client.connect(transport);
  onTestFinished(() => client.close());
  return (await client.listTools()).tools.map((t) => t.name);
}

function workspace(): string {
  const dir = gitdir({ 'CLAUDE.md': '# Our rules\n\nBe nice to the build.\n', '.mcp.json': '{"mcpServers":{"other":{"command":"other-server"}}}\n' });
  expect(cli(dir, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry({ summary: 'Invoices are generated hourly.' })), env }).code).toBe(0);
  expect(cli(dir, ['sync-context', 'demo'], { env }).code).toBe(0);
  return dir;
}

const snapshot = (dir: string, files: string[]): Record<string, string | null> =>
  Object.fromEntries(files.map((f) => [f, existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : null]));

describe('memory setup', () => {
  it('claude-code: .mcp.json, CLAUDE.md and a session-start hook; the server starts from it; a second run changes nothing', async () => {
    const dir = workspace();
    const files = ['.mcp.json', 'CLAUDE.md', '.claude/settings.json'];
    const before = snapshot(dir, files);
    const dry = cli(dir, ['setup', 'claude-code', 'demo', '--dry-run', '--json'], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json().files.map((f: { action: string }) => f.action)).toEqual(['update', 'update', 'create']);
    expect(snapshot(dir, files)).toEqual(before); // a dry run writes nothing

    const r = cli(dir, ['setup', 'claude-code', 'demo'], { env });
    expect(r.code, r.stderr).toBe(0);
    const mcp = JSON.parse(readFileSync(join(dir, '.mcp.json'), 'utf8'));
    expect(mcp.mcpServers.other).toEqual({ command: 'other-server' }); // the user's own server is kept
    const claude = readFileSync(join(dir, 'CLAUDE.md'), 'utf8');
    expect(claude.startsWith('# Our rules\n\nBe nice to the build.\n')).toBe(true);
    expect(claude).toContain('@ai-context/demo.md');
    expect(await toolsFrom(dir, mcp.mcpServers['bass-agents-memory'])).toContain('memory_query');

    // The hook, run as Claude Code runs it: a shell command whose output joins the session.
    const settings = JSON.parse(readFileSync(join(dir, '.claude/settings.json'), 'utf8'));
    const hook = settings.hooks.SessionStart[0].hooks[0].command as string;
    const printed = execFileSync('sh', ['-c', hook], { cwd: dir, env: { ...cleanGitEnv(dir), CLAUDE_PROJECT_DIR: dir }, encoding: 'utf8' });
    expect(printed).toContain('Invoices are generated hourly.');

    // Idempotent: nothing changes, byte for byte.
    const after = snapshot(dir, files);
    const again = cli(dir, ['setup', 'claude-code', 'demo', '--json'], { env });
    expect(again.json().files.map((f: { action: string }) => f.action)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(snapshot(dir, files)).toEqual(after);
    // An edit of the user's own outside the block survives a new run.
    writeFileSync(join(dir, 'CLAUDE.md'), `${after['CLAUDE.md']}\nAnd keep PRs small.\n`);
    expect(cli(dir, ['setup', 'claude-code', 'demo'], { env }).code).toBe(0);
    expect(readFileSync(join(dir, 'CLAUDE.md'), 'utf8')).toContain('And keep PRs small.');
  });

  it('cursor and codex: their MCP configuration and instructions; the servers start from them', async () => {
    const dir = workspace();
    expect(cli(dir, ['setup', 'cursor', 'demo'], { env }).code).toBe(0);
    const cursor = JSON.parse(readFileSync(join(dir, '.cursor/mcp.json'), 'utf8'));
    expect(await toolsFrom(dir, cursor.mcpServers['bass-agents-memory'])).toContain('memory_create');
    const rule = readFileSync(join(dir, '.cursor/rules/bass-agents-memory.mdc'), 'utf8');
    expect(rule).toMatch(/^---\ndescription: .+\nalwaysApply: true\n---\n/);

    mkdirSync(join(dir, '.codex'), { recursive: true });
    writeFileSync(join(dir, '.codex/config.toml'), 'model = "o4-mini"\n');
    expect(cli(dir, ['setup', 'codex', 'demo'], { env }).code).toBe(0);
    const toml = readFileSync(join(dir, '.codex/config.toml'), 'utf8');
    expect(toml.startsWith('model = "o4-mini"\n')).toBe(true);
    const command = JSON.parse(/^command = (".*")$/m.exec(toml)![1]) as string;
    const args = JSON.parse(/^args = (\[.*\])$/m.exec(toml)![1]) as string[];
    expect(await toolsFrom(dir, { command, args })).toContain('memory_supersede');
    expect(readFileSync(join(dir, 'AGENTS.md'), 'utf8')).toContain('ai-context/demo.md');
    for (const client of ['cursor', 'codex']) {
      const again = cli(dir, ['setup', client, 'demo', '--json'], { env });
      expect(
        again.json().files.every((f: { action: string }) => f.action === 'unchanged'),
        client,
      ).toBe(true);
    }
  });

  it('refuses to overwrite what it cannot read or did not write', () => {
    const dir = workspace();
    writeFileSync(join(dir, '.mcp.json'), '{ "mcpServers": { broken');
    const r = cli(dir, ['setup', 'claude-code', 'demo'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/\.mcp\.json is not valid JSON/);
    expect(readFileSync(join(dir, '.mcp.json'), 'utf8')).toBe('{ "mcpServers": { broken');
    expect(existsSync(join(dir, '.claude/settings.json'))).toBe(false); // nothing half-done
    mkdirSync(join(dir, '.cursor/rules'), { recursive: true });
    writeFileSync(join(dir, '.cursor/rules/bass-agents-memory.mdc'), 'my own rule\n');
    expect(cli(dir, ['setup', 'cursor', 'demo'], { env }).code).toBe(2);
    expect(readFileSync(join(dir, '.cursor/rules/bass-agents-memory.mdc'), 'utf8')).toBe('my own rule\n');
    expect(cli(dir, ['setup', 'vscode', 'demo'], { env }).code).toBe(2);
  });
});

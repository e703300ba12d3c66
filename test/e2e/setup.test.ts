/**
 * `memory setup <client>`: first from a real dev-dependency install (this repository packed with
 * `npm pack`, installed with `npm install -D` into a scratch project, once for the file): setup
 * run through npx for each client, then every configured command started the way its client or
 * git starts it, with a PATH that has neither the project's node_modules/.bin nor any global
 * bass-agents: the official SDK client lists and calls tools through each MCP configuration, the
 * Claude Code hooks print the context and the capture reminder, and the merge driver merges a
 * conflicting entry on `git pull`. Then, in plain repositories: files kept as the user wrote
 * them, idempotence, refusals.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { cleanGitEnv, cli, entry, firstOf, git, gitdir } from '../helpers/repo.js';

const env = { BASS_AGENTS_NO_DAEMON: '1' };
const ROOT = join(__dirname, '../..');

/** The client's plain PATH: node, npx, git and sh, and nothing of the project or a global bass-agents. */
const PLAIN_PATH = [...new Set([dirname(process.execPath), '/usr/bin', '/bin'])].join(delimiter);
const plainEnv = (dir: string, extra: Record<string, string> = {}): Record<string, string> => ({
  ...(cleanGitEnv(dir) as Record<string, string>),
  PATH: PLAIN_PATH,
  BASS_AGENTS_NO_DAEMON: '1',
  ...extra,
});

/** Starts the server the way the client would, from its configuration, with `env`; lists its tools. */
async function connect(dir: string, server: { command: string; args: string[] }, env: Record<string, string>): Promise<Client> {
  const transport = new StdioClientTransport({ command: server.command, args: server.args, cwd: dir, env, stderr: 'pipe' });
  const client = new Client({ name: 'setup-test', version: '1.0.0' });
  await client.connect(transport);
  onTestFinished(() => client.close());
  return client;
}
const toolNames = async (c: Client): Promise<string[]> => (await c.listTools()).tools.map((t) => t.name);

const snapshot = (dir: string, files: string[]): Record<string, string | null> =>
  Object.fromEntries(files.map((f) => [f, existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : null]));

describe('the loop of docs/guide.md, from a dev-dependency install', () => {
  let scratch: string;
  let project: string;
  let mate: string;
  /** bass-agents as the user types it in the project: through npx, whose PATH has node_modules/.bin. */
  const npx = (args: string[], input?: string): { code: number; stdout: string; stderr: string } => {
    const r = spawnSync('npx', ['--no-install', 'bass-agents', 'memory', ...args], {
      cwd: project,
      encoding: 'utf8',
      input,
      env: { ...cleanGitEnv(project), ...env },
    });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  };

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'bass-agents-devdep-'));
    // The tarball a user makes with `npm pack` in a clone, next to their service (the guide's `../`).
    execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', scratch], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    project = join(scratch, 'service');
    mate = join(scratch, 'mate');
    mkdirSync(join(project, 'src'), { recursive: true });
    writeFileSync(join(project, 'package.json'), '{"name":"service","version":"1.0.0","private":true}\n');
    writeFileSync(join(project, '.gitignore'), 'node_modules/\n');
    writeFileSync(join(project, '.mcp.json'), '{"mcpServers":{"other":{"command":"other-server"}}}\n');
    writeFileSync(join(project, 'src/billing.ts'), 'export const retries = 3;\n');
    git(project, 'init', '-q', '-b', 'main');
    git(project, 'config', 'user.name', 'Test User');
    git(project, 'config', 'user.email', 'test@example.com');
    git(project, 'add', '-A');
    git(project, 'commit', '-q', '-m', 'a small service');
    git(scratch, 'init', '-q', '--bare', '-b', 'main', join(scratch, 'origin.git'));
    git(project, 'remote', 'add', 'origin', join(scratch, 'origin.git'));
    git(project, 'push', '-q', '-u', 'origin', 'main');
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("runs every command of the guide's loop: install, setup, the agent's write, the review, the merge, a teammate's npm ci and pull", () => {
    const guide = readFileSync(join(ROOT, 'docs/guide.md'), 'utf8');
    const blocks = [...guide.matchAll(/^<!-- doc-test: loop( teammate)? -->\n```sh\n([\s\S]*?)^```/gm)].map(([, mate, body = '']) => ({
      teammate: Boolean(mate),
      body,
    }));
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    // npm's own cache, and the optional model packages left out (large; the loop does not need them).
    const npmEnv = {
      // (`npm test` hands its own to the tests; asked of npm otherwise.)
      npm_config_cache: process.env.npm_config_cache || execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).trim(),
      npm_config_update_notifier: 'false',
      // The machine's certificates for a registry, if npm needs one (test/setup.ts keeps them from the rest).
      ...(process.env.TEST_NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.TEST_NODE_EXTRA_CA_CERTS } : {}),
    };
    const outputs: string[] = [];
    blocks.forEach((b, k) => {
      const dir = b.teammate ? mate : project;
      const script = b.body.replace(/^npm (install|ci)\b/gm, 'npm $1 --prefer-offline --no-audit --no-fund --omit=optional');
      const r = spawnSync('sh', ['-e', '-c', script], { cwd: dir, encoding: 'utf8', env: plainEnv(dir, npmEnv) });
      expect(r.status, `block ${k + 1}:\n${b.body}\n${r.stderr}`).toBe(0);
      outputs.push(r.stdout);
      if (k === 0) {
        // A teammate's clone, made after the setup was pushed.
        git(scratch, 'clone', '-q', join(scratch, 'origin.git'), mate);
        git(mate, 'config', 'user.name', 'Mate');
        git(mate, 'config', 'user.email', 'mate@example.com');
      }
    });
    const all = outputs.join('\n');
    expect(all).toContain('Invoice retries stop after 3 attempts with exponential backoff.'); // the review, and the teammate's query
    expect(outputs[blocks.length - 1]).toContain('Invoice retries stop after 3 attempts');
    // Each clone's merge driver is its own dev dependency, by its path in the project.
    for (const dir of [project, mate])
      expect(git(dir, 'config', 'merge.bass-agents-memory.driver')).toContain(' node_modules/bass-agents/bin/bass-agents.cjs memory merge-driver');
    // Two real installs: a busy machine may take minutes, and no test here may fail for slowness.
  }, 600_000);

  it('claude-code: the MCP server, the context hook and the capture hook all start from a plain PATH', async () => {
    // The loop's `setup claude-code --capture` wrote these files; a second run through npx changes nothing.
    const r = npx(['setup', 'claude-code', '--capture', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ portable: true, files: [{ action: 'unchanged' }, { action: 'unchanged' }, { action: 'unchanged' }] });
    // A compact .mcp.json stays compact: the user's line, our key added to it.
    const mcpText = readFileSync(join(project, '.mcp.json'), 'utf8');
    expect(mcpText.trimEnd().split('\n')).toHaveLength(1);
    expect(mcpText.startsWith('{"mcpServers":{"other":{"command":"other-server"},')).toBe(true);
    const server = JSON.parse(mcpText).mcpServers['bass-agents-memory'];
    expect(server.command).toBe('npx'); // found from the project whatever its path: committed, it works for teammates too
    // Started from a subfolder, as a client started there would.
    const c = await connect(join(project, 'src'), server, plainEnv(project));
    expect(await toolNames(c)).toContain('memory_query');
    const q = await c.callTool({ name: 'memory_query', arguments: { query: 'invoice retries' } });
    expect((q.structuredContent as { results: { summary: string }[] }).results[0]?.summary).toBe(
      'Invoice retries stop after 3 attempts with exponential backoff.',
    );

    // The context reaches Claude Code once: from the hook, not also from an import in CLAUDE.md.
    expect(readFileSync(join(project, 'CLAUDE.md'), 'utf8')).not.toContain('@ai-context/');
    const settings = JSON.parse(readFileSync(join(project, '.claude/settings.json'), 'utf8'));
    const hook = (event: string): string => settings.hooks[event][0].hooks[0].command as string;
    const run = (command: string, input = ''): string =>
      execFileSync('sh', ['-c', command], { cwd: join(project, 'src'), input, env: plainEnv(project, { CLAUDE_PROJECT_DIR: project }), encoding: 'utf8' });
    const context = run(hook('SessionStart'));
    expect(context).toContain('Invoice retries stop after 3 attempts with exponential backoff.');
    expect(context.length).toBeLessThanOrEqual(8000 + 1); // the default budget (and its newline)

    // Capture: a session that changed code and recorded nothing is reminded once, then let go.
    const transcript = join(scratch, 'transcript.jsonl');
    writeFileSync(transcript, `${JSON.stringify({ type: 'user', timestamp: new Date().toISOString() })}\n`);
    const stop = (session: string, extra: Record<string, unknown> = {}): string =>
      run(hook('Stop'), JSON.stringify({ session_id: session, transcript_path: transcript, hook_event_name: 'Stop', stop_hook_active: false, ...extra }));
    expect(stop('s1')).toBe(''); // nothing changed yet
    writeFileSync(join(project, 'src/billing.ts'), 'export const retries = 5;\n');
    const reminded = JSON.parse(stop('s2'));
    expect(reminded).toMatchObject({ decision: 'block', reason: expect.stringMatching(/memory_create/) });
    expect(stop('s2')).toBe(''); // once per session
    expect(stop('s3', { stop_hook_active: true })).toBe(''); // never after a continuation
    expect(run(hook('Stop'), 'not json')).toBe(''); // never fails the client
  });

  it('cursor and codex: their MCP configurations and capture hooks start from a plain PATH', async () => {
    for (const client of ['cursor', 'codex']) expect(npx(['setup', client, '--capture']).code, client).toBe(0);
    const cursor = JSON.parse(readFileSync(join(project, '.cursor/mcp.json'), 'utf8')).mcpServers['bass-agents-memory'];
    const toml = readFileSync(join(project, '.codex/config.toml'), 'utf8');
    const codex = {
      command: JSON.parse(/^command = (".*")$/m.exec(toml)?.[1] ?? '') as string,
      args: JSON.parse(/^args = (\[.*\])$/m.exec(toml)?.[1] ?? '') as string[],
    };
    for (const server of [cursor, codex]) expect(await toolNames(await connect(project, server, plainEnv(project)))).toContain('memory_create');
    // Cursor runs project hooks from the project folder; Codex from the session's.
    const cursorHook = JSON.parse(readFileSync(join(project, '.cursor/hooks.json'), 'utf8')).hooks.stop[0].command as string;
    const codexHook = JSON.parse(readFileSync(join(project, '.codex/hooks.json'), 'utf8')).hooks.Stop[0].hooks[0].command as string;
    writeFileSync(join(project, 'src/billing.ts'), 'export const retries = 6;\n');
    const say = (command: string, input: Record<string, unknown>): string =>
      execFileSync('sh', ['-c', command], { cwd: project, input: JSON.stringify(input), env: plainEnv(project), encoding: 'utf8' });
    expect(JSON.parse(say(cursorHook, { conversation_id: 'c1', hook_event_name: 'stop', status: 'completed', loop_count: 0 }))).toMatchObject({
      followup_message: expect.stringMatching(/memory_create/),
    });
    expect(JSON.parse(say(cursorHook, { conversation_id: 'c2', hook_event_name: 'stop', status: 'completed', loop_count: 1 }))).toEqual({});
    expect(JSON.parse(say(codexHook, { session_id: 'x1', hook_event_name: 'Stop', stop_hook_active: false }))).toMatchObject({ decision: 'block' });
  });

  it('the merge driver git runs merges a conflicting entry on git pull, with a plain PATH', () => {
    git(project, 'add', '-A');
    git(project, 'commit', '-q', '-m', 'work in progress');
    git(project, 'push', '-q');
    // Another clone (any install: here this repository's CLI) deprecates the entry and pushes.
    const other = join(scratch, 'other');
    git(scratch, 'clone', '-q', join(scratch, 'origin.git'), other);
    git(other, 'config', 'user.name', 'Other');
    git(other, 'config', 'user.email', 'other@example.com');
    const [{ id }] = firstOf(cli(other, ['list', '--json']).json() as { id: string }[], 1);
    expect(cli(other, ['deprecate', id], { env }).code).toBe(0);
    git(other, 'push', '-q', 'origin', 'main');
    // Here, the same entry is reinforced: both sides change it (its updated_at line at least).
    expect(npx(['reinforce', id]).code).toBe(0);
    const pulled = spawnSync('git', ['pull', '--no-rebase', '-q', 'origin', 'main'], { cwd: join(project, 'src'), env: plainEnv(project), encoding: 'utf8' });
    expect(pulled.status, pulled.stderr + pulled.stdout).toBe(0);
    const file = git(project, 'ls-files', `ai-memory/svc/decisions/${id}.json`).trim();
    const merged = JSON.parse(readFileSync(join(project, file), 'utf8'));
    expect(merged.status).toBe('deprecated'); // theirs
    expect(merged.lifecycle.reviewed_at).toBeTruthy(); // ours
  });
});

describe('memory setup in a plain repository', () => {
  function workspace(): string {
    const dir = gitdir({
      'CLAUDE.md': '# Our rules\n\nBe nice to the build.\n',
      '.mcp.json': '{\n\t"mcpServers": {\n\t\t"other": {\n\t\t\t"command": "other-server"\n\t\t}\n\t}\n}\n',
    });
    expect(cli(dir, ['create', 'demo', '--file', '-'], { input: JSON.stringify(entry({ summary: 'Invoices are generated hourly.' })), env }).code).toBe(0);
    expect(cli(dir, ['sync-context', 'demo'], { env }).code).toBe(0);
    return dir;
  }

  it('claude-code: keeps the user files as they are laid out, a dry run writes nothing, a second run changes nothing', () => {
    const dir = workspace();
    const files = ['.mcp.json', 'CLAUDE.md', '.claude/settings.json'];
    const before = snapshot(dir, files);
    const dry = cli(dir, ['setup', 'claude-code', 'demo', '--dry-run', '--json'], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json().files.map((f: { action: string }) => f.action)).toEqual(['update', 'update', 'create']);
    expect(snapshot(dir, files)).toEqual(before); // a dry run writes nothing

    const r = cli(dir, ['setup', 'claude-code', 'demo'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/names a path on this machine/); // this repository's CLI, from outside the project
    const mcpText = readFileSync(join(dir, '.mcp.json'), 'utf8');
    // Tab-indented stays tab-indented, the user's server untouched.
    expect(mcpText.startsWith('{\n\t"mcpServers": {\n\t\t"other": {\n\t\t\t"command": "other-server"\n\t\t},\n\t\t"bass-agents-memory": {\n')).toBe(true);
    expect(JSON.parse(mcpText).mcpServers.other).toEqual({ command: 'other-server' });
    const claude = readFileSync(join(dir, 'CLAUDE.md'), 'utf8');
    expect(claude.startsWith('# Our rules\n\nBe nice to the build.\n')).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, '.claude/settings.json'), 'utf8')).hooks.Stop).toBeUndefined(); // capture is opt-in

    const after = snapshot(dir, files);
    const again = cli(dir, ['setup', 'claude-code', 'demo', '--json'], { env });
    expect(again.json().files.map((f: { action: string }) => f.action)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(snapshot(dir, files)).toEqual(after);
    writeFileSync(join(dir, 'CLAUDE.md'), `${after['CLAUDE.md']}\nAnd keep PRs small.\n`);
    expect(cli(dir, ['setup', 'claude-code', 'demo', '--capture'], { env }).code).toBe(0);
    expect(readFileSync(join(dir, 'CLAUDE.md'), 'utf8')).toContain('And keep PRs small.');
    const settings = JSON.parse(readFileSync(join(dir, '.claude/settings.json'), 'utf8'));
    expect(settings.hooks.SessionStart).toHaveLength(1);
    expect(settings.hooks.Stop).toHaveLength(1);
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
    mkdirSync(join(dir, '.codex'), { recursive: true });
    writeFileSync(join(dir, '.codex/config.toml'), 'model = "o4-mini"\n');
    expect(cli(dir, ['setup', 'codex', 'demo'], { env }).code).toBe(0);
    expect(readFileSync(join(dir, '.codex/config.toml'), 'utf8').startsWith('model = "o4-mini"\n')).toBe(true);
    expect(cli(dir, ['setup', 'vscode', 'demo'], { env }).code).toBe(2);
    // The context's budget is the project's to set.
    writeFileSync(join(dir, 'ai-memory/demo/config.yaml'), `${readFileSync(join(dir, 'ai-memory/demo/config.yaml'), 'utf8')}context:\n  budget: 500\n`);
    const small = cli(dir, ['context', 'demo', '--json'], { env }).json() as { text: string; included: number };
    expect(small.text.length).toBeLessThanOrEqual(500);
  });
});

/**
 * Every JSON and CLI example in README.md and docs/ is run here, so the docs cannot drift from the
 * code. JSON memory documents (entries, stored entries, updates) go through `memory validate`
 * and must pass, unless the text before them says `<!-- doc-test: invalid -->`; other JSON must
 * parse. `bass-agents memory ...` lines of sh blocks run in order in one scratch repository per
 * page (seeded with entry.json = the page's first valid entry, and a small MCP memory.jsonl) and
 * must exit 0. `npm run quickstart` runs the quickstart script. Blocks marked
 * `<!-- doc-test: loop -->` (docs/guide.md's walk through install, setup, review and pull) are run
 * whole, as shell scripts, by test/e2e/setup.test.ts in a project with a real dev-dependency install.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanGitEnv, cli, gitdir } from '../helpers/repo.js';

const ROOT = resolve(__dirname, '../..');
const pages = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

interface Block {
  lang: string;
  body: string;
  invalid: boolean;
  /** Run by test/e2e/setup.test.ts (the guide's loop), not here. */
  loop: boolean;
  line: number;
}

function blocks(page: string): Block[] {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const out: Block[] = [];
  const re = /^```(\w+)\n([\s\S]*?)^```/gm;
  let last = 0;
  for (const m of text.matchAll(re)) {
    const before = text.slice(last, m.index);
    out.push({
      lang: m[1] ?? '',
      body: m[2] ?? '',
      invalid: before.includes('<!-- doc-test: invalid -->'),
      loop: /<!-- doc-test: loop( teammate)? -->\s*$/.test(before),
      line: text.slice(0, m.index).split('\n').length,
    });
    last = (m.index ?? 0) + m[0].length;
  }
  return out;
}

const isMemoryDoc = (v: unknown): boolean => {
  const items = Array.isArray(v) ? v : [v];
  return items.length > 0 && items.every((x) => x && typeof x === 'object' && ('operation' in x || ('section' in x && 'summary' in x)));
};

const MCP_MEMORY = [
  { type: 'entity', name: 'Billing Service', entityType: 'service', observations: ['retries invoices three times'] },
  { type: 'entity', name: 'Payments Team', entityType: 'team', observations: ['owns billing'] },
  { type: 'relation', from: 'Payments Team', to: 'Billing Service', relationType: 'owns' },
]
  .map((l) => JSON.stringify(l))
  .join('\n');

describe('docs examples', () => {
  it('docs/guide.md walks the loop in blocks that test/e2e/setup.test.ts runs', () => {
    const loops = blocks('docs/guide.md').filter((b) => b.loop);
    expect(loops.length).toBeGreaterThanOrEqual(5);
    expect(loops.map((b) => b.body).join('')).toMatch(
      /npm install --save-dev[\s\S]*setup claude-code[\s\S]*memory create[\s\S]*memory diff[\s\S]*git merge[\s\S]*npm ci[\s\S]*git pull/,
    );
    expect(readFileSync(join(ROOT, 'test/e2e/setup.test.ts'), 'utf8')).toContain('<!-- doc-test: loop( teammate)? -->');
  });

  for (const page of pages) {
    const bs = blocks(page);
    const json = bs.filter((b) => b.lang === 'json');
    const sh = bs.filter((b) => (b.lang === 'sh' || b.lang === 'bash') && !b.loop);
    if (!json.length && !sh.length) continue;
    it(`${page}: ${json.length} JSON and ${sh.length} shell examples work`, () => {
      const dir = gitdir();
      let firstEntry: unknown;
      for (const b of json) {
        let v: unknown;
        expect(() => (v = JSON.parse(b.body)), `${page}:${b.line} is not valid JSON`).not.toThrow();
        if (!isMemoryDoc(v)) continue;
        const r = cli(dir, ['validate', '--file', '-', '--json'], { input: b.body });
        const res = r.json();
        if (b.invalid) expect(res.ok, `${page}:${b.line} should be rejected`).toBe(false);
        else expect(res, `${page}:${b.line}: ${r.stderr}`).toMatchObject({ ok: true });
        if (!b.invalid && firstEntry === undefined && !('operation' in (v as object)) && !('id' in (v as object))) firstEntry = v;
      }
      // A page that shows only a stored entry: its input part (what `create` takes).
      const STORED = ['id', 'status', 'superseded_by', 'related_entries', 'created_by', 'created_at', 'updated_at'];
      const fallback = JSON.parse(json.find((b) => !b.invalid)?.body ?? '{}') as Record<string, unknown>;
      const input = Object.fromEntries(Object.entries(fallback).filter(([k, v]) => !STORED.includes(k) && v !== null));
      writeFileSync(join(dir, 'entry.json'), JSON.stringify(firstEntry ?? input));
      writeFileSync(join(dir, 'memory.jsonl'), MCP_MEMORY);
      for (const b of sh) {
        for (const raw of b.body.split('\n')) {
          const line = raw.replace(/\s+#.*$/, '').trim();
          if (line.startsWith('npm run quickstart') || line.startsWith('npm ci && npm run quickstart')) {
            const q = spawnSync(process.execPath, [join(ROOT, 'scripts/quickstart.js')], { cwd: ROOT, encoding: 'utf8', env: cleanGitEnv(dir) });
            expect(q.status, `${page}:${b.line} quickstart: ${q.stderr}`).toBe(0);
            continue;
          }
          const m = /^(?:npx\s+)?bass-agents\s+memory\s+(.*)$/.exec(line);
          if (!m) continue;
          const args = (m[1] ?? '').match(/"[^"]*"|'[^']*'|\S+/g)!.map((a) => a.replace(/^["']|["']$/g, ''));
          if (args[0] === 'mcp') continue; // a server on stdio: driven by test/e2e/mcp.test.ts
          const r = cli(dir, args);
          expect(r.code, `${page}:${b.line} \`${line}\`: ${r.stderr}`).toBe(0);
        }
      }
    });
  }
});

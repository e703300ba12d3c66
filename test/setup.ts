/**
 * Lets tests import `src/` directly: the modules that `lazy()` loads on first use (by a spec
 * relative to the source root) are imported here through the test runner and registered, so
 * the code under test and the modules it loads lazily are the same source, never a stale build.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const src = join(__dirname, '..', 'src');
const specs = new Set<string>();
const walk = (dir: string): void => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.name.endsWith('.ts')) for (const m of readFileSync(p, 'utf8').matchAll(/\blazy<[^;]*?>\('(\.\/[^']+)'\)/g)) specs.add(m[1] ?? '');
  }
};
walk(src);
const registry = new Map<string, unknown>();
for (const spec of specs) registry.set(spec, await import(join(src, spec.replace(/\.js$/, '.ts'))));
(globalThis as { __bassAgentsLazy?: Map<string, unknown> }).__bassAgentsLazy = registry;

// Local state outside a git repository goes to $XDG_STATE_HOME (store/state-dir.ts): a temp folder
// of this test file's (inherited by the CLI processes tests start), never the user's own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll } from 'vitest';
const stateHome = mkdtempSync(join(tmpdir(), 'bass-agents-state-'));
process.env.XDG_STATE_HOME = stateHome;
afterAll(() => {
  rmSync(stateHome, { recursive: true, force: true });
});

// A machine-wide NODE_EXTRA_CA_CERTS makes every Node process read and parse that certificate
// bundle as it starts, before running any code; the suite starts hundreds of CLI, daemon and MCP
// processes and none of them speaks TLS, so they start without it (see docs/benchmarks.md, test
// time). The npm commands that may reach a registry get it back (test/e2e/setup.test.ts).
if (process.env.NODE_EXTRA_CA_CERTS) {
  process.env.TEST_NODE_EXTRA_CA_CERTS = process.env.NODE_EXTRA_CA_CERTS;
  delete process.env.NODE_EXTRA_CA_CERTS;
}

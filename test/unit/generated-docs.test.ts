import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('generated docs', () => {
  it('docs/lifecycle.md holds the table and chart the lifecycle code produces (node scripts/lifecycle-table.js)', () => {
    const r = spawnSync(process.execPath, [resolve(__dirname, '../../scripts/lifecycle-table.js'), '--check'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
  });
});

describe('docs/configuration.md', () => {
  it('its example config.yaml is accepted, and a decay run uses its settings', async () => {
    const { readFileSync, writeFileSync, mkdirSync } = await import('node:fs');
    const { cli, gitdir } = await import('../helpers/repo.js');
    const doc = readFileSync(resolve(__dirname, '../../docs/configuration.md'), 'utf8');
    const yaml = /```yaml\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
    const dir = gitdir();
    mkdirSync(resolve(dir, 'ai-memory/billing'), { recursive: true });
    writeFileSync(resolve(dir, 'ai-memory/billing/config.yaml'), yaml);
    const r = cli(dir, ['decay', 'billing', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ curve: 'periodic', forget_threshold: 0.1, forget_action: 'archive' });
    writeFileSync(resolve(dir, 'ai-memory/billing/config.yaml'), `${yaml}\nextra: 1\n`.replace('curve: periodic', 'curve: sideways'));
    const bad = cli(dir, ['decay', 'billing']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/config\.yaml: decay\.curve/);
  });
});

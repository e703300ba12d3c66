/**
 * The layers of src/ hold: every import (static, dynamic, type-only, and the module specs given
 * to `lazy`) points down or across a layer, never up, and no two folders import each other,
 * directly or round a longer loop. A planted upward import in a copy of src/ shows the check
 * fails when it should.
 */
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(__dirname, '../../src');

/**
 * Lower ranks may not import higher ones. Files at the top of src/ other than index.ts are shared
 * utilities; the CLI sits above the other front ends because it starts them (`daemon start`,
 * `mcp`, `dashboard`), and index.ts, the package's API, above everything.
 */
const RANK: Record<string, number> = { core: 0, '.': 0, store: 1, index: 1, service: 2, daemon: 3, mcp: 3, dashboard: 3, cli: 4, api: 5 };

interface Edge {
  from: string;
  to: string;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    return d.isDirectory() ? tsFiles(p) : d.name.endsWith('.ts') ? [p] : [];
  });
}

/** The folder a file belongs to: its top folder under src/, `.` for the shared utilities, `api` for the package's entry. */
function folderOf(src: string, file: string): string {
  const rel = relative(src, file);
  if (rel === 'index.ts') return 'api';
  const parts = rel.split(/[\\/]/);
  return parts.length === 1 ? '.' : (parts[0] ?? '.');
}

/** Every import of src/ that names another file of src/. */
export function importsOf(src: string): Edge[] {
  const edges: Edge[] = [];
  const pattern = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)'(\.[^']+)'|\blazy<[^>]*>\('(\.\/[^']+)'\)/g;
  for (const file of tsFiles(src)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(pattern)) {
      // `lazy` specs are relative to the top of src/ (dist/ at run time); imports to the file.
      const target = m[1] ? resolve(dirname(file), m[1]) : resolve(src, m[2] ?? '');
      edges.push({ from: relative(src, file), to: relative(src, target.replace(/\.js$/, '.ts')) });
    }
  }
  return edges;
}

/** What breaks the layering: imports that point up, and loops between folders. */
export function violations(src: string): string[] {
  const out: string[] = [];
  const between = new Map<string, Set<string>>();
  for (const e of importsOf(src)) {
    const a = folderOf(src, join(src, e.from));
    const b = folderOf(src, join(src, e.to));
    if (a === b) continue;
    if ((RANK[b] ?? Infinity) > (RANK[a] ?? -1)) out.push(`${e.from} imports ${e.to}: ${a} may not import ${b}`);
    if (!between.has(a)) between.set(a, new Set());
    between.get(a)!.add(b);
  }
  // A loop between folders: a folder reachable from itself.
  for (const start of between.keys()) {
    const seen = new Set<string>();
    const walk = (f: string, path: string[]): void => {
      for (const next of between.get(f) ?? []) {
        // Each loop once: from the folder first in sort order.
        if (next === start) {
          if (path.every((f) => f >= start)) out.push(`folders import each other: ${[...path, next].join(' -> ')}`);
        } else if (!seen.has(next)) {
          seen.add(next);
          walk(next, [...path, next]);
        }
      }
    };
    walk(start, [start]);
  }
  return out;
}

describe('layer boundaries of src/', () => {
  it('every import points down a layer or across, and no folders import each other', () => {
    expect(importsOf(SRC).length).toBeGreaterThan(300);
    expect(violations(SRC)).toEqual([]);
  });

  it('an upward import planted in a copy of src/ is caught, and so is a loop between folders', () => {
    const copy = mkdtempSync(join(tmpdir(), 'ba-layers-'));
    try {
      cpSync(SRC, copy, { recursive: true });
      const planted = join(copy, 'core', 'planted.ts');
      writeFileSync(planted, "import { main } from '../cli/main.js';\nexport const x = main;\n");
      expect(violations(copy)).toContain('core/planted.ts imports cli/main.ts: core may not import cli');
      rmSync(planted);
      writeFileSync(join(copy, 'daemon', 'planted.ts'), "import { y } from '../mcp/planted.js';\nexport const z = y;\n");
      writeFileSync(join(copy, 'mcp', 'planted.ts'), "import { z } from '../daemon/planted.js';\nexport const y = z;\n");
      expect(violations(copy)).toContain('folders import each other: daemon -> mcp -> daemon');
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});

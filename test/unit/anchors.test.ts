/**
 * Evidence anchors, the pure part: URI forms, git's -U0 hunks and how they move a line range,
 * what a change did to a cited location, declarations in five languages, fingerprints.
 */
import { describe, expect, it } from 'vitest';
import { anchorUri, citedChange, fingerprint, mapLines, parseAnchor, parsePatch, parseRaw, statusInText, worstStatus } from '../../src/core/anchors.js';
import { checkEvidenceUri } from '../../src/core/evidence.js';
import { declarationLines, symbolExtent } from '../../src/core/symbols.js';

const lines = (n: number, f = (i: number) => `line ${i}`): string => Array.from({ length: n }, (_, i) => f(i + 1)).join('\n') + '\n';

describe('anchors', () => {
  it('reads and writes the URI forms, and validation accepts symbols', () => {
    expect(parseAnchor('src/a.ts#L5-L7')).toEqual({ path: 'src/a.ts', lines: [5, 7] });
    expect(parseAnchor('src/a.ts:5')).toEqual({ path: 'src/a.ts', lines: [5, 5], colon: true });
    expect(parseAnchor('a.ts:5-9')).toEqual({ path: 'a.ts', lines: [5, 9], colon: true });
    expect(parseAnchor('src/a.py#symbol=Cls.run')).toEqual({ path: 'src/a.py', symbol: 'Cls.run' });
    expect(parseAnchor('https://x.test/a')).toBeNull();
    expect(anchorUri({ path: 'b.ts', lines: [6, 8] })).toBe('b.ts#L6-L8');
    expect(anchorUri({ path: 'b.ts', lines: [6, 6], colon: true })).toBe('b.ts:6');
    expect(checkEvidenceUri('code', 'src/billing/cron.ts#symbol=scheduleInvoices')).toBeNull();
    expect(checkEvidenceUri('code', 'src/cron.ts#symbol=a b')).toMatch(/not a name/);
    expect(checkEvidenceUri('code', '../x.ts#symbol=f')).toMatch(/inside the repository/);
    expect(worstStatus(['current', 'moved', 'changed'])).toBe('changed');
    expect(worstStatus([])).toBe('current');
  });

  it('maps line ranges through -U0 hunks: shifts above, changes inside, insertions at the edges', () => {
    const ins = (after: number, n: number) => ({ oldStart: after, oldCount: 0, newStart: after + 1, newCount: n });
    expect(mapLines([ins(2, 3)], 10, 12)).toEqual([13, 15]); // inserted above
    expect(mapLines([ins(9, 1)], 10, 12)).toEqual([11, 13]); // right before the first line
    expect(mapLines([ins(12, 4)], 10, 12)).toEqual([10, 12]); // right after the last line
    expect(mapLines([ins(10, 1)], 10, 12)).toBeNull(); // between two cited lines
    expect(mapLines([{ oldStart: 3, oldCount: 2, newStart: 2, newCount: 0 }], 10, 12)).toEqual([8, 10]); // deleted above
    expect(mapLines([{ oldStart: 11, oldCount: 1, newStart: 11, newCount: 1 }], 10, 12)).toBeNull(); // edited inside
    expect(mapLines([{ oldStart: 20, oldCount: 5, newStart: 20, newCount: 1 }], 10, 12)).toEqual([10, 12]); // below
  });

  it('parses raw diffs and patches, renames and quoted paths included', () => {
    const [x, y, z] = ['1'.repeat(40), '2'.repeat(40), '0'.repeat(40)];
    const raw = parseRaw(
      [
        `:100644 100644 ${x} ${y} M`,
        'a.ts',
        `:100644 100644 ${x} ${y} R087`,
        'old.ts',
        'new.ts',
        `:100644 000000 ${x} ${z} D`,
        'gone.ts',
        `:000000 100644 ${z} ${y} A`,
        'added.ts',
        '',
      ].join('\0'),
    );
    expect([...raw]).toEqual([
      ['a.ts', { status: 'M', to: 'a.ts', blobs: [x, y] }],
      ['old.ts', { status: 'R', to: 'new.ts', similarity: 87, blobs: [x, y] }],
      ['gone.ts', { status: 'D', to: 'gone.ts', blobs: [x, z] }],
    ]);
    const patch = [
      'diff --git a/old.ts b/new.ts',
      'similarity index 87%',
      'rename from old.ts',
      'rename to new.ts',
      '--- a/old.ts',
      '+++ b/new.ts',
      '@@ -2,0 +3,2 @@ ctx',
      '+x',
      '+y',
      '@@ -9 +11 @@',
      'diff --git "a/sp ace\\303\\251.ts" "b/sp ace\\303\\251.ts"',
      '--- "a/sp ace\\303\\251.ts"',
      '+++ "b/sp ace\\303\\251.ts"',
      '@@ -1,3 +0,0 @@',
    ].join('\n');
    const h = parsePatch(patch);
    expect(h.get('old.ts')).toEqual([
      { oldStart: 2, oldCount: 0, newStart: 3, newCount: 2 },
      { oldStart: 9, oldCount: 1, newStart: 11, newCount: 1 },
    ]);
    expect(h.get('sp aceé.ts')).toEqual([{ oldStart: 1, oldCount: 3, newStart: 0, newCount: 0 }]);
  });

  it('says what a change did to a cited location', () => {
    const shift = { status: 'M' as const, to: 'a.ts', hunks: [{ oldStart: 1, oldCount: 0, newStart: 2, newCount: 2 }] };
    expect(citedChange({ path: 'a.ts', lines: [5, 6] }, shift)).toEqual({ change: 'moved', to: 'a.ts#L7-L8' });
    expect(citedChange({ path: 'a.ts', lines: [5, 6] }, { ...shift, hunks: [{ oldStart: 6, oldCount: 1, newStart: 6, newCount: 1 }] })).toEqual({
      change: 'modified',
    });
    expect(citedChange({ path: 'a.ts', lines: [5, 6] }, { ...shift, hunks: [{ oldStart: 9, oldCount: 1, newStart: 9, newCount: 1 }] })).toBeNull();
    expect(citedChange({ path: 'a.ts' }, shift)).toEqual({ change: 'modified' });
    expect(citedChange({ path: 'a.ts' }, { status: 'R', to: 'b.ts', similarity: 100 })).toEqual({ change: 'moved', to: 'b.ts' });
    expect(citedChange({ path: 'a.ts', lines: [1, 2] }, { status: 'D', to: 'a.ts' })).toEqual({ change: 'deleted' });
    const base = 'def other():\n    pass\n\ndef run(x):\n    return x\n';
    const head = 'import os\n\ndef other():\n    pass\n\ndef run(x):\n    return x\n';
    const rn = { status: 'R' as const, to: 'b.py', similarity: 90, hunks: [{ oldStart: 0, oldCount: 0, newStart: 1, newCount: 2 }] };
    expect(citedChange({ path: 'a.py', symbol: 'run' }, rn, base, head)).toEqual({ change: 'moved', to: 'b.py#symbol=run' });
    const edited = { status: 'M' as const, to: 'a.py', hunks: [{ oldStart: 5, oldCount: 1, newStart: 5, newCount: 1 }] };
    expect(citedChange({ path: 'a.py', symbol: 'run' }, edited, base, base.replace('return x', 'return 2 * x'))).toEqual({ change: 'modified' });
    expect(citedChange({ path: 'a.py', symbol: 'other' }, edited, base, base)).toBeNull();
    expect(citedChange({ path: 'a.py', symbol: 'run' }, edited, base, 'def other():\n    pass\n')).toEqual({ change: 'deleted' });
  });

  it('finds declarations in TypeScript, Python, Go, Rust and Java, not mere uses', () => {
    const ts =
      'import { x } from "y";\nexport async function scheduleInvoices(a: number) {\n  return run(a);\n}\nclass Billing {\n  private async charge(amount: number): Promise<void> {\n    charge(1);\n  }\n}\nexport const rate = 3;\n';
    expect(declarationLines(ts, 'scheduleInvoices', 'a.ts')).toEqual([2]);
    expect(declarationLines(ts, 'charge', 'a.ts')).toEqual([6]);
    expect(declarationLines(ts, 'Billing.charge', 'a.ts')).toEqual([6]);
    expect(declarationLines(ts, 'rate', 'a.ts')).toEqual([10]);
    expect(declarationLines(ts, 'run', 'a.ts')).toEqual([]);
    expect(declarationLines('class A:\n    async def go(self):\n        go()\nLIMIT = 3\n', 'go', 'a.py')).toEqual([2]);
    expect(declarationLines('class A:\n    pass\nLIMIT = 3\n', 'LIMIT', 'a.py')).toEqual([3]);
    expect(declarationLines('package x\n\nfunc (s *Server) Serve() error {\n\treturn Serve()\n}\ntype Server struct{}\n', 'Serve', 'a.go')).toEqual([3]);
    expect(declarationLines('func TestNoNameN(t *testing.T) {\n}\n', 'TestNoNameN', 'a_test.go')).toEqual([1]); // a name holding the placeholder
    expect(declarationLines('pub(crate) async fn fetch() {}\nimpl Foo { fn fetch2() { fetch(); } }\npub struct Foo;\n', 'fetch', 'a.rs')).toEqual([1]);
    expect(declarationLines('public class Invoices {\n  public static List<String> due(int d) {\n    return due(d);\n  }\n}\n', 'due', 'A.java')).toEqual([2]);
    // From the declaration to the line before the next one.
    expect(symbolExtent('def a():\n    x\n\ndef b():\n    y\n', 'a.py', 1)).toEqual([1, 3]);
    expect(symbolExtent('def a():\n    x\n\ndef b():\n    y\n', 'a.py', 4)).toEqual([4, 5]);
  });

  it('tells a moved range from a changed one by content', () => {
    const text = lines(30);
    const fp = fingerprint(text, 10, 12);
    const rec = { uri: 'a.ts#L10-L12', status: 'current' as const, path: 'a.ts', lines: [10, 12] as [number, number], fp };
    expect(statusInText({ path: 'a.ts', lines: [10, 12] }, text, rec)).toBe('current');
    expect(statusInText({ path: 'a.ts', lines: [10, 12] }, `x\n${text}`, rec)).toBe('moved');
    expect(statusInText({ path: 'a.ts', lines: [10, 12] }, text.replace('line 12\n', 'twelve\n'), rec)).toBe('changed');
    expect(statusInText({ path: 'a.ts', lines: [10, 12] }, text.replace('line 11\n', 'eleven\n'), rec)).toBe('changed');
    expect(statusInText({ path: 'a.ts', lines: [10, 12] }, null, rec)).toBe('missing');
    expect(statusInText({ path: 'a.ts', lines: [40, 42] }, text)).toBe('missing');
    // A range written end first (#L12-L10) has a fingerprint of no lines: it matches nowhere, and reading it does not throw.
    const backwards = { ...rec, uri: 'a.ts#L12-L10', lines: [12, 10] as [number, number], fp: fingerprint(text, 12, 10) };
    expect(statusInText({ path: 'a.ts', lines: [12, 10] }, text, backwards)).toBe('changed');
  });
});

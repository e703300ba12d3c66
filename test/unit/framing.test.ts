import { describe, expect, it } from 'vitest';
import { LineReader } from '../../src/daemon/protocol.js';

describe('the daemon socket framing', () => {
  it('splits lines however the bytes are cut, a character cut in two included', () => {
    const lines: string[] = [];
    const r = new LineReader(
      1 << 20,
      (l) => lines.push(l),
      () => lines.push('TOO LONG'),
    );
    const bytes = Buffer.from('{"a":"é"}\n{"b":"日本"}\n\n{"c":1}\nrest');
    for (let i = 0; i < bytes.length; i += 3) r.push(bytes.subarray(i, i + 3));
    expect(lines).toEqual(['{"a":"é"}', '{"b":"日本"}', '', '{"c":1}']);
  });

  it('refuses a line as soon as it passes the limit and reads nothing after it', () => {
    const seen: (string | number)[] = [];
    const r = new LineReader(
      10,
      (l) => seen.push(l),
      (n) => seen.push(n),
    );
    r.push(Buffer.from('short\n0123456789'));
    r.push(Buffer.from('X'));
    r.push(Buffer.from('more\nlines\n'));
    expect(seen).toEqual(['short', 11]);
  });

  it('reads a 20 MB line sent in 64 KB pieces in one pass (each piece searched once)', () => {
    let got = 0;
    const r = new LineReader(
      32 << 20,
      (l) => (got = l.length),
      () => undefined,
    );
    const piece = Buffer.alloc(64 << 10, 97);
    let searched = 0;
    const indexOf = piece.indexOf.bind(piece);
    piece.indexOf = ((...a: Parameters<Buffer['indexOf']>) => (searched++, indexOf(...a))) as Buffer['indexOf'];
    for (let i = 0; i < 320; i++) r.push(piece);
    r.push(Buffer.from('\n'));
    expect(got).toBe(320 * (64 << 10));
    expect(searched).toBe(320);
  });
});

/**
 * Sentence vectors from a static token table (models/minilm-l6-static.bin, made by
 * scripts/distill-static.js from all-MiniLM-L6-v2): a text is split into the model's WordPiece
 * tokens as the model splits it, and its vector is the sum of its tokens' rows (each already
 * weighted by how rare the token is), scaled to unit length. No model runs.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const MAGIC = 'BASS-STATIC-1\n';
/** The table shipped in the package (`import.meta.url` names this file in dist/ and in the bundle alike). */
const STATIC_TABLE = fileURLToPath(new URL('../../models/minilm-l6-static.bin', import.meta.url));
/** Words longer than this are one unknown token, as the model has them. */
const MAX_WORD = 100;
/** Words seen recently, with their rows: entries repeat their words. */
const WORD_CACHE = 20_000;

export class StaticEmbedding {
  private readonly words = new Map<string, number[]>();

  private constructor(
    readonly model: string,
    readonly dims: number,
    private readonly rows: Map<string, number>,
    private readonly scales: Float32Array,
    private readonly table: Int8Array,
  ) {}

  /** The table in `file`; throws when it is missing or not such a table. */
  static load(file = STATIC_TABLE): StaticEmbedding {
    const buf = readFileSync(file);
    const bad = (): Error => new Error(`${file} is not a static embedding table`);
    if (buf.toString('latin1', 0, MAGIC.length) !== MAGIC) throw bad();
    const len = Number(buf.toString('latin1', MAGIC.length, MAGIC.length + 12));
    const start = MAGIC.length + 13;
    const h = JSON.parse(buf.toString('utf8', start, start + len)) as { model: string; dims: number; rows: number; vocab: string[] };
    const at = Math.ceil((start + len) / 4) * 4;
    if (!Number.isInteger(h.dims) || h.vocab?.length !== h.rows || buf.length !== at + h.rows * (4 + h.dims)) throw bad();
    // Copied out of the file's buffer: its offset need not be aligned for a Float32Array view.
    const scales = new Float32Array(buf.buffer.slice(buf.byteOffset + at, buf.byteOffset + at + h.rows * 4));
    const table = new Int8Array(buf.buffer, buf.byteOffset + at + h.rows * 4, h.rows * h.dims);
    return new StaticEmbedding(h.model, h.dims, new Map(h.vocab.map((t, i) => [t, i])), scales, table);
  }

  /** The unit-length vector of `text` (all zeros when no token of it is in the vocabulary). */
  embed(text: string): Float32Array {
    const d = this.dims;
    const v = new Float32Array(d);
    for (const word of basicTokens(text))
      for (const r of this.pieces(word)) {
        // `!`: k < d, the length of v and of each of the table's rows (r is a row: see pieces).
        const s = this.scales[r]!;
        const o = r * d;
        for (let k = 0; k < d; k++) v[k]! += s * this.table[o + k]!;
      }
    let n = 0;
    for (const x of v) n += x * x;
    if (n > 0) {
      n = 1 / Math.sqrt(n);
      for (let k = 0; k < d; k++) v[k]! *= n;
    }
    return v;
  }

  /** The rows of a word's WordPiece tokens: the longest vocabulary piece first, then `##` pieces; none when a part has no piece (the model's unknown token). */
  private pieces(word: string): number[] {
    let rows = this.words.get(word);
    if (rows) return rows;
    rows = [];
    if (word.length <= MAX_WORD)
      for (let start = 0; start < word.length;) {
        let end = word.length;
        let row: number | undefined;
        for (; end > start; end--) if ((row = this.rows.get(start ? `##${word.slice(start, end)}` : word.slice(start, end))) !== undefined) break;
        if (row === undefined) {
          rows = [];
          break;
        }
        rows.push(row);
        start = end;
      }
    if (this.words.size >= WORD_CACHE) this.words.clear();
    this.words.set(word, rows);
    return rows;
  }
}

/** BERT's punctuation (ASCII symbols too) and CJK ideographs: each a token of its own. */
const PUNCT = '!-/:-@\\[-`{-~\\p{P}\\u{4e00}-\\u{9fff}\\u{3400}-\\u{4dbf}\\u{20000}-\\u{2ceaf}\\u{f900}-\\u{faff}\\u{2f800}-\\u{2fa1f}';
const TOKEN = new RegExp(`[${PUNCT}]|[^\\s${PUNCT}]+`, 'gu');

/** BERT's basic tokenizer for an uncased model: lowercase, accents and control characters dropped, split on white space and around PUNCT. */
export function basicTokens(text: string): string[] {
  const t = /^[\x20-\x7e\t\n\r]*$/.test(text)
    ? text.toLowerCase()
    : text
        .toLowerCase()
        .normalize('NFD')
        .replace(/[\p{Mn}\p{Cc}\p{Cf}\ufffd]/gu, (c) => (/\s/u.test(c) ? c : ''));
  return t.match(TOKEN) ?? [];
}

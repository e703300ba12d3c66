/**
 * `writeFileAtomic` is the only way entry and state files are written: temp file in the same
 * directory, fsync, rename, so a reader (or a crash) sees the old file or the new one.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { nodeCrypto } from '../node-crypto.js';

export { tryOr } from '../try.js';

/** Random bytes for temp names, drawn a few hundred names at a time (a large apply writes thousands of files). */
let pool: Buffer | undefined;
let poolAt = 0;

function tempName(): string {
  if (!pool || poolAt >= pool.length) {
    pool = nodeCrypto().randomBytes(6 * 256);
    poolAt = 0;
  }
  poolAt += 6;
  return pool.toString('hex', poolAt - 6, poolAt);
}

export function writeFileAtomic(file: string, data: string | Uint8Array, opts: { fsync?: boolean; mode?: number; dirExists?: boolean } = {}): void {
  writeFileAtomicWith(file, (fd) => writeFileSync(fd, data), opts);
}

/** The same, with `write` writing the content to the temporary file's descriptor. */
export function writeFileAtomicWith(file: string, write: (fd: number) => void, opts: { fsync?: boolean; mode?: number; dirExists?: boolean } = {}): void {
  const dir = dirname(file);
  if (!opts.dirExists) mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.${tempName()}.tmp`); // NOTE: "." and ".tmp": the watcher and git ignore it
  const fd = openSync(tmp, 'wx', opts.mode ?? 0o644); // O_EXCL: never a link planted at that name
  try {
    try {
      write(fd);
      if (opts.fsync !== false) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** `size:mtime:ctime` (ctime also changes when an editor puts the mtime back). */
export const stampOf = (st: { size: number; mtimeMs: number; ctimeMs: number }): string => `${st.size}:${st.mtimeMs}:${st.ctimeMs}`;

/** `len` bytes at `pos` of an open file (an error if the file ends first). */
export const readAt = (fd: number, pos: number, len: number): Buffer => readInto(fd, pos, Buffer.allocUnsafe(len));

export function readInto<T extends Uint8Array>(fd: number, pos: number, into: T): T {
  let got = 0;
  while (got < into.length) {
    const n = readSync(fd, into, got, into.length - got, pos + got);
    if (n === 0) throw new Error(`file ends at ${pos + got} of ${pos + into.length} bytes`);
    got += n;
  }
  return into;
}

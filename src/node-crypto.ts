/** `node:crypto` on first use: importing it is a measurable part of a CLI start, and most commands hash nothing. */
import type * as Crypto from 'node:crypto';

let mod: typeof Crypto | undefined;

export const nodeCrypto = (): typeof Crypto => (mod ??= process.getBuiltinModule('node:crypto'));

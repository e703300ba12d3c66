/** The rules for project names and memory ids (folders, commit messages); a problem never repeats the name: it may be a pasted token. */
import { lazy } from '../lazy.js';
import { ID_PATTERN, ULID_PATTERN } from './constants.js';

// Loaded only for a name that is not a folder yet: reads of an existing project never need the rules.
const secrets = lazy<typeof import('./secrets.js')>('./core/secrets.js');

/** A new project's name: lower-case letters, digits, `.`, `_`, `-`; a letter or digit first. */
const PROJECT_SLUG = /^[a-z0-9][a-z0-9._-]{0,63}$/;
/** A project folder an earlier version let be made (capitals too): it keeps working. */
export const LEGACY_PROJECT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Device names Windows reserves in every folder, in any case and with any extension (`nul.txt`, `Com1.json`). */
const WINDOWS_DEVICE = /^(?:con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])(?:\.|$)/i;
/** Names inside ai-memory/ that are not projects (exports, our own files). */
export const RESERVED_PROJECT_NAMES: ReadonlySet<string> = new Set(['entries', 'memory.jsonl']);

/** Why `name` cannot name a new project, or null when it can. */
export function newProjectProblem(name: string): string | null {
  if (WINDOWS_DEVICE.test(name)) return 'is a device name on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9, with any extension), where no folder can have it';
  if (RESERVED_PROJECT_NAMES.has(name)) return 'is reserved';
  if (!PROJECT_SLUG.test(name) || name.endsWith('.'))
    return 'must be 1-64 lower-case letters, digits, ".", "_" or "-", starting with a letter or digit and not ending with "."';
  const [found] = secrets().scanText('project', name);
  return found ? `looks like a secret (rule ${found.rule}): choose another name` : null;
}

/** Whether `id` is a ULID, the only id a new entry may have. */
export const isUlid = (id: unknown): id is string => typeof id === 'string' && ULID_PATTERN.test(id);

/** Whether `id` is an id an earlier version imported (readable, but no new entry gets one). */
export const isLegacyId = (id: unknown): boolean => typeof id === 'string' && ID_PATTERN.test(id) && !isUlid(id);

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID-shaped id made from a hex digest (33 digits or more): an import of the same outside records finds the same entries again. */
export function ulidFromDigest(hex: string): string {
  let n = BigInt(`0x${hex.slice(0, 33)}`); // 132 bits: 3 for the first character (0-7), 5 for each of the other 25
  let out = '';
  for (let i = 0; i < 25; i++, n >>= 5n) out = CROCKFORD[Number(n & 31n)] + out;
  return CROCKFORD[Number(n & 7n)] + out;
}

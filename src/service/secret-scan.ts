/** The secret scan of every write, import and validate: secretlint's recommend preset and our rules over each field's raw text (JSON escaping can hide a key). */
import { lazy } from '../lazy.js';
import { dedupe, isPlaceholder, position, scanText, type SecretFinding } from '../core/secrets.js';

type LintSource = typeof import('@secretlint/core').lintSource;
type SecretlintConfig = Parameters<LintSource>[0]['options']['config'];
let secretlint: { lintSource: LintSource; config: SecretlintConfig } | null | undefined;
// Packages by name (not a `require` of this file's): the bundle serves all three from one chunk with a code cache (scripts/bundle.js); the profiler is core's own.
const core = lazy<typeof import('@secretlint/core')>('@secretlint/core');
const preset = lazy<typeof import('@secretlint/secretlint-rule-preset-recommend')>('@secretlint/secretlint-rule-preset-recommend');
const profiler = lazy<{ secretLintProfiler: { mark: () => void } }>('@secretlint/profiler', '@secretlint/core');

/** Loads secretlint once (it is slow to load); null if it cannot be loaded, and our rules still run. */
function loadSecretlint(): typeof secretlint {
  if (secretlint !== undefined) return secretlint;
  try {
    const config = {
      rules: [
        {
          id: '@secretlint/secretlint-rule-preset-recommend',
          rule: preset().creator,
          rules: [{ id: '@secretlint/secretlint-rule-aws', options: { enableIDScanRule: true } }],
        },
      ],
    } as unknown as SecretlintConfig;
    secretlint = { lintSource: core().lintSource, config };
    // secretlint's profiler is always on: every rule run leaves marks it keeps and searches on each new one (a batch slows down
    // quadratically, a long-lived process grows without bound). Its `mark` only feeds a timing report we never read.
    profiler().secretLintProfiler.mark = () => undefined;
  } catch {
    secretlint ??= null; // (loaded but the profiler not found: slower, still correct)
  }
  return secretlint;
}

const SEPARATOR = '\n\n';

/** secretlint over many fields in one call (its cost is per call): texts joined by blank lines, each finding mapped back to the field it starts in. */
export async function scanWithSecretlint(fields: { path: string; text: string }[]): Promise<SecretFinding[]> {
  const sl = loadSecretlint();
  const live = fields.filter((f) => f.text);
  if (!sl || live.length === 0) return [];
  const starts: number[] = [];
  let at = 0;
  for (const f of live) {
    starts.push(at);
    at += f.text.length + SEPARATOR.length;
  }
  const content = live.map((f) => f.text).join(SEPARATOR);
  const r = await sl.lintSource({
    source: { content, filePath: '/memory-entry.txt', ext: '.txt', contentType: 'text' },
    options: { config: sl.config, maskSecrets: true, noPhysicFilePath: true },
  });
  const out: SecretFinding[] = [];
  for (const m of r.messages) {
    if (m.type !== 'message') continue;
    let k = starts.length - 1;
    while (k > 0 && starts[k]! > m.range[0]) k--;
    const f = live[k]!;
    const start = m.range[0] - starts[k]!;
    const end = Math.min(f.text.length, m.range[1] - starts[k]!);
    const value = f.text.slice(start, end);
    const rule = m.ruleId.replace(/^@secretlint\/secretlint-rule-/, '');
    // Our format knowledge contradicts secretlint here: a Slack token carries long numeric ids (`xoxb-12345-abcd234` is only shaped like one).
    if (isPlaceholder(value) || (rule === 'slack' && /^xox/.test(value) && !(value.length >= 24 && /\d{8,}/.test(value)))) continue;
    out.push({ path: f.path, rule: `secretlint/${rule}`, start, end, ...position(f.text, start) });
  }
  return out;
}

// Texts found clean: a write scans its input before the lock (to report each update's problems), then what it commits.
const clean = new Set<string>();
const CLEAN_MAX = 200_000;

export const knownClean = (text: string): boolean => clean.has(text);

/** Both detectors over fields, one finding per overlapping span; each distinct text is scanned once (a batch repeats sections, tags… thousands of times). */
export async function scanFields(fields: { path: string; text: string }[]): Promise<SecretFinding[]> {
  const holders = new Map<string, string[]>();
  for (const f of fields) {
    if (!f.text || clean.has(f.text)) continue;
    const paths = holders.get(f.text);
    if (paths) paths.push(f.path);
    else holders.set(f.text, [f.path]);
  }
  if (!holders.size) return [];
  const texts = [...holders.keys()].map((text, i) => ({ path: String(i), text }));
  const own = texts.flatMap((f) => scanText(f.path, f.text));
  const byText = dedupe([...own, ...(await scanWithSecretlint(texts))]);
  const hit = new Set(byText.map((f) => f.path));
  if (clean.size > CLEAN_MAX) clean.clear();
  for (const f of texts) if (!hit.has(f.path)) clean.add(f.text);
  return dedupe(byText.flatMap((f) => holders.get(texts[Number(f.path)]!.text)!.map((path) => ({ ...f, path }))));
}

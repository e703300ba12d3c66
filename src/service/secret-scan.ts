/**
 * The secret scan of every write, import and validate (002 Req 13): secretlint's recommend
 * preset (AWS ids enabled) and our own rules (src/core/secrets.ts) over each field's raw text,
 * never its JSON serialization (escaping can hide a key). Findings name field, rule and
 * position only.
 */
import { createRequire } from 'node:module';
import { dedupe, isPlaceholder, scanText, type SecretFinding } from '../core/secrets.js';

const require = createRequire(import.meta.url);

type LintSource = typeof import('@secretlint/core').lintSource;
type SecretlintConfig = Parameters<LintSource>[0]['options']['config'];
let secretlint: { lintSource: LintSource; config: SecretlintConfig } | null | undefined;

/** Loads secretlint once (about 60 ms); null if it cannot be loaded, and our rules still run. */
function loadSecretlint(): typeof secretlint {
  if (secretlint !== undefined) return secretlint;
  try {
    const core = require('@secretlint/core') as typeof import('@secretlint/core');
    const preset = require('@secretlint/secretlint-rule-preset-recommend') as typeof import('@secretlint/secretlint-rule-preset-recommend');
    const config = {
      rules: [
        {
          id: '@secretlint/secretlint-rule-preset-recommend',
          rule: preset.creator,
          rules: [{ id: '@secretlint/secretlint-rule-aws', options: { enableIDScanRule: true } }],
        },
      ],
    } as unknown as SecretlintConfig;
    secretlint = { lintSource: core.lintSource, config };
  } catch {
    secretlint = null;
  }
  return secretlint;
}

/** secretlint over one text; ids shortened (`aws`, `github`, ...) and placeholders dropped. */
async function secretlintText(path: string, text: string): Promise<SecretFinding[]> {
  const sl = loadSecretlint();
  if (!sl) return [];
  const r = await sl.lintSource({
    source: { content: text, filePath: '/memory-entry.txt', ext: '.txt', contentType: 'text' },
    options: { config: sl.config, maskSecrets: true, noPhysicFilePath: true },
  });
  return r.messages
    .filter((m) => m.type === 'message')
    .filter((m) => !isPlaceholder(text.slice(m.range[0], m.range[1])))
    .map((m) => ({
      path,
      rule: `secretlint/${m.ruleId.replace(/^@secretlint\/secretlint-rule-/, '')}`,
      start: m.range[0],
      end: m.range[1],
      line: m.loc.start.line,
      column: m.loc.start.column + 1,
    }));
}

/** secretlint's preset alone (the evaluation script compares it with our rules). */
export async function scanWithSecretlint(fields: { path: string; text: string }[]): Promise<SecretFinding[]> {
  const all: SecretFinding[] = [];
  for (const f of fields) if (f.text) all.push(...(await secretlintText(f.path, f.text)));
  return all;
}

/** Scans fields (`{path, text}`) with both detectors; one finding per overlapping span. */
export async function scanFields(fields: { path: string; text: string }[]): Promise<SecretFinding[]> {
  const all: SecretFinding[] = [];
  for (const f of fields) {
    if (!f.text) continue;
    all.push(...scanText(f.path, f.text), ...(await secretlintText(f.path, f.text)));
  }
  return dedupe(all);
}

/**
 * Secret rules that know a key or token by its shape, whoever issued it: JWTs, PEM private keys and their bare bodies, age and 1Password keys.
 */
import type { Rule, Span } from './checks.js';

/**
 * PEM private keys with a body: an empty BEGIN/END pair in documentation is not a key. The body
 * may sit in a JSON string (a service account file), its line breaks written as `\n`; header
 * lines (`Proc-Type: …`) are skipped.
 */
function pemPrivateKeys(text: string): Span[] {
  const out: Span[] = [];
  const begin = /-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----/g;
  for (let m = begin.exec(text); m; m = begin.exec(text)) {
    const after = text.slice(m.index + m[0].length, m.index + m[0].length + 600).replace(/\\[nr]/g, '\n');
    const [body = ''] = after.split('-----');
    const base64 = body
      .split('\n')
      .filter((l) => !l.includes(': '))
      .join('')
      .replace(/\s/g, '');
    if (/^[A-Za-z0-9+/=]{16,}/.test(base64)) out.push({ start: m.index, end: m.index + m[0].length });
  }
  return out;
}

export const SHAPE_RULES: readonly Rule[] = [
  { id: 'jwt', keywords: ['eyj'], re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { id: 'private-key', keywords: ['private key'], scan: pemPrivateKeys },
  {
    // The base64 body of a private key without its BEGIN line: DER of PKCS#1 RSA, PKCS#8, SEC1 EC, Ed25519.
    id: 'private-key-body',
    keywords: ['mii', 'mhcc', 'mc4c', 'mig'],
    re: /\b(?:MII[A-Za-z0-9+/]{2}(?:IBAAK|AIBAAK|IBADAN|gIBADAN)|MIG[A-Za-z0-9+/]IBADAT|MHcCAQEE|MC4CAQAwBQYDK2Vw)[A-Za-z0-9+/]{24,}/g,
  },
  { id: 'age-secret-key', keywords: ['age-secret-key-1'], re: /\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b/g },
  { id: 'onepassword-token', keywords: ['ops_eyj'], re: /\bops_eyJ[A-Za-z0-9+/=_-]{200,}/g },
];

import { describe, expect, it } from 'vitest';
import { isUlid, ulidFromDigest } from '../../src/core/names.js';
import { validateEntryInput } from '../../src/core/validate.js';
import { checkId, checkProjectName } from '../../src/store/workspace.js';

const refused = (name: string, exists?: (n: string) => boolean): string => {
  try {
    checkProjectName(name, exists);
    return '';
  } catch (err) {
    return (err as Error).message;
  }
};

describe('names and ids', () => {
  it('a new project is a lower-case slug, never a Windows device name (any case, any extension) nor a secret', () => {
    for (const n of ['CON', 'nul', 'Com1.txt', 'lpt9', 'aux.tar.gz', 'PRN', 'com\u00b9']) expect(refused(n), n).toMatch(/device name on Windows/);
    for (const n of ['console', 'company', 'comp1', 'null', 'billing-api', 'a.b_c', 'global']) expect(refused(n), n).toBe('');
    for (const n of ['MyProj', '.hidden', 'x.', 'a b', 'x'.repeat(65)]) expect(refused(n), n).toMatch(/lower-case/);
    const token = 'xoxb-2718281828-3141592653589-q7w3e9r1t5y8u2i4o6p0a3s7';
    expect(refused(token)).toMatch(/^the project name given looks like a secret \(rule slack-token\)/);
    // A folder an earlier version made keeps working, whatever its case.
    expect(refused('MyProj', (n) => n === 'MyProj')).toBe('');
    expect(refused('../x', () => true)).toMatch(/plain folder name/);
  });

  it('ids: earlier ones can still be named, anything else is refused without being repeated; ULIDs from a digest', () => {
    expect(() => checkId('01J9ZQ4V6M3XK8T2R5N7B1C0DE')).not.toThrow();
    expect(() => checkId('legacy-note-1')).not.toThrow();
    for (const bad of ['a b', 'x\u0000', '../etc', 'ghp_Zq8Wm2Xc4Vb6Nn1Ll3Kk5Pp7Oo9Ii0Uu2Yy4T!'])
      expect(() => checkId(bad)).toThrow(/^(?:id )?is not a memory id(?! .*Zq8W)/);
    expect(isUlid('01J9ZQ4V6M3XK8T2R5N7B1C0DE')).toBe(true);
    expect(isUlid('81J9ZQ4V6M3XK8T2R5N7B1C0DE')).toBe(false); // past 48 bits of time
    expect(isUlid('legacy-note-1')).toBe(false);
    const a = ulidFromDigest('f'.repeat(40));
    expect(isUlid(a) && a === ulidFromDigest('f'.repeat(40))).toBe(true);
    expect(ulidFromDigest('0'.repeat(40))).toBe('0'.repeat(26));
  });

  it('lifecycle.reviewed_at must be an ISO 8601 timestamp', () => {
    const base = {
      section: 'learnings',
      kind: 'other',
      subject: 's',
      scope: 'repo',
      summary: 'x',
      content: 'y',
      confidence: 0.5,
      status: 'draft',
    };
    expect(validateEntryInput({ ...base, lifecycle: { reviewed_at: '2026-01-31T00:00:00Z' } }).ok).toBe(true);
    expect(validateEntryInput({ ...base, lifecycle: { reviewed_at: 'last tuesday' } }).errors).toEqual([
      { path: 'lifecycle.reviewed_at', message: expect.stringMatching(/ISO 8601/) },
    ]);
  });
});

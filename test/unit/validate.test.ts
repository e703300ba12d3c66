import { describe, expect, it } from 'vitest';
import { validateEntryInput, validateUpdate, validateStoredEntry, validateDocument } from '../../src/core/validate.js';
import { duplicateHash } from '../../src/core/meta.js';
import { normalizeTimestamp } from '../../src/core/time.js';
import { checkEvidenceUri } from '../../src/core/evidence.js';
import { buildEntry, serializeEntry, commitMessage, parseCommitTrailers } from '../../src/core/entry.js';
import { entry } from '../helpers/repo.js';

const paths = (r: { errors: { path: string }[] }) => r.errors.map((e) => e.path);

describe('validateEntryInput', () => {
  it('accepts a complete entry and fills defaults', () => {
    const r = validateEntryInput(entry());
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.value.status).toBe('active');
      expect(r.value.related_entries).toEqual([]);
      expect(r.value.valid_to).toBeNull();
    }
  });

  it('names every missing required field (Req 5.7, 9.2)', () => {
    const r = validateEntryInput({ section: 'decisions' });
    expect(r.ok).toBe(false);
    expect(paths(r)).toEqual(expect.arrayContaining(['kind', 'subject', 'scope', 'summary', 'content', 'confidence']));
    expect(r.errors.find((e) => e.path === 'kind')?.message).toBe('is required');
  });

  it('enforces summary 300 and content 2000 (Req 5.8, 5.9)', () => {
    const r = validateEntryInput(entry({ summary: 'x'.repeat(301), content: 'y'.repeat(2001) }));
    expect(r.errors).toEqual(
      expect.arrayContaining([
        { path: 'summary', message: 'must be at most 300 characters (got 301)' },
        { path: 'content', message: 'must be at most 2000 characters (got 2001)' },
      ]),
    );
    expect(validateEntryInput(entry({ summary: 'x'.repeat(300), content: 'y'.repeat(2000) })).ok).toBe(true);
  });

  it('checks section, kind and confidence range (Req 3.1, 3.3, 10.5)', () => {
    const r = validateEntryInput(entry({ section: 'misc', kind: 'idea', confidence: 1.5 }));
    expect(paths(r)).toEqual(expect.arrayContaining(['section', 'kind']));
    const c = validateEntryInput(entry({ confidence: -0.1 }));
    expect(c.errors[0]).toMatchObject({ path: 'confidence' });
  });

  it('checks scope forms (Req 3.5)', () => {
    for (const s of ['repo', 'org', 'customer', 'service:billing', 'environment:prod', 'environment:staging']) {
      expect(validateEntryInput(entry({ scope: s })).ok, s).toBe(true);
    }
    for (const s of ['service:', 'environment:dev', 'team', 'Repo', 'service:a b']) {
      expect(validateEntryInput(entry({ scope: s })).errors[0]?.path, s).toBe('scope');
    }
  });

  it('rejects unknown and system fields', () => {
    const r = validateEntryInput(entry({ id: 'X', colour: 'red' }));
    expect(r.errors).toEqual(
      expect.arrayContaining([
        { path: 'id', message: 'is not a known field' },
        { path: 'colour', message: 'is not a known field' },
      ]),
    );
  });

  it('write policy: active needs evidence, drafts may omit it (Req 16.1-16.2)', () => {
    expect(validateEntryInput(entry({ evidence: [] })).errors[0]?.path).toBe('evidence');
    expect(validateEntryInput(entry({ evidence: undefined })).errors[0]?.path).toBe('evidence');
    expect(validateEntryInput(entry({ evidence: [], status: 'draft' })).ok).toBe(true);
  });

  it('write policy: decisions, requirements, invariants need code/artifact/ticket/doc (Req 16.3)', () => {
    const weak = [{ type: 'assumption', uri: 'we think so', note: '' }];
    for (const kind of ['decision', 'requirement', 'invariant']) {
      expect(validateEntryInput(entry({ kind, evidence: weak })).errors[0]?.message).toMatch(/needs evidence of type code, artifact, ticket or doc/);
    }
    expect(validateEntryInput(entry({ kind: 'hypothesis', evidence: weak })).ok).toBe(true);
  });

  it('evidence objects need type, uri and note (Req 18.1)', () => {
    const r = validateEntryInput(entry({ evidence: [{ type: 'code', uri: 'src/a.ts' }] }));
    expect(r.errors).toEqual([{ path: 'evidence[0].note', message: 'is required' }]);
  });

  it('state entries need valid_from and valid_to, in order (Req 19.1, 9.7)', () => {
    const r = validateEntryInput(entry({ section: 'state', kind: 'metric', evidence: [{ type: 'log', uri: 'logs/x.log', note: '' }] }));
    expect(paths(r)).toEqual(['valid_from', 'valid_to']);
    const bad = validateEntryInput(entry({ section: 'state', kind: 'metric', valid_from: '2026-02-01', valid_to: '2026-01-01' }));
    expect(bad.errors[0]).toMatchObject({ path: 'valid_to', message: 'must be later than valid_from' });
    const ok = validateEntryInput(entry({ section: 'state', valid_from: '2026-01-01', valid_to: '2026-02-01T00:00:00+02:00' }));
    expect(ok.ok && ok.value.valid_to).toBe('2026-01-31T22:00:00.000Z');
  });

  it('finds duplicates through the context (Req 16.6), ignoring case and spacing', () => {
    const key = duplicateHash({ subject: 'billing.invoices', scope: 'service:billing', summary: 'Invoices  are generated nightly by a cron job.' });
    const r = validateEntryInput(entry({ summary: 'invoices are generated nightly by a cron job.' }), {
      findDuplicate: (k) => (k === key ? '01ABC' : undefined),
    });
    expect(r.errors[0]?.message).toMatch(/duplicates entry 01ABC/);
  });
});

describe('evidence URIs (Req 18.2-18.4, 13.9)', () => {
  it('code: git permalink or repo path', () => {
    expect(checkEvidenceUri('code', 'https://github.com/o/r/blob/3f2a1b/src/a.ts#L3-L9')).toBeNull();
    expect(checkEvidenceUri('code', 'https://gitlab.com/g/p/-/blob/main/a.ts')).toBeNull();
    expect(checkEvidenceUri('code', 'src/a.ts:10-20')).toBeNull();
    expect(checkEvidenceUri('code', 'https://example.com/about')).toMatch(/git permalink/);
    expect(checkEvidenceUri('code', '/etc/passwd')).toMatch(/relative/);
    expect(checkEvidenceUri('code', '../../outside.ts')).toMatch(/climbs out/);
    expect(checkEvidenceUri('code', 'src\\win.ts')).toMatch(/separator/);
  });
  it('ticket: issue trackers', () => {
    for (const u of [
      'https://github.com/o/r/issues/12',
      'https://github.com/o/r/pull/3',
      'https://acme.atlassian.net/browse/PAY-142',
      'https://linear.app/acme/issue/ENG-7',
      'https://gitlab.com/g/p/-/issues/9',
    ]) {
      expect(checkEvidenceUri('ticket', u), u).toBeNull();
    }
    expect(checkEvidenceUri('ticket', 'PAY-142')).toMatch(/ticket URL/);
    expect(checkEvidenceUri('ticket', 'https://example.com/page')).toMatch(/ticket URL/);
  });
  it('doc: URL or path; ADRs and RFCs', () => {
    expect(checkEvidenceUri('doc', 'docs/adr/0003-nightly-invoices.md')).toBeNull();
    expect(checkEvidenceUri('doc', 'https://example.com/rfc/12')).toBeNull();
    expect(checkEvidenceUri('doc', 'ftp://x/y')).toMatch(/http/);
  });
  it('refuses credentials and sensitive paths', () => {
    expect(checkEvidenceUri('doc', 'https://user:hunter2@example.com/x')).toMatch(/credentials/);
    expect(checkEvidenceUri('artifact', 'https://ci.example.com/a?token=abc')).toMatch(/query string/);
    expect(checkEvidenceUri('code', 'config/.env')).toMatch(/credentials/);
    expect(checkEvidenceUri('artifact', 'home/.aws/credentials')).toMatch(/credentials/);
  });
});

describe('validateUpdate', () => {
  it('create needs entry; supersede/deprecate need target_id', () => {
    expect(validateUpdate({ operation: 'create' }).errors[0]).toMatchObject({ path: 'entry' });
    expect(validateUpdate({ operation: 'deprecate' }).errors[0]).toMatchObject({ path: 'target_id' });
    expect(validateUpdate({ operation: 'supersede', target_id: 'A1' }).errors[0]?.path).toBe('entry');
    expect(validateUpdate({ operation: 'remove', target_id: 'A1' }).errors[0]?.path).toBe('operation');
  });
  it('prefixes nested entry paths', () => {
    const r = validateUpdate({ operation: 'create', entry: entry({ summary: '' }) }, {}, '[3]');
    expect(r.errors[0]?.path).toBe('[3].entry.summary');
  });
  it('refuses to supersede an already superseded entry', () => {
    const target = {
      ...buildEntry(validateEntryInput(entry()).ok ? (validateEntryInput(entry()) as any).value : null, 'A1', '2026-01-01T00:00:00.000Z', 'a'),
      status: 'superseded' as const,
      superseded_by: 'B2',
    };
    const r = validateUpdate({ operation: 'supersede', target_id: 'A1', entry: entry({ summary: 'new' }) }, { getEntry: () => target });
    expect(r.errors[0]?.message).toMatch(/already superseded by B2/);
  });
});

describe('stored entries and serialization', () => {
  const v = (validateEntryInput(entry()) as any).value;
  const e = buildEntry(v, '01JTEST', '2026-01-01T00:00:00.000Z', 'agent-a');
  it('round-trips through the stored schema', () => {
    expect(validateStoredEntry(JSON.parse(serializeEntry(e))).ok).toBe(true);
  });
  it('writes the fixed key order, 2-space indent and a final newline', () => {
    const shuffled = Object.fromEntries(Object.entries(e).reverse()) as typeof e;
    const text = serializeEntry(shuffled);
    expect(text).toBe(serializeEntry(e));
    expect(Object.keys(JSON.parse(text)).slice(0, 3)).toEqual(['id', 'section', 'kind']);
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toContain('\n  "section": "decisions",');
  });
  it('superseded needs superseded_by', () => {
    const r = validateStoredEntry({ ...e, status: 'superseded' });
    expect(r.errors[0]?.path).toBe('superseded_by');
  });
  it('validateDocument handles arrays with indexed paths', () => {
    const errs = validateDocument([entry(), { operation: 'create', entry: entry({ kind: 'nope' }) }]);
    expect(errs.map((x) => x.path)).toEqual(['[1].entry.kind']);
  });
});

describe('commit messages', () => {
  it('one-line subject and trailers that parse back', () => {
    const msg = commitMessage(
      'demo',
      [{ op: 'create', id: '01A', summary: 'Invoices are generated nightly by a cron job, which avoids ledger lock contention' }],
      'agent-x',
    );
    const [subject] = msg.split('\n');
    expect(subject).toMatch(/^memory\(demo\): create 01A: Invoices/);
    expect(subject?.length).toBeLessThanOrEqual(80);
    expect(parseCommitTrailers(msg)).toEqual({ changes: [{ id: '01A', op: 'create' }], agent: 'agent-x' });
  });
  it('batches list every change', () => {
    const msg = commitMessage(
      'demo',
      [
        { op: 'create', id: 'B' },
        { op: 'supersede', id: 'A' },
      ],
      'x',
    );
    expect(msg.split('\n')[0]).toBe('memory(demo): 2 entries (1 create, 1 supersede)');
    expect(parseCommitTrailers(msg).changes).toEqual([
      { id: 'B', op: 'create' },
      { id: 'A', op: 'supersede' },
    ]);
  });
});

describe('normalizeTimestamp', () => {
  it('accepts ISO 8601 and refuses the rest', () => {
    expect(normalizeTimestamp('2026-03-01')).toBe('2026-03-01T00:00:00.000Z');
    expect(normalizeTimestamp('2026-03-01T10:00:00+01:00')).toBe('2026-03-01T09:00:00.000Z');
    expect(normalizeTimestamp('March 1')).toBeNull();
    expect(normalizeTimestamp('2026-13-01')).toBeNull();
  });
});

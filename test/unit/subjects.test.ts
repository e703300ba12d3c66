import { describe, expect, it } from 'vitest';
import { subjectOf } from '../../src/core/extract.js';

describe('the subject of a sentence', () => {
  it('is a subject the project already uses when the sentence names it', () => {
    const known = ['billing.invoices', 'search.indexer', 'platform.on-call'];
    expect(subjectOf('We moved invoice generation to an hourly job.', known)).toBe('billing.invoices');
    expect(subjectOf('The indexer skips binary files.', known)).toBe('search.indexer');
  });
  it('else a path or key it names, else its telling words (not the verbs of doing)', () => {
    expect(subjectOf('The fix was in src/billing/retry.ts.')).toBe('billing.retry');
    expect(subjectOf('We moved the invoice export to a queue.')).toBe('invoice.export');
    expect(subjectOf('Run the export nightly.')).toBe('export.nightly');
    expect(subjectOf('it is so')).toBe('notes');
  });
});

import { describe, expect, it } from 'vitest';
import { table } from '../../src/cli/io.js';

describe('tables in a terminal', () => {
  const rows = [
    ['01M83K7KJVG1909SNVRK4H1RCE', 'decisions', '0.90', 'Invoices are generated hourly since the EU launch, which keeps them within the 24-hour rule.'],
    ['01M83K7KJVG1909SNVRK4H1RCF', 'learnings', '0.40', 'Short.'],
  ];
  it('cut the last column to the terminal width, so no row wraps', () => {
    const lines = table(rows, ['ID', 'SECTION', 'CONF', 'SUMMARY'], 80).split('\n');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(80);
    expect(lines[1]).toMatch(/…$/);
    expect(lines[2]).toMatch(/Short\.$/);
  });
  it('keep every character when the output is not a terminal', () => {
    expect(table(rows, ['ID', 'SECTION', 'CONF', 'SUMMARY'], undefined)).toContain('within the 24-hour rule.');
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderSchemas } from '../../src/core/json-schema.js';

describe('schemas/', () => {
  it('the checked-in JSON Schema files match the zod schemas (run `npm run schemas`)', () => {
    for (const [name, text] of Object.entries(renderSchemas())) {
      expect(readFileSync(join(__dirname, '../../schemas', name), 'utf8'), name).toBe(text);
    }
  });
});

#!/usr/bin/env node
// Generates the JSON Schema files in schemas/ from the zod schemas in src/core/schema.ts
// (compiled to dist/). `npm run schemas` rewrites them; a test checks they are up to date.
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderSchemas } from '../dist/core/json-schema.js';

const out = resolve(dirname(fileURLToPath(import.meta.url)), '../schemas');
mkdirSync(out, { recursive: true });
for (const [name, text] of Object.entries(renderSchemas())) {
  writeFileSync(join(out, name), text);
  console.log(`wrote schemas/${name}`);
}

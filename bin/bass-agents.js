#!/usr/bin/env node
// Only loads the compiled CLI: all logic lives in src/ (compiled to dist/).
import('../dist/cli/main.js').then((m) => m.main(process.argv.slice(2)));

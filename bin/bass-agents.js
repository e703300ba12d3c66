#!/usr/bin/env node
// The same command as bin/bass-agents.cjs (the package's `bin`), for callers that name this
// file: it only loads that one.
import { createRequire } from 'node:module';

createRequire(import.meta.url)('./bass-agents.cjs');

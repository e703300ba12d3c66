import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests import src/ directly; this registers the modules src/ loads lazily (see src/lazy.ts).
    setupFiles: ['test/setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // A worker keeps the modules it loaded from one test file to the next (tests share nothing
    // else: each makes its own temp repositories and state folder): re-evaluating src/ and the
    // modules test/setup.ts preloads cost each of the ~50 files more than many of them run.
    isolate: false,
  },
});

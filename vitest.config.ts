import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Without timings from an earlier run (a fresh clone, as in CI) vitest starts the largest files
 * first. The stress and bench tests are the smallest files and among the longest to run (each
 * runs one script), so they started last and ran on alone at the end; they go first.
 */
class LongRunsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const long = (f: TestSpecification): number => (/test\/integration\/(stress|bench)\.test\.ts$/.test(f.moduleId) ? 0 : 1);
    return (await super.sort(files)).sort((a, b) => long(a) - long(b));
  }
}

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
    sequence: { sequencer: LongRunsFirst },
  },
});

import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Most of the suite waits (Retry-After, backoff, child processes, the emulator's latency) rather
    // than computes, so it runs more files at once than there are cores. Vitest's default (cores − 1)
    // ran it one file at a time on 2 cores: 342 s, against about 100 s with 4.
    maxWorkers: Math.max(4, availableParallelism()),
    // A test that asserts nothing cannot fail: make that an error.
    expect: { requireAssertions: true },
    reporters: ['default', './test/support/summary-reporter.ts'],
    // One real PostgreSQL server for the run (the postgres state's tests need it; they fail without it).
    globalSetup: ['./test/support/postgres-global-setup.ts'],
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // A test that asserts nothing cannot fail: make that an error.
    expect: { requireAssertions: true },
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});

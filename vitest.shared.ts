/**
 * What the two vitest configurations share, and which test files run where:
 * - `npm test` (vitest.config.ts): everything but the soak-only files, with short property runs;
 *   it must stay under a minute on two cores.
 * - `npm run test:soak` (vitest.soak.config.ts): the soak-only files, and the reliability
 *   properties again with their full number of runs (ORGFORM_TEST_SOAK=1). CI runs both (.ci/run).
 * docs/testing.md says why each file is where it is.
 */
import { availableParallelism } from 'node:os';
import type { ViteUserConfig } from 'vitest/config';

/** Long or process-heavy: process-kill campaigns, long properties, the packaging, Action and template runs. */
export const SOAK_ONLY = [
  'test/reliability/kill-campaign.soak.test.ts',
  'test/reliability/convergence-killed.property.test.ts',
  'test/reliability/concurrent-writer.property.test.ts',
  'test/action/action.test.ts',
  'test/action/reviewed-apply.test.ts',
  'test/templates/orgform.test.ts',
  'test/templates/orgform-reviewed.test.ts',
  'test/release/package-tarball.test.ts',
  'test/examples/workflows.test.ts',
  'test/examples/validators.test.ts',
  'test/examples/bulk-example-apply.soak.test.ts',
  'test/pipeline/gitlab-note.test.ts',
  'test/e2e/fresh-reads-under-a-rate-limit.soak.test.ts',
  'test/text/plan/large-plan-page.soak.test.ts',
  'test/e2e/shared-state.soak.test.ts',
  // Waits in real time (rate limits, Retry-After, read ages, slow services) or runs many CLI
  // processes at once: the slowest of `npm test`, 82 s of its 284 s of test time on a quiet machine.
  'test/e2e/fresh-reads.test.ts',
  'test/e2e/page-read-again.test.ts',
  'test/e2e/rate-limit.test.ts',
  'test/e2e/waits-rate-limit.test.ts',
  'test/e2e/waits-service.test.ts',
  'test/e2e/shared-state.test.ts',
  'test/e2e/remote-state.test.ts',
  'test/e2e/waits-outside.test.ts',
  'test/e2e/shard-postgres.test.ts',
];

/** Run in both: a few cases in `npm test`, the full run in the soak project (see test/support/soak.ts). */
export const PROPERTIES_IN_BOTH = [
  'test/reliability/convergence.property.test.ts',
  'test/reliability/plan-apply-agree.property.test.ts',
  'test/reliability/shared-state.property.test.ts',
  'test/reliability/undeclared-fields.property.test.ts',
  'test/config/round-trip.test.ts',
  'test/config-writer/render-export.test.ts',
];

/**
 * Files that need a fresh module graph and process of their own: they mock node:fs/promises
 * (vi.mock), replace global fetch (nock), turn on fake timers or listen on process. Every other file of
 * `npm test` shares its worker with others (`isolate: false`), which saves loading vitest and the
 * code under test again for each file; the helpers' clean-ups run per test all the same
 * (test/support/after-each-test.ts).
 */
export const NEEDS_ISOLATION = [
  'test/api/client.test.ts',
  'test/emulator/faults.test.ts',
  'test/commands/apply/views/text-apply-view.test.ts',
  'test/state/write-file-atomically.test.ts',
  'test/state/file/file-journal.test.ts',
  'test/state/file/journal-reader.test.ts',
  'test/pipeline/forge-threads.test.ts',
];

export const COMMON: NonNullable<ViteUserConfig['test']> = {
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
  setupFiles: ['./test/support/run-after-each.ts'],
};

/** One real PostgreSQL server for the run (the postgres state's tests need it; they fail without it). */
export const POSTGRES = ['./test/support/postgres-global-setup.ts'];

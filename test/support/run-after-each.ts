/**
 * A setup file (vitest.shared.ts): run again for every test file, even where files share a worker,
 * so that the helpers' clean-ups (test/support/after-each-test.ts) run after every test of each.
 */
import { afterEach } from 'vitest';
import { runAfterEachTest } from './after-each-test.js';

afterEach(runAfterEachTest);

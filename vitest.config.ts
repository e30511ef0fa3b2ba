/**
 * `npm test`: every test file but the soak-only ones (vitest.shared.ts lists them; `npm run
 * test:soak` runs them, and CI runs both). It must stay under a minute on two cores.
 */
import { defineConfig } from 'vitest/config';
import { COMMON, SOAK_ONLY } from './vitest.shared.js';

export default defineConfig({
  test: {
    ...COMMON,
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...SOAK_ONLY],
  },
});

/**
 * `npm run test:soak`: the long runs kept out of `npm test` (see vitest.shared.ts), which CI runs
 * after it. Nothing here is skipped or shortened: the properties run their full number of cases.
 */
import { defineConfig } from 'vitest/config';
import { COMMON, POSTGRES, PROPERTIES_IN_BOTH, SOAK_ONLY } from './vitest.shared.js';

export default defineConfig({
  test: {
    ...COMMON,
    include: [...SOAK_ONLY, ...PROPERTIES_IN_BOTH],
    env: { ORGFORM_TEST_SOAK: '1' },
    globalSetup: POSTGRES,
  },
});

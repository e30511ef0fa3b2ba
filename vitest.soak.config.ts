/**
 * `npm run test:soak`: the long runs kept out of `npm test` (see vitest.shared.ts), which CI runs
 * after it. Nothing here is skipped or shortened: the properties run their full number of cases.
 */
import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import { COMMON, POSTGRES, PROPERTIES_IN_BOTH, SOAK_ONLY } from './vitest.shared.js';

// A file listed here that was moved or renamed would silently not run: refuse to start instead.
const missing = [...SOAK_ONLY, ...PROPERTIES_IN_BOTH].filter((file) => !existsSync(new URL(file, import.meta.url)));
if (missing.length > 0) throw new Error(`vitest.shared.ts lists test files that do not exist: ${missing.join(', ')}. Update the lists.`);

export default defineConfig({
  test: {
    ...COMMON,
    include: [...SOAK_ONLY, ...PROPERTIES_IN_BOTH],
    env: { ORGFORM_TEST_SOAK: '1' },
    globalSetup: POSTGRES,
  },
});

/**
 * `npm test`: every test file but the soak-only ones (vitest.shared.ts lists them; `npm run
 * test:soak` runs them, and CI runs both). It must stay under a minute on two cores. Two projects:
 * most files share their worker (`isolate: false`); the few that change what the whole process
 * sees run each in a fresh one.
 */
import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import { COMMON, NEEDS_ISOLATION, POSTGRES, SOAK_ONLY } from './vitest.shared.js';

// A file listed here that was moved or renamed would run in the shared worker after all (or, soak-only,
// in `npm test`): refuse to start instead.
const missing = [...NEEDS_ISOLATION, ...SOAK_ONLY].filter((file) => !existsSync(new URL(file, import.meta.url)));
if (missing.length > 0) throw new Error(`vitest.shared.ts lists test files that do not exist: ${missing.join(', ')}. Update the lists.`);

const EXCLUDE = ['**/node_modules/**', ...SOAK_ONLY];

export default defineConfig({
  test: {
    ...COMMON,
    projects: [
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: [...EXCLUDE, ...NEEDS_ISOLATION], isolate: false, globalSetup: POSTGRES } },
      { extends: true, test: { name: 'isolated', include: NEEDS_ISOLATION, exclude: EXCLUDE } },
    ],
  },
});

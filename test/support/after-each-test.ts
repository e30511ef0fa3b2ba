/**
 * Clean-ups the shared helpers (workspaces, emulators, proxies) queue, run after every test by
 * test/support/run-after-each.ts, a setup file. A helper cannot register its own afterEach at its
 * top level: where test files share a worker (`isolate: false`), a helper module is loaded once,
 * and a hook registered there would run for the first file only.
 */
const cleanUps: Array<() => Promise<unknown> | unknown> = [];

/** Runs `cleanUp` after each test, in every file that loads the caller. */
export function afterEachTest(cleanUp: () => Promise<unknown> | unknown): void {
  cleanUps.push(cleanUp);
}

export async function runAfterEachTest(): Promise<void> {
  await Promise.all(cleanUps.map((cleanUp) => cleanUp()));
}

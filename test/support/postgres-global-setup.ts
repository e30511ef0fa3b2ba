/**
 * vitest's globalSetup: one real PostgreSQL server for the whole run (test/support/postgres-server.mjs),
 * stopped at the end. Its URL reaches the test files through inject('postgres'); when it cannot be
 * started, the reason does, and every test that needs the database fails with it (never skips).
 */
import type { TestProject } from 'vitest/node';
import { startPostgres } from './postgres-server.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: { url: string } | { error: string };
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  try {
    const server = await startPostgres();
    project.provide('postgres', { url: server.url });
    return () => server.stop();
  } catch (err) {
    project.provide('postgres', { error: err instanceof Error ? err.message : String(err) });
    return () => undefined;
  }
}

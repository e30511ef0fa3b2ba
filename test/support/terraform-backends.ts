/**
 * Terraform HTTP backends on loopback (terraform-http-backend.mjs) for a test: each one started
 * here is closed after the test that started it.
 */
import { afterEachTest } from './after-each-test.js';
import { startTerraformBackend, type TerraformBackend } from './terraform-http-backend.mjs';

const running: TerraformBackend[] = [];

afterEachTest(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

export async function startBackend(options: Parameters<typeof startTerraformBackend>[0] = {}): Promise<TerraformBackend> {
  const server = await startTerraformBackend(options);
  running.push(server);
  return server;
}

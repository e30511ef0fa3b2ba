/**
 * The usual end-to-end set-up: an emulator on loopback, a temporary workspace with config files,
 * and the environment that points orgform at the emulator. Both are cleaned up after the test.
 */
import { afterEachTest } from './after-each-test.js';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/server.js';
import { makeWorkspace } from './workspace.js';

const running: Emulator[] = [];

afterEachTest(async () => {
  await Promise.all(running.splice(0).map((e) => e.stop()));
});

export interface EmulatorWorkspace {
  emulator: Emulator;
  cwd: string;
  env: Record<string, string>;
}

/** Changes an organisation's billing as someone would in the service's own UI (response spelling): the emulator's own endpoint. */
export async function changeBillingByHand(emulator: Emulator, organisation: string, billing: Record<string, string | null>): Promise<void> {
  const res = await fetch(`${emulator.url}/__emulator/billing`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ organisation, billing }) });
  if (res.status !== 200) throw new Error(`the emulator refused the change by hand: HTTP ${res.status} ${await res.text()}`);
}

export async function setupEmulatorWorkspace(files: Record<string, string> = {}, options: EmulatorOptions = {}): Promise<EmulatorWorkspace> {
  const emulator = await startEmulator({ slugDelayMs: 0, ...options });
  running.push(emulator);
  const cwd = await makeWorkspace(files);
  // A short first backoff step: these suites are about outcomes, and the waits a retry, a lagging
  // membership or a gateway's 404 cost at the default 250 ms added up to most of their time. The
  // default waits are pinned by the retry policy's and the executor's unit tests; a test about a
  // wait sets its own.
  return { emulator, cwd, env: { ORGFORM_TOKEN: 'demo-token', ORGFORM_BASE_URL: emulator.url, ORGFORM_RETRY_BASE_MS: '10' } };
}

/**
 * n generated organisations, every one's billing e-mail changed by orgs.yaml to `email(slug)`: n
 * billing changes to apply. `changed()` counts the organisations whose e-mail the emulator now holds.
 */
export async function setupBillingWorld(n: number, options: EmulatorOptions = {}, email: (slug: string) => string = (slug) => `new-${slug}@example.com`) {
  const data = generateEmulatorData({ organisations: n });
  const lines = ['version: 1', 'organisations:'];
  for (const o of data.organisations) lines.push(`  ${o.slug}:`, '    billing:', `      billingEmail: ${email(o.slug)}`);
  const world = await setupEmulatorWorkspace({ 'orgs.yaml': `${lines.join('\n')}\n` }, { data, ...options });
  const changed = () => world.emulator.store.dump().organisations.filter((o) => o.billing?.billingEmail === email(o.slug)).length;
  return { ...world, changed };
}

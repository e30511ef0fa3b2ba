/**
 * The dispatcher's gate on the wire: a write built from a read is sent within the read age bound
 * counted from the read's sending, or not at all, however long its connection takes to open (a
 * proxy slow to open the tunnel, a slow TLS handshake). The emulator and a proxy over loopback; the
 * proxy holds the tunnel while the client's clock moves on.
 */
import { describe, expect, it } from 'vitest';
import { NotSentError } from '../../src/api/api-error.js';
import { createClient } from '../../src/api/client.js';
import { readProxySettings } from '../../src/api/proxy-settings.js';
import { afterEachTest } from '../support/after-each-test.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { startProxy } from '../support/http-proxy.js';
import { rejection } from '../support/rejection.js';

const closing: Array<{ close(): Promise<unknown> }> = [];
afterEachTest(() => Promise.all(closing.splice(0).map((c) => c.close())));

describe('a write with a time it must be sent by', () => {
  it('is not sent when its connection opens only after that time: it fails unsent, its read too old', async () => {
    const { emulator } = await setupEmulatorWorkspace();
    const proxy = await startProxy({ hold: true });
    closing.push(proxy);
    let now = 1_000_000;
    const client = createClient({ baseUrl: emulator.url, token: 'demo-token', proxy: readProxySettings({ HTTP_PROXY: proxy.url }), now: () => now });
    closing.push(client);
    const write = rejection(client.updateBillingDetails('org_acme', { billingEmail: 'late@acme.example' }, { notAfter: now + 1_000 }));
    // Past the gate (in time), waiting for its tunnel; the bound passes meanwhile.
    await proxy.held();
    now += 5_000;
    proxy.release();
    const failure = await write;
    expect(failure).toBeInstanceOf(NotSentError);
    expect((failure as NotSentError).readTooOld).toBe(true);
    expect(emulator.counters.writes).toBe(0);
  });

  it('is sent when its connection opens in time', async () => {
    const { emulator } = await setupEmulatorWorkspace();
    const proxy = await startProxy({ hold: true });
    closing.push(proxy);
    let now = 1_000_000;
    const client = createClient({ baseUrl: emulator.url, token: 'demo-token', proxy: readProxySettings({ HTTP_PROXY: proxy.url }), now: () => now });
    closing.push(client);
    const write = client.updateBillingDetails('org_acme', { billingEmail: 'late@acme.example' }, { notAfter: now + 1_000 });
    await proxy.held();
    now += 900;
    proxy.release();
    await write;
    expect(emulator.counters.writes).toBe(1);
  });
});

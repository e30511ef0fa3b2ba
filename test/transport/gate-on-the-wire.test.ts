/**
 * The transport's gate on the wire: a write built from a read is sent within the read age bound
 * counted from the read's sending, or not at all, however long its connection takes to open (a
 * proxy slow to open the tunnel, a slow TLS handshake); and what its watch says the requests wait
 * for. The emulator (and a proxy) over loopback, held while the client's clocks move on.
 */
import { describe, expect, it } from 'vitest';
import { NotSentError } from '../../src/api/api-error.js';
import type { WaitEvent } from '../../src/api/wait-event.js';
import { createClient } from '../../src/api/client.js';
import { describeWait } from '../../src/api/wait-watch.js';
import { RateGate } from '../../src/api/rate/rate-gate.js';
import { readProxySettings } from '../../src/transport/proxy-settings.js';
import { afterEachTest } from '../support/after-each-test.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { startProxy } from '../support/http-proxy.js';
import { FakeClock } from '../support/fake-clock.js';
import { rejection } from '../support/rejection.js';
import { waitFor } from '../reliability/support.js';

const closing: Array<{ close(): Promise<unknown> }> = [];
afterEachTest(() => Promise.all(closing.splice(0).map((c) => c.close())));

/** A client whose requests go through a proxy that holds each tunnel until released, and whose clock the test moves. */
async function heldAtTheProxy() {
  const { emulator } = await setupEmulatorWorkspace();
  const proxy = await startProxy({ hold: true });
  closing.push(proxy);
  const clock = { now: 1_000_000 };
  const client = createClient({ baseUrl: emulator.url, token: 'demo-token', proxy: readProxySettings({ HTTP_PROXY: proxy.url }), now: () => clock.now });
  closing.push(client);
  const write = () => client.updateBillingDetails('org_acme', { billingEmail: 'late@acme.example' }, { notAfter: clock.now + 1_000 });
  return { emulator, proxy, clock, write };
}

describe('a write with a time it must be sent by', () => {
  it('is not sent when its connection opens only after that time: it fails unsent, its read too old', async () => {
    const { emulator, proxy, clock, write } = await heldAtTheProxy();
    const failure = rejection(write());
    // Past the gate (in time), waiting for its tunnel; the bound passes meanwhile.
    await proxy.held();
    clock.now += 5_000;
    proxy.release();
    expect(await failure).toBeInstanceOf(NotSentError);
    expect(((await failure) as NotSentError).readTooOld).toBe(true);
    expect(emulator.counters.writes).toBe(0);
  });

  it('is sent when its connection opens in time', async () => {
    const { emulator, proxy, clock, write } = await heldAtTheProxy();
    const sent = write();
    await proxy.held();
    clock.now += 900;
    proxy.release();
    await sent;
    expect(emulator.counters.writes).toBe(1);
  });
});

describe('the wait a retry is told for', () => {
  it('is its answer only once it has waited 2 s for it: not as soon as a 429 pause told before has ended', async () => {
    const { emulator } = await setupEmulatorWorkspace();
    emulator.faults.add({ operation: 'getOrganisations', fault: { kind: 'status', status: 429, retryAfter: 3 } });
    emulator.faults.add({ operation: 'getOrganisations', fault: { kind: 'hang' } });
    const clock = new FakeClock(Date.now());
    const told: WaitEvent[] = [];
    const client = createClient({ baseUrl: emulator.url, token: 'demo-token', limiterClock: clock, waitClock: clock, now: clock.now, onWait: (event) => told.push(event) });
    closing.push(client);
    void rejection(client.listOrganisations()[Symbol.asyncIterator]().next());
    expect(await waitFor(() => client.rateStatus().pausedMs > 0)).toBe(true);
    await clock.runUntil(clock.time + 2_000);
    expect(told.map((t) => t.reason)).toEqual(['rate-limit']);
    // The pause ends; the retry goes, and its answer does not come.
    await clock.runUntil(clock.time + 1_000);
    expect(await waitFor(() => emulator.requestLog.length === 2)).toBe(true);
    await clock.runUntil(clock.time + 1_000);
    expect(told.map((t) => t.reason)).toEqual(['rate-limit']);
    await clock.runUntil(clock.time + 2_000);
    expect(told.map((t) => t.reason)).toEqual(['rate-limit', 'answer']);
  });
});

describe('the wait an answer that has begun is told as', () => {
  it('says it began: its status and headers came, its body trickles', () => {
    const request = { url: new URL('https://api.example.test/'), startedAt: 0, attempts: 1, heldMs: 0, holding: false, backoff: undefined, what: 'page 2 of the listing (all pages)', budgetMs: 60_000, sentAt: 0, answered: true };
    const requests = { oldest: () => request, via: () => undefined, now: () => 5_000 };
    const event = describeWait(requests, new RateGate({}), 5_000);
    expect(event).toMatchObject({ reason: 'answer', begun: true, until: 60_000 });
  });
});

import { describe, expect, it } from 'vitest';
import { createSeededRandom } from '../../src/emulator/generate-emulator-data.js';
import type { FaultRule } from '../../src/emulator/faults.js';
import { call, callJson, ORG_API, orgPath, useEmulator, waitUntil } from './emulator-test-kit.js';

const LIST = `${ORG_API}/organisations`;
const updateBilling = (emulator: Awaited<ReturnType<typeof useEmulator>>) =>
  call(emulator, orgPath('org_acme', 'billing'), { method: 'PUT', body: { customerID: 'cus_changed' } });
const customerId = (emulator: Awaited<ReturnType<typeof useEmulator>>) => emulator.store.organisations.get('org_acme')?.billing?.customerId;

describe('fault rules', () => {
  it('answers a status fault with an Error body and Retry-After, instead of processing', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'status', status: 429, retryAfter: 2 } });
    const response = await updateBilling(emulator);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('2');
    expect(await response.json()).toMatchObject({ code: 'rate_limited' });
    expect(customerId(emulator)).toBe('cus_acme');
    expect(emulator.counters.writes).toBe(0);
    expect(emulator.requestLog.at(-1)?.status).toBe(429);
  });

  it('answers a status fault with the given body and content type', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ fault: { kind: 'status', status: 500, body: 'oops', contentType: 'text/plain' } });
    const response = await call(emulator, LIST);
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toBe('text/plain');
    expect(await response.text()).toBe('oops');
  });

  it('takes only as many requests as `times`, then lets them through', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ operation: 'getOrganisations', times: 2, fault: { kind: 'status', status: 503 } });
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await call(emulator, LIST)).status);
    expect(statuses).toEqual([503, 503, 200]);
    expect(emulator.faults.pending()).toEqual([]);
  });

  it('matches only its operation and method', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ operation: 'setActiveOrganisation', fault: { kind: 'status', status: 500 } });
    emulator.faults.add({ method: 'delete', fault: { kind: 'status', status: 502 } });
    expect((await call(emulator, orgPath('org_acme'))).status).toBe(200);
    expect((await call(emulator, orgPath('org_acme', 'active'), { method: 'PUT' })).status).toBe(500);
    expect((await call(emulator, orgPath('org_acme', 'active'), { method: 'PUT' })).status).toBe(200);
    expect((await call(emulator, orgPath('org_acme', 'invitations', 'inv_acme_carol'), { method: 'DELETE' })).status).toBe(502);
  });

  it('applies the rules in the order they were added', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ fault: { kind: 'status', status: 500 } });
    emulator.faults.add({ operation: 'getOrganisations', fault: { kind: 'status', status: 503 } });
    expect((await call(emulator, LIST)).status).toBe(500);
    expect((await call(emulator, LIST)).status).toBe(503);
  });

  it('gives a repeatable share of requests the fault with a seeded random', async () => {
    const run = async () => {
      const emulator = await useEmulator({ random: createSeededRandom(7) });
      emulator.faults.add({ operation: '*', times: Infinity, probability: 0.5, fault: { kind: 'status', status: 503 } });
      const statuses: number[] = [];
      for (let i = 0; i < 40; i += 1) statuses.push((await call(emulator, orgPath('org_acme'))).status);
      return statuses;
    };
    const first = await run();
    expect(first.filter((s) => s === 503).length).toBeGreaterThan(5);
    expect(first.filter((s) => s === 200).length).toBeGreaterThan(5);
    expect(await run()).toEqual(first);
  });

  it('refuses a malformed rule', async () => {
    const emulator = await useEmulator();
    expect(() => emulator.faults.add({ fault: { kind: 'explode' } } as unknown as FaultRule)).toThrow(/unknown fault kind/);
    expect(() => emulator.faults.add({ times: 0, fault: { kind: 'drop' } })).toThrow(/times/);
    expect(() => emulator.faults.add({ operation: 'nope' as never, fault: { kind: 'drop' } })).toThrow(/operation/);
    expect(emulator.faults.pending()).toEqual([]);
  });

  it('forgets every rule on clear()', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ times: Infinity, fault: { kind: 'status', status: 500 } });
    expect(emulator.faults.pending()).toHaveLength(1);
    emulator.faults.clear();
    expect((await call(emulator, LIST)).status).toBe(200);
  });
});

describe('fault kinds', () => {
  it('drop: destroys the connection before processing, so nothing is applied', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'drop' } });
    await expect(updateBilling(emulator)).rejects.toThrow();
    expect(customerId(emulator)).toBe('cus_acme');
    expect(emulator.requestLog.at(-1)?.status).toBe('dropped');
    expect(emulator.counters.writes).toBe(0);
  });

  it('lost-response: applies the change, then destroys the connection without answering', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'lost-response' } });
    await expect(updateBilling(emulator)).rejects.toThrow();
    expect(customerId(emulator)).toBe('cus_changed');
    expect(emulator.requestLog.at(-1)?.status).toBe('lost');
    expect(emulator.counters.writes).toBe(1);
  });

  it('hang: never answers, until the client gives up', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ fault: { kind: 'hang' } });
    await expect(call(emulator, LIST, { signal: AbortSignal.timeout(300) })).rejects.toThrow();
    expect(emulator.requestLog.at(-1)?.status).toBe('hang');
    await waitUntil(() => emulator.counters.inFlight === 0);
  });

  it('hold: holds the requests in flight, unprocessed, until released (in-process or over the admin endpoint), then answers them', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ operation: 'updateBillingDetails', times: 2, fault: { kind: 'hold' } });
    const answers = Promise.all([updateBilling(emulator), updateBilling(emulator)]);
    await waitUntil(() => emulator.counters.inFlight === 2);
    expect(customerId(emulator)).toBe('cus_acme');
    expect(emulator.release()).toBe(2);
    expect((await answers).map((r) => r.status)).toEqual([200, 200]);
    expect(customerId(emulator)).toBe('cus_changed');
    emulator.faults.add({ operation: 'getOrganisations', fault: { kind: 'hold' } });
    const listing = call(emulator, LIST);
    await waitUntil(() => emulator.counters.inFlight === 1);
    expect(await (await call(emulator, '/__emulator/release', { method: 'POST', token: null })).json()).toEqual({ released: 1 });
    expect((await listing).status).toBe(200);
  });

  it('delay-headers: processes, then waits before answering', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'delay-headers', ms: 300 } });
    const started = Date.now();
    const pending = updateBilling(emulator);
    await waitUntil(() => customerId(emulator) === 'cus_changed');
    const response = await pending;
    expect(response.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('delay-headers with renew: the answer is taken when the request comes, and its organisations are renewed before it is sent', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'delay-headers', ms: 0, renew: true } });
    const { status, body } = await callJson(emulator, orgPath('org_acme'));
    expect([status, body.billing.subscriptionId]).toEqual([200, 'sub_acme']);
    expect(emulator.store.organisations.get('org_acme')!.billing!.subscriptionId).toMatch(/^sub_renewed_/);
    emulator.faults.add({ operation: 'getOrganisations', fault: { kind: 'delay-headers', ms: 0, renew: true } });
    const listed = (await callJson(emulator, `${LIST}?limit=2`)).body.organisations as Array<{ id: string }>;
    expect(emulator.store.renewals.map((r) => r.organisation)).toEqual(['org_acme', ...listed.map((o) => o.id)]);
  });

  it('cycle: the last page links back to the start under a new cursor, and no page carries totalCount', async () => {
    const emulator = await useEmulator({ behaviour: { 'fresh-cursors': 'on' } });
    emulator.faults.add({ operation: 'getOrganisations', times: Infinity, fault: { kind: 'cycle' } });
    const seen: string[][] = [];
    let path = `${LIST}?limit=2`;
    for (let i = 0; i < 5; i += 1) {
      const { body } = await callJson(emulator, path);
      expect(body.totalCount).toBeUndefined();
      seen.push((body.organisations as Array<{ id: string }>).map((o) => o.id));
      path = `${LIST}?limit=2&cursor=${encodeURIComponent(body.next)}`;
    }
    // The active organisation (initech) heads the first page only; the rest come round again.
    expect(seen).toEqual([['org_initech', 'org_acme'], ['org:hooli/eu', 'org_stark'], ['org_umbrella'], ['org_acme', 'org:hooli/eu'], ['org_stark', 'org_umbrella']]);
  });

  it('delay-headers beyond what a timer holds (3,000,000 s): waits as long as it can, rather than answering at once with a warning', async () => {
    const emulator = await useEmulator();
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'delay-headers', ms: 3_000_000_000 } });
      // Node turns a timer of 2^31 ms or more into 1 ms: before, the answer came at once.
      const answer = call(emulator, orgPath('org_acme', 'billing'), { method: 'PUT', body: { customerID: 'cus_changed' }, signal: AbortSignal.timeout(500) });
      await expect(answer.then((r) => r.status, (e: Error) => e.name)).resolves.toBe('TimeoutError');
      await waitUntil(() => customerId(emulator) === 'cus_changed');
      expect(warnings.filter((w) => w.name === 'TimeoutOverflowWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('trickle: sends 200 headers then a chunk per interval until the client goes away', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ fault: { kind: 'trickle', intervalMs: 20, chunk: '.' } });
    const response = await call(emulator, LIST);
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let received = '';
    while (received.length < 3) received += new TextDecoder().decode((await reader.read()).value);
    expect(received).toMatch(/^\.+$/);
    await reader.cancel();
    await waitUntil(() => emulator.counters.inFlight === 0);
  });

  it('huge: streams a JSON-looking body of exactly the given size', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ fault: { kind: 'huge', bytes: 5_000_000 } });
    const response = await call(emulator, LIST);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe('5000000');
    const text = await response.text();
    expect(text.length).toBe(5_000_000);
    expect(JSON.parse(text)).toHaveProperty('organisations');
  });

  it('html: answers an HTML error page', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ fault: { kind: 'html', status: 502 } });
    const response = await call(emulator, LIST);
    expect(response.status).toBe(502);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await response.text()).toContain('<title>502 Bad Gateway</title>');
  });

  it('truncated-json: answers a body cut in the middle', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ fault: { kind: 'truncated-json' } });
    emulator.faults.add({ fault: { kind: 'truncated-json', status: 500 } });
    const ok = await call(emulator, orgPath('org_acme'));
    expect(ok.status).toBe(200);
    await expect(ok.json()).rejects.toThrow();
    const failed = await call(emulator, orgPath('org_acme'));
    expect(failed.status).toBe(500);
    await expect(failed.json()).rejects.toThrow();
  });

  it('redirect: answers the status with a Location', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ fault: { kind: 'redirect', status: 307, location: 'http://elsewhere.invalid/x' } });
    const response = await call(emulator, LIST, { redirect: 'manual' });
    expect(response.status).toBe(307);
    expect(response.headers.get('location')).toBe('http://elsewhere.invalid/x');
  });

  it('stop(): closes a hung request and resolves', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ fault: { kind: 'hang' } });
    const hung = call(emulator, LIST).then(
      () => 'answered',
      () => 'failed',
    );
    await waitUntil(() => emulator.requestLog.length === 1);
    const started = Date.now();
    await emulator.stop();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await hung).toBe('failed');
  });

  it('stop(): ends a trickle and a slow slug check too', async () => {
    const emulator = await useEmulator({ slugDelayMs: 60_000 });
    emulator.faults.add({ operation: 'getOrganisations', fault: { kind: 'trickle', intervalMs: 10 } });
    const trickle = await call(emulator, LIST);
    const slow = call(emulator, `${ORG_API}/slug/some-slug/availability`).then(
      () => 'answered',
      () => 'failed',
    );
    await waitUntil(() => emulator.counters.inFlight === 2);
    await emulator.stop();
    expect(await slow).toBe('failed');
    await expect(trickle.text()).rejects.toThrow();
  });
});

describe('faults and status replies', () => {
  it('gives the fault status to callJson readers as an Error body', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ fault: { kind: 'status', status: 504 } });
    const { status, body } = await callJson(emulator, LIST);
    expect(status).toBe(504);
    expect(body.code).toBe('timeout');
  });
});

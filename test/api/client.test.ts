/**
 * The client against the real emulator over loopback HTTP: every operation, pagination in both
 * `next` forms, tolerant success bodies, typed errors, hostile identifiers and the token.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, TransportError } from '../../src/api/api-error.js';
import { createClient, type ClientOptions, type OrganisationsClient } from '../../src/api/client.js';
import type { RateEvent } from '../../src/api/rate/rate-gate.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/server.js';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import { FakeClock } from '../support/fake-clock.js';
import { loadContract } from '../support/openapi-contract.js';
import { collect } from '../support/collect.js';

const TOKEN = 'demo-token';
const open: Array<{ emulator: Emulator; client: OrganisationsClient }> = [];

afterEach(async () => {
  for (const { emulator, client } of open.splice(0)) {
    await client.close();
    await emulator.stop();
  }
});

async function setup(emulatorOptions: EmulatorOptions = {}, clientOptions: Partial<ClientOptions> = {}) {
  const emulator = await startEmulator({ slugDelayMs: 0, ...emulatorOptions });
  const client = createClient({
    baseUrl: emulator.url,
    token: TOKEN,
    retryPolicy: { baseDelayMs: 5, maxDelayMs: 20 },
    ...clientOptions,
  });
  open.push({ emulator, client });
  return { emulator, client };
}

const T0 = Date.UTC(2026, 2, 1, 12, 0, 0);

function pauseReal(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls in real time (a request over loopback takes real time, whatever the limiter's clock says). */
async function untilReal(condition: () => boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) throw new Error('the condition did not come true in time');
    await pauseReal(2);
  }
}

/** Moves the limiter's fake clock on, timer by timer, letting real I/O happen in between, until `promise` settles. */
async function runClockUntilSettled<T>(clock: FakeClock, promise: Promise<T>): Promise<T> {
  let settled = false;
  const watched = promise.finally(() => (settled = true));
  watched.catch(() => undefined);
  for (let i = 0; !settled; i += 1) {
    if (i > 5_000) throw new Error('still not settled after 5,000 turns of the clock');
    if (clock.pending > 0) await clock.runUntil(clock.nextAt);
    await pauseReal(2);
  }
  return watched;
}

describe('the client', () => {
  it('lists every organisation of the user across pages, the active one first', async () => {
    const { client, emulator } = await setup();
    const orgs = await collect(client.listOrganisations({ pageSize: 2 }));
    expect(orgs.map((o) => o.slug)).toEqual(['initech', 'acme', 'hooli-eu', 'stark-industries', 'umbrella']);
    expect(emulator.counters.byOperation.getOrganisations).toBe(3);
  });

  it('reading ahead, asks for the next page while the caller works through this one, and for none past the last', async () => {
    const { client, emulator } = await setup();
    const pages = client.listOrganisationPages({ pageSize: 2, readAhead: true })[Symbol.asyncIterator]();
    const slugs: string[] = [];
    for (let n = 1; ; n += 1) {
      const page = await pages.next();
      if (page.done === true) break;
      slugs.push(...page.value.organisations.map((o) => o.slug));
      // The next page is asked for before this one is done with: the service sees it arrive meanwhile.
      if (n < 3) await vi.waitFor(() => expect(emulator.counters.byOperation.getOrganisations).toBe(n + 1), { timeout: 2_000, interval: 5 });
    }
    expect(slugs).toEqual(['initech', 'acme', 'hooli-eu', 'stark-industries', 'umbrella']);
    expect(emulator.counters.byOperation.getOrganisations).toBe(3);
  });

  it('reading ahead, has written the next page\'s request before it hands this page over, so that the work on a page is off the chain of pages', async () => {
    const { client } = await setup();
    // undici writes a request on a kept-alive connection only in the event loop's check phase: a
    // page handed over before then would have the caller's work on it delay the next request. One
    // listing first, so that the connections are open and kept alive (a request on a new connection
    // is written once it connects, whatever runs meanwhile).
    await collect(client.listOrganisations({ pageSize: 2 }));
    const written: string[] = [];
    const onHeaders = (message: unknown) => {
      const path = (message as { request: { path: string } }).request.path;
      if (path.includes('/organisations?')) written.push(path);
    };
    subscribe('undici:client:sendHeaders', onHeaders);
    try {
      const pages = client.listOrganisationPages({ pageSize: 2, readAhead: true })[Symbol.asyncIterator]();
      for (let n = 1; ; n += 1) {
        const page = await pages.next();
        if (page.done === true) break;
        // Checked at once, without waiting: the request for page n + 1 is already on the wire.
        expect(written).toHaveLength(Math.min(n + 1, 3));
      }
    } finally {
      unsubscribe('undici:client:sendHeaders', onHeaders);
    }
    expect(written).toHaveLength(3);
  });

  it.each(['relative', 'absolute'] as const)('follows a %s `next` link', async (nextStyle) => {
    const { client } = await setup({ nextStyle });
    const orgs = await collect(client.listOrganisations({ pageSize: 2 }));
    expect(orgs).toHaveLength(5);
    expect(new Set(orgs.map((o) => o.id)).size).toBe(5);
  });

  it('lists 1,234 organisations with the largest page size the service allows', async () => {
    const { client, emulator } = await setup({ data: generateEmulatorData({ organisations: 1234 }) });
    const orgs = await collect(client.listOrganisations());
    expect(orgs).toHaveLength(1234);
    expect(emulator.counters.byOperation.getOrganisations).toBe(3);
  });

  it('filters by a case-insensitive substring', async () => {
    const { client } = await setup();
    const orgs = await collect(client.listOrganisations({ filter: 'ACME' }));
    expect(orgs.map((o) => o.slug)).toEqual(['acme']);
  });

  it('reads one organisation, even one whose id holds ":" and "/"', async () => {
    const { client, emulator } = await setup();
    const org = await client.getOrganisation('org:hooli/eu');
    expect(org.slug).toBe('hooli-eu');
    expect(emulator.requestLog.at(-1)?.path).toBe('/api/organisations/v1/organisations/org%3Ahooli%2Feu');
  });

  it('updates billing with the request spelling and reads it back in the response spelling', async () => {
    const { client, emulator } = await setup();
    await client.updateBillingDetails('org_acme', { billingEmail: 'new@acme.example', customerID: 'cus_new' });
    const org = await client.getOrganisation('org_acme');
    expect(org.billing?.billingEmail).toBe('new@acme.example');
    expect(org.billing?.customerId).toBe('cus_new');
    const put = emulator.requestLog.find((r) => r.operation === 'updateBillingDetails');
    expect(put?.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sets the active organisation', async () => {
    const { client } = await setup();
    const active = await client.setActiveOrganisation('org_acme');
    expect(active?.slug).toBe('acme');
    const [first] = await collect(client.listOrganisations());
    expect(first?.slug).toBe('acme');
  });

  it('accepts an invitation, making the user a member', async () => {
    const { client } = await setup();
    await expect(client.getOrganisation('org_globex')).rejects.toMatchObject({ status: 404 });
    await client.acceptInvitation('org_globex', 'inv_globex_ada');
    expect((await client.getOrganisation('org_globex')).slug).toBe('globex');
  });

  it('deletes an invitation and a notification channel', async () => {
    const { client, emulator } = await setup();
    await client.deleteInvitation('org_acme', 'inv_acme_carol');
    await client.deleteNotificationChannel('org_acme', 'chn_acme_email');
    await expect(client.deleteNotificationChannel('org_acme', 'chn_acme_email')).rejects.toMatchObject({ status: 404, serviceCode: 'channel_not_found' });
    expect(emulator.requestLog.at(-1)?.path).toBe('/api/v2/o/org_acme/notification_channels/chn_acme_email');
  });

  it('checks slug availability', async () => {
    const { client } = await setup();
    expect(await client.getSlugAvailability('fresh-name')).toEqual({ ok: true, messages: [] });
    const taken = await client.getSlugAvailability('acme');
    expect(taken.ok).toBe(false);
    expect(taken.messages.join(' ')).toMatch(/taken/);
  });

  it.each(['empty-200', 'json-200'] as const)('accepts a %s answer where 204 was decided', async (successStyle) => {
    const { client } = await setup({ successStyle });
    await expect(client.acceptInvitation('org_globex', 'inv_globex_ada')).resolves.toBeUndefined();
    await expect(client.deleteInvitation('org_acme', 'inv_acme_carol')).resolves.toBeUndefined();
    await client.updateBillingDetails('org_acme', { billingEmail: 'x@acme.example' });
    expect((await client.getOrganisation('org_acme')).billing?.billingEmail).toBe('x@acme.example');
    expect((await client.getOrganisation('org_globex')).slug).toBe('globex');
  });

  it('turns an Error body into a typed error with code, message and cause', async () => {
    const { client } = await setup();
    const err = await client.updateBillingDetails('org_acme', { billingEmail: 'not-an-email' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 422, serviceCode: 'validation_failed', operation: 'updateBillingDetails', attempts: 1 });
    expect((err as ApiError).message).toContain('organisation "org_acme"');
  });

  it('refuses an unsafe identifier before any request', async () => {
    const { client, emulator } = await setup();
    for (const id of ['', '.', '..', 'x'.repeat(10_240)]) {
      await expect(client.getOrganisation(id)).rejects.toMatchObject({ code: 'UNSAFE_INPUT' });
    }
    expect(emulator.counters.total).toBe(0);
  });

  it.each(['a/b', 'a?x', 'a#b', '%2e%2e'])('delivers %s as exactly one path segment', async (id) => {
    const { client, emulator } = await setup();
    await expect(client.getOrganisation(id)).rejects.toMatchObject({ status: 404 });
    const path = emulator.requestLog.at(-1)?.path ?? '';
    expect(path.startsWith('/api/organisations/v1/organisations/')).toBe(true);
    const segment = path.slice('/api/organisations/v1/organisations/'.length);
    expect(segment).not.toContain('/');
    expect(decodeURIComponent(segment)).toBe(id);
  });

  it('never puts the token in an error', async () => {
    const { client } = await setup({}, { token: 'canary-3b1f-token' });
    const err = (await client.getOrganisation('org_acme').catch((e: unknown) => e)) as ApiError;
    expect(err.status).toBe(401);
    expect(err.message).toContain('Check the token');
    expect(JSON.stringify({ ...err, message: err.message, stack: err.stack })).not.toContain('canary-3b1f-token');
  });

  it.each([
    ['a `next` link to another path', { organisations: [{ id: 'org_one', slug: 'one' }], next: `/echo/${TOKEN}` }],
    ['an organisation without a slug', { organisations: [{ id: `echo-${TOKEN}` }] }],
  ])('never puts the token in a bad-response error, even when the service echoes it in %s: the answer is refused whole', async (_what, body) => {
    const { client, emulator } = await setup();
    emulator.faults.add({ operation: 'getOrganisations', fault: { kind: 'status', status: 200, body: JSON.stringify(body), contentType: 'application/json' } });
    const err = (await collect(client.listOrganisations()).catch((e: unknown) => e)) as TransportError;
    expect(err).toBeInstanceOf(TransportError);
    expect(err.failure).toBe('bad-response');
    expect(err.message).toContain('the answer holds the credential orgform sent with the request');
    expect(err.message).not.toContain(TOKEN);
  });

  it('refuses plain http to a host that is not loopback', () => {
    expect(() => createClient({ baseUrl: 'http://api.example.com', token: TOKEN })).toThrow(/unencrypted/);
  });

  it('sends requests that conform to the OpenAPI description', async () => {
    const { client, emulator } = await setup();
    const contract = await loadContract();
    const seen: string[][] = [];
    // Every request as undici builds it for the wire (its diagnostics channel): headers as [name, value, ...].
    const onCreate = (message: unknown) => {
      const { request } = message as { request: { method: string; path: string; headers: string[]; body: Buffer | null } };
      const headers: Record<string, string> = {};
      for (let i = 0; i + 1 < request.headers.length; i += 2) headers[request.headers[i]!.toLowerCase()] = request.headers[i + 1]!;
      seen.push(contract.checkRequest(request.method, request.path, headers, request.body === null ? undefined : request.body.toString('utf8')));
    };
    subscribe('undici:request:create', onCreate);
    try {
      await collect(client.listOrganisations({ pageSize: 2, filter: 'a' }));
      await client.getOrganisation('org_acme');
      await client.setActiveOrganisation('org_acme');
      await client.updateBillingDetails('org_acme', { billingEmail: 'b@acme.example', customerID: 'c', subscriptionID: 's', platformID: 'p' });
      await client.getSlugAvailability('some-slug');
      await client.acceptInvitation('org_globex', 'inv_globex_ada');
      await client.deleteInvitation('org_acme', 'inv_acme_carol');
      await client.deleteNotificationChannel('org_acme', 'chn_acme_slack');
    } finally {
      unsubscribe('undici:request:create', onCreate);
    }
    expect(seen.length).toBeGreaterThanOrEqual(8);
    expect(seen.flat()).toEqual([]);
    expect(emulator.counters.total).toBe(seen.length);
  });
});

describe('the client when the service misbehaves', () => {
  it('retries a listing answered 503 then succeeds', async () => {
    const { client, emulator } = await setup();
    emulator.faults.add({ operation: 'getOrganisations', times: 2, fault: { kind: 'status', status: 503 } });
    const orgs = await collect(client.listOrganisations());
    expect(orgs).toHaveLength(5);
    expect(emulator.counters.byOperation.getOrganisations).toBe(3);
  });

  it('retries a PUT with its body and the same Idempotency-Key', async () => {
    const { client, emulator } = await setup();
    emulator.faults.add({ operation: 'updateBillingDetails', times: 2, fault: { kind: 'status', status: 500 } });
    await client.updateBillingDetails('org_acme', { billingEmail: 'retried@acme.example' });
    expect((await client.getOrganisation('org_acme')).billing?.billingEmail).toBe('retried@acme.example');
    const keys = emulator.requestLog.filter((r) => r.operation === 'updateBillingDetails').map((r) => r.idempotencyKey);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
  });

  it('gives up after the bounded attempts with the status and the attempt count', async () => {
    const { client, emulator } = await setup({}, { retryPolicy: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 10 } });
    emulator.faults.add({ operation: 'updateBillingDetails', times: Infinity, fault: { kind: 'status', status: 500 } });
    const err = (await client.updateBillingDetails('org_acme', { billingEmail: 'x@acme.example' }).catch((e: unknown) => e)) as ApiError;
    expect(err).toMatchObject({ status: 500, attempts: 3, serviceCode: 'internal' });
    expect(err.message).toContain('after 3 attempts');
    expect(emulator.counters.byOperation.updateBillingDetails).toBe(3);
  });

  it.each([400, 401, 403, 404, 422])('never retries %i', async (status) => {
    const { client, emulator } = await setup();
    emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'status', status } });
    await expect(client.getOrganisation('org_acme')).rejects.toMatchObject({ status, attempts: 1 });
    expect(emulator.counters.byOperation.getOrganisation).toBe(1);
  });

  it('retries after a dropped connection', async () => {
    const { client, emulator } = await setup();
    emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'drop' } });
    expect((await client.getOrganisation('org_acme')).slug).toBe('acme');
    expect(emulator.counters.byOperation.getOrganisation).toBe(2);
  });

  it('applies a billing change exactly once when the answer is lost', async () => {
    const { client, emulator } = await setup();
    emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'lost-response' } });
    await client.updateBillingDetails('org_acme', { billingEmail: 'once@acme.example' });
    expect(emulator.store.dump().organisations.find((o) => o.id === 'org_acme')?.billing?.billingEmail).toBe('once@acme.example');
    expect(emulator.counters.byOperation.updateBillingDetails).toBe(2);
  });

  it('measures the retry budget with the injected clock', async () => {
    let t = 0;
    // Every reading of the clock is a minute later: the budget is spent before the first retry.
    const { client, emulator } = await setup({}, { now: () => (t += 60_000) });
    emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'status', status: 503 } });
    await expect(client.getOrganisation('org_acme')).rejects.toMatchObject({ status: 503, attempts: 1 });
    expect(emulator.counters.byOperation.getOrganisation).toBe(1);
  });

  // Retry-After waited out in the rate limiter's fake time (the one test in real time, seen from
  // the service over loopback, is in test/e2e/rate-limit.test.ts).
  it('honours Retry-After: after a 429 asking for 30 s, nothing is sent before 30 s have passed, then the retry succeeds', async () => {
    const clock = new FakeClock(T0);
    const events: RateEvent[] = [];
    const { client, emulator } = await setup({}, { limiterClock: clock, onRate: (e) => events.push(e) });
    emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'status', status: 429, retryAfter: 30 } });
    const first = client.getOrganisation('org_acme');
    await untilReal(() => events.length > 0);
    expect(events[0]).toMatchObject({ reason: 'throttled', pausedMs: 30_000 });
    // Asked for during the pause: held too.
    const second = client.getOrganisation('org_initech');
    await clock.runUntil(T0 + 29_999);
    await pauseReal(50);
    expect(emulator.counters.byOperation.getOrganisation).toBe(1);
    const [a, b] = await runClockUntilSettled(clock, Promise.all([first, second]));
    expect([a.id, b.id]).toEqual(['org_acme', 'org_initech']);
    expect(clock.time).toBeGreaterThanOrEqual(T0 + 30_000);
    expect(emulator.counters.byOperation.getOrganisation).toBe(3);
    expect(client.rateStatus().throttled).toBe(1);
  });

  it('holds the request after an empty quota, announced in the answers, until the quota resets, and is then answered without a 429', async () => {
    const clock = new FakeClock(T0);
    const events: RateEvent[] = [];
    // The service's quota runs on the same fake clock: its window resets when the limiter's pause ends.
    const { client, emulator } = await setup({ quota: { requests: 2, windowSeconds: 120 }, clock: () => clock.time }, { limiterClock: clock, onRate: (e) => events.push(e) });
    const ids = ['org_acme', 'org_initech', 'org_umbrella'];
    const read = runClockUntilSettled(
      clock,
      (async () => {
        const got: string[] = [];
        for (const id of ids) got.push((await client.getOrganisation(id)).id);
        return got;
      })(),
    );
    expect(await read).toEqual(ids);
    expect(events.some((e) => e.reason === 'quota-empty')).toBe(true);
    // The third went out only once the window of 120 s had passed, and the service never refused it.
    expect(clock.time).toBeGreaterThanOrEqual(T0 + 120_000);
    expect(emulator.counters).toMatchObject({ total: 3, rateLimited: 0 });
  });

  it('fails clearly on a Retry-After beyond the budget instead of sleeping', async () => {
    const { client, emulator } = await setup({}, { timeouts: { totalMs: 5_000 } });
    emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'status', status: 429, retryAfter: 3600 } });
    const started = Date.now();
    const err = (await client.getOrganisation('org_acme').catch((e: unknown) => e)) as ApiError;
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(err).toMatchObject({ status: 429, serviceCode: 'rate_limited' });
    expect(err.message).toMatch(/asked to wait 3600 s \(Retry-After\), beyond the 600 s orgform waits out a rate limit/);
  });

  it('fails clearly on a 503 whose Retry-After is beyond the request budget', async () => {
    const { client, emulator } = await setup({}, { timeouts: { totalMs: 5_000 } });
    emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'status', status: 503, retryAfter: 60 } });
    const err = (await client.getOrganisation('org_acme').catch((e: unknown) => e)) as ApiError;
    expect(err).toMatchObject({ status: 503 });
    expect(err.message).toMatch(/asked to wait 60 s \(Retry-After\), beyond the 5 s budget/);
  });

  it('refuses a redirect to another origin, and the other server receives nothing', async () => {
    const { client, emulator } = await setup();
    const other = await startEmulator({ slugDelayMs: 0 });
    try {
      emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'redirect', status: 307, location: `${other.url}/api/organisations/v1/organisations/org_acme/billing` } });
      const err = await client.updateBillingDetails('org_acme', { billingEmail: 'x@acme.example' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TransportError);
      expect((err as TransportError).failure).toBe('redirect');
      expect(other.counters.total).toBe(0);
    } finally {
      await other.stop();
    }
  });

  it('turns an HTML 502 page into a short typed error without the page', async () => {
    const { client, emulator } = await setup({}, { retryPolicy: { maxAttempts: 1 } });
    emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'html', status: 502 } });
    const err = (await client.getOrganisation('org_acme').catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.message).toContain('HTML page');
    expect(err.message).not.toContain('<');
    expect(err.message.length).toBeLessThan(300);
  });

  it('turns truncated JSON on success into a short bad-response error', async () => {
    const { client, emulator } = await setup();
    emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'truncated-json', status: 200 } });
    const err = (await client.getOrganisation('org_acme').catch((e: unknown) => e)) as TransportError;
    expect(err).toBeInstanceOf(TransportError);
    expect(err.failure).toBe('bad-response');
    expect(err.message.length).toBeLessThan(300);
  });

  it('aborts a huge answer at the size cap', async () => {
    const { client, emulator } = await setup({}, { maxResponseBytes: 1024 * 1024 });
    emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'huge', bytes: 100 * 1024 * 1024 } });
    const err = (await client.getOrganisation('org_acme').catch((e: unknown) => e)) as TransportError;
    expect(err.failure).toBe('too-large');
  });

  it('aborts when the headers never arrive', async () => {
    const { client, emulator } = await setup({}, { timeouts: { headersMs: 200, totalMs: 1_000 }, retryPolicy: { maxAttempts: 2, baseDelayMs: 5 } });
    emulator.faults.add({ operation: 'getOrganisation', times: Infinity, fault: { kind: 'hang' } });
    const err = (await client.getOrganisation('org_acme').catch((e: unknown) => e)) as TransportError;
    expect(err).toBeInstanceOf(TransportError);
    expect(err.failure).toBe('timeout');
  });

  it('aborts a body trickled forever at the total deadline', async () => {
    const { client, emulator } = await setup({}, { timeouts: { bodyMs: 5_000, totalMs: 800 } });
    emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'trickle', intervalMs: 50 } });
    const started = Date.now();
    const err = (await client.getOrganisation('org_acme').catch((e: unknown) => e)) as TransportError;
    expect(err.failure).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('stops at a `next` cursor that repeats', async () => {
    const { client, emulator } = await setup();
    // A page whose next points back at itself. (Its one organisation heads the listing, as the
    // active one: listed once more, it is taken for the active organisation at its place.)
    emulator.faults.add({
      operation: 'getOrganisations',
      times: Infinity,
      fault: { kind: 'status', status: 200, body: JSON.stringify({ organisations: [{ id: 'o1', slug: 's1' }], next: 'same' }), contentType: 'application/json' },
    });
    await expect(collect(client.listOrganisations())).rejects.toThrow(/the "next" link of page 2 leads back to page 2, already read \(a cycle\)/);
  });
});

/**
 * Reliability cases 1–13: transport and service faults, against the emulator's fault injection or
 * a purpose-built loopback server, through the CLI where its default timings allow and through the
 * client with short configured timeouts where the case is about waiting. Every case runs with a
 * canary token and checks that it never shows.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, TransportError } from '../../src/api/api-error.js';
import { createClient, type ClientOptions, type OrganisationsClient } from '../../src/api/client.js';
import { startEmulator } from '../../src/emulator/server.js';
import { ORG_API, STACK_LINE, canaryToken, LeakScanner, startFaultProxy, startWorld, type World } from './support.js';
import { collect } from '../support/collect.js';
import { readJournalFile } from '../support/file-state.js';

const clients: OrganisationsClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

/** The client straight against a world's emulator, with the canary token and the options given. */
function clientFor(world: World, options: Partial<ClientOptions> = {}): OrganisationsClient {
  const client = createClient({ baseUrl: world.emulator.url, token: world.token, ...options });
  clients.push(client);
  return client;
}

async function failureOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
}

const BILLING_CONFIG = `version: 1
organisations:
  acme:
    billing:
      billingEmail: finance@acme.example
  umbrella:
    billing:
      billingEmail: finance@umbrella.example
  stark-industries:
    billing:
      customerID: cus_stark_2
`;

/** A short first backoff step for the CLI (default 250 ms), where the case is not about the timing. */
const FAST_RETRIES = { ORGFORM_RETRY_BASE_MS: '20' };

const billingOf = (world: World, id: string) => world.org(id)?.billing;
const logFor = (world: World, operation: string) => world.emulator.requestLog.filter((r) => r.operation === operation);

describe('transport and service faults', () => {
  it('case 1: a listing answered 503 then 200 is retried with growing, jittered backoff, within bounded attempts, and succeeds', async () => {
    let refused = 0;
    let proxy!: Awaited<ReturnType<typeof startFaultProxy>>;
    const world = await startWorld({
      config: 'version: 1\norganisations:\n  acme: {}\n',
      baseUrl: async (emulator) => {
        proxy = await startFaultProxy(emulator.url, (method, path) =>
          method === 'GET' && path.startsWith(`${ORG_API}/organisations?`) && refused++ < 2 ? { kind: 'status', status: 503 } : { kind: 'pass' },
        );
        return proxy.url;
      },
    });
    const plan = await world.cli(['plan', '--detailed-exitcode']);
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('No changes.');
    const arrivals = proxy.records.filter((r) => r.path.startsWith(`${ORG_API}/organisations?`));
    expect(arrivals.map((r) => r.outcome)).toEqual([503, 503, 200]);
    // The CLI's default backoff with equal jitter: the first wait 125–250 ms, the second 250–500 ms.
    const [a, b, c] = arrivals.map((r) => r.at) as [number, number, number];
    expect(b - a).toBeGreaterThanOrEqual(120);
    expect(b - a).toBeLessThan(1_000);
    expect(c - b).toBeGreaterThanOrEqual(245);
    expect(c - b).toBeLessThan(1_500);

    // The jitter and the bound, with a fake random and a short base: the waits move with the
    // random draw, double each time, and stop at maxAttempts.
    const delays = async (random: number) => {
      const seen: number[] = [];
      const client = clientFor(world, {
        baseUrl: world.emulator.url,
        retryPolicy: { baseDelayMs: 40, maxDelayMs: 1_000, maxAttempts: 4 },
        random: () => random,
        onRetry: (e) => seen.push(e.delayMs),
      });
      world.emulator.faults.add({ operation: 'getOrganisations', times: Infinity, fault: { kind: 'status', status: 503 } });
      world.emulator.resetCounters();
      const err = await failureOf(collect(client.listOrganisations()));
      world.emulator.faults.clear();
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ status: 503, attempts: 4 });
      expect(world.emulator.counters.byOperation.getOrganisations).toBe(4);
      world.leaks.addError('client error', err);
      return seen;
    };
    expect(await delays(0)).toEqual([20, 40, 80]);
    expect(await delays(0.999)).toEqual([40, 80, 160]);
    world.leaks.expectClean();
  });

  it('case 2: a billing PUT that always answers 500 gets bounded attempts with one Idempotency-Key; apply exits 1 naming the organisation, and the others are applied', async () => {
    let proxy!: Awaited<ReturnType<typeof startFaultProxy>>;
    const world = await startWorld({
      config: BILLING_CONFIG,
      baseUrl: async (emulator) => {
        proxy = await startFaultProxy(emulator.url, (method, path) =>
          method === 'PUT' && path === `${ORG_API}/organisations/org_acme/billing` ? { kind: 'status', status: 500, body: { code: 'internal', message: 'database unavailable' } } : { kind: 'pass' },
        );
        return proxy.url;
      },
    });
    // A short backoff (ORGFORM_RETRY_BASE_MS) keeps the case fast; the attempts stay bounded at the default 5.
    const result = await world.cli(['apply', '--auto-approve'], { env: FAST_RETRIES });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/✗ organisations\.acme\.billing failed: updateBillingDetails: HTTP 500 internal: database unavailable/);
    expect(result.stdout).toMatch(/Failures:\n\s+✗ acme: organisations\.acme\.billing/);
    expect(result.stdout).toMatch(/2 applied, 0 already done, 0 skipped, 0 not started, 1 failed/);
    const attempts = proxy.records.filter((r) => r.method === 'PUT' && r.path.endsWith('/org_acme/billing'));
    expect(attempts).toHaveLength(5);
    expect(new Set(attempts.map((r) => r.idempotencyKey)).size).toBe(1);
    expect(attempts[0]?.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(billingOf(world, 'org_acme')?.billingEmail).toBe('billing@acme.example');
    expect(billingOf(world, 'org_umbrella')?.billingEmail).toBe('finance@umbrella.example');
    expect(billingOf(world, 'org_stark')?.customerId).toBe('cus_stark_2');
    world.leaks.expectClean();
  });

  it('case 3: a connection reset after a PUT was applied (lost response) leaves exactly one effective change, and the next plan is empty', async () => {
    const world = await startWorld({
      config: `version: 1\nactiveOrganisation: acme\norganisations:\n  acme:\n    billing:\n      billingEmail: finance@acme.example\n`,
      // A service that honours Idempotency-Key, so that "processed" can be counted.
      emulator: { idempotency: true },
    });
    world.emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'lost-response' } });
    world.emulator.faults.add({ operation: 'setActiveOrganisation', fault: { kind: 'lost-response' } });
    const result = await world.cli(['apply', '--auto-approve']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Apply complete: 2 applied/);
    // Each PUT was sent twice with the same key, and processed once.
    for (const operation of ['updateBillingDetails', 'setActiveOrganisation']) {
      const sent = logFor(world, operation);
      expect(sent.map((r) => r.status)).toEqual(['lost', 200]);
      expect(new Set(sent.map((r) => r.idempotencyKey)).size).toBe(1);
    }
    expect(world.emulator.counters.writes).toBe(2);
    expect(billingOf(world, 'org_acme')).toMatchObject({ billingEmail: 'finance@acme.example', customerId: 'cus_acme', subscriptionId: 'sub_acme', platformId: 'plat_acme' });
    expect(world.user().active).toBe('org_acme');
    const again = await world.cli(['plan', '--detailed-exitcode']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('No changes.');
    world.leaks.expectClean();
  });

  // That a Retry-After is waited out in full is tested in the rate limiter's fake time
  // (test/api/client.test.ts, test/api/rate/rate-gate.test.ts), and once in real time over loopback
  // (test/e2e/rate-limit.test.ts); here, the run around it.
  it('case 4: a listing refused with 429 and Retry-After is retried, and the run goes on; a Retry-After beyond what orgform waits out (10 minutes) fails at once and says so', async () => {
    let limited = 0;
    let proxy!: Awaited<ReturnType<typeof startFaultProxy>>;
    const world = await startWorld({
      config: BILLING_CONFIG,
      baseUrl: async (emulator) => {
        proxy = await startFaultProxy(emulator.url, (method, path) => {
          if (method === 'GET' && path.startsWith(`${ORG_API}/organisations?`) && limited++ === 0) {
            return { kind: 'status', status: 429, headers: { 'retry-after': '0' }, body: { code: 'rate_limited', message: 'Slow down.' } };
          }
          if (method === 'PUT' && path.endsWith('/org_umbrella/billing')) {
            return { kind: 'status', status: 429, headers: { 'retry-after': '3600' }, body: { code: 'rate_limited', message: 'Come back in an hour.' } };
          }
          return { kind: 'pass' };
        });
        return proxy.url;
      },
    });
    const started = Date.now();
    // One worker, so acme's write (first in the plan) is answered before umbrella's is refused for an
    // hour: a refusal that long holds back every write still waiting, which would race acme's.
    const result = await world.cli(['apply', '--auto-approve', '--parallelism', '1']);
    const elapsed = Date.now() - started;
    const listings = proxy.records.filter((r) => r.path.startsWith(`${ORG_API}/organisations?`));
    // The plan's listing (refused once, then read), and the one apply reads again behind its writes.
    expect(listings.map((r) => r.outcome)).toEqual([429, 200, 200]);
    // The hour-long wait was refused, not slept: one attempt, and the whole apply well under the budget.
    const umbrella = proxy.records.filter((r) => r.method === 'PUT' && r.path.endsWith('/org_umbrella/billing'));
    expect(umbrella).toHaveLength(1);
    expect(elapsed).toBeLessThan(15_000);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/organisations\.umbrella\.billing failed/);
    expect(result.stdout).toContain(
      '✗ organisations.umbrella.billing failed: updateBillingDetails: HTTP 429 rate_limited: Come back in an hour. — The service asked to wait 3600 s (Retry-After), beyond the 600 s orgform waits out a rate limit; run again later',
    );
    expect(result.stdout).toContain('      note: The service asked to wait 3600 s (Retry-After), beyond the 600 s orgform waits out a rate limit; run again later');
    expect(billingOf(world, 'org_acme')?.billingEmail).toBe('finance@acme.example');
    world.leaks.expectClean();
  });

  it.each([400, 401, 403, 404])('case 5: HTTP %i on a read is never retried', async (status) => {
    const world = await startWorld({ config: BILLING_CONFIG });
    world.emulator.faults.add({ operation: 'getOrganisations', times: Infinity, fault: { kind: 'status', status } });
    const result = await world.cli(['plan']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`getOrganisations \\(all pages\\) failed with HTTP ${status}: `));
    expect(result.stderr).not.toMatch(/after \d+ attempts/);
    expect(world.emulator.counters.byOperation.getOrganisations).toBe(1);
    if (status === 401) expect(result.stderr).toContain('Check the token');
    world.leaks.expectClean();
  });

  it('case 5: HTTP 422 on a write is never retried', async () => {
    const world = await startWorld({ config: BILLING_CONFIG });
    const result = await world.cli(['apply', '--auto-approve', '--parallelism', '1'], { env: {} });
    expect(result.code).toBe(0);
    world.emulator.resetCounters();
    // Put acme back, then make the service refuse it as invalid.
    world.emulator.store.putOrganisation({ ...world.org('org_acme')!, billing: { ...billingOf(world, 'org_acme'), billingEmail: 'billing@acme.example' } });
    world.emulator.faults.add({ operation: 'updateBillingDetails', times: Infinity, fault: { kind: 'status', status: 422 } });
    const second = await world.cli(['apply', '--auto-approve']);
    expect(second.code).toBe(1);
    expect(second.stdout).toMatch(/organisations\.acme\.billing failed: updateBillingDetails: HTTP 422/);
    expect(world.emulator.counters.byOperation.updateBillingDetails).toBe(1);
    world.leaks.expectClean();
  });

  it('case 6: a retried DELETE that answers 404 with the service\'s Error body while the listing shows you a member is done, and the next plan is empty', async () => {
    const world = await startWorld({
      config: `version: 1\norganisations:\n  acme:\n    invitations:\n      revoke: [inv_acme_carol]\n    notificationChannels:\n      remove: [chn_acme_slack]\n`,
    });
    world.emulator.faults.add({ operation: 'deleteInvitation', fault: { kind: 'lost-response' } });
    world.emulator.faults.add({ operation: 'deleteNotificationChannel', fault: { kind: 'lost-response' } });
    const result = await world.cli(['apply', '--auto-approve']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/✓ organisations\.acme\.invitations\.revoke\.inv_acme_carol already done: found already gone/);
    expect(result.stdout).toMatch(/✓ organisations\.acme\.notificationChannels\.remove\.chn_acme_slack already done: found already gone/);
    expect(logFor(world, 'deleteInvitation').map((r) => r.status)).toEqual(['lost', 404]);
    expect(logFor(world, 'deleteNotificationChannel').map((r) => r.status)).toEqual(['lost', 404]);
    // Membership comes from the listing filtered by the slug, never from GetOrganisation (which some
    // services answer for non-members), sent after the 404 it vouches for: one serves both deletes
    // of the organisation only when the second 404 came while it was on its way.
    const membershipReads = logFor(world, 'getOrganisations').filter((r) => r.path.includes('filter=acme')).map((r) => r.status);
    expect(membershipReads.length).toBeGreaterThanOrEqual(1);
    expect(membershipReads.length).toBeLessThanOrEqual(2);
    expect(membershipReads.every((status) => status === 200)).toBe(true);
    expect(logFor(world, 'getOrganisation')).toEqual([]);
    const dump = world.emulator.store.dump();
    expect(dump.invitations.map((i) => i.id)).not.toContain('inv_acme_carol');
    expect(dump.channels.map((c) => c.id)).not.toContain('chn_acme_slack');
    const journal = await readJournalFile(world.journalPath);
    expect(Object.values(journal.services[world.env.ORGFORM_BASE_URL!] ?? {}).map((e) => (e as { outcome: string }).outcome)).toEqual(['already-done', 'already-done']);
    const again = await world.cli(['plan', '--detailed-exitcode']);
    expect(again.code).toBe(0);
    world.leaks.add('journal', JSON.stringify(journal));
    world.leaks.expectClean();
  });

  it.each([404, 403])('case 7: a DELETE that answers 404 while the membership check answers %i is a failure, not success', async (status) => {
    let proxy!: Awaited<ReturnType<typeof startFaultProxy>>;
    const world = await startWorld({
      config: `version: 1\norganisations:\n  acme:\n    invitations:\n      revoke: [inv_acme_carol]\n`,
      baseUrl: async (emulator) => {
        // The plan's listing passes; the membership check after the 404 (the listing filtered by slug) is refused.
        proxy = await startFaultProxy(emulator.url, (method, path) =>
          method === 'GET' && path.includes('filter=acme') ? { kind: 'status', status, body: { code: 'forbidden', message: 'No access.' } } : { kind: 'pass' },
        );
        return proxy.url;
      },
    });
    world.emulator.faults.add({ operation: 'deleteInvitation', fault: { kind: 'status', status: 404, body: JSON.stringify({ code: 'invitation_not_found', message: 'No such invitation.' }) } });
    const result = await world.cli(['apply', '--auto-approve']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/✗ organisations\.acme\.invitations\.revoke\.inv_acme_carol failed/);
    expect(result.stdout).toContain(
      `failed: deleteInvitation: HTTP 404 invitation_not_found: No such invitation. — and your membership of organisation "org_acme" could not be confirmed (the listing answered HTTP ${status} forbidden)`,
    );
    expect(result.stdout).toContain('so this is not counted as done');
    expect(result.stdout).toMatch(/0 applied, 0 already done, 0 skipped, 0 not started, 1 failed/);
    // Not recorded as done: the next plan still has it.
    expect((await readJournalFile(world.journalPath)).services).toEqual({});
    const again = await world.cli(['plan', '--detailed-exitcode']);
    expect(again.code).toBe(2);
    expect(again.stdout).toContain('organisations.acme.invitations.revoke.inv_acme_carol');
    world.leaks.expectClean();
  });

  it('case 8: an accept applied whose answer was lost, retried and answered 404, succeeds only because membership is now visible', async () => {
    const config = `version: 1\norganisations:\n  globex:\n    id: org_globex\n    invitations:\n      accept: [inv_globex_ada]\n  wonka:\n    id: org_wonka\n    invitations:\n      accept: [inv_wonka_ada]\n`;
    let proxy!: Awaited<ReturnType<typeof startFaultProxy>>;
    const world = await startWorld({
      config,
      baseUrl: async (emulator) => {
        // wonka: answered 404 without being applied, so ada is not a member: it must fail.
        proxy = await startFaultProxy(emulator.url, (method, path) =>
          method === 'PUT' && path.endsWith('/org_wonka/invitations/inv_wonka_ada/accept')
            ? { kind: 'status', status: 404, body: { code: 'invitation_not_found', message: 'No such invitation.' } }
            : { kind: 'pass' },
        );
        return proxy.url;
      },
    });
    // globex: applied, answer lost; the retry finds the invitation consumed (404), and ada a member.
    world.emulator.faults.add({ operation: 'acceptInvitation', fault: { kind: 'lost-response' } });
    const result = await world.cli(['apply', '--auto-approve']);
    expect(result.stdout).toMatch(/✓ organisations\.globex\.invitations\.accept\.inv_globex_ada already done: the invitation is no longer pending and you are a member/);
    expect(result.stdout).toMatch(
      /✗ organisations\.wonka\.invitations\.accept\.inv_wonka_ada failed: acceptInvitation: HTTP 404 invitation_not_found: No such invitation\. — and you are not a member of organisation "org_wonka" \(it is not among your organisations\), so the invitation was not accepted/,
    );
    expect(result.code).toBe(1);
    expect(logFor(world, 'acceptInvitation').map((r) => r.status)).toEqual(['lost', 404]);
    expect(logFor(world, 'acceptInvitation').every((r) => r.path.includes('org_globex'))).toBe(true);
    expect(world.user().memberships).toContain('org_globex');
    expect(world.user().memberships).not.toContain('org_wonka');
    const again = await world.cli(['plan', '--detailed-exitcode']);
    expect(again.code).toBe(2);
    expect(again.stdout).toContain('organisations.wonka.invitations.accept.inv_wonka_ada');
    expect(again.stdout).not.toContain('inv_globex_ada');
    world.leaks.expectClean();
  });

  it('case 9: a slug check that never answers fails at its own timeout, and other operations are unaffected', async () => {
    const world = await startWorld({ emulator: { slugDelayMs: 1_200 } });
    // The slug check's own timeouts (headers 300 ms) fire, not the 20 s of the other operations.
    const client = clientFor(world, {
      timeouts: { headersMs: 20_000, totalMs: 30_000 },
      slugTimeouts: { headersMs: 300, totalMs: 20_000 },
      retryPolicy: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
    });
    world.emulator.faults.add({ operation: 'getSlugAvailability', times: Infinity, fault: { kind: 'hang' } });
    const started = Date.now();
    const finished: Record<string, number> = {};
    const slug = client.getSlugAvailability('new-slug').then(
      () => undefined,
      (err: unknown) => ((finished.slug = Date.now() - started), err),
    );
    const ids = ['org_acme', 'org_initech', 'org_umbrella', 'org_stark'];
    const reads = Promise.all(ids.map((id) => client.getOrganisation(id).then((o) => ((finished[id] = Date.now() - started), o.slug))));
    expect(await reads).toEqual(['acme', 'initech', 'umbrella', 'stark-industries']);
    const err = await slug;
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ operation: 'getSlugAvailability', failure: 'timeout', attempts: 2 });
    expect((err as Error).message).toContain('headers timeout');
    expect(finished.slug).toBeLessThan(10_000);
    for (const id of ids) expect(finished[id]).toBeLessThan(finished.slug!);
    world.emulator.faults.clear();

    // And the other way round: a deliberately slow (1.2 s) slug check within its own 5 s is not
    // cut short by the 300 ms the other operations have.
    const strict = clientFor(world, { timeouts: { headersMs: 300, totalMs: 2_000 }, slugTimeouts: { headersMs: 5_000, totalMs: 8_000 }, retryPolicy: { maxAttempts: 1 } });
    expect(await strict.getSlugAvailability('brand-new-slug')).toEqual({ ok: true, messages: [] });
    world.emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'delay-headers', ms: 2_500 } });
    expect(await failureOf(strict.getOrganisation('org_acme'))).toMatchObject({ failure: 'timeout' });
    world.leaks.addError('slug error', err);
    world.leaks.expectClean();
  });

  it('case 10: headers that never arrive are aborted at the headers timeout', async () => {
    const world = await startWorld();
    world.emulator.faults.add({ operation: 'getOrganisation', times: Infinity, fault: { kind: 'hang' } });
    const client = clientFor(world, { timeouts: { headersMs: 200, totalMs: 10_000 }, retryPolicy: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 } });
    const started = Date.now();
    const err = await failureOf(client.getOrganisation('org_acme'));
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ failure: 'timeout', attempts: 2 });
    expect(err.message).toContain('headers timeout');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(world.emulator.counters.byOperation.getOrganisation).toBe(2);
    world.leaks.addError('error', err);
    world.leaks.expectClean();
  });

  it('case 10: a body trickled forever is aborted at the total deadline, and one trickled too slowly at the body timeout', async () => {
    const world = await startWorld();
    world.emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'trickle', intervalMs: 20 } });
    const forever = clientFor(world, { timeouts: { bodyMs: 10_000, totalMs: 600 } });
    let started = Date.now();
    const err = await failureOf(forever.getOrganisation('org_acme'));
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ failure: 'timeout' });
    expect(err.message).toContain('within the time budget');
    expect(Date.now() - started).toBeLessThan(5_000);

    world.emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'trickle', intervalMs: 5_000 } });
    const slow = clientFor(world, { timeouts: { bodyMs: 200, totalMs: 20_000 } });
    started = Date.now();
    const stalled = await failureOf(slow.getOrganisation('org_acme'));
    expect(stalled).toBeInstanceOf(TransportError);
    expect(stalled).toMatchObject({ failure: 'timeout' });
    expect(stalled.message).toContain('body timeout');
    expect(Date.now() - started).toBeLessThan(5_000);
    world.leaks.addError('error', err);
    world.leaks.addError('error', stalled);
    world.leaks.expectClean();
  });

  it('case 11: a 100 MB answer is aborted at the size cap without holding it in memory', async () => {
    const world = await startWorld({ config: 'version: 1\norganisations:\n  acme: {}\n' });
    // Announced by Content-Length: refused before reading (the CLI's default cap, 16 MiB).
    world.emulator.faults.add({ operation: 'getOrganisations', fault: { kind: 'huge', bytes: 100 * 1024 * 1024 } });
    const plan = await world.cli(['plan']);
    expect(plan.code).toBe(1);
    expect(plan.stderr).toMatch(/getOrganisations \(all pages\) failed: the answer is larger than 16777216 bytes; refusing to read it/);

    // Not announced (chunked, no Content-Length): read up to the cap, then aborted.
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let sent = 0;
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":"org_acme","slug":"acme","padding":"');
      const pump = () => {
        while (sent < 100 * 1024 * 1024 && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!res.destroyed) res.end('"}');
      };
      pump();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const client = createClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: world.token });
      clients.push(client);
      global.gc?.();
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
      const err = await failureOf(client.getOrganisation('org_acme'));
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().rss);
      expect(err).toBeInstanceOf(TransportError);
      expect(err).toMatchObject({ failure: 'too-large' });
      expect(sent).toBeLessThan(60 * 1024 * 1024);
      expect(peak - before).toBeLessThan(90 * 1024 * 1024);
      world.leaks.addError('error', err);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    world.leaks.expectClean();
  });

  it('case 12: an HTML 502 page becomes a short typed error, with no raw body and no stack trace', async () => {
    const world = await startWorld({ config: BILLING_CONFIG });
    world.emulator.faults.add({ operation: 'getOrganisations', times: Infinity, fault: { kind: 'html', status: 502 } });
    const result = await world.cli(['plan'], { env: FAST_RETRIES });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'Error: getOrganisations (all pages) failed with HTTP 502 after 5 attempts: no error details in the answer. The service sent an HTML page instead of an Error body\n',
    );
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toMatch(/<|nginx|bug in orgform/);
    expect(result.stderr).not.toMatch(STACK_LINE);
    world.leaks.expectClean();
  });

  it('case 12: truncated JSON, on success or in an error, becomes a short typed error, with no raw body and no stack trace', async () => {
    const world = await startWorld({ config: BILLING_CONFIG });
    world.emulator.faults.add({ operation: 'getOrganisations', fault: { kind: 'truncated-json', status: 200 } });
    const plan = await world.cli(['plan']);
    expect(plan.code).toBe(1);
    expect(plan.stderr).toMatch(/^Error: getOrganisations \(all pages\) failed: the answer is not what the interface describes: expected an object with an "organisations" array, got HTTP 200 with a body that is not JSON \(application\/json; charset=utf-8\)\n$/);
    expect(plan.stderr).not.toMatch(/Acme Corpo|org_00001/);

    world.emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'truncated-json', status: 400 } });
    const apply = await world.cli(['apply', '--auto-approve', '--parallelism', '1']);
    expect(apply.code).toBe(1);
    expect(apply.stdout).toMatch(/✗ organisations\.acme\.billing failed: updateBillingDetails .*HTTP 400: no error details in the answer\. The service sent a body that is not valid JSON/);
    expect(apply.stdout).not.toContain('Something went wr');
    for (const text of [plan.stderr, apply.stdout, apply.stderr]) {
      expect(text).not.toMatch(STACK_LINE);
      expect(text).not.toContain('bug in orgform');
    }
    // The other organisations were applied.
    expect(billingOf(world, 'org_umbrella')?.billingEmail).toBe('finance@umbrella.example');
    world.leaks.expectClean();
  });

  it.each([301, 302, 307, 308] as const)('case 13: a %i redirect to another origin is refused, and the other server receives nothing', async (status) => {
    const world = await startWorld({ config: BILLING_CONFIG });
    const other = await startEmulator({ slugDelayMs: 0 });
    try {
      const elsewhere = `${other.url}${ORG_API}/organisations/org_acme/billing`;
      world.emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'redirect', status, location: elsewhere } });
      world.emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'redirect', status, location: `${other.url}${ORG_API}/organisations/org_acme` } });
      const apply = await world.cli(['apply', '--auto-approve', '--parallelism', '1']);
      expect(apply.code).toBe(1);
      expect(apply.stdout).toContain(`✗ organisations.acme.billing failed: updateBillingDetails organisation "org_acme" failed: the service answered with a redirect to ${elsewhere}, which orgform never follows: check the base URL`);
      const client = clientFor(world);
      const err = await failureOf(client.getOrganisation('org_acme'));
      expect(err).toBeInstanceOf(TransportError);
      expect(err).toMatchObject({ failure: 'redirect' });
      expect(other.counters.total).toBe(0);
      expect(other.requestLog).toEqual([]);
      world.leaks.addError('error', err);
    } finally {
      await other.stop();
    }
    world.leaks.expectClean();
  });
});

// The canary helpers are used by every case above through startWorld; this keeps them honest.
describe('the leak scanner', () => {
  it('finds the canary, raw or percent-encoded, wherever it was collected', () => {
    const token = canaryToken();
    const scanner = new LeakScanner(token);
    scanner.add('clean', 'nothing here');
    expect(() => scanner.expectClean()).not.toThrow();
    scanner.add('dirty', `Authorization: Bearer ${token}`);
    expect(() => scanner.expectClean()).toThrow();
  });
});

/**
 * The client against answers the interface leaves open, played by the emulator over loopback:
 * listings that never run out, 2xx bodies that are not JSON, `billing: null`, and an Error body
 * that echoes the token where a cut would fall inside it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, TransportError } from '../../src/api/api-error.js';
import { createClient, type OrganisationsClient } from '../../src/api/client.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { rejection } from '../support/rejection.js';
import { collect } from '../support/collect.js';

const open: Array<{ emulator: Emulator; client: OrganisationsClient }> = [];

afterEach(async () => {
  for (const { emulator, client } of open.splice(0)) {
    await client.close();
    await emulator.stop();
  }
});

async function setup(token = 'demo-token') {
  const emulator = await startEmulator({ slugDelayMs: 0 });
  const client = createClient({ baseUrl: emulator.url, token, retryPolicy: { baseDelayMs: 5, maxDelayMs: 20 } });
  open.push({ emulator, client });
  return { emulator, client };
}

const page = (body: object) => ({ operation: 'getOrganisations' as const, fault: { kind: 'status' as const, status: 200, body: JSON.stringify(body) } });

describe('the client on answers the interface leaves open', () => {
  it('follows an empty page to the pages after it, and stops, naming where, after 100 empty pages in a row each with a fresh `next`', async () => {
    const { client, emulator } = await setup();
    emulator.faults.add(page({ organisations: [{ id: 'o1', slug: 'one' }], next: 'fresh-0' }));
    emulator.faults.add(page({ organisations: [], next: 'fresh-1' }));
    emulator.faults.add(page({ organisations: [{ id: 'o2', slug: 'two' }] }));
    expect((await collect(client.listOrganisations())).map((o) => o.slug)).toEqual(['one', 'two']);

    for (let i = 0; i < 101; i += 1) emulator.faults.add(page({ organisations: [], next: `empty-${i}` }));
    emulator.resetCounters();
    const failure = await rejection(collect(client.listOrganisations()));
    expect((failure as Error).message).toContain('pages 1 to 100 all came empty, each with a "next" link, so the listing would never end. The listing stopped at page 100, after 0 organisations');
    expect(emulator.counters.byOperation.getOrganisations).toBe(100);
  });

  it('reads past totalCount to organisations it did not count, and stops at an empty page that points on once every counted one is listed', async () => {
    const { client, emulator } = await setup();
    emulator.faults.add(page({ totalCount: 2, organisations: [{ id: 'o1', slug: 'one' }, { id: 'o2', slug: 'two' }], next: 'more' }));
    emulator.faults.add(page({ totalCount: 2, organisations: [{ id: 'o3', slug: 'three' }] }));
    expect((await collect(client.listOrganisations())).map((o) => o.slug)).toEqual(['one', 'two', 'three']);

    emulator.faults.add(page({ totalCount: 2, organisations: [{ id: 'o1', slug: 'one' }, { id: 'o2', slug: 'two' }], next: 'more' }));
    emulator.faults.add(page({ totalCount: 2, organisations: [], next: 'again' }));
    const failure = await rejection(collect(client.listOrganisations()));
    expect((failure as Error).message).toContain('page 2 is empty and its "next" points to another page, though the listing already holds the 2 organisations its totalCount counts: more pages than totalCount allows. The listing stopped at page 2, after 2 organisations');
  });

  it('reads `billing: null` as no billing instead of refusing the whole listing', async () => {
    const { client, emulator } = await setup();
    emulator.faults.add(page({ organisations: [{ id: 'o1', slug: 'one', billing: null }, { id: 'o2', slug: 'two', billing: { billingEmail: 'a@two.test' } }] }));
    const orgs = await collect(client.listOrganisations());
    expect(orgs.map((o) => [o.slug, o.billing])).toEqual([['one', undefined], ['two', { billingEmail: 'a@two.test' }]]);
  });

  it.each([
    ['deleteInvitation', (c: OrganisationsClient) => c.deleteInvitation('org_acme', 'inv_1')],
    ['acceptInvitation', (c: OrganisationsClient) => c.acceptInvitation('org_acme', 'inv_1')],
    ['updateBillingDetails', (c: OrganisationsClient) => c.updateBillingDetails('org_acme', { billingEmail: 'a@acme.test' })],
    ['setActiveOrganisation', (c: OrganisationsClient) => c.setActiveOrganisation('org_acme')],
  ] as const)('takes `200 text/plain OK` from %s as the success it is', async (operation, call) => {
    const { client, emulator } = await setup();
    emulator.faults.add({ operation, fault: { kind: 'status', status: 200, body: 'OK', contentType: 'text/plain' } });
    await expect(call(client)).resolves.toBeUndefined();
    expect(emulator.counters.byOperation[operation]).toBe(1);
  });

  it('refuses a text 2xx where a body is needed, and says it was not JSON', async () => {
    const { client, emulator } = await setup();
    emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'status', status: 200, body: 'OK', contentType: 'text/plain' } });
    const err = await rejection(client.getOrganisation('org_acme'));
    expect(err).toBeInstanceOf(TransportError);
    expect((err as Error).message).toContain('expected an Organisation object, got HTTP 200 with a body that is not JSON (text/plain)');
  });

  it('redacts a token that the Error body echoes where the message is cut, leaving no part of it', async () => {
    const token = 'tok_0123456789abcdefghijklmnopqrst'; // 34 characters
    const { client, emulator } = await setup(token);
    const message = `${'x'.repeat(480)} rejected ${token} as given`;
    emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'status', status: 422, body: JSON.stringify({ code: 'validation_failed', message, cause: message }) } });
    const err = await rejection(client.updateBillingDetails('org_acme', { billingEmail: 'a@acme.test' }));
    expect(err).toBeInstanceOf(ApiError);
    const text = `${(err as ApiError).message} ${(err as ApiError).serviceMessage} ${(err as ApiError).serviceCause}`;
    expect(text).not.toContain(token.slice(0, 8));
    expect(text).toContain('[REDACTED]');
  });
});

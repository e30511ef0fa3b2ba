import { describe, expect, it } from 'vitest';
import { call, callJson, ORG_API, orgPath, useEmulator } from './emulator-test-kit.js';

const LIST = `${ORG_API}/organisations`;

describe('counters', () => {
  it('counts requests by operation, and writes only when they reach processing', async () => {
    const emulator = await useEmulator();
    await call(emulator, LIST);
    await call(emulator, orgPath('org_acme'));
    await call(emulator, orgPath('org_acme', 'active'), { method: 'PUT' });
    await call(emulator, orgPath('org_acme', 'active'), { method: 'PUT', token: null });
    emulator.faults.add({ fault: { kind: 'status', status: 503 } });
    await call(emulator, orgPath('org_acme', 'active'), { method: 'PUT' });
    await call(emulator, '/nowhere');
    expect(emulator.counters).toMatchObject({ total: 6, writes: 1, inFlight: 0 });
    expect(emulator.counters.byOperation).toMatchObject({ getOrganisations: 1, getOrganisation: 1, setActiveOrganisation: 3, unknown: 1, acceptInvitation: 0 });
  });

  it('sees concurrent requests in flight at once with latency', async () => {
    // Long enough that all eight have arrived before the first answers, on a loaded machine too.
    const emulator = await useEmulator({ latencyMs: 3_000 });
    const answers = Promise.all(Array.from({ length: 8 }, () => call(emulator, orgPath('org_acme')).then((r) => r.text())));
    await expect.poll(() => emulator.counters.inFlight, { timeout: 3_000, interval: 20 }).toBe(8);
    await answers;
    expect(emulator.counters.maxInFlight).toBe(8);
    expect(emulator.counters.inFlight).toBe(0);
  });

  it('adds latency before every answer', async () => {
    const emulator = await useEmulator({ latencyMs: 200 });
    const started = Date.now();
    expect((await call(emulator, '/nowhere')).status).toBe(404);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });

  it('zeroes counters and empties the log on resetCounters()', async () => {
    const emulator = await useEmulator();
    const counters = emulator.counters;
    await call(emulator, LIST);
    emulator.resetCounters();
    expect(counters.total).toBe(0);
    expect(counters.byOperation.getOrganisations).toBe(0);
    expect(emulator.requestLog).toHaveLength(0);
    await call(emulator, LIST);
    expect(emulator.counters.total).toBe(1);
  });

  it('logs the idempotency key and request id as sent', async () => {
    const emulator = await useEmulator();
    await call(emulator, orgPath('org:hooli/eu', 'active'), { method: 'PUT', headers: { 'idempotency-key': 'k-1', 'x-request-id': 'r-1' } });
    expect(emulator.requestLog).toEqual([
      {
        method: 'PUT',
        path: '/api/organisations/v1/organisations/org%3Ahooli%2Feu/active',
        operation: 'setActiveOrganisation',
        status: 200,
        idempotencyKey: 'k-1',
        requestId: 'r-1',
        authorization: 'bearer',
      },
    ]);
  });
});

describe('admin endpoints', () => {
  it('GET /__emulator/counters answers the counters, uncounted itself', async () => {
    const emulator = await useEmulator();
    await call(emulator, LIST);
    const { status, body } = await callJson(emulator, '/__emulator/counters', { token: null });
    expect(status).toBe(200);
    expect(body).toMatchObject({ total: 1, byOperation: { getOrganisations: 1 }, writes: 0 });
    expect(emulator.counters.total).toBe(1);
  });

  it('POST /__emulator/counters/reset zeroes them', async () => {
    const emulator = await useEmulator();
    await call(emulator, LIST);
    expect((await call(emulator, '/__emulator/counters/reset', { method: 'POST', token: null })).status).toBe(204);
    expect(emulator.counters.total).toBe(0);
  });

  it('POST /__emulator/faults adds one rule or an array of them, with times "Infinity"', async () => {
    const emulator = await useEmulator();
    const one = await callJson(emulator, '/__emulator/faults', { method: 'POST', token: null, body: { operation: 'getOrganisations', fault: { kind: 'status', status: 503 } } });
    expect(one.body).toEqual({ pending: 1 });
    await callJson(emulator, '/__emulator/faults', {
      method: 'POST',
      token: null,
      body: [{ fault: { kind: 'status', status: 500 }, times: 'Infinity' }, { fault: { kind: 'drop' } }],
    });
    expect(emulator.faults.pending().map((r) => r.times)).toEqual([1, Infinity, 1]);
    expect((await call(emulator, LIST)).status).toBe(503);
    expect((await call(emulator, LIST)).status).toBe(500);
    const listed = await callJson(emulator, '/__emulator/faults', { token: null });
    expect(listed.body[0].times).toBe('Infinity');
  });

  it('POST /__emulator/faults refuses a bad rule with 400 and adds none of the array', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, '/__emulator/faults', {
      method: 'POST',
      token: null,
      body: [{ fault: { kind: 'drop' } }, { fault: { kind: 'status', status: 99 } }],
    });
    expect(status).toBe(400);
    expect(body.code).toBe('invalid_request');
    expect(emulator.faults.pending()).toEqual([]);
    expect((await callJson(emulator, '/__emulator/faults', { method: 'POST', token: null, body: '{' })).status).toBe(400);
  });

  it('DELETE /__emulator/faults clears them', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ times: Infinity, fault: { kind: 'drop' } });
    expect((await call(emulator, '/__emulator/faults', { method: 'DELETE', token: null })).status).toBe(204);
    expect(emulator.faults.pending()).toEqual([]);
  });

  it('GET /__emulator/state answers the seed-format dump, changes included', async () => {
    const emulator = await useEmulator();
    await call(emulator, orgPath('org_globex', 'invitations', 'inv_globex_ada', 'accept'), { method: 'PUT' });
    const { body } = await callJson(emulator, '/__emulator/state', { token: null });
    expect(body.users[0]).toMatchObject({ token: 'demo-token', memberships: expect.arrayContaining(['org_globex']) });
    expect(body.invitations).toContainEqual({ id: 'inv_globex_ada', organisationId: 'org_globex', email: 'ada@acme.example', pending: false });
    expect(body.organisations).toHaveLength(7);
    expect(body.channels).toHaveLength(4);
  });

  it('POST /__emulator/invitations/reopen makes an invitation accepted earlier pending again and its invitee no member, as a restored environment would', async () => {
    const emulator = await useEmulator();
    expect((await call(emulator, orgPath('org_globex', 'active'), { method: 'PUT' })).status).toBe(404);
    expect((await call(emulator, orgPath('org_globex', 'invitations', 'inv_globex_ada', 'accept'), { method: 'PUT' })).ok).toBe(true);
    expect((await call(emulator, orgPath('org_globex', 'active'), { method: 'PUT' })).ok).toBe(true);

    const { status, body } = await callJson(emulator, '/__emulator/invitations/reopen', { method: 'POST', token: null, body: { invitation: 'inv_globex_ada' } });
    expect(status).toBe(200);
    expect(body).toEqual({ organisationId: 'org_globex', removedFrom: ['ada@acme.example'] });
    const state = emulator.store.dump();
    expect(state.invitations).toContainEqual({ id: 'inv_globex_ada', organisationId: 'org_globex', email: 'ada@acme.example' });
    expect(state.users.find((u) => u.token === 'demo-token')?.memberships).not.toContain('org_globex');
    expect(state.users.find((u) => u.token === 'demo-token')?.active).toBeUndefined();
    // The service now plays it: not listed, not writable, and the invitation can be accepted again.
    const listed = await callJson(emulator, `${LIST}?filter=globex`);
    expect(listed.body.organisations).toEqual([]);
    expect((await call(emulator, orgPath('org_globex', 'billing'), { method: 'PUT', body: { billingEmail: 'x@globex.example' } })).status).toBe(404);
    expect((await call(emulator, orgPath('org_globex', 'invitations', 'inv_globex_ada', 'accept'), { method: 'PUT' })).ok).toBe(true);
  });

  it('POST /__emulator/invitations/reopen refuses a body without an invitation (400) and an unknown one (404)', async () => {
    const emulator = await useEmulator();
    expect((await callJson(emulator, '/__emulator/invitations/reopen', { method: 'POST', token: null, body: '{' })).status).toBe(400);
    expect((await callJson(emulator, '/__emulator/invitations/reopen', { method: 'POST', token: null, body: {} })).status).toBe(400);
    expect((await callJson(emulator, '/__emulator/invitations/reopen', { method: 'POST', token: null, body: { invitation: 'inv_nope' } })).status).toBe(404);
  });

  it('POST /__emulator/billing changes an organisation’s billing as someone else would: set, removed, or an empty value kept', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, '/__emulator/billing', {
      method: 'POST',
      token: null,
      body: { organisation: 'org_acme', billing: { subscriptionId: 'sub_renewed', customerId: null, billingEmail: '' } },
    });
    expect(status).toBe(200);
    expect(body.billing).toMatchObject({ subscriptionId: 'sub_renewed', billingEmail: '' });
    expect(body.billing).not.toHaveProperty('customerId');
    // What the service answers afterwards, the listing included.
    const read = await callJson(emulator, orgPath('org_acme'));
    expect(read.body.billing).toMatchObject({ subscriptionId: 'sub_renewed', billingEmail: '' });
    const listed = await callJson(emulator, `${ORG_API}/organisations`);
    expect(listed.body.organisations.find((o: { id: string }) => o.id === 'org_acme').billing.subscriptionId).toBe('sub_renewed');
  });

  it('POST /__emulator/billing refuses a body that is not one organisation’s billing, and an unknown organisation', async () => {
    const emulator = await useEmulator();
    for (const body of ['{', { billing: {} }, { organisation: 'org_acme', billing: 'x' }, { organisation: 'org_acme' }]) {
      expect((await callJson(emulator, '/__emulator/billing', { method: 'POST', token: null, body })).status).toBe(400);
    }
    expect((await callJson(emulator, '/__emulator/billing', { method: 'POST', token: null, body: { organisation: 'org_nope', billing: {} } })).status).toBe(404);
  });

  it('answers 404 to an unknown control and is never faulted', async () => {
    const emulator = await useEmulator();
    emulator.faults.add({ times: Infinity, fault: { kind: 'drop' } });
    const { status, body } = await callJson(emulator, '/__emulator/nope', { token: null });
    expect(status).toBe(404);
    expect(body.code).toBe('not_found');
  });
});

describe('renewals', () => {
  it('renews one subscription every N service requests, round robin over the organisations with billing, as a billing system alongside would', async () => {
    const emulator = await useEmulator({ renewals: { everyRequests: 3 } });
    const before = emulator.store.dump().organisations.filter((o) => o.billing !== undefined);
    for (let i = 0; i < 6; i += 1) await call(emulator, orgPath('org_acme'));
    expect(emulator.store.renewals).toEqual([
      { organisation: before[0]!.id, subscriptionId: 'sub_renewed_1', customerId: 'cus_renewed_1' },
      { organisation: before[1]!.id, subscriptionId: 'sub_renewed_2', customerId: 'cus_renewed_2' },
    ]);
    const after = emulator.store.dump().organisations;
    expect(after.find((o) => o.id === before[0]!.id)?.billing).toMatchObject({ subscriptionId: 'sub_renewed_1', customerId: 'cus_renewed_1', billingEmail: before[0]!.billing!.billingEmail });
    // The third request saw the renewal it came with.
    expect(emulator.counters.total).toBe(6);
  });

  it('refuses a period that is not a whole number of at least 1', async () => {
    await expect(useEmulator({ renewals: { everyRequests: 0 } })).rejects.toThrow('renewals.everyRequests must be a whole number of at least 1 (got 0).');
  });
});

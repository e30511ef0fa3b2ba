import { describe, expect, it } from 'vitest';
import { call, callJson, ORG_API, orgPath, V2_API, useEmulator } from './emulator-test-kit.js';

const setBilling = (emulator: Awaited<ReturnType<typeof useEmulator>>, customerID: string, key?: string) =>
  callJson(emulator, orgPath('org_acme', 'billing'), {
    method: 'PUT',
    body: { customerID },
    ...(key ? { headers: { 'idempotency-key': key } } : {}),
  });

describe('Idempotency-Key', () => {
  it('is ignored by default: a repeated key processes again', async () => {
    const emulator = await useEmulator();
    await setBilling(emulator, 'first', 'k1');
    const again = await setBilling(emulator, 'second', 'k1');
    expect(again.body.billing.customerId).toBe('second');
    expect(emulator.counters.writes).toBe(2);
  });

  it('replays the stored answer for a repeated key when enabled, without processing again', async () => {
    const emulator = await useEmulator({ idempotency: true });
    const first = await setBilling(emulator, 'first', 'k1');
    emulator.store.organisations.get('org_acme')!.billing!.customerId = 'changed-meanwhile';
    const replay = await setBilling(emulator, 'second', 'k1');
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
    expect(emulator.store.organisations.get('org_acme')?.billing?.customerId).toBe('changed-meanwhile');
    expect(emulator.counters.writes).toBe(1);
  });

  it('replays after a lost response, so a retry learns what happened', async () => {
    const emulator = await useEmulator({ idempotency: true });
    emulator.faults.add({ operation: 'acceptInvitation', fault: { kind: 'lost-response' } });
    const path = orgPath('org_globex', 'invitations', 'inv_globex_ada', 'accept');
    await expect(call(emulator, path, { method: 'PUT', headers: { 'idempotency-key': 'acc-1' } })).rejects.toThrow();
    expect((await call(emulator, path, { method: 'PUT', headers: { 'idempotency-key': 'acc-1' } })).status).toBe(204);
    expect((await callJson(emulator, path, { method: 'PUT', headers: { 'idempotency-key': 'acc-2' } })).body.code).toBe('invitation_not_found');
  });

  it('keeps keys apart per path and per token', async () => {
    const emulator = await useEmulator({ idempotency: true });
    await setBilling(emulator, 'first', 'k1');
    const other = await callJson(emulator, orgPath('org_acme', 'active'), { method: 'PUT', headers: { 'idempotency-key': 'k1' } });
    expect(other.body.id).toBe('org_acme');
    const bob = await callJson(emulator, orgPath('org_acme', 'billing'), { method: 'PUT', token: 'other-token', body: { customerID: 'bob' }, headers: { 'idempotency-key': 'k1' } });
    expect(bob.body.billing.customerId).toBe('bob');
  });
});

describe('successStyle', () => {
  const deleteChannel = (emulator: Awaited<ReturnType<typeof useEmulator>>) =>
    call(emulator, `${V2_API}/o/org_acme/notification_channels/chn_acme_email`, { method: 'DELETE' });

  it("'empty-200' answers 200 with an empty body where 204 was decided", async () => {
    const emulator = await useEmulator({ successStyle: 'empty-200' });
    const response = await call(emulator, `${ORG_API}/organisations/org_acme/invitations/inv_acme_carol`, { method: 'DELETE' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect(emulator.store.invitations.has('inv_acme_carol')).toBe(false);
  });

  it('keeps 204 for deleting a notification channel, whose status the interface fixes', async () => {
    const emulator = await useEmulator({ successStyle: 'empty-200' });
    expect((await deleteChannel(emulator)).status).toBe(204);
  });

  it("'json-200' answers 200 with {} where 204 was decided", async () => {
    const emulator = await useEmulator({ successStyle: 'json-200' });
    const response = await call(emulator, orgPath('org_acme', 'invitations', 'inv_acme_carol'), { method: 'DELETE' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({});
  });

  it('leaves errors and 200 answers alone', async () => {
    const emulator = await useEmulator({ successStyle: 'json-200' });
    expect((await callJson(emulator, `${ORG_API}/organisations/org_acme`)).body.id).toBe('org_acme');
    const deleteInvitation = () => call(emulator, `${ORG_API}/organisations/org_acme/invitations/inv_acme_carol`, { method: 'DELETE' });
    expect((await deleteInvitation()).status).toBe(200);
    expect((await deleteInvitation()).status).toBe(404);
  });
});

import { describe, expect, it } from 'vitest';
import { ChangeFailedError, executeChange } from '../../src/apply/execute-change.js';
import { acceptInvitation, billing, billingKnownAfterAccept, removeChannel, revokeInvitation } from '../render/fixtures.js';
import { createScriptedClient, fail, lostAnswer, serviceError } from '../support/scripted-client.js';

/** Records the waits between re-reads instead of waiting them out. */
function sleeps() {
  const waited: number[] = [];
  return { waited, options: { sleep: async (ms: number) => void waited.push(ms), backoffBaseMs: 10 } };
}

describe('executeChange: billing known after the accept', () => {
  const change = billingKnownAfterAccept('acme', 'inv_1', { billingEmail: 'finance@acme.test' });

  it('reads the organisation once joined and writes the declared fields over what it read', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true, billing: { billingEmail: 'old@acme.test', customerId: 'cus_1' } }]);
    const result = await executeChange(change, client, sleeps().options);
    expect(result.outcome).toBe('applied');
    expect(client.writes()).toEqual([expect.objectContaining({ operation: 'updateBillingDetails', update: { billingEmail: 'finance@acme.test', customerID: 'cus_1' } })]);
  });

  it('re-reads, waiting longer each time, while the new membership does not show yet', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true, billing: {} }]);
    client.on('getOrganisation', fail(serviceError('getOrganisation', 404, 'organisation_not_found')), 2);
    const { waited, options } = sleeps();
    expect((await executeChange(change, client, options)).outcome).toBe('applied');
    expect(waited).toEqual([10, 20]);
  });

  it('writes nothing when what it read already holds the declared values', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true, billing: { billingEmail: 'finance@acme.test' } }]);
    const result = await executeChange(change, client, sleeps().options);
    expect(result).toEqual({ outcome: 'already-done', reason: 'the billing read after joining already holds the declared values' });
    expect(client.writes()).toEqual([]);
  });

  it('fails, naming the organisation and writing nothing, when it cannot be read after the accept', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true }]);
    client.on('getOrganisation', fail(serviceError('getOrganisation', 403, 'forbidden')), Infinity);
    const { waited, options } = sleeps();
    const failure = await executeChange(change, client, options).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ChangeFailedError);
    expect((failure as ChangeFailedError).operation).toBe('getOrganisation');
    expect((failure as Error).message).toMatch(/the billing of organisation "acme" \(org_acme\) must be read before it is written, and it could not be read after the accept\. Nothing was written/);
    expect(waited).toEqual([10, 20, 40, 80]);
    expect(client.writes()).toEqual([]);
  });
});

describe('executeChange: accepting an invitation', () => {
  it('counts a lost answer as done only once the listing shows the membership', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', invitations: ['inv_1'] }]);
    // The accept takes effect, its answer is lost.
    client.on('acceptInvitation', (call) => {
      client.organisation(call.organisationId!)!.member = true;
      throw lostAnswer('acceptInvitation');
    });
    expect(await executeChange(acceptInvitation('acme', 'inv_1'), client, sleeps().options)).toEqual({
      outcome: 'already-done',
      reason: 'the invitation is no longer pending and you are a member of the organisation',
    });
  });

  it('fails an invitation that is not found while the listing does not show you a member', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme' }]);
    const { waited, options } = sleeps();
    await expect(executeChange(acceptInvitation('acme', 'inv_gone'), client, options)).rejects.toThrow(/you are not a member of organisation "org_acme" \(it is not among your organisations\), so the invitation was not accepted/);
    expect(waited).toHaveLength(4);
  });

  it('sends every write with an idempotency key and the change’s address', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', invitations: ['inv_1'] }]);
    await executeChange(acceptInvitation('acme', 'inv_1'), client, sleeps().options);
    await executeChange(billing('acme', {}), client, sleeps().options);
    const [accept, put] = client.writes();
    expect(accept).toMatchObject({ label: 'organisations.acme.invitations.accept.inv_1', idempotencyKey: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(put?.idempotencyKey).not.toBe(accept?.idempotencyKey);
  });
});

describe('executeChange: deleting', () => {
  it('counts 410 as done', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true }]);
    client.on('deleteInvitation', fail(serviceError('deleteInvitation', 410, 'gone')));
    expect(await executeChange(revokeInvitation('acme', 'inv_2'), client)).toEqual({ outcome: 'already-done', reason: 'the service says it is gone (HTTP 410)' });
  });

  it('counts the service’s own 404 as done only while the listing shows you a member', async () => {
    const member = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true }]);
    member.on('deleteNotificationChannel', fail(serviceError('deleteNotificationChannel', 404, 'channel_not_found')));
    expect(await executeChange(removeChannel('acme', 'ch_9'), member)).toEqual({ outcome: 'already-done', reason: 'found already gone' });

    const outsider = createScriptedClient([{ id: 'org_acme', slug: 'acme' }]);
    outsider.on('deleteNotificationChannel', fail(serviceError('deleteNotificationChannel', 404, 'channel_not_found')));
    await expect(executeChange(removeChannel('acme', 'ch_9'), outsider)).rejects.toThrow(/so this is not counted as done/);
  });

  it('never counts a 404 without the Error body (a gateway’s) as done: it tries twice more, then fails', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true }]);
    client.on('deleteInvitation', fail(serviceError('deleteInvitation', 404)), Infinity);
    const { waited, options } = sleeps();
    await expect(executeChange(revokeInvitation('acme', 'inv_2'), client, options)).rejects.toThrow(/comes from something in front of the service/);
    expect(waited).toEqual([20, 40]);
    expect(client.writes()).toHaveLength(3);
  });
});

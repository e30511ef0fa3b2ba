import { describe, expect, it } from 'vitest';
import { ChangeFailedError, type ChangeOutcome } from '../../src/executor/change-outcome.js';
import { executeChange, executionContext, type ExecutionOptions } from '../../src/executor/run-change.js';
import type { ListingReread } from '../../src/executor/reread-listing.js';
import type { ScriptedClient } from '../support/scripted-client.js';
import { acceptInvitation, billing, billingKnownAfterAccept, removeChannel, revokeInvitation } from '../support/plan-fixtures.js';
import { createScriptedClient, fail, lostAnswer, serviceError } from '../support/scripted-client.js';
import { NotSentError } from '../../src/api/api-error.js';

/** One attempt at `change`, with what the listing read again of its organisation when `reread` is given. */
function attempt(change: Parameters<typeof executeChange>[0], client: ScriptedClient, options: ExecutionOptions & { reread?: ListingReread } = {}): Promise<ChangeOutcome> {
  return executeChange(change, executionContext(client, options), { reread: options.reread });
}

/** The error an attempt failed with (it must have failed). */
function failureOf(outcome: ChangeOutcome): Error {
  if (outcome.kind !== 'failed') throw new Error(`the attempt ended ${outcome.kind}, not failed`);
  return outcome.error as Error;
}

/** Records the waits between re-reads instead of waiting them out. */
function sleeps() {
  const waited: number[] = [];
  return { waited, options: { sleep: async (ms: number) => void waited.push(ms), backoffBaseMs: 10 } };
}

describe('executeChange: billing known after the accept', () => {
  const change = billingKnownAfterAccept('acme', 'inv_1', { billingEmail: 'finance@acme.test' });

  it('reads the organisation once joined and writes the declared fields over what it read', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true, billing: { billingEmail: 'old@acme.test', customerId: 'cus_1' } }]);
    const result = await attempt(change, client, sleeps().options);
    expect(result.kind).toBe('applied');
    expect(client.writes()).toEqual([expect.objectContaining({ operation: 'updateBillingDetails', update: { billingEmail: 'finance@acme.test', customerID: 'cus_1' } })]);
  });

  it('re-reads, waiting longer each time, while the new membership does not show yet', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true, billing: {} }]);
    client.on('getOrganisation', fail(serviceError('getOrganisation', 404, 'organisation_not_found')), 2);
    const { waited, options } = sleeps();
    expect((await attempt(change, client, options)).kind).toBe('applied');
    expect(waited).toEqual([10, 20]);
  });

  it('writes nothing when what it read already holds the declared values', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true, billing: { billingEmail: 'finance@acme.test' } }]);
    const result = await attempt(change, client, sleeps().options);
    expect(result).toEqual({ kind: 'already-done', reason: 'the billing read after joining already holds the declared values' });
    expect(client.writes()).toEqual([]);
  });

  it('fails, naming the organisation and writing nothing, when it cannot be read after the accept', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true }]);
    client.on('getOrganisation', fail(serviceError('getOrganisation', 403, 'forbidden')), Infinity);
    const { waited, options } = sleeps();
    const failure = failureOf(await attempt(change, client, options));
    expect(failure).toBeInstanceOf(ChangeFailedError);
    expect((failure as ChangeFailedError).operation).toBe('getOrganisation');
    expect((failure as Error).message).toMatch(/the billing of organisation "acme" \(org_acme\) must be read before it is written, and it could not be read after the accept\. Nothing was written/);
    expect(waited).toEqual([10, 20, 40, 80]);
    expect(client.writes()).toEqual([]);
  });
});

describe('executeChange: billing, from what the service holds just before the write', () => {
  /** Declares acme's billing e-mail; the plan saw old@acme.test. */
  const change = billing('acme', { billingEmail: ['old@acme.test', 'new@acme.test'] });
  const NONE = { billingEmail: null, customerID: null, subscriptionID: null, platformID: null };
  const listed = (billing: Record<string, string | null> | null, readAt = 1_000, slug = 'acme') => ({ kind: 'listed' as const, slug, billing: billing === null ? null : { ...NONE, ...billing }, readAt });
  const at = (ms: number) => () => ms;

  it('writes from the listing page just read, carrying the undeclared fields as they are now, without another read', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true, billing: { billingEmail: 'old@acme.test', customerId: 'cus_renewed' } }]);
    const result = await attempt(change, client, { reread: listed({ billingEmail: 'old@acme.test', customerID: 'cus_renewed' }), now: at(1_500) });
    expect(result.kind).toBe('applied');
    expect(client.calls.map((c) => c.operation)).toEqual(['updateBillingDetails']);
    expect(client.writes()[0]?.update).toEqual({ billingEmail: 'new@acme.test', customerID: 'cus_renewed' });
  });

  it('reads the organisation again by id when the listing read is older than the bound', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true, billing: { billingEmail: 'old@acme.test', subscriptionId: 'sub_newer' } }]);
    const result = await attempt(change, client, { reread: listed({ billingEmail: 'old@acme.test' }), now: at(1_000 + 5_001), maxReadAgeMs: 5_000 });
    expect(result.kind).toBe('applied');
    expect(client.calls.map((c) => c.operation)).toEqual(['getOrganisation', 'updateBillingDetails']);
    expect(client.writes()[0]?.update).toEqual({ billingEmail: 'new@acme.test', subscriptionID: 'sub_newer' });
  });

  it('reads the organisation by id when the listing does not show billing, and when there was no listing', async () => {
    for (const reread of [listed(null), undefined]) {
      const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true, billing: { billingEmail: 'old@acme.test', platformId: 'plat_1' } }]);
      expect((await attempt(change, client, { ...(reread === undefined ? {} : { reread }), now: at(1_000) })).kind).toBe('applied');
      expect(client.calls.map((c) => c.operation)).toEqual(['getOrganisation', 'updateBillingDetails']);
      expect(client.writes()[0]?.update).toEqual({ billingEmail: 'new@acme.test', platformID: 'plat_1' });
    }
  });

  it('writes nothing, and says so, when the declared values hold already', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true }]);
    expect(await attempt(change, client, { reread: listed({ billingEmail: 'new@acme.test' }), now: at(1_000) })).toEqual({ kind: 'already-done', reason: 'the service already holds the declared values' });
    expect(client.writes()).toEqual([]);
  });

  it('is stale, writing nothing, when a declared field changed since the plan, and says from what to what', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true }]);
    const result = await attempt(change, client, { reread: listed({ billingEmail: 'someone@acme.test' }), now: at(1_000) });
    expect(result).toEqual({
      kind: 'stale',
      reason:
        'billing.billingEmail changed on the service since the plan, from "old@acme.test" to "someone@acme.test" (the plan showed "old@acme.test" → "new@acme.test"); nothing was written for this organisation. Run orgform plan again to review it',
    });
    expect(client.writes()).toEqual([]);
  });

  it('is stale when the organisation has another slug now, or cannot be found by id any more', async () => {
    const renamed = createScriptedClient([{ id: 'org_acme', slug: 'acme-2', member: true }]);
    expect(await attempt(change, renamed, { reread: listed({ billingEmail: 'old@acme.test' }, 1_000, 'acme-2'), now: at(1_000) })).toMatchObject({ kind: 'stale', reason: expect.stringContaining('is now called "acme-2", not "acme"') });
    expect(await attempt(change, renamed, {})).toMatchObject({ kind: 'stale', reason: expect.stringContaining('is now called "acme-2"') });
    const gone = createScriptedClient([]);
    expect(await attempt(change, gone, {})).toMatchObject({ kind: 'stale', reason: expect.stringContaining('can no longer be read (HTTP 404 organisation_not_found)') });
    expect([...renamed.writes(), ...gone.writes()]).toEqual([]);
  });

  it('asks the listing filtered by slug about an organisation the whole listing did not show: stale when you left it, written when it was only missed', async () => {
    const left = createScriptedClient([{ id: 'org_acme', slug: 'acme', billing: { billingEmail: 'old@acme.test' } }]);
    expect(await attempt(change, left, { reread: { kind: 'unlisted' } })).toMatchObject({ kind: 'stale', reason: expect.stringContaining('is no longer among your organisations') });
    expect(left.writes()).toEqual([]);
    const missed = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true, billing: { billingEmail: 'old@acme.test' } }]);
    expect((await attempt(change, missed, { reread: { kind: 'unlisted' } })).kind).toBe('applied');
    expect(missed.calls.map((c) => c.operation)).toEqual(['getOrganisations', 'getOrganisation', 'updateBillingDetails']);
  });

  it('fails, writing nothing, rather than calling it stale, when the listing filtered by slug cannot be read', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true }]);
    client.on('getOrganisations', fail(serviceError('getOrganisations', 503, 'unavailable')));
    const failure = failureOf(await attempt(change, client, { reread: { kind: 'unlisted' } }));
    expect(failure).toBeInstanceOf(ChangeFailedError);
    expect((failure as Error).message).toMatch(/was not in the listing read just before writing, and asking the listing filtered by its slug failed\. Nothing was written/);
    expect(client.writes()).toEqual([]);
  });

  it('fails, writing nothing, when the listing failed before it reached the organisation', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true }]);
    const failure = failureOf(await attempt(change, client, { reread: { kind: 'unreadable', error: serviceError('getOrganisations', 500, 'internal') } }));
    expect(failure).toBeInstanceOf(ChangeFailedError);
    expect((failure as ChangeFailedError).operation).toBe('getOrganisations');
    expect((failure as Error).message).toMatch(/the listing apply reads just before writing failed before it reached organisation "acme" \(org_acme\).*Nothing was written/);
    expect(client.writes()).toEqual([]);
  });

  it('ends "read again", building nothing more, when its write was held until the read it was built from was too old to send', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true, billing: { billingEmail: 'old@acme.test' } }]);
    client.on('updateBillingDetails', fail(new NotSentError({ operation: 'updateBillingDetails', why: 'its read is too old', readTooOld: true })));
    expect(await attempt(change, client, { reread: listed({ billingEmail: 'old@acme.test' }), now: at(1_000) })).toEqual({ kind: 'read-again' });
    expect(client.calls.map((c) => c.operation)).toEqual(['updateBillingDetails']);
  });

  it('never sends an empty string the service holds back to it, nor after joining', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true, billing: { billingEmail: '', customerId: 'cus_1' } }]);
    const customer = billing('acme', { customerID: ['cus_1', 'cus_2'] });
    expect((await attempt(customer, client, {})).kind).toBe('applied');
    expect(client.writes()[0]?.update).toEqual({ customerID: 'cus_2' });
    const joined = billingKnownAfterAccept('acme', 'inv_1', { customerID: 'cus_3' });
    expect((await attempt(joined, client, sleeps().options)).kind).toBe('applied');
    expect(client.writes()[1]?.update).toEqual({ customerID: 'cus_3' });
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
    expect(await attempt(acceptInvitation('acme', 'inv_1'), client, sleeps().options)).toEqual({
      kind: 'already-done',
      reason: 'the invitation is no longer pending and you are a member of the organisation',
    });
  });

  it('fails an invitation that is not found while the listing does not show you a member', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme' }]);
    const { waited, options } = sleeps();
    expect(failureOf(await attempt(acceptInvitation('acme', 'inv_gone'), client, options)).message).toMatch(/you are not a member of organisation "org_acme" \(it is not among your organisations\), so the invitation was not accepted/);
    expect(waited).toHaveLength(4);
  });

  it('says whether it was accepted is not known, not that you are no member, when every membership check fails', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme' }]);
    client.on('acceptInvitation', fail(serviceError('acceptInvitation', 404, 'invitation_not_found')));
    client.on('getOrganisations', fail(serviceError('getOrganisations', 500, 'internal')), Infinity);
    const failure = failureOf(await attempt(acceptInvitation('acme', 'inv_1'), client, sleeps().options)) as ChangeFailedError;
    expect(failure).toBeInstanceOf(ChangeFailedError);
    expect(failure.message).toContain(
      'whether the invitation was accepted is not known: your membership of organisation "org_acme" could not be confirmed (the listing answered HTTP 500 internal). Run orgform apply again: it checks',
    );
    expect(failure.message).not.toContain('not a member');
  });

  it('sends every write with an idempotency key and the change’s address', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', invitations: ['inv_1'] }]);
    await attempt(acceptInvitation('acme', 'inv_1'), client, sleeps().options);
    await attempt(billing('acme', {}), client, sleeps().options);
    const [accept, put] = client.writes();
    expect(accept).toMatchObject({ label: 'organisations.acme.invitations.accept.inv_1', idempotencyKey: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(put?.idempotencyKey).not.toBe(accept?.idempotencyKey);
  });
});

describe('executeChange: deleting', () => {
  it('counts 410 as done', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true }]);
    client.on('deleteInvitation', fail(serviceError('deleteInvitation', 410, 'gone')));
    expect(await attempt(revokeInvitation('acme', 'inv_2'), client)).toEqual({ kind: 'already-done', reason: 'the service says it is gone (HTTP 410)' });
  });

  it('counts the service’s own 404 as done only while the listing shows you a member', async () => {
    const member = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true }]);
    member.on('deleteNotificationChannel', fail(serviceError('deleteNotificationChannel', 404, 'channel_not_found')));
    expect(await attempt(removeChannel('acme', 'ch_9'), member)).toEqual({ kind: 'already-done', reason: 'found already gone' });

    const outsider = createScriptedClient([{ id: 'org_acme', slug: 'acme' }]);
    outsider.on('deleteNotificationChannel', fail(serviceError('deleteNotificationChannel', 404, 'channel_not_found')));
    expect(failureOf(await attempt(removeChannel('acme', 'ch_9'), outsider)).message).toMatch(/so this is not counted as done/);
  });

  it('after an interrupt, says the membership was not checked, not that you are no member, when the check after a 404 is not sent', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true }]);
    client.on('deleteInvitation', fail(serviceError('deleteInvitation', 404, 'invitation_not_found')));
    client.on('getOrganisations', fail(new NotSentError({ operation: 'getOrganisations', why: 'interrupted' })));
    const failure = failureOf(await attempt(revokeInvitation('acme', 'inv_2'), client)) as ChangeFailedError;
    expect(failure).toBeInstanceOf(ChangeFailedError);
    expect(failure.message).toContain('and your membership of organisation "org_acme" was not checked (getOrganisations was not sent: interrupted), so this is not counted as done; run orgform apply again: it checks');
    expect(failure.message).not.toContain('not a member');
  });

  it('says the membership could not be confirmed, not that you are no member, when the check after a 404 fails', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true }]);
    client.on('deleteNotificationChannel', fail(serviceError('deleteNotificationChannel', 404, 'channel_not_found')));
    client.on('getOrganisations', fail(serviceError('getOrganisations', 500, 'internal')));
    const failure = failureOf(await attempt(removeChannel('acme', 'ch_9'), client)) as ChangeFailedError;
    expect(failure).toBeInstanceOf(ChangeFailedError);
    expect(failure.message).toContain('and your membership of organisation "org_acme" could not be confirmed (the listing answered HTTP 500 internal), so this is not counted as done');
    expect(failure.message).not.toContain('not a member');
  });

  it('never counts a 404 without the Error body (a gateway’s) as done: it tries twice more, then fails', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true }]);
    client.on('deleteInvitation', fail(serviceError('deleteInvitation', 404)), Infinity);
    const { waited, options } = sleeps();
    expect(failureOf(await attempt(revokeInvitation('acme', 'inv_2'), client, options)).message).toMatch(/comes from something in front of the service/);
    expect(waited).toEqual([20, 40]);
    expect(client.writes()).toHaveLength(3);
  });
});

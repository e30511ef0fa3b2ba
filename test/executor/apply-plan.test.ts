import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { applyPlan, type ApplyOptions } from '../../src/executor/apply-plan.js';
import { CHANGED_LISTED, type ApplyEvent } from '../../src/executor/events.js';
import type { Change } from '../../src/plan/types.js';
import { memoryJournal } from '../support/file-state.js';
import { journalKey } from '../../src/model/journal-key.js';
import { acceptInvitation, billing, billingKnownAfterAccept, removeChannel, revokeInvitation, setActive } from '../support/plan-fixtures.js';
import { NotSentError } from '../../src/api/api-error.js';
import { BASE_URL, createScriptedClient, fail, gate, serviceError, type ScriptedClient } from '../support/scripted-client.js';
import { makeWorkspace } from '../support/workspace.js';

const noSleep = async () => undefined;

async function run(changes: Change[], client: ScriptedClient, options: Partial<ApplyOptions> = {}) {
  const journal = options.journal ?? memoryJournal();
  const events: ApplyEvent[] = [];
  let clock = 0;
  const summary = await applyPlan(changes, {
    client,
    journal,
    serviceKey: BASE_URL,
    parallelism: 4,
    onEvent: (e) => events.push(e),
    now: () => (clock += 1),
    sleep: noSleep,
    ...options,
  });
  return { summary, events, journal };
}

const member = (slug: string, extra: object = {}) => ({ id: `org_${slug}`, slug, member: true, ...extra });
/** Every change's outcome as told when it ended (the summary keeps only those not applied). */
/** Answers every call of `operation` after 5 ms (with `answer`'s error when given), counting the most answered at once. */
function countAtOnce(client: ScriptedClient, operation: 'updateBillingDetails' | 'getOrganisation' | 'deleteNotificationChannel', answer?: () => Error): { readonly most: number } {
  const count = { inFlight: 0, most: 0 };
  client.on(
    operation,
    async () => {
      count.most = Math.max(count.most, (count.inFlight += 1));
      await new Promise((r) => setTimeout(r, 5));
      count.inFlight -= 1;
      if (answer !== undefined) throw answer();
    },
    Infinity,
  );
  return count;
}

const outcomes = (events: ApplyEvent[]) => Object.fromEntries(events.flatMap((e) => (e.type === 'change-end' ? [[e.address, e.outcome]] : [])));

describe('applyPlan', () => {
  it('runs an organisation’s accept before its other changes, and those at once', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', invitations: ['inv_1'] }, member('globex')]);
    const [accepting, revoking, removing] = [gate(), gate(), gate()];
    client.on('acceptInvitation', accepting.script);
    client.on('deleteInvitation', revoking.script);
    client.on('deleteNotificationChannel', removing.script);
    const changes = [acceptInvitation('acme', 'inv_1'), billing('acme', {}), revokeInvitation('acme', 'inv_2'), removeChannel('acme', 'ch_9'), billing('globex', {})];
    const running = run(changes, client);
    await accepting.held;
    // globex goes meanwhile; none of acme's other changes starts before the accept has ended.
    expect(client.calls.filter((c) => c.organisationId === 'org_acme').map((c) => c.operation)).toEqual(['acceptInvitation']);
    accepting.release();
    // Both deletes held at once: neither waits for the other, nor for billing.
    await Promise.all([revoking.held, removing.held]);
    revoking.release();
    removing.release();
    const { summary } = await running;
    const acme = client.writes().filter((c) => c.organisationId === 'org_acme');
    expect(acme[0]?.operation).toBe('acceptInvitation');
    expect(acme.map((c) => c.operation).sort()).toEqual(['acceptInvitation', 'deleteInvitation', 'deleteNotificationChannel', 'updateBillingDetails']);
    expect(summary.applied).toBe(5);
  });

  it('runs the removals of one organisation as many at once as the parallelism, and reads its membership once for all those answered 404 while a read was on its way', async () => {
    const client = createScriptedClient([member('acme')]);
    // The four removals held at once, then each answered 404.
    let releaseRemovals!: () => void;
    const removalsReleased = new Promise<void>((resolve) => (releaseRemovals = resolve));
    client.on(
      'deleteNotificationChannel',
      async () => {
        await removalsReleased;
        throw serviceError('deleteNotificationChannel', 404, 'channel_not_found');
      },
      Infinity,
    );
    const listing = gate();
    client.on('getOrganisations', listing.script);
    const channels = ['ch_1', 'ch_2', 'ch_3', 'ch_4'];
    const running = run(channels.map((ch) => removeChannel('acme', ch)), client, { parallelism: 4, now: () => 0 });
    await vi.waitFor(() => expect(client.calls.filter((c) => c.operation === 'deleteNotificationChannel')).toHaveLength(4));
    releaseRemovals();
    // The first 404 sends a read, held; the three others are answered 404 while it is on its way.
    await listing.held;
    await new Promise((resolve) => setImmediate(resolve));
    listing.release();
    const { summary } = await running;
    // Every channel is gone already, and a read sent after their 404s says you are a member: one
    // for the first, one for the three that could not take a read sent before their answer.
    expect(summary.alreadyDone).toBe(4);
    expect(client.calls.filter((c) => c.operation === 'getOrganisations')).toHaveLength(2);
  });

  it('keeps an organisation’s changes together and in order when the plan interleaves organisations', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', invitations: ['inv_1'] }, member('globex')]);
    // A hand-ordered plan: acme, globex, acme. An accept that fails must still skip acme's billing.
    const changes = [acceptInvitation('acme', 'inv_gone'), billing('globex', {}), billing('acme', {})];
    const { summary, events } = await run(changes, client, { parallelism: 1 });
    expect(client.writes().map((c) => `${c.operation} ${c.organisationId}`)).toEqual(['acceptInvitation org_acme', 'updateBillingDetails org_globex']);
    expect(outcomes(events)).toEqual({
      'organisations.acme.invitations.accept.inv_gone': 'failed',
      'organisations.acme.billing': 'skipped',
      'organisations.globex.billing': 'applied',
    });
    // Results not applied stay in plan order, whatever order the changes ran in.
    expect(summary.notApplied.map((r) => r.address)).toEqual(['organisations.acme.invitations.accept.inv_gone', 'organisations.acme.billing']);
    expect(summary.changed).toEqual({ organisations: 1, first: [{ organisation: 'globex', applied: 1 }] });
  });

  it('sets the active organisation only once its own organisation’s changes have ended', async () => {
    const client = createScriptedClient([member('acme'), member('globex')]);
    const held = gate();
    client.on('updateBillingDetails', held.script);
    const running = run([billing('acme', {}), billing('globex', {}), setActive('acme', 'globex')], client);
    await held.held;
    // globex is done meanwhile, but acme's billing still runs: the active organisation waits for it.
    await new Promise((r) => setTimeout(r, 10));
    expect(client.writes().map((c) => c.operation)).not.toContain('setActiveOrganisation');
    held.release();
    await running;
    expect(client.writes().at(-1)).toMatchObject({ operation: 'setActiveOrganisation', organisationId: 'org_acme' });
  });

  it('skips what depends on an invitation that could not be accepted, saying which, and nothing else', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme' }, member('globex')]);
    const { summary, events } = await run([acceptInvitation('acme', 'inv_gone'), billing('acme', {}), billing('globex', {}), setActive('acme', 'globex')], client);
    expect(outcomes(events)).toEqual({
      'organisations.acme.invitations.accept.inv_gone': 'failed',
      'organisations.acme.billing': 'skipped',
      'organisations.globex.billing': 'applied',
      activeOrganisation: 'skipped',
    });
    expect(summary.notApplied.find((r) => r.address === 'organisations.acme.billing')?.reason).toBe(
      'depends on membership of the organisation, which no accept gave (organisations.acme.invitations.accept.inv_gone failed)',
    );
    expect(client.writes().map((c) => c.operation)).toEqual(['acceptInvitation', 'updateBillingDetails']);
  });

  it('tries every accept of an organisation on its own: one sent to another address does not stop the next, and billing and set-active follow the one that worked', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', invitations: ['inv_b_good'] }]);
    client.on('acceptInvitation', fail(serviceError('acceptInvitation', 403, 'invitation_email_mismatch')));
    const changes = [acceptInvitation('acme', 'inv_a_stale'), acceptInvitation('acme', 'inv_b_good'), billingKnownAfterAccept('acme', 'inv_b_good', { billingEmail: 'finance@acme.test' }), setActive('acme', null)];
    const { summary, events } = await run(changes, client);
    expect(outcomes(events)).toEqual({
      'organisations.acme.invitations.accept.inv_a_stale': 'failed',
      'organisations.acme.invitations.accept.inv_b_good': 'applied',
      'organisations.acme.billing': 'applied',
      activeOrganisation: 'applied',
    });
    expect(summary.notApplied.map((r) => r.failure?.serviceCode)).toEqual(['invitation_email_mismatch']);
    expect(client.organisation('org_acme')?.billing?.billingEmail).toBe('finance@acme.test');
    expect(client.active()).toBe('org_acme');
  });

  it('once an accept made you a member, ends the organisation’s other accepts already done without sending them', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', invitations: ['inv_1', 'inv_2'] }]);
    const { events } = await run([acceptInvitation('acme', 'inv_1'), acceptInvitation('acme', 'inv_2')], client);
    expect(outcomes(events)).toEqual({ 'organisations.acme.invitations.accept.inv_1': 'applied', 'organisations.acme.invitations.accept.inv_2': 'already-done' });
    expect(client.writes().map((c) => c.target)).toEqual(['inv_1']);
    // The invitation left is still there: nothing was used up for nothing.
    expect(client.organisation('org_acme')?.invitations).toEqual(['inv_2']);
  });

  it('sends an accept the journal records done when the plan has it: membership decides an accept, never the journal', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', invitations: ['inv_1'] }]);
    const journal = memoryJournal();
    // Accepted by an earlier apply, then the membership was removed and the invitation is pending again.
    await journal.record(BASE_URL, journalKey('accept-invitation', 'org_acme', 'inv_1'), { kind: 'accept-invitation', organisation: 'acme', outcome: 'applied', at: '2025-01-01T00:00:00.000Z' });
    const { events } = await run([acceptInvitation('acme', 'inv_1'), billingKnownAfterAccept('acme', 'inv_1', { billingEmail: 'finance@acme.test' })], client, { journal });
    expect(outcomes(events)).toEqual({ 'organisations.acme.invitations.accept.inv_1': 'applied', 'organisations.acme.billing': 'applied' });
    expect(client.writes().map((c) => c.operation)).toEqual(['acceptInvitation', 'updateBillingDetails']);
  });

  it('goes on with an organisation’s other changes after a failure that is not an accept', async () => {
    const client = createScriptedClient([member('acme')]);
    client.on('updateBillingDetails', fail(serviceError('updateBillingDetails', 422, 'validation_failed')));
    const { summary, events } = await run([billing('acme', {}), revokeInvitation('acme', 'inv_2')], client);
    expect(outcomes(events)).toEqual({ 'organisations.acme.billing': 'failed', 'organisations.acme.invitations.revoke.inv_2': 'applied' });
    expect(summary.notApplied).toHaveLength(1);
    expect(summary.notApplied[0]?.failure).toMatchObject({ operation: 'updateBillingDetails', status: 422, serviceCode: 'validation_failed', serviceMessage: 'the service says validation_failed' });
  });

  it('keeps no more requests in flight than the parallelism', async () => {
    const client = createScriptedClient(['a', 'b', 'c', 'd', 'e', 'f'].map((s) => member(s)));
    const updates = countAtOnce(client, 'updateBillingDetails');
    await run(['a', 'b', 'c', 'd', 'e', 'f'].map((s) => billing(s, {})), client, { parallelism: 2 });
    expect(updates.most).toBe(2);
  });

  it('on interrupt starts nothing new, lets the change in flight finish, and reports the rest not started', async () => {
    const client = createScriptedClient([member('acme'), member('globex')]);
    const held = gate();
    client.on('updateBillingDetails', held.script);
    const controller = new AbortController();
    const running = run([billing('acme', {}), revokeInvitation('acme', 'inv_2'), billing('globex', {})], client, { parallelism: 1, signal: controller.signal });
    await held.held;
    controller.abort();
    held.release();
    const { summary, events } = await running;
    expect(outcomes(events)).toEqual({
      'organisations.acme.billing': 'applied',
      'organisations.acme.invitations.revoke.inv_2': 'not-started',
      'organisations.globex.billing': 'not-started',
    });
    expect(summary.interrupted).toBe(true);
    expect(events.find((e) => e.type === 'interrupted')).toMatchObject({ inFlight: 1 });
  });

  it('interrupted before anything started reports every change not started, and none skipped', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', invitations: ['inv_1'] }]);
    const controller = new AbortController();
    controller.abort();
    const { summary, events } = await run([acceptInvitation('acme', 'inv_1'), billing('acme', {})], client, { signal: controller.signal });
    expect(summary).toMatchObject({ notStarted: 2, skipped: 0, interrupted: true });
    expect(client.writes()).toEqual([]);
    expect(events.map((e) => e.type)).toEqual(['apply-start', 'interrupted', 'change-end', 'change-end', 'apply-end']);
  });

  it('records revocations and channel removals in the journal as they complete, and not accepts, and does not send what the journal records done', async () => {
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', invitations: ['inv_1'] }]);
    const first = await run([acceptInvitation('acme', 'inv_1'), revokeInvitation('acme', 'inv_2'), removeChannel('acme', 'ch_9'), billing('acme', {})], client);
    expect(first.journal.has(BASE_URL, journalKey('revoke-invitation', 'org_acme', 'inv_2'))).toBe(true);
    expect(first.journal.has(BASE_URL, journalKey('remove-channel', 'org_acme', 'ch_9'))).toBe(true);
    expect(first.journal.has(BASE_URL, journalKey('accept-invitation', 'org_acme', 'inv_1'))).toBe(false);
    const again = createScriptedClient([member('acme')]);
    const summary = await applyPlan([revokeInvitation('acme', 'inv_2'), removeChannel('acme', 'ch_9')], {
      client: again,
      journal: first.journal,
      serviceKey: BASE_URL,
      parallelism: 1,
    });
    expect(summary.alreadyDone).toBe(2);
    expect(summary.notApplied.map((r) => r.reason)).toEqual(['recorded in the state journal', 'recorded in the state journal']);
    expect(again.writes()).toEqual([]);
  });

  it('starts nothing more once the journal cannot be written, and says the change it could not record was done on the service', async () => {
    const client = createScriptedClient([member('acme')]);
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const journal = { has: () => false, record: () => Promise.reject(full), flush: async () => undefined };
    const changes = [removeChannel('acme', 'ch_1'), removeChannel('acme', 'ch_2'), removeChannel('acme', 'ch_3')];
    const { summary } = await run(changes, client, { journal, parallelism: 1 });
    expect(client.writes().map((w) => w.operation)).toEqual(['deleteNotificationChannel']);
    expect(summary).toMatchObject({ failed: 1, notStarted: 2 });
    expect(summary.notApplied[0]!.failure!.message).toContain('done on the service, but not recorded in the state journal: ENOSPC');
    expect(summary.notApplied[1]!.reason).toContain('the state journal could not be written, so nothing more was started');
  });

  it('ends a revocation or removal only once its journal entry is durable, and frees its worker for the next change meanwhile', async () => {
    const client = createScriptedClient([member('acme')]);
    // A remote journal: nothing is durable until its batch is written, here at the flush.
    const durable: Array<() => void> = [];
    const journal = { batched: true, has: () => false, record: () => new Promise<void>((resolve) => durable.push(resolve)), flush: async () => durable.splice(0).forEach((ack) => ack()) };
    const changes = [removeChannel('acme', 'ch_1'), revokeInvitation('acme', 'inv_2')];
    const { summary, events } = await run(changes, client, { journal, parallelism: 1 });
    const told = events.flatMap((e) => (e.type === 'change-start' || e.type === 'change-end' ? [`${e.type} ${e.address}`] : []));
    expect(told).toEqual([
      'change-start organisations.acme.notificationChannels.remove.ch_1',
      'change-start organisations.acme.invitations.revoke.inv_2',
      'change-end organisations.acme.notificationChannels.remove.ch_1',
      'change-end organisations.acme.invitations.revoke.inv_2',
    ]);
    expect(summary.applied).toBe(2);
  });

  it('counts a change whose entry the journal later fails to make durable as done on the service but not recorded', async () => {
    const client = createScriptedClient([member('acme')]);
    const waiting: Array<(error: Error) => void> = [];
    const lost = new Error('the state did not record it (the database connection closed)');
    const journal = { batched: true, has: () => false, record: () => new Promise<void>((_, reject) => waiting.push(reject)), flush: async () => waiting.splice(0).forEach((fail) => fail(lost)) };
    const { summary } = await run([removeChannel('acme', 'ch_1'), removeChannel('acme', 'ch_2')], client, { journal, parallelism: 1 });
    expect(summary).toMatchObject({ applied: 0, failed: 2 });
    expect(summary.notApplied.map((r) => r.failure!.message)).toEqual([
      'done on the service, but not recorded in the state journal: the state did not record it (the database connection closed). The next apply finds it done',
      'done on the service, but not recorded in the state journal: the state did not record it (the database connection closed). The next apply finds it done',
    ]);
  });

  it('tells every change’s start before its end, between apply-start first and apply-end last', async () => {
    const client = createScriptedClient([member('acme'), member('globex')]);
    const { events, summary } = await run([billing('acme', {}), revokeInvitation('acme', 'inv_2'), billing('globex', {})], client);
    expect(events[0]).toMatchObject({ type: 'apply-start', total: 3, parallelism: 4 });
    expect(events.at(-1)).toEqual({ type: 'apply-end', at: expect.any(Number), summary });
    for (const end of events.filter((e) => e.type === 'change-end')) {
      const start = events.findIndex((e) => e.type === 'change-start' && e.address === end.address);
      expect(start).toBeGreaterThan(0);
      expect(start).toBeLessThan(events.indexOf(end));
    }
  });

  it('with nothing to do tells only apply-start and apply-end, and an interrupt leaves nothing undone', async () => {
    const controller = new AbortController();
    controller.abort();
    const { events, summary } = await run([], createScriptedClient([]), { signal: controller.signal });
    expect(events.map((e) => e.type)).toEqual(['apply-start', 'apply-end']);
    expect(summary).toMatchObject({ total: 0, interrupted: false, notApplied: [], changed: { organisations: 0, first: [] } });
  });

  it('lets each change go as soon as it has ended, while others still run', async () => {
    const client = createScriptedClient([member('acme'), member('globex')]);
    const held = gate();
    client.on('updateBillingDetails', held.script);
    const changes: Change[] = [billing('acme', {}), billing('globex', {}), setActive('globex', null)];
    const running = run(changes, client, { parallelism: 2 });
    await held.held;
    await new Promise((r) => setTimeout(r, 10));
    // globex's billing has ended and its set-active waits for nothing but a worker; acme's is held.
    expect(changes[0]).toBeDefined();
    expect(changes[1]).toBeUndefined();
    held.release();
    const { summary } = await running;
    expect(changes).toEqual([undefined, undefined, undefined]);
    expect(summary.changed).toEqual({ organisations: 2, first: [{ organisation: 'acme', applied: 1 }, { organisation: 'globex', applied: 2 }] });
  });

  it('counts each organisation with a change applied once, its set-active change too, and names the first thousand', async () => {
    const slugs = Array.from({ length: 1_002 }, (_, i) => `org-${String(i).padStart(4, '0')}`);
    const client = createScriptedClient(slugs.map((s) => member(s)));
    client.on('updateBillingDetails', fail(serviceError('updateBillingDetails', 422, 'validation_failed')), 1);
    const changes = [...slugs.map((s) => billing(s, {})), setActive('org-0001', null)];
    const { summary } = await run(changes, client, { parallelism: 1 });
    expect(summary.applied).toBe(1_002);
    expect(summary.notApplied.map((r) => r.address)).toEqual(['organisations.org-0000.billing']);
    expect(summary.changed.organisations).toBe(1_001);
    expect(summary.changed.first).toHaveLength(CHANGED_LISTED);
    expect(summary.changed.first.slice(0, 2)).toEqual([
      { organisation: 'org-0001', applied: 2 },
      { organisation: 'org-0002', applied: 1 },
    ]);
  });

  it('gives every change’s writes the change’s address, for its retries to be told under it', async () => {
    const client = createScriptedClient([member('acme')]);
    await run([billing('acme', {}), setActive('acme', null)], client);
    expect(client.writes().map((c) => c.label)).toEqual(['organisations.acme.billing', 'activeOrganisation']);
  });
});

describe('applyPlan: billing read again after approval, from a listing streamed behind the writes', () => {
  const slugs = ['a', 'b', 'c', 'd', 'e', 'f'];
  /** Six members whose billing e-mail the plan saw as old, each with ids a billing system may renew. */
  const world = () => slugs.map((s) => member(s, { billing: { billingEmail: `old@${s}.test`, subscriptionId: `sub_${s}`, customerId: `cus_${s}` } }));
  const changes = () => slugs.map((s) => billing(s, { billingEmail: [`old@${s}.test`, `new@${s}.test`] }));
  const listing = { rereadMode: { kind: 'listing' as const, pageSize: 2 } };

  it('writes each organisation only after the listing read it again, with the undeclared fields as they are then', async () => {
    const client = createScriptedClient(world(), { pageSize: 2 });
    // Renewals between the plan and the apply, and while it runs, ahead of the listing.
    client.organisation('org_a')!.billing!.subscriptionId = 'sub_a_renewed';
    let pages = 0;
    client.on(
      'getOrganisations',
      () => {
        pages += 1;
        if (pages === 1) client.organisation('org_f')!.billing!.customerId = 'cus_f_renewed';
      },
      Infinity,
    );
    const { summary } = await run(changes(), client, { ...listing, parallelism: 2 });
    expect(summary.applied).toBe(6);
    // Each write came after the page that showed its organisation, and no page was read needlessly.
    const order = client.calls.map((c) => (c.operation === 'getOrganisations' ? 'page' : c.organisationId));
    for (const [i, s] of slugs.entries()) expect(order.indexOf(`org_${s}`)).toBeGreaterThan(order.indexOf('page') + (i >= 2 ? order.slice(order.indexOf('page') + 1).indexOf('page') + 1 : 0));
    expect(order.filter((o) => o === 'page')).toHaveLength(3);
    expect(client.organisation('org_a')!.billing).toMatchObject({ billingEmail: 'new@a.test', subscriptionId: 'sub_a_renewed', customerId: 'cus_a' });
    expect(client.organisation('org_f')!.billing).toMatchObject({ billingEmail: 'new@f.test', customerId: 'cus_f_renewed' });
    expect(client.calls.filter((c) => c.operation === 'getOrganisation')).toEqual([]);
  });

  it('keeps the listing’s reads and the writes together within the parallelism', async () => {
    const client = createScriptedClient(world(), { pageSize: 2 });
    let inFlight = 0;
    let most = 0;
    const slow = async () => {
      most = Math.max(most, (inFlight += 1));
      await new Promise((r) => setTimeout(r, 5));
      inFlight -= 1;
    };
    client.on('updateBillingDetails', slow, Infinity);
    client.on('getOrganisations', slow, Infinity);
    const { summary } = await run(changes(), client, { ...listing, parallelism: 2 });
    expect(summary.applied).toBe(6);
    expect(most).toBe(2);
  });

  it('refuses, as stale, the organisation whose declared field changed since the plan, and goes ahead with the rest', async () => {
    const client = createScriptedClient(world(), { pageSize: 2 });
    client.organisation('org_c')!.billing!.billingEmail = 'someone-else@c.test';
    const { summary, events } = await run([...changes(), revokeInvitation('c', 'inv_1')], client, listing);
    expect(summary).toMatchObject({ applied: 6, stale: 1, failed: 0 });
    expect(outcomes(events)['organisations.c.billing']).toBe('stale');
    expect(outcomes(events)['organisations.c.invitations.revoke.inv_1']).toBe('applied');
    expect(summary.notApplied[0]?.reason).toContain('billing.billingEmail changed on the service since the plan, from "old@c.test" to "someone-else@c.test"');
    expect(client.organisation('org_c')!.billing!.billingEmail).toBe('someone-else@c.test');
  });

  it('reads an organisation again by id when its listing read has grown older than the bound before its write', async () => {
    let clock = 0;
    const client = createScriptedClient(world(), { pageSize: 2, now: () => clock });
    const held = gate();
    client.on('updateBillingDetails', held.script);
    const running = run(changes(), client, { ...listing, parallelism: 1, now: () => clock, maxReadAgeMs: 1_000 });
    await held.held;
    // a's write is held; b was read with it, and waits.
    clock += 1_001;
    client.organisation('org_b')!.billing!.subscriptionId = 'sub_b_late';
    held.release();
    const { summary } = await running;
    expect(summary.applied).toBe(6);
    expect(client.calls.filter((c) => c.operation === 'getOrganisation').map((c) => c.organisationId)).toEqual(['org_b']);
    expect(client.organisation('org_b')!.billing!.subscriptionId).toBe('sub_b_late');
  });

  it('when a rate learned mid-run serves fewer than were started, lets only those it serves read again and write', async () => {
    let clock = 0;
    const client = createScriptedClient(world(), { pageSize: 6, now: () => clock });
    // Every worker's first write is held until its read aged, and meanwhile a 429 tells the rate:
    // half a request a second, one organisation at a time.
    client.on(
      'updateBillingDetails',
      () => {
        client.rate = { ...client.rate, rps: 0.5 };
        clock += 6_000;
        throw new NotSentError({ operation: 'updateBillingDetails', why: 'its read is too old', readTooOld: true });
      },
      4,
    );
    const reads = countAtOnce(client, 'getOrganisation');
    const { summary } = await run(changes(), client, { ...listing, rereadMode: { kind: 'listing', pageSize: 6 }, parallelism: 4, now: () => clock });
    expect(summary.applied).toBe(6);
    // Had each not waited for a turn again, the four started before the rate was known would all
    // have read again at once.
    expect(reads.most).toBe(1);
  });

  it('on an interrupt while a page is on its way, lets it finish and starts nothing that waited for it', async () => {
    const client = createScriptedClient(world(), { pageSize: 2 });
    const controller = new AbortController();
    const held = gate();
    client.on('getOrganisations', async () => undefined);
    client.on('getOrganisations', held.script);
    const running = run(changes(), client, { ...listing, parallelism: 1, signal: controller.signal });
    await held.held;
    controller.abort();
    held.release();
    const { summary } = await running;
    // a was written; the second page was asked for once only b was left to write (ahead of it).
    expect(summary).toMatchObject({ applied: 1, notStarted: 5, interrupted: true });
    expect(client.calls.filter((c) => c.operation === 'getOrganisations')).toHaveLength(2);
    expect(client.writes().map((c) => c.organisationId)).toEqual(['org_a']);
  });

  it('writes what it read when the listing fails part way, and fails the rest naming the listing, writing nothing for them', async () => {
    const client = createScriptedClient(world(), { pageSize: 2 });
    client.on('getOrganisations', async () => undefined);
    client.on('getOrganisations', fail(serviceError('getOrganisations', 500, 'internal')));
    const { summary } = await run(changes(), client, { ...listing, parallelism: 1 });
    expect(summary).toMatchObject({ applied: 2, failed: 4 });
    expect(summary.notApplied.map((r) => [r.address, r.failure?.operation])).toEqual(slugs.slice(2).map((s) => [`organisations.${s}.billing`, 'getOrganisations']));
    expect(client.writes().map((c) => c.organisationId)).toEqual(['org_a', 'org_b']);
  });

  it('refuses, as stale, an organisation the listing no longer shows once the listing filtered by its slug says you left it', async () => {
    const client = createScriptedClient(world(), { pageSize: 2 });
    client.organisation('org_e')!.member = false;
    const { summary } = await run(changes(), client, listing);
    expect(summary).toMatchObject({ applied: 5, stale: 1 });
    expect(summary.notApplied[0]).toMatchObject({ address: 'organisations.e.billing', outcome: 'stale', reason: expect.stringContaining('organisation "e" (org_e) is no longer among your organisations') });
  });

  it('starts the changes of organisations it does not read from the listing at once, and billing known after an accept once joined', async () => {
    const client = createScriptedClient([...world(), { id: 'org_new', slug: 'new', invitations: ['inv_n'] }], { pageSize: 2 });
    const { summary } = await run(
      [acceptInvitation('new', 'inv_n'), billingKnownAfterAccept('new', 'inv_n', { billingEmail: 'x@new.test' }), revokeInvitation('a', 'inv_9'), ...changes()],
      client,
      listing,
    );
    expect(summary).toMatchObject({ applied: 9, failed: 0 });
    expect(client.organisation('org_new')!.billing).toEqual({ billingEmail: 'x@new.test' });
  });
});

import { describe, expect, it } from 'vitest';
import { groupByOrganisation } from '../../src/executor/organisation-groups.js';
import { WorkQueue, type Work } from '../../src/executor/work-queue.js';
import type { Change } from '../../src/plan/types.js';
import { acceptInvitation, billing, removeChannel, revokeInvitation, setActive } from '../support/plan-fixtures.js';
import { createScriptedClient, gate } from '../support/scripted-client.js';

const member = (slug: string) => ({ id: `org_${slug}`, slug, member: true, billing: { billingEmail: `old@${slug}.test` } });
const change = (slug: string) => billing(slug, { billingEmail: [`old@${slug}.test`, `new@${slug}.test`] });

/** A queue over `changes`, reading billing again from a listing of pages of one when `listing` is set. */
function queueOf(changes: Change[], listing = false) {
  const client = createScriptedClient(['a', 'b', 'c'].map(member), { pageSize: 1 });
  const options = listing ? { client, pageSize: 1, maxReadAgeMs: 5_000, lowWater: () => 1, now: () => 0 } : undefined;
  return { client, queue: new WorkQueue(changes, groupByOrganisation(changes), options) };
}

/** A change handed out, by name: its address, or `active:SLUG` for set-active. */
const nameOf = (work: Work, changes: Change[]) => (work.kind === 'change' ? changes[work.index]!.address : `active:${changes[work.index]!.organisation.slug}`);

/** What the queue hands out now, by name. */
function drain(queue: WorkQueue, changes: Change[]): string[] {
  const names: string[] = [];
  for (let work: Work | undefined = queue.next(); work !== undefined; work = queue.next()) names.push(nameOf(work, changes));
  return names;
}

describe('WorkQueue', () => {
  it('hands out the organisations the listing has read before those read by id, and set-active changes once their organisation’s changes have ended', async () => {
    const changes = [change('a'), revokeInvitation('b', 'inv_1'), change('c'), setActive('c', null)];
    const { queue } = queueOf(changes, true);
    expect(queue.size).toBe(4);
    // Nothing read yet: b (read by id) first.
    expect(drain(queue, changes)).toEqual(['organisations.b.invitations.revoke.inv_1']);
    expect(queue.wantsRead()).toBe(true);
    await queue.readAhead();
    const a = queue.next();
    expect(a).toMatchObject({ kind: 'change', organisation: { reread: { kind: 'listed', slug: 'a' } } });
    await queue.readAhead();
    await queue.readAhead();
    const c = queue.next()!;
    expect(c).toMatchObject({ kind: 'change', organisation: { reread: { kind: 'listed', slug: 'c' } } });
    expect(queue.next()).toBeUndefined();
    queue.ended(c, 'applied');
    expect(drain(queue, changes)).toEqual(['active:c']);
  });

  it('hands out no set-active change while a page is on its way: the organisations it brings come first', async () => {
    const changes = [change('a'), change('b'), setActive('c', null)];
    const { client, queue } = queueOf(changes, true);
    const held = gate();
    client.on('getOrganisations', held.script);
    const reading = queue.readAhead();
    await held.held;
    expect(queue.reading).toBe(true);
    expect(queue.next()).toBeUndefined();
    held.release();
    await reading;
    expect(drain(queue, changes)).toEqual(['organisations.a.billing', 'active:c']);
  });

  it('hands out every change of an organisation at once after its accepts, before starting the next organisation', () => {
    const changes = [acceptInvitation('a', 'inv_1'), revokeInvitation('a', 'inv_2'), removeChannel('a', 'ch_1'), change('b')];
    const { queue } = queueOf(changes);
    const accept = queue.next()!;
    expect(nameOf(accept, changes)).toBe('organisations.a.invitations.accept.inv_1');
    // While a's accept runs, its other changes wait: b goes meanwhile.
    const b = queue.next()!;
    expect(nameOf(b, changes)).toBe('organisations.b.billing');
    expect(queue.next()).toBeUndefined();
    queue.ended(accept, 'applied');
    expect(drain(queue, changes)).toEqual(['organisations.a.invitations.revoke.inv_2', 'organisations.a.notificationChannels.remove.ch_1']);
  });

  it('hands a set-active change the end its organisation’s changes decided, once they have all ended', () => {
    const changes = [acceptInvitation('a', 'inv_1'), revokeInvitation('a', 'inv_2'), setActive('a', null)];
    const { queue } = queueOf(changes);
    queue.ended(queue.next()!, 'failed');
    const revoke = queue.next()!;
    const decided = { outcome: 'skipped' as const, reason: 'depends on membership of the organisation, which no accept gave (organisations.a.invitations.accept.inv_1 failed)' };
    expect(revoke).toMatchObject({ kind: 'change', decided });
    expect(queue.next()).toBeUndefined();
    queue.ended(revoke, 'skipped');
    expect(queue.next()).toEqual({ kind: 'set-active', index: 2, decided });
  });

  it('without a listing, reads nothing ahead and hands out every organisation at once, in plan order', () => {
    const changes = [change('b'), change('a'), setActive('b', null)];
    const { queue } = queueOf(changes);
    expect(queue.wantsRead()).toBe(false);
    expect(queue.reading).toBe(false);
    expect(drain(queue, changes)).toEqual(['organisations.b.billing', 'organisations.a.billing']);
  });
});

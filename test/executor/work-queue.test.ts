import { describe, expect, it } from 'vitest';
import { groupByOrganisation } from '../../src/executor/organisation-groups.js';
import { WorkQueue, type Work } from '../../src/executor/work-queue.js';
import type { Change } from '../../src/plan/types.js';
import { billing, revokeInvitation, setActive } from '../support/plan-fixtures.js';
import { createScriptedClient, gate } from '../support/scripted-client.js';

const member = (slug: string) => ({ id: `org_${slug}`, slug, member: true, billing: { billingEmail: `old@${slug}.test` } });
const change = (slug: string) => billing(slug, { billingEmail: [`old@${slug}.test`, `new@${slug}.test`] });

/** A queue over `changes`, reading billing again from a listing of pages of one when `listing` is set. */
function queueOf(changes: Change[], listing = false) {
  const client = createScriptedClient(['a', 'b', 'c'].map(member), { pageSize: 1 });
  const options = listing ? { client, pageSize: 1, lowWater: () => 1, now: () => 0 } : undefined;
  return { client, queue: new WorkQueue(changes, groupByOrganisation(changes), options) };
}

/** What the queue hands out now, by name: an organisation's slug, or `active:SLUG`. */
function drain(queue: WorkQueue, changes: Change[]): string[] {
  const names: string[] = [];
  const groups = groupByOrganisation(changes);
  for (let work: Work | undefined = queue.next(); work !== undefined; work = queue.next()) {
    names.push(work.kind === 'organisation' ? groups.slugs[work.group]! : `active:${changes[work.index]!.organisation.slug}`);
  }
  return names;
}

describe('WorkQueue', () => {
  it('hands out the organisations the listing has read before those read by id, and set-active changes once their organisation’s changes have ended', async () => {
    const changes = [change('a'), revokeInvitation('b', 'inv_1'), change('c'), setActive('c', null)];
    const { queue } = queueOf(changes, true);
    expect(queue.size).toBe(4);
    // Nothing read yet: b (read by id) first.
    expect(drain(queue, changes)).toEqual(['b']);
    expect(queue.wantsRead()).toBe(true);
    await queue.readAhead();
    const a = queue.next();
    expect(a).toMatchObject({ kind: 'organisation', reread: { kind: 'listed', slug: 'a' } });
    await queue.readAhead();
    await queue.readAhead();
    const c = queue.next()!;
    expect(c).toMatchObject({ kind: 'organisation', reread: { kind: 'listed', slug: 'c' } });
    expect(queue.next()).toBeUndefined();
    queue.ended(c, undefined);
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
    expect(drain(queue, changes)).toEqual(['a', 'active:c']);
  });

  it('hands a set-active change the end its organisation’s changes decided', () => {
    const changes = [revokeInvitation('a', 'inv_1'), setActive('a', null)];
    const { queue } = queueOf(changes);
    const group = queue.next()!;
    const decided = { outcome: 'skipped' as const, reason: 'depends on membership of the organisation, which no accept gave (…)' };
    queue.ended(group, decided);
    expect(queue.next()).toEqual({ kind: 'set-active', index: 1, decided });
  });

  it('without a listing, reads nothing ahead and hands out every organisation at once, in plan order', () => {
    const changes = [change('b'), change('a'), setActive('b', null)];
    const { queue } = queueOf(changes);
    expect(queue.wantsRead()).toBe(false);
    expect(queue.reading).toBe(false);
    expect(drain(queue, changes)).toEqual(['b', 'a']);
  });
});

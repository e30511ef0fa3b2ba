import { describe, expect, it } from 'vitest';
import { groupChanges } from '../../src/text/format-value.js';
import type { Change } from '../../src/plan/types.js';
import { billing, removeChannel, revokeInvitation, setActive } from '../support/plan-fixtures.js';

/** The groups by name: each organisation's slug with its changes' addresses, then the set-active changes. */
function named(changes: Change[]) {
  const { organisations, setActive: active } = groupChanges(changes);
  return { organisations: organisations.map((g) => [g.slug, g.id, g.changes.map((c) => c.address)]), setActive: active.map((c) => c.organisation.slug) };
}

describe('groupChanges', () => {
  it('groups a plan in plan order, each organisation’s changes together, set-active apart', () => {
    const changes = [billing('acme', {}), revokeInvitation('acme', 'inv_1'), removeChannel('globex', 'ch_1'), setActive('acme', null)] as Change[];
    expect(named(changes)).toEqual({
      organisations: [
        ['acme', 'org_acme', ['organisations.acme.billing', 'organisations.acme.invitations.revoke.inv_1']],
        ['globex', 'org_globex', ['organisations.globex.notificationChannels.remove.ch_1']],
      ],
      setActive: ['acme'],
    });
  });

  it('groups changes in any other order by organisation, in the order each first appears', () => {
    const interleaved = [billing('globex', {}), billing('acme', {}), revokeInvitation('globex', 'inv_1')] as Change[];
    expect(named(interleaved).organisations.map(([slug, , addresses]) => [slug, (addresses as string[]).length])).toEqual([
      ['globex', 2],
      ['acme', 1],
    ]);
    // A set-active change before an organisation's changes, even its own: still apart.
    const activeFirst = [setActive('acme', null), billing('acme', {})] as Change[];
    expect(named(activeFirst)).toEqual({ organisations: [['acme', 'org_acme', ['organisations.acme.billing']]], setActive: ['acme'] });
    expect(named([])).toEqual({ organisations: [], setActive: [] });
  });
});

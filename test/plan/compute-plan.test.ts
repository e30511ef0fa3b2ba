import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { observeBilling } from '../../src/api/observe-billing.js';
import { BILLING_FIELDS, type BillingDetails, type BillingField } from '../../src/model/billing.js';
import type { DesiredOrganisation } from '../../src/model/desired-state.js';
import type { ObservedOrganisation } from '../../src/model/observed-organisation.js';
import { BASE_URL, desiredOrg, desiredState, observedOrg, observedState, planFor, problem } from '../support/plan-fixtures.js';

const INVITATION_NOTE = 'cannot be checked before apply: the interface cannot list invitations';
const CHANNEL_NOTE = 'cannot be checked before apply: the interface cannot list notification channels';

describe('computePlan: billing', () => {
  it('shows only the declared fields that differ from the current values', () => {
    const plan = planFor(
      desiredState({ organisations: [desiredOrg({ slug: 'acme', billing: { billingEmail: 'new@acme.test', customerID: 'cus_1' } })] }),
      observedState({ organisations: [observedOrg({ slug: 'acme', billing: { billingEmail: 'old@acme.test', customerID: 'cus_1', platformID: 'plat_9' } })] }),
    );
    expect(plan.changes).toHaveLength(1);
    expect(plan.changes[0]).toMatchObject({ address: 'organisations.acme.billing', kind: 'billing', action: 'update', organisation: { slug: 'acme', id: 'org_acme' } });
    expect(plan.changes[0]?.display.fields).toEqual([{ field: 'billingEmail', before: 'old@acme.test', after: 'new@acme.test' }]);
    // Written (a saved plan, the JSON plan) as the fields it shows, nothing else.
    expect(JSON.parse(JSON.stringify(plan.changes[0]?.display))).toEqual({ fields: [{ field: 'billingEmail', before: 'old@acme.test', after: 'new@acme.test' }] });
  });

  it('shows a declared field that is absent now with before null', () => {
    const plan = planFor(
      desiredState({ organisations: [desiredOrg({ slug: 'acme', billing: { subscriptionID: 'sub_2' } })] }),
      observedState({ organisations: [observedOrg({ slug: 'acme', billing: {} })] }),
    );
    expect(plan.changes[0]?.display.fields).toEqual([{ field: 'subscriptionID', before: null, after: 'sub_2' }]);
  });

  it('holds the declared values and what the plan saw of the declared fields, never a body of the undeclared ones as read', () => {
    const observation = observeBilling({ billingEmail: 'old@acme.test', customerId: 'cus_1', subscriptionId: 'sub_1', platformId: 'plat_1' }, true);
    const current = observation.known ? observation.values : null;
    const plan = planFor(
      desiredState({ organisations: [desiredOrg({ slug: 'acme', billing: { billingEmail: 'new@acme.test', platformID: 'plat_1' } })] }),
      observedState({ organisations: [{ ...observedOrg({ slug: 'acme' }), billing: current }] }),
    );
    const change = plan.changes[0]!;
    expect(change.declared).toEqual({ billingEmail: 'new@acme.test', platformID: 'plat_1' });
    expect(change.seen).toEqual({ billingEmail: 'old@acme.test', platformID: 'plat_1' });
    expect(JSON.stringify(change)).not.toContain('cus_1');
    expect(JSON.stringify(change)).not.toContain('sub_1');
  });

  it('plans no billing change when every declared field equals its current value', () => {
    const plan = planFor(
      desiredState({ organisations: [desiredOrg({ slug: 'acme', billing: { billingEmail: 'same@acme.test', customerID: 'cus_1' } })] }),
      observedState({ organisations: [observedOrg({ slug: 'acme', billing: { billingEmail: 'same@acme.test', customerID: 'cus_1', platformID: 'plat_other' } })] }),
    );
    expect(plan.changes).toEqual([]);
    expect(plan.unchanged).toEqual(['acme']);
  });

  it('notes that the current billing of an organisation not joined yet cannot be read', () => {
    const plan = planFor(
      desiredState({ organisations: [desiredOrg({ slug: 'acme', accept: ['inv_1'], billing: { billingEmail: 'new@acme.test' } })] }),
      observedState({ organisations: [observedOrg({ slug: 'acme', member: false, billing: null })] }),
    );
    const billing = plan.changes.find((c) => c.kind === 'billing');
    expect(billing?.display.note).toBe('current billing is known once an invitation is accepted: apply reads it then, and fields not declared keep their values');
    expect(billing?.display.fields).toEqual([{ field: 'billingEmail', before: null, after: 'new@acme.test' }]);
    expect(billing?.knownAfter).toBe('organisations.acme.invitations.accept.inv_1');
    expect(billing?.declared).toEqual({ billingEmail: 'new@acme.test' });
  });

  it('never builds a billing body from values it did not read: an organisation not joined yet gets none', () => {
    const plan = planFor(
      desiredState({ organisations: [desiredOrg({ slug: 'wayne', accept: ['inv_wayne_bot'], billing: { billingEmail: 'new@wayne.example' } })] }),
      observedState({ organisations: [observedOrg({ slug: 'wayne', member: false, billing: null })] }),
    );
    expect(plan.changes.map((c) => c.kind)).toEqual(['accept-invitation', 'billing']);
    expect(plan.changes[1]?.seen).toBeUndefined();
    expect(plan.changes[1]?.declared).toEqual({ billingEmail: 'new@wayne.example' });
  });

  it('plans no billing change for a member whose billing could not be read (the state reader reports why)', () => {
    const plan = planFor(
      desiredState({ organisations: [desiredOrg({ slug: 'acme', billing: { billingEmail: 'new@acme.test' } })] }),
      observedState({ organisations: [observedOrg({ slug: 'acme', billing: null })] }),
    );
    expect(plan.changes).toEqual([]);
  });

  it('carries no note for the billing of a member', () => {
    const plan = planFor(
      desiredState({ organisations: [desiredOrg({ slug: 'acme', billing: { billingEmail: 'new@acme.test' } })] }),
      observedState({ organisations: [observedOrg({ slug: 'acme', billing: {} })] }),
    );
    expect(plan.changes[0]?.display.note).toBeUndefined();
  });
});

describe('computePlan: invitations and channels', () => {
  it('plans accepting an invitation only when the user is not a member yet', () => {
    const desired = desiredState({ organisations: [desiredOrg({ slug: 'acme', accept: ['inv_1'] })] });
    const notMember = planFor(desired, observedState({ organisations: [observedOrg({ slug: 'acme', member: false })] }));
    expect(notMember.changes).toEqual([
      {
        address: 'organisations.acme.invitations.accept.inv_1',
        kind: 'accept-invitation',
        action: 'accept',
        organisation: { slug: 'acme', id: 'org_acme' },
        targetId: 'inv_1',
        display: {},
      },
    ]);
    const member = planFor(desired, observedState({ organisations: [observedOrg({ slug: 'acme', member: true })] }));
    expect(member.changes).toEqual([]);
    expect(member.unchanged).toEqual(['acme']);
  });

  it('plans revocations and channel removals with a note that they cannot be checked before apply', () => {
    const plan = planFor(
      desiredState({ organisations: [desiredOrg({ slug: 'acme', revoke: ['inv_2'], removeChannels: ['ch_9'] })] }),
      observedState({ organisations: [observedOrg({ slug: 'acme' })] }),
    );
    expect(plan.changes).toEqual([
      {
        address: 'organisations.acme.invitations.revoke.inv_2',
        kind: 'revoke-invitation',
        action: 'delete',
        organisation: { slug: 'acme', id: 'org_acme' },
        targetId: 'inv_2',
        display: { note: INVITATION_NOTE },
      },
      {
        address: 'organisations.acme.notificationChannels.remove.ch_9',
        kind: 'remove-channel',
        action: 'delete',
        organisation: { slug: 'acme', id: 'org_acme' },
        targetId: 'ch_9',
        display: { note: CHANNEL_NOTE },
      },
    ]);
  });

  it('skips one-shot changes the journal records as done, and lists them under journaled', () => {
    const plan = planFor(
      desiredState({ organisations: [desiredOrg({ slug: 'acme', revoke: ['inv_2', 'inv_3'], removeChannels: ['ch_9'] })] }),
      observedState({ organisations: [observedOrg({ slug: 'acme' })] }),
      ['revoke-invitation org_acme inv_2', 'remove-channel org_acme ch_9'],
    );
    expect(plan.changes.map((c) => c.address)).toEqual(['organisations.acme.invitations.revoke.inv_3']);
    expect(plan.journaled).toEqual(['organisations.acme.invitations.revoke.inv_2', 'organisations.acme.notificationChannels.remove.ch_9']);
  });

  it('looks the journal up by organisation id, not slug, and by kind', () => {
    const plan = planFor(
      desiredState({ organisations: [desiredOrg({ slug: 'acme', revoke: ['x_1'], removeChannels: ['x_1'] })] }),
      observedState({ organisations: [observedOrg({ slug: 'acme', id: 'org_42' })] }),
      ['revoke-invitation acme x_1', 'revoke-invitation org_42 x_1'],
    );
    expect(plan.changes.map((c) => c.address)).toEqual(['organisations.acme.notificationChannels.remove.x_1']);
  });

  it('plans the accepts of an organisation you are not a member of even when the journal records them: membership decides', () => {
    const plan = planFor(
      desiredState({ organisations: [desiredOrg({ slug: 'acme', accept: ['inv_1'] })] }),
      observedState({ organisations: [observedOrg({ slug: 'acme', member: false, billing: null })] }),
      ['accept-invitation org_acme inv_1'],
    );
    expect(plan.changes.map((c) => c.address)).toEqual(['organisations.acme.invitations.accept.inv_1']);
    expect(plan.journaled).toEqual([]);
  });

  it('counts an organisation whose only changes are journaled as unchanged', () => {
    const plan = planFor(
      desiredState({ organisations: [desiredOrg({ slug: 'acme', revoke: ['inv_2'] })] }),
      observedState({ organisations: [observedOrg({ slug: 'acme' })] }),
      ['revoke-invitation org_acme inv_2'],
    );
    expect(plan.changes).toEqual([]);
    expect(plan.unchanged).toEqual(['acme']);
    expect(plan.observed).toEqual({});
  });
});

describe('computePlan: active organisation', () => {
  const two = () => [observedOrg({ slug: 'acme' }), observedOrg({ slug: 'globex' })];
  const orgs = () => [desiredOrg({ slug: 'acme' }), desiredOrg({ slug: 'globex' })];

  it('plans set-active when another organisation is active, showing the current one by slug', () => {
    const plan = planFor(desiredState({ organisations: orgs(), activeOrganisation: 'acme' }), observedState({ organisations: two(), activeId: 'org_globex' }));
    expect(plan.changes).toEqual([
      { address: 'activeOrganisation', kind: 'set-active', action: 'update', organisation: { slug: 'acme', id: 'org_acme' }, display: { fromActive: 'globex' } },
    ]);
    expect(plan.observedActiveId).toBe('org_globex');
  });

  it('plans nothing when the declared organisation is already active', () => {
    const plan = planFor(desiredState({ organisations: orgs(), activeOrganisation: 'acme' }), observedState({ organisations: two(), activeId: 'org_acme' }));
    expect(plan.changes).toEqual([]);
  });

  it('shows the id of the active organisation when its slug is not known, and null when none was read', () => {
    const unknown = planFor(desiredState({ organisations: orgs(), activeOrganisation: 'acme' }), observedState({ organisations: two(), activeId: 'org_elsewhere' }));
    expect(unknown.changes[0]?.display.fromActive).toBe('org_elsewhere');
    const none = planFor(desiredState({ organisations: orgs(), activeOrganisation: 'acme' }), observedState({ organisations: two(), activeId: null }));
    expect(none.changes[0]?.display.fromActive).toBeNull();
  });

  it('resolves an active organisation that is not declared under organisations but is in the listing', () => {
    const plan = planFor(
      desiredState({ organisations: [desiredOrg({ slug: 'acme' })], activeOrganisation: 'initech' }),
      observedState({ organisations: [observedOrg({ slug: 'acme' })], listed: { org_initech: 'initech' }, activeId: 'org_acme' }),
    );
    expect(plan.changes).toEqual([
      { address: 'activeOrganisation', kind: 'set-active', action: 'update', organisation: { slug: 'initech', id: 'org_initech' }, display: { fromActive: 'acme' } },
    ]);
  });

  it('plans nothing for an active organisation that cannot be found (its problem says why)', () => {
    const problems = [{ organisation: null, address: 'activeOrganisation', message: 'orgs.yaml:1:1: activeOrganisation "nowhere" is not an organisation you belong to' }];
    const plan = planFor(desiredState({ activeOrganisation: 'nowhere' }), observedState({ activeId: 'org_acme', listed: { org_acme: 'acme' }, problems }));
    expect(plan.changes).toEqual([]);
    expect(plan.problems).toEqual(problems);
  });

  it('puts set-active after every organisation change, even one of a later slug', () => {
    const plan = planFor(
      desiredState({ organisations: [desiredOrg({ slug: 'acme' }), desiredOrg({ slug: 'zeta', revoke: ['inv_1'] })], activeOrganisation: 'acme' }),
      observedState({ organisations: [observedOrg({ slug: 'acme' }), observedOrg({ slug: 'zeta' })], activeId: 'org_zeta' }),
    );
    expect(plan.changes.map((c) => c.address)).toEqual(['organisations.zeta.invitations.revoke.inv_1', 'activeOrganisation']);
  });
});

describe('computePlan: the plan as a whole', () => {
  it('lists the declared organisations that need nothing, sorted', () => {
    const plan = planFor(
      desiredState({ organisations: [desiredOrg({ slug: 'zeta' }), desiredOrg({ slug: 'acme' }), desiredOrg({ slug: 'mid', revoke: ['inv_1'] })] }),
      observedState({ organisations: [observedOrg({ slug: 'zeta' }), observedOrg({ slug: 'acme' }), observedOrg({ slug: 'mid' })] }),
    );
    expect(plan.unchanged).toEqual(['acme', 'zeta']);
  });

  it('passes the problems through and plans nothing for an organisation that could not be read', () => {
    const problems = [problem('umbrella', 'orgs.yaml:4:3: forbidden')];
    const plan = planFor(
      desiredState({ organisations: [desiredOrg({ slug: 'umbrella', revoke: ['inv_1'] })] }),
      observedState({ problems }),
    );
    expect(plan.problems).toEqual(problems);
    expect(plan.changes).toEqual([]);
    expect(plan.unchanged).toEqual([]);
  });

  it('carries the base URL and format version', () => {
    const plan = planFor(desiredState(), observedState());
    expect(plan.formatVersion).toBe(3);
    expect(plan.baseUrl).toBe(BASE_URL);
  });

  it('sorts by organisation slug, then accept < billing < revoke < remove, then target id, with activeOrganisation last', () => {
    const plan = planFor(
      desiredState({
        organisations: [
          desiredOrg({ slug: 'globex', removeChannels: ['ch_b', 'ch_a'], revoke: ['inv_z', 'inv_y'], billing: { billingEmail: 'g@x.test' }, accept: ['inv_b', 'inv_a'] }),
          desiredOrg({ slug: 'acme', removeChannels: ['ch_1'], billing: { customerID: 'cus_1' } }),
        ],
        activeOrganisation: 'acme',
      }),
      observedState({ organisations: [observedOrg({ slug: 'globex', member: false }), observedOrg({ slug: 'acme', billing: {} })], activeId: 'org_other' }),
    );
    expect(plan.changes.map((c) => c.address)).toEqual([
      'organisations.acme.billing',
      'organisations.acme.notificationChannels.remove.ch_1',
      'organisations.globex.invitations.accept.inv_a',
      'organisations.globex.invitations.accept.inv_b',
      'organisations.globex.billing',
      'organisations.globex.invitations.revoke.inv_y',
      'organisations.globex.invitations.revoke.inv_z',
      'organisations.globex.notificationChannels.remove.ch_a',
      'organisations.globex.notificationChannels.remove.ch_b',
      'activeOrganisation',
    ]);
  });

  it('keeps in observed exactly the organisations with changes, sorted by slug', () => {
    const acme = observedOrg({ slug: 'acme', billing: { billingEmail: 'old@acme.test' } });
    const globex = observedOrg({ slug: 'globex' });
    const initech = observedOrg({ slug: 'initech' });
    const zeta = observedOrg({ slug: 'zeta' });
    const plan = planFor(
      desiredState({
        organisations: [
          desiredOrg({ slug: 'zeta', revoke: ['inv_1'] }),
          desiredOrg({ slug: 'acme', billing: { billingEmail: 'new@acme.test' } }),
          desiredOrg({ slug: 'globex' }),
          desiredOrg({ slug: 'initech' }),
        ],
        activeOrganisation: 'initech',
      }),
      observedState({ organisations: [zeta, acme, globex, initech], activeId: 'org_globex' }),
    );
    expect(plan.observed).toEqual({ acme, initech, zeta });
    expect(Object.keys(plan.observed)).toEqual(['acme', 'initech', 'zeta']);
  });
});

describe('computePlan: properties', () => {
  const plainId = fc.stringMatching(/^[a-z0-9_]{1,5}$/);
  const anyId = fc.oneof(plainId, fc.string({ minLength: 1, maxLength: 5 }));
  const value = fc.constantFrom('a', 'b', 'c');
  const declaredBilling = fc.record(
    { billingEmail: value, customerID: value, subscriptionID: value, platformID: value },
    { requiredKeys: [] },
  ) as fc.Arbitrary<BillingDetails>;
  const currentBilling = fc.option(
    fc.record({ billingEmail: fc.option(value), customerID: fc.option(value), subscriptionID: fc.option(value), platformID: fc.option(value) }),
    { nil: null },
  ) as fc.Arbitrary<Record<BillingField, string | null> | null>;
  const oneShots = fc.uniqueArray(fc.tuple(anyId, fc.boolean()), { selector: ([id]) => id, maxLength: 3 });
  const organisation = fc.record({
    id: anyId,
    member: fc.boolean(),
    billing: fc.option(declaredBilling, { nil: undefined }),
    current: currentBilling,
    accept: fc.uniqueArray(anyId, { maxLength: 3 }),
    revoke: oneShots,
    channels: oneShots,
  });
  const world = fc
    .record({
      organisations: fc.uniqueArray(fc.tuple(fc.oneof(plainId, fc.string({ minLength: 1, maxLength: 4 })), organisation), { selector: ([slug]) => slug, maxLength: 8 }),
      active: fc.option(fc.nat({ max: 9 }), { nil: undefined }),
      activeId: fc.option(fc.nat({ max: 9 }), { nil: null }),
    })
    .map(({ organisations, active, activeId }) => {
      // Organisation ids are made unique per slug so that the journal keys do not collide across organisations.
      const declared: DesiredOrganisation[] = [];
      const observed: ObservedOrganisation[] = [];
      const journaled: string[] = [];
      organisations.forEach(([slug, o], i) => {
        const id = `${i}:${o.id}`;
        declared.push(
          desiredOrg({ slug, billing: o.billing, accept: o.accept, revoke: o.revoke.map(([t]) => t), removeChannels: o.channels.map(([t]) => t) }),
        );
        // As the state reader gives it: a non-member's billing is unknown, a member's is read.
        const none = { billingEmail: null, customerID: null, subscriptionID: null, platformID: null };
        observed.push({ slug, id, member: o.member, billing: o.member ? { ...none, ...o.current } : null });
        for (const [t, done] of o.revoke) if (done) journaled.push(`revoke-invitation ${id} ${t}`);
        for (const [t, done] of o.channels) if (done) journaled.push(`remove-channel ${id} ${t}`);
      });
      const pick = (n: number | undefined | null) => (n === undefined || n === null ? undefined : observed[n % Math.max(observed.length, 1)]);
      return {
        declared,
        observed,
        journaled,
        activeOrganisation: active === 9 ? 'listed-only' : pick(active)?.slug,
        activeId: activeId === null ? null : (pick(activeId)?.id ?? 'org_listed_only'),
      };
    });

  it('gives the same plan whatever the order of the input organisations, with unique addresses', () => {
    fc.assert(
      fc.property(world, fc.infiniteStream(fc.nat()), (w, randoms) => {
        const shuffled = [...w.declared];
        for (let i = shuffled.length - 1; i > 0; i -= 1) {
          const j = randoms.next().value % (i + 1);
          [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
        }
        const state = () =>
          observedState({ organisations: [...w.observed].reverse(), activeId: w.activeId, listed: { org_listed_only: 'listed-only' } });
        const base = planFor(desiredState({ organisations: w.declared, activeOrganisation: w.activeOrganisation }), state(), w.journaled);
        const other = planFor(desiredState({ organisations: shuffled, activeOrganisation: w.activeOrganisation }), state(), w.journaled);
        expect(other).toEqual(base);
        expect(JSON.stringify(other)).toBe(JSON.stringify(base));
        const addresses = base.changes.map((c) => c.address);
        expect(new Set(addresses).size).toBe(addresses.length);
        expect(new Set([...addresses, ...base.journaled]).size).toBe(addresses.length + base.journaled.length);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps exactly the organisations with changes in observed, and every declared organisation in one of changes or unchanged', () => {
    fc.assert(
      fc.property(world, (w) => {
        const plan = planFor(
          desiredState({ organisations: w.declared }),
          observedState({ organisations: w.observed, activeId: w.activeId }),
          w.journaled,
        );
        const withChanges = [...new Set(plan.changes.map((c) => c.organisation.slug))].sort();
        expect(Object.keys(plan.observed).sort()).toEqual(withChanges);
        expect([...withChanges, ...plan.unchanged].sort()).toEqual(w.declared.map((d) => d.slug).sort());
        for (const c of plan.changes) {
          if (c.kind !== 'billing') continue;
          // Every declared field is held with its value, and (unless known only after an accept) what the plan saw of it.
          for (const field of BILLING_FIELDS) {
            const declared = w.declared.find((d) => d.slug === c.organisation.slug)?.billing?.[field];
            expect(c.declared?.[field]).toBe(declared);
            if (c.knownAfter === undefined) expect(c.seen !== undefined && field in c.seen).toBe(declared !== undefined);
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});

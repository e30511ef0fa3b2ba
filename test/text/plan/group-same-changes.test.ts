import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BILLING_FIELDS, type BillingField } from '../../../src/model/billing.js';
import type { Change } from '../../../src/plan/types.js';
import { groupSameChanges, itemsOf, summariseSameChanges, type ChangeGroup, type GroupedChanges } from '../../../src/text/plan/group-same-changes.js';
import { sectionCounts, sectionNotes } from '../../../src/text/plan/describe-change-group.js';
import { propertyRuns } from '../../support/soak.js';
import { acceptInvitation, billing, billingKnownAfterAccept, removeChannel, revokeInvitation, setActive } from '../../support/plan-fixtures.js';

const slug = (i: number) => `org-${String(i).padStart(3, '0')}`;
const everyGroup = (g: GroupedChanges): ChangeGroup[] => g.sections.flatMap((s) => [...s.groups, ...s.singles]);
/** A group as a line a test can read: `platformID "a" → "b" ×2 [o1, o2]`. */
const describeGroup = (g: ChangeGroup) =>
  `${g.field} ${g.befores.map((b) => (b.before.known ? JSON.stringify(b.before.value) : '?') + (g.befores.length > 1 ? `×${b.count}` : '')).join('|')} → ${JSON.stringify(g.after)} ×${g.members.length} [${g.organisations.join(', ')}]`;

describe('groupSameChanges', () => {
  it('says the same billing change once, with its count and organisations in plan order, and leaves changes that share nothing single, groups first', () => {
    const changes = [
      billing('a', { platformID: ['plat_legacy', 'plat_1'], billingEmail: ['x@a', 'y@a'] }),
      billing('b', { platformID: ['plat_legacy', 'plat_1'] }),
      billing('c', { platformID: ['plat_legacy', 'plat_2'] }),
      billing('d', { platformID: ['plat_legacy', 'plat_1'] }),
    ];
    const grouped = groupSameChanges(changes);
    expect(grouped.sections.map((s) => [s.field, s.groups.map(describeGroup), s.singles.map(describeGroup)])).toEqual([
      ['platformID', ['platformID "plat_legacy" → "plat_1" ×3 [a, b, d]'], ['platformID "plat_legacy" → "plat_2" ×1 [c]']],
      ['billingEmail', [], ['billingEmail "x@a" → "y@a" ×1 [a]']],
    ]);
    expect(grouped.items).toBe(5);
  });

  it('groups the same new value from different old values, keeping each old value with its count, most first', () => {
    const changes = [
      billing('a', { customerID: ['cus_1', 'cus_new'] }),
      billing('b', { customerID: [null, 'cus_new'] }),
      billing('c', { customerID: [null, 'cus_new'] }),
      billingKnownAfterAccept('d', 'inv_d', { customerID: 'cus_new' }),
    ];
    const [section, ...rest] = groupSameChanges(changes).sections;
    expect(rest).toEqual([]);
    // The billing of an organisation being joined is the same change, its current value not known yet.
    expect(section!.groups.map(describeGroup)).toEqual(['customerID null×2|"cus_1"×1|?×1 → "cus_new" ×4 [a, b, c, d]']);
    expect(section!.singles).toEqual([]);
    expect(section!.groups[0]!.notes).toEqual(['current billing is known once an invitation is accepted: apply reads it then, and fields not declared keep their values']);
  });

  it('never merges a value with its look-alike holding an invisible or bidirectional character, nor values that normalise alike', () => {
    const lookAlikes = ['sub_acme', 'sub\u200b_acme', 'sub_acme\u00a0', 'sub_\u202eemca', 'café', 'cafe\u0301'];
    const changes = lookAlikes.flatMap((value, i) => [billing(`x${i}`, { subscriptionID: ['old', value] }), billing(`y${i}`, { subscriptionID: ['old', value] })]);
    const [section] = groupSameChanges(changes).sections;
    expect(section!.groups.map((g) => g.after)).toEqual([...lookAlikes].sort());
    for (const group of section!.groups) expect(new Set(group.members.map((m) => m.after))).toEqual(new Set([group.after]));
  });

  it('groups removals by what they remove, and one-shot changes of the same target across organisations', () => {
    const changes = [
      acceptInvitation('a', 'inv_1'),
      revokeInvitation('a', 'inv_shared'),
      revokeInvitation('b', 'inv_shared'),
      revokeInvitation('b', 'inv_2'),
      removeChannel('a', 'chn_1'),
      removeChannel('b', 'chn_2'),
      setActive('b', 'a'),
    ];
    const grouped = groupSameChanges(changes);
    expect(grouped.sections.map((s) => [s.kind, s.groups.map(describeGroup), s.singles.map(describeGroup)])).toEqual([
      ['revoke-invitation', ['invitation "inv_shared" → null ×2 [a, b]'], ['invitation "inv_2" → null ×1 [b]']],
      ['accept-invitation', [], ['invitation null → "inv_1" ×1 [a]']],
      ['remove-channel', [], ['notificationChannel "chn_1" → null ×1 [a]', 'notificationChannel "chn_2" → null ×1 [b]']],
      ['set-active', [], ['activeOrganisation "a" → "b" ×1 [b]']],
    ]);
    expect(grouped.sections.find((s) => s.kind === 'revoke-invitation')!.groups[0]!.notes).toEqual(['cannot be checked before apply: the interface cannot list invitations']);
  });

  it('orders groups most members first, and equal counts by new value, whatever the order of the plan', () => {
    const changes = ['c', 'a', 'b'].flatMap((to, i) => Array.from({ length: i === 0 ? 2 : 3 }, (_, j) => billing(`${to}${j}`, { platformID: ['old', `plat_${to}`] })));
    const order = (cs: Change[]) => groupSameChanges(cs).sections[0]!.groups.map((g) => `${g.after}×${g.members.length}`);
    expect(order(changes)).toEqual(['plat_a×3', 'plat_b×3', 'plat_c×2']);
    expect(order([...changes].reverse())).toEqual(order(changes));
  });

  it('keeps a billing change that shows no field as one item, so that no change is lost', () => {
    const change = billing('a', {});
    change.display.fields = [];
    expect(itemsOf(change)).toHaveLength(1);
    expect(groupSameChanges([change]).items).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------
// The properties, over plans of every kind with few distinct values (so that groups form) and
// look-alike values (so that a merge of two of them would be seen).

const VALUES = ['v', 'v\u200b', '\u200bv', 'v\u00a0', 'w', 'w\u202e', 'x'];
const value = fc.constantFrom(...VALUES);
const field = fc.constantFrom(...BILLING_FIELDS);

const anyChange = (i: number): fc.Arbitrary<Change> =>
  fc.oneof(
    fc
      .uniqueArray(fc.tuple(field, fc.option(value, { nil: null }), value), { minLength: 1, maxLength: 4, selector: ([f]) => f })
      .map((fields) => billing(slug(i), Object.fromEntries(fields.map(([f, before, after]) => [f, [before, after]])) as Partial<Record<BillingField, [string | null, string]>>)),
    value.map((after) => billingKnownAfterAccept(slug(i), 'inv_k', { platformID: after })),
    value.map((target) => acceptInvitation(slug(i), target)),
    value.map((target) => revokeInvitation(slug(i), target)),
    value.map((target) => removeChannel(slug(i), target)),
  );

const plans = fc.integer({ min: 0, max: 40 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => anyChange(i)))).map((cs) => cs as Change[]);

describe('groupSameChanges, for any plan', () => {
  it('puts every item in exactly one group, so that the counts add up to the plan per kind', () => {
    fc.assert(
      fc.property(plans, (changes) => {
        const groups = everyGroup(groupSameChanges(changes));
        const members = groups.flatMap((g) => g.members);
        const expected = changes.flatMap(itemsOf);
        expect(members).toHaveLength(expected.length);
        // Each item once: a change appears as many times as it has items, a billing change never twice in one group.
        const key = (m: { change: Change; field: string }) => `${m.change.address} ${m.field}`;
        expect(new Set(members.map(key)).size).toBe(members.length);
        expect(new Set(members.map(key))).toEqual(new Set(expected.map(key)));
        for (const kind of new Set(changes.map((c) => c.kind))) {
          const ofKind = groups.filter((g) => g.kind === kind);
          expect(new Set(ofKind.flatMap((g) => g.members.map((m) => m.change.address)))).toEqual(new Set(changes.filter((c) => c.kind === kind).map((c) => c.address)));
          if (kind !== 'billing') expect(ofKind.reduce((n, g) => n + g.members.length, 0)).toBe(changes.filter((c) => c.kind === kind).length);
        }
        for (const g of groups) {
          expect(g.befores.reduce((n, b) => n + b.count, 0)).toBe(g.members.length);
          expect(new Set(g.members.map((m) => m.change.organisation.slug)).size).toBe(g.organisations.length);
        }
      }),
      { numRuns: propertyRuns(1_000, 200) },
    );
  });

  it('groups only items that are exactly the same: kind, field and new value (code unit for code unit), a removal its old value too', () => {
    fc.assert(
      fc.property(plans, (changes) => {
        for (const g of everyGroup(groupSameChanges(changes))) {
          for (const m of g.members) {
            expect([m.change.kind, m.field, m.after]).toEqual([g.kind, g.field, g.after]);
            if (m.change.display.note !== undefined) expect(g.notes).toContain(m.change.display.note);
            if (m.change.action === 'delete') expect(m.before).toEqual(g.befores[0]!.before);
          }
        }
      }),
      { numRuns: propertyRuns(1_000, 200) },
    );
  });

  it('gives the same groups in the same order whatever the order of the changes', () => {
    fc.assert(
      fc.property(
        plans.chain((cs) => fc.tuple(fc.constant(cs), fc.shuffledSubarray(cs, { minLength: cs.length, maxLength: cs.length }))),
        ([changes, shuffled]) => {
          const shape = (cs: Change[]) =>
            groupSameChanges(cs).sections.map((s) => [s.kind, s.field, s.groups.map((g) => [g.after, g.members.map((m) => m.change.address).sort()])]);
          expect(shape(shuffled)).toEqual(shape(changes));
        },
      ),
      { numRuns: propertyRuns(500, 100) },
    );
  });
});

describe('summariseSameChanges, for any plan', () => {
  const caps = fc.record({ maxGroups: fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constant(Infinity)), maxSingles: fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constant(Infinity)) });
  const shown = (g: ChangeGroup) => [describeGroup(g), g.notes, g.members.map((m) => m.change.address)];

  it('gives what groupSameChanges gives, cut to the first groups and single changes: the same sections, counts, notes, and groups shown, in plan order or any other', () => {
    fc.assert(
      fc.property(plans.chain((cs) => fc.oneof(fc.constant(cs), fc.shuffledSubarray(cs, { minLength: cs.length, maxLength: cs.length }))), caps, (changes, { maxGroups, maxSingles }) => {
        const whole = groupSameChanges(changes).sections;
        const summary = summariseSameChanges(changes, { maxGroups, maxSingles });
        expect(summary.map((s) => [s.kind, s.field, s.items, s.organisations])).toEqual(whole.map((s) => [s.kind, s.field, s.items, s.organisations]));
        whole.forEach((section, i) => {
          const cut = summary[i]!;
          expect(sectionCounts(cut)).toBe(sectionCounts(section));
          expect(sectionNotes(cut)).toEqual(sectionNotes(section));
          expect(cut.groups.map(shown)).toEqual(section.groups.slice(0, maxGroups).map(shown));
          expect(cut.singles.map(shown)).toEqual(section.singles.slice(0, maxSingles).map(shown));
          expect(cut.moreGroupItems).toBe(section.groups.slice(maxGroups).reduce((n, g) => n + g.members.length, 0));
        });
      }),
      { numRuns: propertyRuns(1_000, 200) },
    );
  });

  it('counts an organisation with several changes in a section once, in plan order or any other', () => {
    const changes = [revokeInvitation('a', 'inv_1'), revokeInvitation('a', 'inv_2'), revokeInvitation('b', 'inv_1'), revokeInvitation('c', 'inv_3'), revokeInvitation('c', 'inv_4')];
    for (const order of [changes, [...changes].reverse(), [changes[0]!, changes[2]!, changes[1]!, changes[4]!, changes[3]!]]) {
      const [section] = summariseSameChanges(order, { maxGroups: 1, maxSingles: 1 });
      expect([section!.items, section!.organisations, sectionCounts(section!)]).toEqual([5, 3, '5 changes in 3 organisations: 1 group and 3 single changes']);
    }
  });

  it('holds no group of a change that is not shown: 10,000 changes, each its own e-mail, gather five', () => {
    const changes = Array.from({ length: 10_000 }, (_, i) => billing(slug(i), { billingEmail: [`old${i}@a`, `new${i}@a`] }));
    const [section] = summariseSameChanges(changes, { maxGroups: 20, maxSingles: 5 });
    expect({ groups: section!.groups.length, singles: section!.singles.map((g) => g.organisations[0]), singleCount: section!.singleCount, items: section!.items }).toEqual({
      groups: 0,
      singles: [slug(0), slug(1), slug(2), slug(3), slug(4)],
      singleCount: 10_000,
      items: 10_000,
    });
  });
});

/**
 * A model of "what apply must do" for the property tests (cases 22, 24, 25): random emulator
 * worlds, random desired states over them written as orgs.yaml, random fault schedules, and the
 * check that the service ended where the desired state says — every declared change in effect
 * exactly once, nothing undeclared touched.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { Billing, Organisation, OperationId } from '../../src/api/types.js';
import type { EmulatorData } from '../../src/emulator/data.js';
import type { FaultRule } from '../../src/emulator/faults.js';
import type { EmulatorStore } from '../../src/emulator/store.js';

export const USER_EMAIL = 'ada@acme.example';

type BillingField = 'billingEmail' | 'customerID' | 'subscriptionID' | 'platformID';
const RESPONSE_FIELD: Record<BillingField, keyof Billing> = {
  billingEmail: 'billingEmail',
  customerID: 'customerId',
  subscriptionID: 'subscriptionId',
  platformID: 'platformId',
};
const FIELDS = Object.keys(RESPONSE_FIELD) as BillingField[];

export interface DesiredOrg {
  slug: string;
  id: string;
  /** Write `id:` in the file (required for organisations the user is not a member of yet). */
  declareId: boolean;
  billing?: Partial<Record<BillingField, string>>;
  accept: string[];
  revoke: string[];
  remove: string[];
}

export interface Desired {
  organisations: DesiredOrg[];
  activeSlug?: string;
}

// ---- worlds ------------------------------------------------------------------------------------

function billingFor(tag: string, variant: number): Billing {
  return {
    platformId: `plat_${tag}_${variant}`,
    customerId: `cus_${tag}_${variant}`,
    billingEmail: `billing+${tag}.${variant}@example.com`,
    subscriptionId: `sub_${tag}_${variant}`,
    isSubscriptionActive: 1,
    billingPeriodStart: '2025-01-01',
    billingPeriodEnd: '2025-12-31',
    platformType: 'stripe',
    boardQuota: 10 + variant,
    hubBoardQuota: 5,
  };
}

/** A small world: 3–8 organisations, some the user belongs to, invitations and channels, a second user. */
export function smallWorldArb(token: string): fc.Arbitrary<EmulatorData> {
  const orgArb = fc.record({
    member: fc.boolean(),
    variant: fc.integer({ min: 0, max: 2 }),
    invitedUser: fc.boolean(),
    otherInvitations: fc.integer({ min: 0, max: 2 }),
    acceptedInvitation: fc.boolean(),
    channels: fc.integer({ min: 0, max: 3 }),
    otherMember: fc.boolean(),
  });
  return fc.array(orgArb, { minLength: 3, maxLength: 8 }).map((specs) => {
    const data: EmulatorData = { users: [], organisations: [], invitations: [], channels: [] };
    const mine: string[] = [];
    const theirs: string[] = [];
    specs.forEach((s, i) => {
      const id = `org_w${i}`;
      const org: Organisation = { id, slug: `w${i}-org`, displayName: `World ${i}`, owner: 'owner@example.com', billing: billingFor(`w${i}`, s.variant), plan: 'team' };
      data.organisations.push(org);
      // The first organisation is always the user's, so that there is an active one.
      if (s.member || i === 0) mine.push(id);
      else if (s.invitedUser) data.invitations.push({ id: `inv_w${i}_ada`, organisationId: id, email: USER_EMAIL });
      if (s.otherMember) theirs.push(id);
      for (let k = 0; k < s.otherInvitations; k += 1) data.invitations.push({ id: `inv_w${i}_guest${k}`, organisationId: id, email: `guest${k}@example.com` });
      if (s.acceptedInvitation) data.invitations.push({ id: `inv_w${i}_used`, organisationId: id, email: 'used@example.com', pending: false });
      for (let k = 0; k < s.channels; k += 1) data.channels.push({ id: `chn_w${i}_${k}`, organisationId: id });
    });
    data.users.push({ token, email: USER_EMAIL, memberships: mine, active: mine[0]! });
    data.users.push({ token: 'other-token', email: 'bob@example.com', memberships: theirs, ...(theirs[0] ? { active: theirs[0] } : {}) });
    return data;
  });
}

/**
 * A larger world from generateEmulatorData (every organisation the user's), plus organisations the
 * user is only invited to, guest invitations and more channels.
 */
export function enlargeWorld(base: EmulatorData, extra: { invitedOrganisations: number }): EmulatorData {
  const data = structuredClone(base);
  data.organisations.forEach((org, i) => {
    if (i % 3 === 0) data.invitations.push({ id: `inv_${org.id}_guest`, organisationId: org.id, email: 'guest@example.com' });
    if (i % 4 === 0) data.channels.push({ id: `chn_${org.id}_extra`, organisationId: org.id });
  });
  for (let i = 0; i < extra.invitedOrganisations; i += 1) {
    const id = `org_inv${i}`;
    data.organisations.push({ id, slug: `invited-${i}`, displayName: `Invited ${i}`, owner: 'owner@example.com', billing: billingFor(`inv${i}`, 0), plan: 'free' });
    data.invitations.push({ id: `inv_${id}_ada`, organisationId: id, email: USER_EMAIL });
    data.invitations.push({ id: `inv_${id}_guest`, organisationId: id, email: 'guest@example.com' });
    data.channels.push({ id: `chn_${id}_0`, organisationId: id });
  }
  return data;
}

// ---- desired states ------------------------------------------------------------------------------

/** A random desired state over a world: which organisations, which of their changes, the active one. */
export function desiredArb(data: EmulatorData, token: string): fc.Arbitrary<Desired> {
  const user = data.users.find((u) => u.token === token)!;
  const candidates = data.organisations.flatMap((org) => {
    const member = user.memberships.includes(org.id);
    const invitation = data.invitations.find((i) => i.organisationId === org.id && i.pending !== false && i.email.toLowerCase() === USER_EMAIL);
    if (!member && !invitation) return [];
    const guests = data.invitations.filter((i) => i.organisationId === org.id && i.email.toLowerCase() !== USER_EMAIL).map((i) => i.id);
    const channels = data.channels.filter((c) => c.organisationId === org.id).map((c) => c.id);
    const value = (field: BillingField) =>
      fc.constantFrom(
        ...[org.billing?.[RESPONSE_FIELD[field]] as string | undefined].filter((v): v is string => v !== undefined),
        ...(field === 'billingEmail' ? ['finance@new.example', 'accounts@new.example'] : [`${field}_new_1`, `${field}_new_2`]),
      );
    const billing = fc.option(
      fc.record(Object.fromEntries(FIELDS.map((f) => [f, value(f)])) as Record<BillingField, fc.Arbitrary<string>>, { requiredKeys: [] }),
      { nil: undefined },
    );
    return [
      fc.record({
        declared: fc.boolean(),
        declareId: member ? fc.boolean() : fc.constant(true),
        billing,
        revoke: fc.subarray([...guests, `inv_${org.id}_gone`]),
        remove: fc.subarray([...channels, `chn_${org.id}_gone`]),
      }).map((d): (DesiredOrg & { declared: boolean }) => ({
        declared: d.declared,
        slug: org.slug,
        id: org.id,
        declareId: d.declareId,
        ...(d.billing === undefined ? {} : { billing: d.billing }),
        accept: member ? [] : [invitation!.id],
        revoke: d.revoke,
        remove: d.remove,
      })),
    ];
  });
  return fc.tuple(...candidates).chain((orgs) => {
    const declared = orgs.filter((o) => o.declared).map(({ declared: _declared, ...o }) => o);
    const memberSlugs = data.organisations.filter((o) => user.memberships.includes(o.id)).map((o) => o.slug);
    const activeChoices = [...new Set([...memberSlugs, ...declared.map((o) => o.slug)])];
    return fc.option(fc.constantFrom(...activeChoices), { nil: undefined }).map((activeSlug) => ({
      organisations: declared,
      ...(activeSlug === undefined ? {} : { activeSlug }),
    }));
  });
}

const q = (s: string) => JSON.stringify(s);

export function configFor(desired: Desired): string {
  const lines = ['version: 1'];
  if (desired.activeSlug !== undefined) lines.push(`activeOrganisation: ${q(desired.activeSlug)}`);
  lines.push('organisations:');
  if (desired.organisations.length === 0) lines[lines.length - 1] = 'organisations: {}';
  for (const o of desired.organisations) {
    lines.push(`  ${q(o.slug)}:`);
    const body: string[] = [];
    if (o.declareId) body.push(`    id: ${q(o.id)}`);
    if (o.billing !== undefined) {
      const fields = Object.entries(o.billing);
      if (fields.length === 0) body.push('    billing: {}');
      else body.push('    billing:', ...fields.map(([k, v]) => `      ${k}: ${q(v)}`));
    }
    if (o.accept.length + o.revoke.length > 0) {
      body.push('    invitations:');
      if (o.accept.length > 0) body.push(`      accept: [${o.accept.map(q).join(', ')}]`);
      if (o.revoke.length > 0) body.push(`      revoke: [${o.revoke.map(q).join(', ')}]`);
    }
    if (o.remove.length > 0) body.push('    notificationChannels:', `      remove: [${o.remove.map(q).join(', ')}]`);
    if (body.length === 0) lines[lines.length - 1] += ' {}';
    else lines.push(...body);
  }
  return lines.join('\n') + '\n';
}

export function countChanges(desired: Desired): number {
  return desired.organisations.reduce((n, o) => n + o.accept.length + o.revoke.length + o.remove.length + (o.billing && Object.keys(o.billing).length > 0 ? 1 : 0), desired.activeSlug ? 1 : 0);
}

// ---- faults --------------------------------------------------------------------------------------

const FAULTED_OPERATIONS: OperationId[] = [
  'getOrganisations',
  'getOrganisation',
  'updateBillingDetails',
  'setActiveOrganisation',
  'acceptInvitation',
  'deleteInvitation',
  'deleteNotificationChannel',
];

export function faultScheduleArb(maxRules = 6): fc.Arbitrary<FaultRule[]> {
  const fault = fc.oneof(
    fc.record({ kind: fc.constant('status' as const), status: fc.constant(429), retryAfter: fc.constantFrom(0, 1) }),
    fc.constant({ kind: 'status' as const, status: 503 }),
    fc.constant({ kind: 'drop' as const }),
    fc.constant({ kind: 'lost-response' as const }),
  );
  return fc.array(fc.record({ operation: fc.constantFrom(...FAULTED_OPERATIONS), times: fc.integer({ min: 1, max: 2 }), fault }), { maxLength: maxRules });
}

// ---- the check -----------------------------------------------------------------------------------

/**
 * Counts the one-shot writes that took effect, per target, by watching the emulator's store (the
 * request log cannot tell: a lost answer may hide a success or a 404).
 */
export function countEffects(store: EmulatorStore): Map<string, number> {
  const effects = new Map<string, number>();
  const watch = <K extends 'acceptInvitation' | 'deleteInvitation' | 'deleteNotificationChannel'>(name: K) => {
    const original = store[name].bind(store) as (token: string, organisationId: string, targetId: string) => { ok: boolean };
    (store as unknown as Record<K, typeof original>)[name] = (token, organisationId, targetId) => {
      const result = original(token, organisationId, targetId);
      if (result.ok) {
        const key = `${name} ${organisationId} ${targetId}`;
        effects.set(key, (effects.get(key) ?? 0) + 1);
      }
      return result;
    };
  };
  watch('acceptInvitation');
  watch('deleteInvitation');
  watch('deleteNotificationChannel');
  return effects;
}

/**
 * The service after apply is exactly the service before with the declared changes made, each
 * one-shot change took effect exactly once per target, and nothing else changed.
 */
export function expectConverged(before: EmulatorData, after: EmulatorData, desired: Desired, token: string, effects: ReadonlyMap<string, number>): void {
  const declared = new Map(desired.organisations.map((o) => [o.id, o]));
  const user = before.users.find((u) => u.token === token)!;

  // Organisations: only declared billing fields changed, to the declared values.
  const expectedOrgs = before.organisations.map((org) => {
    const d = declared.get(org.id);
    if (!d?.billing || Object.keys(d.billing).length === 0) return org;
    const billing = { ...org.billing };
    for (const [field, value] of Object.entries(d.billing)) billing[RESPONSE_FIELD[field as BillingField]] = value as never;
    return { ...org, billing };
  });
  expect(after.organisations).toEqual(expectedOrgs);

  // Users: the canary user joined what it accepted and has the declared active organisation.
  const accepted = desired.organisations.filter((o) => o.accept.length > 0).map((o) => o.id);
  const activeId = desired.activeSlug === undefined ? user.active : before.organisations.find((o) => o.slug === desired.activeSlug)!.id;
  const expectedUsers = before.users.map((u) =>
    u.token !== token ? u : { ...u, memberships: [...u.memberships, ...accepted.filter((id) => !u.memberships.includes(id))].sort(), ...(activeId === undefined ? {} : { active: activeId }) },
  );
  expect(after.users.map((u) => ({ ...u, memberships: [...u.memberships].sort() }))).toEqual(expectedUsers.map((u) => ({ ...u, memberships: [...u.memberships].sort() })));

  // Invitations: accepted ones consumed, revoked pending ones gone, all others as they were.
  const expectedInvitations = before.invitations.flatMap((inv) => {
    const d = declared.get(inv.organisationId);
    const pending = inv.pending !== false;
    if (d?.accept.includes(inv.id) && pending) return [{ id: inv.id, organisationId: inv.organisationId, email: inv.email, pending: false }];
    if (d?.revoke.includes(inv.id) && pending) return [];
    return [inv];
  });
  const byId = <T extends { id: string }>(list: T[]) => [...list].sort((a, b) => (a.id < b.id ? -1 : 1));
  expect(byId(after.invitations)).toEqual(byId(expectedInvitations));

  // Channels: removed ones gone, all others as they were.
  const expectedChannels = before.channels.filter((c) => !declared.get(c.organisationId)?.remove.includes(c.id));
  expect(byId(after.channels)).toEqual(byId(expectedChannels));

  // Exactly once: every one-shot target that existed was written once with effect; others never.
  const expectedOnce = new Map<string, number>();
  for (const o of desired.organisations) {
    for (const id of o.accept) expectedOnce.set(`acceptInvitation ${o.id} ${id}`, 1);
    for (const id of o.revoke) {
      if (before.invitations.some((i) => i.id === id && i.organisationId === o.id && i.pending !== false)) {
        expectedOnce.set(`deleteInvitation ${o.id} ${id}`, 1);
      }
    }
    for (const id of o.remove) {
      if (before.channels.some((c) => c.id === id && c.organisationId === o.id)) expectedOnce.set(`deleteNotificationChannel ${o.id} ${id}`, 1);
    }
  }
  expect(Object.fromEntries([...effects].sort())).toEqual(Object.fromEntries([...expectedOnce].sort()));
}

import { describe, expect, it } from 'vitest';
import { findStale, matchSavedChanges } from '../../src/plan/find-stale.js';
import { desiredOrg, desiredState, freshFrom, observedOrg, observedState, planFor, problem } from '../support/plan-fixtures.js';

const HASH = 'a'.repeat(64);
const configFiles = [{ path: 'orgs.yaml', sha256: HASH }];

/** A plan that changes acme's billing e-mail, revokes an invitation of globex, and makes acme active. */
function scenario(parts: { acme?: Parameters<typeof observedOrg>[0]; activeId?: string | null; withActive?: boolean } = {}) {
  const desired = desiredState({
    organisations: [desiredOrg({ slug: 'acme', billing: { billingEmail: 'new@acme.test' } }), desiredOrg({ slug: 'globex', revoke: ['inv_2'] })],
    ...(parts.withActive === false ? {} : { activeOrganisation: 'acme' }),
  });
  const observed = (over: { acme?: Parameters<typeof observedOrg>[0]; activeId?: string | null; dropAcme?: boolean; problems?: ReturnType<typeof problem>[] } = {}) =>
    observedState({
      organisations: [
        ...(over.dropAcme ? [] : [observedOrg(over.acme ?? { slug: 'acme', billing: { billingEmail: 'old@acme.test', customerID: 'cus_1' } })]),
        observedOrg({ slug: 'globex' }),
      ],
      activeId: over.activeId === undefined ? 'org_globex' : over.activeId,
      problems: over.problems ?? [],
    });
  const plan = planFor(desired, observed());
  return { plan, observed };
}

describe('findStale', () => {
  it('finds nothing when the service holds what the plan was based on', () => {
    const { plan, observed } = scenario();
    expect(findStale(plan, configFiles, freshFrom(observed()))).toEqual([]);
  });

  it('ignores a billing field the configuration does not declare: apply writes it as it reads it then', () => {
    const { plan, observed } = scenario();
    const now = observed({ acme: { slug: 'acme', billing: { billingEmail: 'old@acme.test', customerID: 'cus_2' } } });
    expect(findStale(plan, configFiles, freshFrom(now))).toEqual([]);
  });

  it('names organisations.acme.billing.billingEmail when the declared e-mail changed, including to absent', () => {
    const { plan, observed } = scenario();
    const changed = observed({ acme: { slug: 'acme', billing: { billingEmail: 'someone@acme.test', customerID: 'cus_1' } } });
    expect(findStale(plan, configFiles, freshFrom(changed))).toEqual([
      'organisations.acme.billing.billingEmail changed from "old@acme.test" to "someone@acme.test"',
    ]);
    const gone = observed({ acme: { slug: 'acme', billing: null } });
    expect(findStale(plan, configFiles, freshFrom(gone))).toEqual(['organisations.acme.billing.billingEmail changed from "old@acme.test" to (none)']);
  });

  it('notices that membership changed', () => {
    const { plan, observed } = scenario();
    const now = observed({ acme: { slug: 'acme', member: false, billing: { billingEmail: 'old@acme.test', customerID: 'cus_1' } } });
    expect(findStale(plan, configFiles, freshFrom(now))).toEqual(['organisations.acme: membership changed (member → not a member)']);
  });

  it('notices that the id behind a slug changed', () => {
    const { plan, observed } = scenario();
    const now = observed({ acme: { slug: 'acme', id: 'org_new', billing: { billingEmail: 'old@acme.test', customerID: 'cus_1' } } });
    expect(findStale(plan, configFiles, freshFrom(now))).toEqual(['organisations.acme: id changed from "org_acme" to "org_new"']);
  });

  it('says why an organisation the plan changes cannot be read now', () => {
    const { plan, observed } = scenario();
    const withProblem = observed({ dropAcme: true, problems: [problem('acme', 'orgs.yaml:2:3: forbidden')] });
    expect(findStale(plan, configFiles, freshFrom(withProblem))).toEqual(['organisations.acme: orgs.yaml:2:3: forbidden']);
    const silent = observed({ dropAcme: true });
    expect(findStale(plan, configFiles, freshFrom(silent))).toEqual(['organisations.acme: it cannot be read now']);
  });

  it('notices that another organisation became active when the plan sets the active organisation', () => {
    const { plan, observed } = scenario();
    expect(plan.changes.some((c) => c.kind === 'set-active')).toBe(true);
    expect(findStale(plan, configFiles, freshFrom(observed({ activeId: 'org_other' })))).toEqual([
      'activeOrganisation: the active organisation changed from "org_globex" to "org_other"',
    ]);
  });

  it('ignores the active organisation when the plan does not set it', () => {
    const { plan, observed } = scenario({ withActive: false });
    expect(plan.changes.some((c) => c.kind === 'set-active')).toBe(false);
    expect(findStale(plan, configFiles, freshFrom(observed({ activeId: 'org_other' })))).toEqual([]);
  });

  it('notices that a config file changed or cannot be read now', () => {
    const { plan, observed } = scenario();
    expect(findStale(plan, configFiles, freshFrom(observed(), { fileHashes: { 'orgs.yaml': 'b'.repeat(64) } }))).toEqual([
      'config file orgs.yaml changed since the plan',
    ]);
    expect(findStale(plan, configFiles, freshFrom(observed(), { fileHashes: { 'orgs.yaml': null } }))).toEqual(['config file orgs.yaml cannot be read now']);
    expect(findStale(plan, configFiles, freshFrom(observed(), { fileHashes: {} }))).toEqual(['config file orgs.yaml cannot be read now']);
  });

  it('refuses a plan made for another service, and says only that', () => {
    const { plan, observed } = scenario();
    expect(findStale(plan, configFiles, freshFrom(observed({ activeId: 'org_other' }), { baseUrl: 'https://other.example.test' }))).toEqual([
      'the plan was made for https://orgs.example.test, not https://other.example.test',
    ]);
  });

  it('ignores changes to organisations the plan does not change', () => {
    const desired = desiredState({ organisations: [desiredOrg({ slug: 'acme', revoke: ['inv_1'] }), desiredOrg({ slug: 'initech' })] });
    const before = observedState({ organisations: [observedOrg({ slug: 'acme' }), observedOrg({ slug: 'initech', billing: { billingEmail: 'a@initech.test' } })] });
    const plan = planFor(desired, before);
    expect(plan.unchanged).toEqual(['initech']);
    const after = observedState({ organisations: [observedOrg({ slug: 'acme' }), observedOrg({ slug: 'initech', member: false, billing: { billingEmail: 'b@initech.test' } })] });
    expect(findStale(plan, configFiles, freshFrom(after))).toEqual([]);
  });
});

describe('matchSavedChanges', () => {
  const desired = desiredState({
    organisations: [
      desiredOrg({ slug: 'acme', billing: { billingEmail: 'new@acme.test' }, revoke: ['inv_2'] }),
      desiredOrg({ slug: 'globex', billing: { billingEmail: 'new@globex.test' } }),
    ],
  });
  const observed = observedState({
    organisations: [observedOrg({ slug: 'acme', billing: { billingEmail: 'old@acme.test', customerID: 'cus_a' } }), observedOrg({ slug: 'globex', billing: { billingEmail: 'new@globex.test', customerID: 'cus_g' } })],
  });
  const derived = () => planFor(desired, observed).changes;
  const nothingJournaled = () => false;

  it('takes the derived changes when the saved plan holds exactly those', () => {
    const match = matchSavedChanges(derived(), derived(), nothingJournaled);
    expect(match).toEqual({ changes: derived(), notDerived: [], missing: [] });
  });

  it('names a saved change sent to another organisation than its desired state gives', () => {
    const saved = derived();
    saved[0] = { ...saved[0]!, organisation: { slug: 'acme', id: 'org_globex' } };
    expect(matchSavedChanges(saved, derived(), nothingJournaled).notDerived).toEqual(['organisations.acme.billing']);
  });

  it('names a saved change with other declared values, or other values seen, or an address the derivation does not give', () => {
    const base = derived();
    const edits = [
      { ...base[0]!, declared: { billingEmail: 'thief@evil.test' } },
      { ...base[0]!, seen: { billingEmail: 'other@acme.test' } },
      { ...base[1]!, address: 'organisations.globex.invitations.revoke.inv_2', organisation: { slug: 'globex', id: 'org_globex' } },
    ];
    for (const edit of edits) expect(matchSavedChanges([edit], base, () => true).notDerived).toEqual([edit.address]);
    expect(matchSavedChanges([base[0]!, base[0]!], base, () => true).notDerived).toEqual(['organisations.acme.billing']);
  });

  it('says a derived change the saved plan lacks is missing, unless the journal records it done, now or when the plan was made', () => {
    const [billing, revoke] = derived();
    expect(matchSavedChanges([billing!], derived(), nothingJournaled).missing).toEqual(['organisations.acme.invitations.revoke.inv_2: the plan does not hold this change, which its desired state and the service now give']);
    expect(matchSavedChanges([billing!], derived(), (c) => c.kind === 'revoke-invitation').missing).toEqual([]);
    expect(matchSavedChanges([billing!], derived(), nothingJournaled, ['organisations.acme.invitations.revoke.inv_2']).missing).toEqual([]);
    expect(matchSavedChanges([revoke!], derived(), nothingJournaled).missing).toEqual(['organisations.acme.billing: the plan does not hold this change, which its desired state and the service now give']);
  });

  it('takes no unsigned plan’s word that a change was journaled, and says that this is why the change it lacks is missing', () => {
    const [billing] = derived();
    const listed = ['organisations.acme.invitations.revoke.inv_2'];
    expect(matchSavedChanges([billing!], derived(), nothingJournaled, listed, { signed: true }).missing).toEqual([]);
    expect(matchSavedChanges([billing!], derived(), nothingJournaled, listed, { signed: false }).missing).toEqual([
      'organisations.acme.invitations.revoke.inv_2: the plan lists this change as done by the journal when it was made, but the journal does not record it now, and an unsigned plan’s list is not taken (ORGFORM_PLAN_KEY signs plans): planned again, it is applied, or found already done',
    ]);
    expect(matchSavedChanges([billing!], derived(), (c) => c.kind === 'revoke-invitation', listed, { signed: false }).missing).toEqual([]);
  });
});

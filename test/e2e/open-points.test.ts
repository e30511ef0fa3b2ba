/**
 * Issue cases against the answers the interface leaves open, each played by the emulator point
 * that names it, end to end over loopback: never write from what was not read.
 */
import { describe, expect, it } from 'vitest';
import type { Behaviour } from '../../src/emulator/behaviour.js';
import type { Emulator, EmulatorOptions } from '../../src/emulator/server.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { runCli } from '../support/run-cli.js';

let emulator: Emulator;

async function setup(config: string, behaviour: Partial<Behaviour>, options: EmulatorOptions = {}) {
  const world = await setupEmulatorWorkspace({ 'orgs.yaml': config }, { behaviour, ...options });
  emulator = world.emulator;
  return world;
}

const billingOf = (id: string) => emulator.store.dump().organisations.find((o) => o.id === id)?.billing;
const memberships = () => emulator.store.dump().users.find((u) => u.token === 'demo-token')?.memberships ?? [];
const putBodies = () => emulator.requestLog.filter((r) => r.operation === 'updateBillingDetails');

const JOIN_AND_BILL = `version: 1
organisations:
  globex:
    id: org_globex
    invitations:
      accept: [inv_globex_ada]
    billing:
      billingEmail: new@globex.example
`;

describe('onboarding never clears billing', () => {
  it.each<[string, Partial<Behaviour>]>([
    ['a service whose billing PUT replaces', { 'billing-put': 'replace' }],
    ['replace, and GetOrganisation that answers non-members', { 'billing-put': 'replace', 'non-member-reads': 'readable' }],
    ['replace, and a membership that shows only after two reads', { 'billing-put': 'replace', 'membership-lag': 2 }],
  ])('accepts and sets the e-mail in one apply against %s, keeping the other fields, then plans nothing', async (_, behaviour) => {
    const { cwd, env } = await setup(JOIN_AND_BILL, behaviour);
    const plan = await runCli(['plan'], { cwd, env });
    expect(plan.stdout).toContain('billingEmail: (known after accept) → "new@globex.example"');

    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(memberships()).toContain('org_globex');
    expect(billingOf('org_globex')).toMatchObject({
      billingEmail: 'new@globex.example',
      customerId: 'cus_globex',
      platformId: 'plat_globex',
      subscriptionId: expect.any(String),
    });

    const again = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(again.stdout).toContain('No changes.');
    expect(again.code).toBe(0);
  });

  it('writes nothing when the billing read after the accept already holds the declared values', async () => {
    const { cwd, env } = await setup(JOIN_AND_BILL.replace('new@globex.example', 'billing@globex.example'), { 'billing-put': 'replace' });
    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/1 applied, 1 already done/);
    expect(putBodies()).toHaveLength(0);
  });

  it('fails the billing change, naming the organisation, and writes nothing when the organisation cannot be read after the accept', async () => {
    // The membership never shows within the re-reads: every read after the accept answers 404.
    const { cwd, env } = await setup(JOIN_AND_BILL, { 'billing-put': 'replace', 'membership-lag': 100 });
    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('the billing of organisation "globex" (org_globex) must be read before it is written');
    expect(result.stdout).toContain('Nothing was written');
    expect(putBodies()).toHaveLength(0);
    expect(billingOf('org_globex')?.customerId).toBe('cus_globex');
  });
});

const BILL_ACME = `version: 1
organisations:
  acme:
    billing:
      billingEmail: new@acme.example
`;

describe('billing that the listing does not show as the service holds it', () => {
  it.each<[string, Partial<Behaviour>]>([
    ['a listing without billing', { 'billing-put': 'replace', 'listing-billing': 'omitted' }],
    ['reads spelled like the update (customerID)', { 'billing-put': 'replace', 'read-spelling': 'update' }],
    ['both at once, with unknown extra fields', { 'billing-put': 'replace', 'listing-billing': 'omitted', 'read-spelling': 'update', 'extra-fields': 'on' }],
  ])('is read before it is written, so a replace keeps the other fields: %s', async (_, behaviour) => {
    const { cwd, env } = await setup(BILL_ACME, behaviour);
    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(result.code).toBe(0);
    expect(billingOf('org_acme')).toMatchObject({ billingEmail: 'new@acme.example', customerId: 'cus_acme', platformId: 'plat_acme' });
    const again = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(again.stdout).toContain('No changes.');
    expect(again.code).toBe(0);
  });

  it('is a problem for that organisation only when a value comes back as a number, and nothing is written', async () => {
    const { cwd, env } = await setup(BILL_ACME + '  initech:\n    billing:\n      billingEmail: new@initech.example\n', { 'billing-put': 'replace' });
    emulator.store.putOrganisation({ ...emulator.store.organisations.get('org_acme')!, billing: { customerId: 42 as unknown as string, billingEmail: 'old@acme.example' } });
    const plan = await runCli(['plan'], { cwd, env });
    expect(plan.code).toBe(1);
    expect(plan.stdout + plan.stderr).toContain('billing.customerId came back as a number');
    expect(plan.stdout).toContain('organisations.initech.billing');
    // apply refuses an incomplete plan whole; --target applies the rest.
    const apply = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(apply.code).toBe(1);
    expect(putBodies()).toHaveLength(0);
    const rest = await runCli(['apply', '--auto-approve', '--target', 'initech'], { cwd, env });
    expect(rest.code).toBe(0);
    expect(billingOf('org_acme')).toEqual({ customerId: 42, billingEmail: 'old@acme.example' });
    expect(billingOf('org_initech')?.billingEmail).toBe('new@initech.example');
  });

  it('reads billing: null on an organisation the file does not declare as absent, and plans the others', async () => {
    const { cwd, env } = await setup(BILL_ACME, {});
    emulator.store.putOrganisation({ ...emulator.store.organisations.get('org_umbrella')!, billing: null as never });
    const plan = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(2);
    const exported = await runCli(['export'], { cwd, env });
    expect(exported.code).toBe(0);
    expect(exported.stdout).toContain('  umbrella:');
  });
});

describe('membership comes from the listing', () => {
  it('accepts the invitation of an organisation that non-members can read', async () => {
    const { cwd, env } = await setup(JOIN_AND_BILL, { 'non-member-reads': 'readable' });
    const plan = await runCli(['plan'], { cwd, env });
    expect(plan.stdout).toContain('organisations.globex.invitations.accept.inv_globex_ada');
    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(result.code).toBe(0);
    expect(memberships()).toContain('org_globex');
  });
});

const REMOVE_CHANNEL = `version: 1
organisations:
  acme:
    notificationChannels:
      remove: [chn_acme_slack]
`;

describe('deleting what may be gone', () => {
  it('never counts an HTML 404 from a gateway as gone: the channel stays, the change fails, nothing is journaled', async () => {
    const { cwd, env } = await setup(REMOVE_CHANNEL, { 'gateway-404': 'v2' });
    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('a 404 without the service');
    expect(emulator.store.channels.has('chn_acme_slack')).toBe(true);
    const again = await runCli(['plan'], { cwd, env });
    expect(again.stdout).toContain('organisations.acme.notificationChannels.remove.chn_acme_slack');
  });

  it('gets through a gateway that answers an HTML 404 once per path', async () => {
    const { cwd, env } = await setup(REMOVE_CHANNEL, { 'gateway-404': 'v2-once' });
    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(result.code).toBe(0);
    expect(emulator.store.channels.has('chn_acme_slack')).toBe(false);
  });

  it('counts 410 Gone as done, so a delete whose first answer was lost converges', async () => {
    const { cwd, env } = await setup(REMOVE_CHANNEL, { 'gone-channel': 'gone' });
    emulator.faults.add({ operation: 'deleteNotificationChannel', fault: { kind: 'lost-response' } });
    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/1 already done/);
    expect(emulator.requestLog.filter((r) => r.operation === 'deleteNotificationChannel').map((r) => r.status)).toEqual(['lost', 410]);
  });

  it('takes a text 2xx from DeleteInvitation as done', async () => {
    const { cwd, env } = await setup('version: 1\norganisations:\n  acme:\n    invitations:\n      revoke: [inv_acme_carol]\n', { 'success-body': 'text-200' });
    const result = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/1 applied/);
    expect(emulator.store.invitations.has('inv_acme_carol')).toBe(false);
  });
});

describe('configuration that would clear a field', () => {
  it('refuses a billing value from an environment variable that is set but empty, before any request', async () => {
    const { cwd, env } = await setup('version: 1\norganisations:\n  acme:\n    billing:\n      customerID: ${ORGFORM_VAR_ACME_CUSTOMER_ID}\n', {});
    const result = await runCli(['apply', '--auto-approve'], { cwd, env: { ...env, ORGFORM_VAR_ACME_CUSTOMER_ID: '' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('orgs.yaml:5:19: billing.customerID: environment variable ORGFORM_VAR_ACME_CUSTOMER_ID is set but empty');
    expect(emulator.counters.total).toBe(0);
  });
});

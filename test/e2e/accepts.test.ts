/**
 * Accepting invitations end to end against the emulator over loopback HTTP, under every profile of
 * the matrix: membership decides an accept in plan and apply alike (never the journal), the accepts
 * of one organisation are alternatives, and what needs the membership waits for it, not for one
 * invitation (issue 25, defects 2 and 3).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { ProfileName } from '../../src/emulator/behaviour.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { MATRIX_PROFILES } from '../support/profiles.js';
import { runCli } from '../support/run-cli.js';

let profile: ProfileName;

/** Every change's outcome from apply's NDJSON, by address. */
function outcomes(stdout: string): Record<string, string> {
  const events = stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; address?: string; outcome?: string });
  return Object.fromEntries(events.filter((e) => e.type === 'change_end').map((e) => [e.address, e.outcome]));
}

describe.each(MATRIX_PROFILES)('accepting invitations (%s)', (name) => {
  beforeEach(() => {
    profile = name;
  });

  it('accepts again an invitation accepted earlier that is pending again, and billing and the active organisation follow; the next plan is empty', async () => {
    const config = `version: 1
activeOrganisation: globex
organisations:
  globex:
    id: org_globex
    invitations:
      accept: [inv_globex_ada]
    billing:
      billingEmail: ada@globex.example
`;
    const { emulator, cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': config }, { profile });
    const first = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(first.code).toBe(0);

    // The environment is restored: the membership is gone and the invitation pending again.
    const reopened = await fetch(`${emulator.url}/__emulator/invitations/reopen`, { method: 'POST', body: JSON.stringify({ invitation: 'inv_globex_ada' }) });
    expect(reopened.status).toBe(200);
    const plan = await runCli(['plan', '--format', 'json'], { cwd, env });
    expect(JSON.parse(plan.stdout).changes.map((c: { address: string }) => c.address)).toEqual([
      'organisations.globex.invitations.accept.inv_globex_ada',
      'organisations.globex.billing',
      'activeOrganisation',
    ]);

    const again = await runCli(['apply', '--auto-approve', '--format', 'json'], { cwd, env });
    expect(outcomes(again.stdout)).toEqual({
      'organisations.globex.invitations.accept.inv_globex_ada': 'applied',
      // Already holds the declared e-mail: read after the join and found equal.
      'organisations.globex.billing': 'already_done',
      activeOrganisation: 'applied',
    });
    expect(again.code).toBe(0);
    const ada = emulator.store.dump().users.find((u) => u.token === 'demo-token');
    expect(ada?.memberships).toContain('org_globex');
    expect(ada?.active).toBe('org_globex');
    const after = await runCli(['plan', '--detailed-exitcode'], { cwd, env });
    expect(after.stdout).toContain('No changes.');
    expect(after.code).toBe(0);
  });

  it('tries each accept of an organisation on its own: one sent to another address fails and is reported, the next makes the membership, billing follows', async () => {
    const config = `version: 1
organisations:
  globex:
    id: org_globex
    invitations:
      accept: [inv_a_stale, inv_b_good]
    billing:
      billingEmail: ada@globex.example
`;
    const { emulator, cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': config }, { profile });
    emulator.store.putInvitation({ id: 'inv_a_stale', organisationId: 'org_globex', email: 'ada@old-employer.example' });
    emulator.store.putInvitation({ id: 'inv_b_good', organisationId: 'org_globex', email: 'ada@acme.example' });

    const result = await runCli(['apply', '--auto-approve', '--format', 'json'], { cwd, env });
    expect(outcomes(result.stdout)).toEqual({
      'organisations.globex.invitations.accept.inv_a_stale': 'failed',
      'organisations.globex.invitations.accept.inv_b_good': 'applied',
      'organisations.globex.billing': 'applied',
    });
    expect(result.stdout).toContain('invitation_email_mismatch');
    expect(result.code).toBe(1);
    expect(emulator.store.dump().organisations.find((o) => o.id === 'org_globex')?.billing?.billingEmail).toBe('ada@globex.example');
    // Converged: membership decides the accepts, so the stale invitation is not planned again.
    const again = await runCli(['apply', '--auto-approve'], { cwd, env });
    expect(again.stdout).toContain('No changes.');
    expect(again.code).toBe(0);
  });

  it('once one accept made you a member, leaves the organisation’s other invitations pending and reports them already done', async () => {
    const config = `version: 1
organisations:
  globex:
    id: org_globex
    invitations:
      accept: [inv_globex_ada, inv_globex_ada_2]
`;
    const { emulator, cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': config }, { profile });
    emulator.store.putInvitation({ id: 'inv_globex_ada_2', organisationId: 'org_globex', email: 'ada@acme.example' });
    const result = await runCli(['apply', '--auto-approve', '--format', 'json'], { cwd, env });
    expect(outcomes(result.stdout)).toEqual({
      'organisations.globex.invitations.accept.inv_globex_ada': 'applied',
      'organisations.globex.invitations.accept.inv_globex_ada_2': 'already_done',
    });
    expect(result.code).toBe(0);
    expect(emulator.counters.byOperation.acceptInvitation).toBe(1);
    expect(emulator.store.dump().invitations).toContainEqual({ id: 'inv_globex_ada_2', organisationId: 'org_globex', email: 'ada@acme.example' });
  });

  it('skips billing and the active organisation when every accept failed, naming each failed accept', async () => {
    const config = `version: 1
activeOrganisation: globex
organisations:
  globex:
    id: org_globex
    invitations:
      accept: [inv_a_stale, inv_missing]
    billing:
      billingEmail: ada@globex.example
`;
    const { emulator, cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': config }, { profile });
    emulator.store.putInvitation({ id: 'inv_a_stale', organisationId: 'org_globex', email: 'ada@old-employer.example' });
    const result = await runCli(['apply', '--auto-approve', '--format', 'json'], { cwd, env });
    expect(outcomes(result.stdout)).toEqual({
      'organisations.globex.invitations.accept.inv_a_stale': 'failed',
      'organisations.globex.invitations.accept.inv_missing': 'failed',
      'organisations.globex.billing': 'skipped',
      activeOrganisation: 'skipped',
    });
    const billing = result.stdout.trim().split('\n').map((l) => JSON.parse(l)).find((e) => e.type === 'change_end' && e.address === 'organisations.globex.billing');
    expect(billing.reason).toBe(
      'depends on membership of the organisation, which no accept gave (organisations.globex.invitations.accept.inv_a_stale, organisations.globex.invitations.accept.inv_missing failed)',
    );
    expect(emulator.counters.byOperation.updateBillingDetails).toBe(0);
    expect(emulator.counters.byOperation.setActiveOrganisation).toBe(0);
  });
});

describe('an interrupt while apply waits for a new membership to show', () => {
  it('ends the wait at once, and says whether the invitation was accepted is not known rather than that it was not', async () => {
    const { emulator, cwd, env } = await setupEmulatorWorkspace(
      { 'orgs.yaml': 'version: 1\norganisations:\n  wonka:\n    id: org_wonka\n    invitations:\n      accept: [inv_wonka_ada]\n' },
      { behaviour: { 'membership-lag': 4 } },
    );
    // The accept is applied and its answer lost; the membership then takes four reads to show.
    emulator.faults.add({ operation: 'acceptInvitation', fault: { kind: 'lost-response' } });
    const controller = new AbortController();
    let interruptedAt: number | undefined;
    const store = emulator.store as unknown as Record<string, (...args: unknown[]) => unknown>;
    const list = store.listOrganisations!.bind(emulator.store);
    store.listOrganisations = (...args: unknown[]) => {
      // The first membership check after the accept: Ctrl+C while it is answered, before the next wait.
      if (interruptedAt === undefined && emulator.requestLog.some((r) => r.operation === 'acceptInvitation')) {
        interruptedAt = Date.now();
        controller.abort(new Error('SIGINT'));
      }
      return list(...args);
    };
    // Waits of 1, 2, 4 and 8 s between the membership checks.
    const result = await runCli(['apply', '--auto-approve'], { cwd, env: { ...env, ORGFORM_RETRY_BASE_MS: '1000' }, signal: controller.signal });
    const endedAfterMs = Date.now() - interruptedAt!;
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('whether the invitation was accepted is not known');
    expect(result.stdout).not.toContain('so the invitation was not accepted');
    // Well within the first of the waits: none of them was slept through.
    expect(endedAfterMs).toBeLessThan(1_000);
    expect(emulator.store.dump().users.find((u) => u.token === 'demo-token')?.memberships).toContain('org_wonka');
  }, 30_000);
});

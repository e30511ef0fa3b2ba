/**
 * One membership read shared by an organisation's deletes answered 404 (executor/membership.ts),
 * end to end over loopback: a read can vouch only for a 404 answered before it was sent.
 */
import { describe, expect, it } from 'vitest';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { runCli } from '../support/run-cli.js';

const yaml = ['version: 1', 'organisations:', '  org-00001:', '    notificationChannels:', '      remove: [chn_00000, chn_00001]'].join('\n') + '\n';

describe('a delete answered 404', () => {
  it('is not taken as done from a membership read sent before you were removed from the organisation', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': yaml }, { data: generateEmulatorData({ organisations: 1 }), behaviour: { 'gateway-404': 'off' } });
    // A long read age bound: what is checked is the order of the reads, not the machine's speed.
    const run = { cwd, env: { ...env, ORGFORM_READ_MAX_AGE_MS: '60000' } };
    emulator.faults.add({ operation: 'deleteNotificationChannel', times: 2, fault: { kind: 'hold' } });
    const applying = runCli(['apply', '--auto-approve', '--parallelism', '1'], run);
    // chn_00000 is gone already (the plan sorts it first): its 404 is checked with a membership read, which says you are a member.
    await expect.poll(() => emulator.counters.inFlight, { timeout: 15_000, interval: 20 }).toBe(1);
    expect(emulator.release()).toBe(1);
    // chn_00001's removal arrives; meanwhile you are removed from the organisation.
    await expect.poll(() => emulator.counters.byOperation.deleteNotificationChannel, { timeout: 15_000, interval: 20 }).toBe(2);
    await expect.poll(() => emulator.counters.inFlight, { timeout: 15_000, interval: 20 }).toBe(1);
    const user = emulator.store.dump().users[0]!;
    emulator.store.putUser({ ...user, memberships: user.memberships.filter((id) => id !== 'org_00001') });
    const listingsBefore = emulator.counters.byOperation.getOrganisations;
    expect(emulator.release()).toBe(1);
    const apply = await applying;
    // Its 404 now means no access: only a membership read sent after it can tell, and that says no.
    expect(apply.code, apply.stdout + apply.stderr).not.toBe(0);
    expect(apply.stdout + apply.stderr).toContain('you are not a member of organisation "org_00001"');
    expect(emulator.counters.byOperation.getOrganisations - listingsBefore).toBe(1);
    expect(emulator.store.dump().channels?.some((c) => c.id === 'chn_00001')).toBe(true);
    // Nothing recorded done that was not: the next plan still shows the removal.
    emulator.store.putUser(user);
    const plan = await runCli(['plan'], run);
    expect(plan.stdout).toContain('chn_00001');
  });
});

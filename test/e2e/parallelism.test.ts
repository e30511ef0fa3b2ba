/**
 * --parallelism end to end over loopback: one meaning, the requests in flight at once, reads and
 * writes together, counted where they arrive (the emulator's maxInFlight).
 */
import { describe, expect, it } from 'vitest';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { runCli } from '../support/run-cli.js';

const n = (i: number) => String(i).padStart(5, '0');

/** Organisations 1..count with a new billing e-mail each, by id or by slug, and a channel to remove. */
function config(count: number, options: { byId: boolean; channels: boolean }): string {
  const lines = ['version: 1', 'organisations:'];
  for (let i = 1; i <= count; i += 1) {
    lines.push(`  org-${n(i)}:`);
    if (options.byId) lines.push(`    id: org_${n(i)}`);
    lines.push('    billing:', `      billingEmail: new+${n(i)}@example.com`);
    if (options.channels) lines.push('    notificationChannels:', `      remove: [chn_${n(i)}]`);
  }
  return lines.join('\n') + '\n';
}

describe('--parallelism', () => {
  it('bounds the requests in flight across a plan and an apply, reads and writes together', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace(
      { 'orgs.yaml': config(12, { byId: true, channels: true }) },
      { data: generateEmulatorData({ organisations: 12 }), latencyMs: 40 },
    );
    const plan = await runCli(['plan', '--parallelism', '3'], { cwd, env });
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(0);
    const apply = await runCli(['apply', '--auto-approve', '--parallelism', '3'], { cwd, env });
    expect(apply.stderr).toBe('');
    expect(apply.stdout).toMatch(/Apply complete: 24 applied/);
    // Membership from the listing filtered by each slug (plan, and apply's own plan); each billing
    // read again by id just before its write; a billing write and a channel removal per organisation.
    expect(emulator.counters.byOperation.getOrganisations).toBe(24);
    expect(emulator.counters.byOperation.getOrganisation).toBe(12);
    expect(emulator.counters.writes).toBe(24);
    expect(emulator.counters.maxInFlight).toBe(3);
  });

  it('runs the channel removals of one organisation as many at once as it allows, and shares the membership reads of those already gone', async () => {
    const gone = Array.from({ length: 40 }, (_, i) => `chn_gone_${i}`);
    const yaml = ['version: 1', 'organisations:', '  org-00001:', '    notificationChannels:', `      remove: [${gone.join(', ')}]`].join('\n') + '\n';
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': yaml }, { data: generateEmulatorData({ organisations: 1 }), behaviour: { 'gateway-404': 'off' } });
    // The first eight removals are held where they arrive: all eight of one organisation at once.
    emulator.faults.add({ operation: 'deleteNotificationChannel', times: 8, fault: { kind: 'hold' } });
    const applying = runCli(['apply', '--auto-approve', '--parallelism', '8'], { cwd, env });
    await expect.poll(() => emulator.counters.inFlight, { timeout: 15_000, interval: 20 }).toBe(8);
    expect(emulator.counters.byOperation.deleteNotificationChannel).toBe(8);
    const listingsBefore = emulator.counters.byOperation.getOrganisations;
    expect(emulator.release()).toBe(8);
    const apply = await applying;
    expect(apply.stderr).toBe('');
    expect(apply.stdout).toMatch(/40 already done/);
    expect(emulator.counters.maxInFlight).toBe(8);
    // Each removal answered 404 needs a listing filtered by the slug sent after it; one serves all
    // those answered while the one before was on its way: never one each.
    const listings = emulator.counters.byOperation.getOrganisations - listingsBefore;
    expect(listings).toBeGreaterThanOrEqual(1);
    expect(listings).toBeLessThan(40);
  });

  it('sizes the connection pool to it, so that more than 64 requests can be in flight', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace(
      { 'orgs.yaml': config(100, { byId: false, channels: false }) },
      { data: generateEmulatorData({ organisations: 100 }), latencyMs: 300 },
    );
    const apply = await runCli(['apply', '--auto-approve', '--parallelism', '80'], { cwd, env });
    expect(apply.stderr).toBe('');
    expect(apply.stdout).toMatch(/Apply complete: 100 applied/);
    expect(emulator.counters.maxInFlight).toBeGreaterThan(64);
    expect(emulator.counters.maxInFlight).toBeLessThanOrEqual(80);
  });

  it('is offered only by the commands that send requests, and says what it bounds', async () => {
    const help = async (...command: string[]) => (await runCli([...command, '--help'], { cwd: '.' })).stdout;
    for (const command of [['plan'], ['apply'], ['export'], ['slugs', 'check']]) {
      expect(await help(...command), command.join(' ')).toMatch(/--parallelism <n>\s+at most this many requests in flight at once/);
    }
    expect(await help('validate')).not.toContain('--parallelism');
    expect(await help('force-unlock')).not.toContain('--parallelism');
  });
});

/**
 * An interrupt during a read whose answer does not come: apply and slugs check stop at once, rather
 * than wait up to the request's deadline for an answer they would not use (no write follows a read
 * once interrupted). The built CLI against the emulator over loopback, the read held by a hang
 * fault until the test has seen it arrive.
 */
import { describe, expect, it } from 'vitest';
import type { OperationId } from '../../src/api/types.js';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import { waitFor } from '../reliability/support.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { watchCli } from '../support/run-cli.js';
import { CHANGING_CONFIG } from '../support/workspace.js';

/** Runs orgform with `args`, its `held` requests never answered; interrupts it once `arrived` of them have come. */
async function interruptedWhileHeld(args: string[], orgs: string | undefined, held: OperationId, arrived = 1) {
  const { cwd, env, emulator } = await setupEmulatorWorkspace(orgs === undefined ? {} : { 'orgs.yaml': orgs });
  emulator.faults.add({ operation: held, times: Infinity, fault: { kind: 'hang' } });
  const run = watchCli(args, { cwd, env });
  expect(await waitFor(() => emulator.counters.byOperation[held] === arrived)).toBe(true);
  run.kill('SIGINT');
  const result = await run.done;
  expect(result.code).toBe(1);
  return { ...result, emulator };
}

describe('SIGINT while apply waits for a read', () => {
  it('while it plans (the listing): apply is cancelled at once, nothing changed', async () => {
    const { stdout, emulator } = await interruptedWhileHeld(['apply', '--auto-approve'], CHANGING_CONFIG, 'getOrganisations');
    expect(stdout).toContain('Apply cancelled. Nothing was changed.');
    expect(emulator.counters.writes).toBe(0);
  });

  it('while it plans, the next page asked for early (before the first page was parsed) held: apply is cancelled at once', async () => {
    // Pages of 50: the first page answered, the second (asked for from the first page's text) held.
    const data = generateEmulatorData({ organisations: 120 });
    const orgs = `version: 1\norganisations:\n  ${data.organisations[1]!.slug}:\n    billing:\n      billingEmail: new@example.com\n`;
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': orgs }, { data, behaviour: { 'page-size': 'fixed-50' } });
    emulator.faults.add({ operation: 'getOrganisations', times: 1, fault: { kind: 'delay-headers', ms: 0 } });
    emulator.faults.add({ operation: 'getOrganisations', times: Infinity, fault: { kind: 'hang' } });
    const run = watchCli(['apply', '--auto-approve'], { cwd, env });
    expect(await waitFor(() => emulator.counters.byOperation.getOrganisations === 2)).toBe(true);
    run.kill('SIGINT');
    const { code, stdout } = await run.done;
    expect(code).toBe(1);
    expect(stdout).toContain('Apply cancelled. Nothing was changed.');
    expect(emulator.counters.writes).toBe(0);
  });

  it('while it plans (a read by id): the read is said to be let go, not unsent', async () => {
    // globex, declared by id to be joined, is read by id while planning.
    const { stdout } = await interruptedWhileHeld(['apply', '--auto-approve'], CHANGING_CONFIG, 'getOrganisation');
    expect(stdout).toContain('getOrganisation organisation "org_globex" was let go unanswered: interrupted');
    expect(stdout).toContain('Apply cancelled. Nothing was changed.');
  });

  it('while it applies (a billing read by id): the change is not started, the summary says so', async () => {
    // One billing change among five organisations: read by id just before its write.
    const { stdout, emulator } = await interruptedWhileHeld(['apply', '--auto-approve'], 'version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: finance@acme.example\n', 'getOrganisation');
    expect(stdout).toMatch(/^– organisations\.acme\.billing not started: its request was not sent: interrupted$/m);
    expect(stdout).toMatch(/^Apply interrupted: /m);
    expect(emulator.requestLog.filter((r) => r.method === 'PUT' && r.path.endsWith('/billing'))).toEqual([]);
  });
});

describe('SIGINT while slugs check waits for its checks', () => {
  it('stops at once, each check in flight not checked', async () => {
    const { stdout } = await interruptedWhileHeld(['slugs', 'check', 'fresh-one', 'fresh-two'], undefined, 'getSlugAvailability', 2);
    expect(stdout).toMatch(/^fresh-one +error +not checked: interrupted$/m);
    expect(stdout).toMatch(/^fresh-two +error +not checked: interrupted$/m);
  });
});

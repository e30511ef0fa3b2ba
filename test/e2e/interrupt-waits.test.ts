/**
 * An interrupt during a read whose answer does not come: apply and slugs check stop at once, rather
 * than wait up to the request's deadline for an answer they would not use (no write follows a read
 * once interrupted). The built CLI against the emulator over loopback, the read held by a hang
 * fault until the test has seen it arrive.
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../reliability/support.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { watchCli } from '../support/run-cli.js';
import { CHANGING_CONFIG } from '../support/workspace.js';

describe('SIGINT while apply waits for a read', () => {
  it('while it plans (the listing): apply is cancelled at once, nothing changed', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    emulator.faults.add({ operation: 'getOrganisations', times: Infinity, fault: { kind: 'hang' } });
    const run = watchCli(['apply', '--auto-approve'], { cwd, env });
    expect(await waitFor(() => emulator.counters.byOperation.getOrganisations === 1)).toBe(true);
    run.kill('SIGINT');
    const { code, stdout } = await run.done;
    expect(code).toBe(1);
    expect(stdout).toContain('Apply cancelled. Nothing was changed.');
    expect(emulator.counters.writes).toBe(0);
  });

  it('while it plans (a read by id): the read is said to be let go, not unsent', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    // globex, declared by id to be joined, is read by id while planning.
    emulator.faults.add({ operation: 'getOrganisation', times: Infinity, fault: { kind: 'hang' } });
    const run = watchCli(['apply', '--auto-approve'], { cwd, env });
    expect(await waitFor(() => emulator.counters.byOperation.getOrganisation === 1)).toBe(true);
    run.kill('SIGINT');
    const { code, stdout } = await run.done;
    expect(code).toBe(1);
    expect(stdout).toContain('getOrganisation organisation "org_globex" was let go unanswered: interrupted');
    expect(stdout).toContain('Apply cancelled. Nothing was changed.');
  });

  it('while it applies (a billing read by id): the change is not started, the summary says so', async () => {
    // One billing change among five organisations: read by id just before its write.
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': 'version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: finance@acme.example\n' });
    emulator.faults.add({ operation: 'getOrganisation', times: Infinity, fault: { kind: 'hang' } });
    const run = watchCli(['apply', '--auto-approve'], { cwd, env });
    expect(await waitFor(() => emulator.counters.byOperation.getOrganisation === 1)).toBe(true);
    run.kill('SIGINT');
    const { code, stdout } = await run.done;
    expect(code).toBe(1);
    expect(stdout).toMatch(/^– organisations\.acme\.billing not started: its request was not sent: interrupted$/m);
    expect(stdout).toMatch(/^Apply interrupted: /m);
    expect(emulator.requestLog.filter((r) => r.method === 'PUT' && r.path.endsWith('/billing'))).toEqual([]);
  });
});

describe('SIGINT while slugs check waits for its checks', () => {
  it('stops at once, each check in flight not checked', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace();
    emulator.faults.add({ operation: 'getSlugAvailability', times: Infinity, fault: { kind: 'hang' } });
    const run = watchCli(['slugs', 'check', 'fresh-one', 'fresh-two'], { cwd, env });
    expect(await waitFor(() => emulator.counters.byOperation.getSlugAvailability === 2)).toBe(true);
    run.kill('SIGINT');
    const { code, stdout } = await run.done;
    expect(code).toBe(1);
    expect(stdout).toMatch(/^fresh-one +error +not checked: interrupted$/m);
    expect(stdout).toMatch(/^fresh-two +error +not checked: interrupted$/m);
  });
});

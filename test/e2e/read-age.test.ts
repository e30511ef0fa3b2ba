/**
 * A read is as old as its asking (issue 31): a service that takes a listing page (or an
 * organisation read by id) when asked and answers seconds later, while a billing system renews
 * subscriptions in between. The read's age counts from when its request was sent, so a write is
 * never built from it once that is older than the bound: the organisation is read again, and no
 * renewal is written back. Against the emulator over loopback; the answers are held 2 s against a
 * bound of 1 s, so the order holds however loaded the machine (a slower machine only ages the
 * reads more).
 */
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/api/client.js';
import { runApply } from '../../src/commands/apply/flow.js';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import type { Emulator } from '../../src/emulator/server.js';
import type { FaultRule } from '../../src/emulator/faults.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { recordingApplyView } from '../support/recording-view.js';

const HELD_MS = 2_000;
const MAX_READ_AGE_MS = 1_000;

/** `n` organisations, the e-mail of the first `declared` of them changed by orgs.yaml. */
async function world(n: number, declared: number) {
  const data = generateEmulatorData({ organisations: n });
  const lines = ['version: 1', 'organisations:'];
  for (const o of data.organisations.slice(0, declared)) lines.push(`  ${o.slug}:`, '    billing:', `      billingEmail: new-${o.slug}@example.com`);
  return setupEmulatorWorkspace({ 'orgs.yaml': `${lines.join('\n')}\n` }, { data, behaviour: { 'billing-put': 'replace' } });
}

/** Apply, approved at once; `afterApproval` runs as the question is answered (faults from then on). */
function apply(cwd: string, emulator: Emulator, afterApproval: FaultRule) {
  return runApply(
    { selection: { files: [] }, parallelism: 4, autoApprove: false, backoffBaseMs: 5, maxReadAgeMs: MAX_READ_AGE_MS },
    {
      cwd,
      now: Date.now,
      signal: new AbortController().signal,
      openClient: async () => ({ client: createClient({ baseUrl: emulator.url, token: 'demo-token' }) }),
      confirmation: { ask: async () => (emulator.faults.add(afterApproval), true) },
    },
    recordingApplyView(),
  );
}

/** The renewals made while answers were held, each either kept or written back to its old ids. */
function renewalsKept(emulator: Emulator): { kept: number; reverted: string[] } {
  const reverted = emulator.store.renewals.filter((r) => emulator.store.organisations.get(r.organisation)?.billing?.subscriptionId !== r.subscriptionId).map((r) => r.organisation);
  return { kept: emulator.store.renewals.length - reverted.length, reverted };
}

describe('a read is as old as its asking', () => {
  it('writes nothing from a listing page answered after the bound, though it came just now: renewals made meanwhile are kept', async () => {
    const { cwd, emulator } = await world(40, 20);
    const outcome = await apply(cwd, emulator, { operation: 'getOrganisations', times: Infinity, fault: { kind: 'delay-headers', ms: HELD_MS, renew: true } });
    expect(outcome).toMatchObject({ kind: 'applied', summary: { applied: 20, failed: 0, stale: 0 } });
    // The listing behind the writes was read (and renewed every organisation on it), then every
    // organisation was read again by id before its write.
    expect(emulator.counters.byOperation.getOrganisations).toBeGreaterThanOrEqual(2);
    expect(emulator.counters.byOperation.getOrganisation).toBe(20);
    expect(renewalsKept(emulator)).toMatchObject({ kept: 40, reverted: [] });
    expect([...emulator.store.organisations.values()].filter((o) => o.billing?.billingEmail === `new-${o.slug}@example.com`)).toHaveLength(20);
  });

  it('writes nothing from an organisation read by id that was answered after the bound: it is read again, and the renewal is kept', async () => {
    const { cwd, emulator } = await world(5, 1);
    const outcome = await apply(cwd, emulator, { operation: 'getOrganisation', fault: { kind: 'delay-headers', ms: HELD_MS, renew: true } });
    expect(outcome).toMatchObject({ kind: 'applied', summary: { applied: 1, failed: 0 } });
    expect(emulator.counters.byOperation.getOrganisation).toBe(2);
    expect(renewalsKept(emulator)).toEqual({ kept: 1, reverted: [] });
  });
});

describe('a read by id that is always answered after the bound', () => {
  it('fails the change, saying the reads came too late, not that the write was held', async () => {
    const { cwd, emulator } = await world(5, 1);
    // Held a little past the bound: each read comes back too old, whatever the machine's load.
    const outcome = await apply(cwd, emulator, { operation: 'getOrganisation', times: Infinity, fault: { kind: 'delay-headers', ms: MAX_READ_AGE_MS + 200 } });
    expect(outcome).toMatchObject({ kind: 'applied', summary: { applied: 0, failed: 1 } });
    const [failed] = (outcome as { summary: { notApplied: Array<{ failure?: { message: string } }> } }).summary.notApplied;
    expect(failed?.failure?.message).toContain(`was read 3 times, and each time the read itself was answered more than ${MAX_READ_AGE_MS} ms after it was sent`);
    expect(failed?.failure?.message).not.toContain('held (rate limit, retries)');
    expect(emulator.counters.writes).toBe(0);
  });
});

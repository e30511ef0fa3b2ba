/**
 * A page of the listing behind the writes read again (reread-listing.ts): the groups whose listed
 * read aged before their turn (here: held behind a write the service holds) are written from one
 * new read of their page, never from the old one, and an interrupt while that page is on its way
 * writes nothing more. Against the emulator over loopback; the first write is held until the reads
 * are more than three quarters of the bound old (a lower bound: a slower machine only ages them more).
 */
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/api/client.js';
import { runApply } from '../../src/commands/apply/flow.js';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import type { Emulator } from '../../src/emulator/server.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { recordingApplyView } from '../support/recording-view.js';

const MAX_READ_AGE_MS = 4_000;
const N = 10;

async function world() {
  const data = generateEmulatorData({ organisations: N });
  const lines = ['version: 1', 'organisations:'];
  for (const o of data.organisations) lines.push(`  ${o.slug}:`, '    billing:', `      billingEmail: new-${o.slug}@example.com`);
  const { cwd, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': `${lines.join('\n')}\n` }, { data, behaviour: { 'billing-put': 'replace' } });
  return { cwd, emulator, data };
}

function apply(cwd: string, emulator: Emulator, signal: AbortSignal) {
  return runApply(
    { selection: { files: [] }, parallelism: 1, autoApprove: true, backoffBaseMs: 5, maxReadAgeMs: MAX_READ_AGE_MS },
    { cwd, now: Date.now, signal, openClient: async () => ({ client: createClient({ baseUrl: emulator.url, token: 'demo-token', signal }) }), confirmation: { ask: async () => true } },
    recordingApplyView(),
  );
}

/** Holds the first billing write until the listed reads of the groups behind it are more than three quarters of the bound old; `meanwhile` runs while it is held. */
async function holdFirstWrite(emulator: Emulator, meanwhile: () => void): Promise<void> {
  emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'hold' } });
  await expect.poll(() => emulator.counters.byOperation.updateBillingDetails ?? 0, { timeout: 15_000, interval: 20 }).toBe(1);
  const heldAt = Date.now();
  meanwhile();
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, heldAt + MAX_READ_AGE_MS * 0.8 - Date.now())));
}

describe('a page read again for the groups whose read aged before their turn', () => {
  it('writes them from the page read again, so that a renewal made while they waited is kept: one request, no read by id', async () => {
    const { cwd, emulator, data } = await world();
    const renewed = data.organisations.slice(4, 7);
    const applying = apply(cwd, emulator, new AbortController().signal);
    await holdFirstWrite(emulator, () => {
      for (const o of renewed) emulator.store.changeBilling(o.id, { subscriptionId: `sub_renewed_${o.id}` });
    });
    const listings = emulator.counters.byOperation.getOrganisations;
    expect(emulator.release()).toBe(1);
    const outcome = await applying;
    expect(outcome).toMatchObject({ kind: 'applied', summary: { applied: N, failed: 0, stale: 0 } });
    const after = new Map(emulator.store.dump().organisations.map((o) => [o.id, o.billing]));
    for (const o of renewed) expect(after.get(o.id)?.subscriptionId).toBe(`sub_renewed_${o.id}`);
    for (const o of data.organisations) expect(after.get(o.id)?.billingEmail).toBe(`new-${o.slug}@example.com`);
    expect(emulator.counters.byOperation.getOrganisations - listings).toBe(1);
    expect(emulator.counters.byOperation.getOrganisation ?? 0).toBe(0);
  }, 30_000);

  it.each([
    ['answered 410 (its cursor expired)', { kind: 'status', status: 410, body: '{"code":"gone","message":"cursor expired"}', contentType: 'application/json' }],
    ['no longer showing them (the listing moved)', { kind: 'status', status: 200, body: '{"organisations":[]}', contentType: 'application/json' }],
  ] as const)('that page %s: reads each by id rather than writing from the old read, and keeps the renewals', async (_what, fault) => {
    const { cwd, emulator, data } = await world();
    const renewed = data.organisations.slice(4, 7);
    const applying = apply(cwd, emulator, new AbortController().signal);
    await holdFirstWrite(emulator, () => {
      for (const o of renewed) emulator.store.changeBilling(o.id, { subscriptionId: `sub_renewed_${o.id}` });
      emulator.faults.add({ operation: 'getOrganisations', fault });
    });
    expect(emulator.release()).toBe(1);
    const outcome = await applying;
    expect(outcome).toMatchObject({ kind: 'applied', summary: { applied: N, failed: 0, stale: 0 } });
    const after = new Map(emulator.store.dump().organisations.map((o) => [o.id, o.billing]));
    for (const o of renewed) expect(after.get(o.id)?.subscriptionId).toBe(`sub_renewed_${o.id}`);
    expect(emulator.counters.byOperation.getOrganisation).toBe(N - 1);
  }, 30_000);

  it('that page answered after the bound, renewed in between: reads each by id (the page is as old as its request), and keeps every renewal', async () => {
    const { cwd, emulator } = await world();
    const applying = apply(cwd, emulator, new AbortController().signal);
    await holdFirstWrite(emulator, () => emulator.faults.add({ operation: 'getOrganisations', fault: { kind: 'delay-headers', ms: MAX_READ_AGE_MS + 500, renew: true } }));
    expect(emulator.release()).toBe(1);
    const outcome = await applying;
    expect(outcome).toMatchObject({ kind: 'applied', summary: { applied: N, failed: 0, stale: 0 } });
    const { renewals } = emulator.store;
    expect(renewals.length).toBe(N);
    expect(renewals.filter((r) => emulator.store.organisations.get(r.organisation)?.billing?.subscriptionId !== r.subscriptionId)).toEqual([]);
    expect(emulator.counters.byOperation.getOrganisation).toBe(N - 1);
  }, 30_000);

  it('interrupted while that page is on its way, writes nothing more, and says the rest did not start', async () => {
    const { cwd, emulator } = await world();
    const interrupt = new AbortController();
    const applying = apply(cwd, emulator, interrupt.signal);
    await holdFirstWrite(emulator, () => emulator.faults.add({ operation: 'getOrganisations', fault: { kind: 'hold' } }));
    const listings = emulator.counters.byOperation.getOrganisations;
    expect(emulator.release()).toBe(1);
    await expect.poll(() => emulator.counters.byOperation.getOrganisations, { timeout: 15_000, interval: 20 }).toBe(listings + 1);
    interrupt.abort();
    expect(emulator.release()).toBe(1);
    const outcome = await applying;
    expect(outcome).toMatchObject({ kind: 'applied', summary: { applied: 1 } });
    expect(emulator.counters.byOperation.updateBillingDetails).toBe(1);
    expect(emulator.counters.byOperation.getOrganisation ?? 0).toBe(0);
  }, 30_000);
});

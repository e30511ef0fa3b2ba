/**
 * The listing apply reads again behind its writes, on a service whose pages are offsets: someone
 * adds an organisation ahead of the place the listing has reached, and each later page starts with
 * the last one of the page before it. Apply looks its organisations up in that listing; it needs
 * neither the whole listing nor each organisation once, so the one listed again is let go rather
 * than failing every change not reached yet. Against the emulator over loopback, its store's pages
 * shifted as the real service's would be.
 */
import { expect, it } from 'vitest';
import { createClient } from '../../src/api/client.js';
import { runApply } from '../../src/commands/apply/flow.js';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import type { Emulator } from '../../src/emulator/server.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { recordingApplyView } from '../support/recording-view.js';

type Page = { ok: boolean; value?: { organisations: Array<{ id: string }> } };

/** The listings from the `from`th on: each page after it starts with the last organisation of the page before (an offset shifted by one); `before` runs as the `from`th is answered. */
function shiftPages(emulator: Emulator, from: number, before: () => void): void {
  const store = emulator.store as unknown as Record<string, (...args: unknown[]) => Page>;
  const original = store.listOrganisations!.bind(emulator.store);
  let calls = 0;
  let last: { id: string } | undefined;
  store.listOrganisations = (...args: unknown[]) => {
    calls += 1;
    if (calls === from) before();
    const result = original(...args);
    if (calls < from || !result.ok) return result;
    const organisations = result.value!.organisations;
    const shifted = calls === from ? organisations : [last!, ...organisations];
    last = organisations.at(-1);
    return { ...result, value: { ...result.value!, organisations: shifted } };
  };
}

it('lets an organisation listed again by a listing that shifted go, applies every change, and keeps the renewals made meanwhile', async () => {
  const data = generateEmulatorData({ organisations: 130 });
  const lines = ['version: 1', 'organisations:'];
  for (const o of data.organisations) lines.push(`  ${o.slug}:`, '    billing:', `      billingEmail: new-${o.slug}@example.com`);
  const { cwd, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': `${lines.join('\n')}\n` }, { data, behaviour: { 'billing-put': 'replace', 'page-size': 'fixed-50' } });
  const renewed = data.organisations.filter((_, i) => i % 10 === 3);
  // The plan reads pages 1-3 whole; apply's listing starts at the 4th. Renewed before apply reads
  // anything again, so that a write from any older read would revert one.
  shiftPages(emulator, 4, () => {
    for (const o of renewed) emulator.store.changeBilling(o.id, { subscriptionId: `sub_renewed_${o.id}` });
  });
  const outcome = await runApply(
    { selection: { files: [] }, parallelism: 4, autoApprove: true, backoffBaseMs: 5 },
    { cwd, now: Date.now, signal: new AbortController().signal, openClient: async () => ({ client: createClient({ baseUrl: emulator.url, token: 'demo-token' }) }), confirmation: { ask: async () => true } },
    recordingApplyView(),
  );
  expect(outcome).toMatchObject({ kind: 'applied', summary: { applied: 130, failed: 0, stale: 0 } });
  const after = new Map(emulator.store.dump().organisations.map((o) => [o.id, o.billing]));
  for (const o of data.organisations) expect(after.get(o.id)?.billingEmail).toBe(`new-${o.slug}@example.com`);
  for (const o of renewed) expect(after.get(o.id)?.subscriptionId).toBe(`sub_renewed_${o.id}`);
});

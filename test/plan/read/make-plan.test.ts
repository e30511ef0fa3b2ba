import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DesiredState } from '../../../src/model/desired-state.js';
import { makePlan } from '../../../src/plan/read/make-plan.js';
import { computePlan } from '../../../src/plan/compute-plan.js';
import { readObservedState } from '../../../src/plan/read/read-observed-state.js';
import { memoryJournal } from '../../support/file-state.js';
import { journalKey } from '../../../src/model/journal-key.js';
import { BASE_URL, createScriptedClient, type WorldOrganisation } from '../../support/scripted-client.js';
import { makeWorkspace } from '../../support/workspace.js';

const NONE = { invitations: { accept: [], revoke: [] }, notificationChannels: { remove: [] } };
const source = { file: 'orgs.yaml', line: 1, col: 1 };

const world: WorldOrganisation[] = [
  { id: 'org_active', slug: 'active-now', member: true, billing: { billingEmail: 'a@x.test' } },
  { id: 'org_same', slug: 'same', member: true, billing: { billingEmail: 'same@x.test' } },
  { id: 'org_moved', slug: 'moved', member: true, billing: { billingEmail: 'old@x.test' } },
  { id: 'org_target', slug: 'target', member: true, billing: { billingEmail: 't@x.test' } },
  { id: 'org_done', slug: 'done', member: true, billing: { billingEmail: 'd@x.test' } },
];

const desired: DesiredState = {
  version: 1,
  activeOrganisation: { slug: 'target', source },
  organisations: [
    { slug: 'done', ...NONE, invitations: { accept: [], revoke: ['inv_1'] }, source },
    { slug: 'moved', billing: { billingEmail: 'new@x.test' }, ...NONE, source },
    { slug: 'same', billing: { billingEmail: 'same@x.test' }, ...NONE, source },
    { slug: 'target', billing: { billingEmail: 't@x.test' }, ...NONE, source },
    { slug: 'untouched', ...NONE, source },
  ],
  files: [{ path: 'orgs.yaml', sha256: '0' }],
};

const listed = [...world, { id: 'org_untouched', slug: 'untouched', member: true }];

async function plan(options: { saving?: boolean } = {}) {
  const journal = memoryJournal();
  await journal.record(BASE_URL, journalKey('revoke-invitation', 'org_done', 'inv_1'), { kind: 'revoke-invitation', organisation: 'done', outcome: 'applied', at: '2026-01-01T00:00:00Z' });
  const client = createScriptedClient(listed, { active: 'org_active' });
  return (await makePlan(desired, { client, journal, serviceKey: BASE_URL, parallelism: 2, ...options })).plan;
}

describe('makePlan', () => {
  it('plans each organisation as it is read, exactly as from every observation kept', async () => {
    const lean = await plan();
    const whole = await readObservedState(desired, createScriptedClient(listed, { active: 'org_active' }), { parallelism: 2 });
    const fromWhole = computePlan({ desired, observed: whole, baseUrl: BASE_URL, isJournaled: (kind, id, target) => kind === 'revoke-invitation' && id === 'org_done' && target === 'inv_1' });
    expect(lean).toEqual({ ...fromWhole, observed: {} });
    expect([...whole.organisations.keys()].sort()).toEqual(['done', 'moved', 'same', 'target', 'untouched']);
    expect(lean.unchanged).toEqual(['done', 'same', 'target', 'untouched']);
    expect(lean.journaled).toEqual(['organisations.done.invitations.revoke.inv_1']);
  });

  it('records the observations the changes depend on only in a plan to be saved', async () => {
    const unsaved = await plan();
    const saved = await plan({ saving: true });
    expect(unsaved.observed).toEqual({});
    expect(Object.keys(saved.observed)).toEqual(['moved', 'target']);
    expect(saved.observed['moved']).toMatchObject({ id: 'org_moved', billing: { billingEmail: 'old@x.test' } });
    expect({ ...saved, observed: {} }).toEqual(unsaved);
  });

  it('still names the organisation active now, though it is not declared', async () => {
    const made = await plan();
    expect(made.changes.find((c) => c.kind === 'set-active')).toMatchObject({ organisation: { slug: 'target', id: 'org_target' }, display: { fromActive: 'active-now' } });
  });
});

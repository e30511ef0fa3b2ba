/**
 * Setting the active organisation (executor/set-active.ts): read again just before the write, and
 * written only while the one the plan read is still active; someone else's choice made since is
 * never replaced.
 */
import { describe, expect, it } from 'vitest';
import { ChangeFailedError } from '../../src/executor/change-outcome.js';
import { executeChange, executionContext } from '../../src/executor/run-change.js';
import type { ApplicableChange } from '../../src/plan/types.js';
import { createScriptedClient, fail, serviceError } from '../support/scripted-client.js';

const WORLD = [
  { id: 'org_acme', slug: 'acme', member: true },
  { id: 'org_initech', slug: 'initech', member: true },
  { id: 'org_umbrella', slug: 'umbrella', member: true },
];
const makeAcmeActive: ApplicableChange = { address: 'activeOrganisation', kind: 'set-active', action: 'update', organisation: { slug: 'acme', id: 'org_acme' } };

describe('executeChange: the active organisation', () => {
  it('is set while the organisation the plan read as active still is, the listing read just before the write', async () => {
    const client = createScriptedClient(WORLD, { active: 'org_initech' });
    expect(await executeChange(makeAcmeActive, executionContext(client, { activeFrom: 'org_initech' }))).toEqual({ kind: 'applied' });
    expect(client.calls.map((c) => c.operation)).toEqual(['getOrganisations', 'setActiveOrganisation']);
    expect(client.active()).toBe('org_acme');
  });

  it('is stale, and nothing is written, when someone made another organisation active since the plan', async () => {
    const client = createScriptedClient(WORLD, { active: 'org_umbrella' });
    const outcome = await executeChange(makeAcmeActive, executionContext(client, { activeFrom: 'org_initech' }));
    expect(outcome).toEqual({
      kind: 'stale',
      reason: 'the active organisation changed on the service since the plan, from "org_initech" to "org_umbrella", so setting "org_acme" would replace a choice the plan did not show; nothing was written for this organisation. Run orgform plan again to review it',
    });
    expect(client.writes()).toEqual([]);
    expect(client.active()).toBe('org_umbrella');
  });

  it('is already done when the organisation is active already, whoever made it so', async () => {
    const client = createScriptedClient(WORLD, { active: 'org_acme' });
    expect(await executeChange(makeAcmeActive, executionContext(client, { activeFrom: 'org_initech' }))).toMatchObject({ kind: 'already-done' });
    expect(client.writes()).toEqual([]);
  });

  it('fails, writing nothing, when the read before the write fails', async () => {
    const client = createScriptedClient(WORLD, { active: 'org_initech' });
    client.on('getOrganisations', fail(serviceError('getOrganisations', 503)));
    const outcome = await executeChange(makeAcmeActive, executionContext(client, { activeFrom: 'org_initech' }));
    expect(outcome.kind).toBe('failed');
    const error = (outcome as { error: ChangeFailedError }).error;
    expect(error).toBeInstanceOf(ChangeFailedError);
    expect(error.message).toMatch(/the active organisation is read again just before it is set, and that read failed, so it was not set: run orgform apply again$/);
    expect(client.writes()).toEqual([]);
  });
});

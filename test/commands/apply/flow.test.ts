import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { NotSentError } from '../../../src/api/api-error.js';
import { runApply, type ApplyDeps, type ApplyInputs } from '../../../src/commands/apply/flow.js';
import { clientCallbacks, type ClientHooks } from '../../../src/api/connect/open-client.js';
import { runPlan } from '../../../src/commands/plan/flow.js';
import { ConfigError, OrgformError } from '../../../src/errors.js';
import { serializeSavedPlan, type SavedPlanBody } from '../../../src/plan/saved-plan.js';
import { bodyOf } from '../../support/saved-plan-lines.js';
import { journalKey } from '../../../src/model/journal-key.js';
import { lockFileState, recordInFileState } from '../../support/file-state.js';
import { createScriptedClient, gate, type ScriptedClient, type WorldOrganisation } from '../../support/scripted-client.js';
import { recordingApplyView, recordingPlanView } from '../../support/recording-view.js';
import { sinks } from '../../support/sinks.js';
import { createNdjsonApplyView } from '../../../src/commands/apply/views/ndjson-apply-view.js';
import { makeWorkspace } from '../../support/workspace.js';

/** acme: a member, its billing to change and an invitation to revoke; globex: to join. */
const CONFIG = `version: 1
organisations:
  acme:
    billing:
      billingEmail: finance@acme.test
    invitations:
      revoke: [inv_carol]
  globex:
    id: org_globex
    invitations:
      accept: [inv_ada]
`;

function world(): WorldOrganisation[] {
  return [
    { id: 'org_acme', slug: 'acme', member: true, billing: { billingEmail: 'old@acme.test' } },
    { id: 'org_globex', slug: 'globex', invitations: ['inv_ada'] },
  ];
}

async function setup(config = CONFIG, organisations = world()) {
  const cwd = await makeWorkspace({ 'orgs.yaml': config });
  const client = createScriptedClient(organisations);
  const opened: ClientHooks[] = [];
  let clock = 1_000;
  const deps: ApplyDeps = {
    cwd,
    now: () => (clock += 1),
    signal: new AbortController().signal,
    openClient: async (listeners) => {
      opened.push(listeners);
      return { client };
    },
    confirmation: { unavailable: 'standard input is not a terminal' },
    sleep: async () => undefined,
  };
  const inputs: ApplyInputs = { selection: { files: [] }, parallelism: 1, autoApprove: true };
  // What the client would call, as openClient wires it to the hooks the flow handed over.
  const listeners = () => ({ ...clientCallbacks(opened[0]!.events, deps.now), onHalt: opened[0]!.onHalt });
  return { cwd, client, deps, inputs, opened, listeners };
}

/** Edits a saved plan's `plan` as anyone could, checksum included. */
async function editSavedPlan(path: string, edit: (plan: any) => void): Promise<void> {
  const { checksum: _checksum, ...body } = bodyOf(await readFile(path, 'utf8'));
  edit(body.plan);
  await writeFile(path, serializeSavedPlan(body as SavedPlanBody));
}

const writes = (client: ScriptedClient) => client.writes().map((c) => `${c.operation} ${c.organisationId}`);

const PLAN_KEY = 'k'.repeat(40);

describe('runApply: a fresh plan', () => {
  it('tells the view of a wait from the start, while it plans too: before the plan is shown', async () => {
    const { client, deps, inputs, listeners } = await setup();
    const wait = { reason: 'rate-limit' as const, what: 'the first page of the listing (all pages)', until: 2_000_000, waiting: 1, at: 1_000 };
    // The client tells of it as the plan's listing waits.
    client.on('getOrganisations', () => listeners().onWait?.(wait));
    const view = recordingApplyView();
    await runApply(inputs, deps, view);
    expect(view.sayings().slice(0, 2)).toEqual(['event:wait', 'planMade']);
    expect(view.told[0]?.args[0]).toEqual({ type: 'wait', ...wait });
  });

  it('loads, reads, shows the plan, applies every change and reports, in that order, then lets go of the lock and the client', async () => {
    const { cwd, client, deps, inputs } = await setup();
    const view = recordingApplyView();
    const outcome = await runApply(inputs, deps, view);
    expect(outcome).toMatchObject({ kind: 'applied', summary: { total: 3, applied: 3 } });
    expect(view.sayings()).toEqual([
      'planMade',
      'applyStarting',
      'event:apply-start',
      ...Array(3).fill(['event:change-start', 'event:change-end']).flat(),
      'event:apply-end',
      'applyStopped',
      'applyReported',
    ]);
    expect(writes(client)).toEqual(['updateBillingDetails org_acme', 'deleteInvitation org_acme', 'acceptInvitation org_globex']);
    expect(client.closed).toBe(true);
    expect(existsSync(join(cwd, '.orgform', 'state.json.lock'))).toBe(false);
    expect(existsSync(join(cwd, '.orgform', 'state.json'))).toBe(true);
  });

  it('refuses at once when the plan needs an answer that no one can give, before reading anything', async () => {
    const { cwd, deps, inputs, opened } = await setup();
    const view = recordingApplyView();
    const outcome = await runApply({ ...inputs, autoApprove: false }, deps, view);
    expect(outcome).toEqual({ kind: 'refused', refusal: { kind: 'cannot-confirm', why: 'standard input is not a terminal' } });
    expect(opened).toHaveLength(0);
    expect(view.told).toEqual([]);
    expect(existsSync(join(cwd, '.orgform'))).toBe(false);
  });

  it('asks with the number of changes, and writes nothing unless the answer is yes', async () => {
    const { client, deps, inputs } = await setup();
    const ask = vi.fn(async () => false);
    const view = recordingApplyView();
    const outcome = await runApply({ ...inputs, autoApprove: false }, { ...deps, confirmation: { ask } }, view);
    expect(outcome).toEqual({ kind: 'cancelled' });
    expect(ask).toHaveBeenCalledWith(3);
    expect(view.sayings()).toEqual(['planMade', 'cancelled']);
    expect(client.writes()).toEqual([]);
  });

  it('shows the budget and any warning before asking', async () => {
    const { deps, inputs } = await setup();
    const order: string[] = [];
    const view = recordingApplyView();
    const outcome = await runApply(
      { ...inputs, autoApprove: false, maxChanges: 3 },
      {
        ...deps,
        // A JWT that has run out already: the warning is certain whatever the rate.
        openClient: async () => ({ client: createScriptedClient(world()), tokenExpiry: { expiresAt: deps.now() - 60_000 } }),
        confirmation: { ask: async () => (order.push(...view.sayings()), true) },
      },
      view,
    );
    expect(outcome.kind).toBe('applied');
    expect(order).toEqual(['planMade', 'budgetChecked', 'warn']);
    expect(view.told.find((t) => t.said === 'budgetChecked')?.args).toEqual([{ changes: 3, maxChanges: 3 }]);
    expect(view.told.find((t) => t.said === 'warn')?.args).toEqual([expect.stringMatching(/^Warning: the token \(a JWT\) expired at /)]);
  });

  it('refuses a plan over --max-changes, after showing it, and writes nothing', async () => {
    const { client, deps, inputs } = await setup();
    const view = recordingApplyView();
    const outcome = await runApply({ ...inputs, maxChanges: 2 }, deps, view);
    expect(outcome).toEqual({ kind: 'refused', refusal: { kind: 'over-budget', changes: 3, maxChanges: 2 } });
    expect(view.sayings()).toEqual(['planMade', 'planRefused']);
    expect(client.writes()).toEqual([]);
    expect(client.closed).toBe(true);
  });

  it('refuses an incomplete plan, naming what could not be read, and writes nothing', async () => {
    const { client, deps, inputs } = await setup(CONFIG + '  nowhere-inc: {}\n');
    const view = recordingApplyView();
    const outcome = await runApply(inputs, deps, view);
    expect(outcome).toMatchObject({ kind: 'refused', refusal: { kind: 'incomplete', problems: [{ organisation: 'nowhere-inc' }] } });
    expect(view.sayings()).toEqual(['planMade', 'planRefused']);
    expect(client.writes()).toEqual([]);
  });

  it('tells the view of a configuration’s problems, then throws them, without connecting', async () => {
    const { deps, inputs, opened } = await setup('version: 1\norganisations:\n  acme:\n    billing:\n      customerId: x\n');
    const view = recordingApplyView();
    await expect(runApply(inputs, deps, view)).rejects.toBeInstanceOf(ConfigError);
    expect(view.sayings()).toEqual(['configRejected']);
    expect(opened).toHaveLength(0);
  });

  it('with nothing to do asks nothing and still tells apply-start, apply-end and the summary', async () => {
    const { client, deps, inputs } = await setup('version: 1\norganisations:\n  acme: {}\n');
    const ask = vi.fn(async () => true);
    const view = recordingApplyView();
    const outcome = await runApply({ ...inputs, autoApprove: false, maxChanges: 0 }, { ...deps, confirmation: { ask } }, view);
    expect(view.sayings()).toEqual(['planMade', 'applyStarting', 'event:apply-start', 'event:apply-end', 'applyStopped', 'applyReported']);
    expect(outcome).toMatchObject({ kind: 'applied', summary: { total: 0, interrupted: false } });
    expect(ask).not.toHaveBeenCalled();
    expect(client.writes()).toEqual([]);
  });
});

describe('runApply: what the client tells while changes run', () => {
  it('turns a retry of a change’s request into an event of that change, and the rate limiter’s news into rate events', async () => {
    const { client, deps, inputs, listeners } = await setup();
    client.on('updateBillingDetails', (call) => {
      listeners().onRetry!({ requestId: 'r1', label: call.label!, attempt: 1, delayMs: 5, status: 503 });
      listeners().onRate!({ reason: 'throttled', rps: 4, pausedMs: 1_000, waiting: 2 });
    });
    const view = recordingApplyView();
    await runApply(inputs, deps, view);
    const told = view.events().filter((e) => e.type === 'change-retry' || e.type === 'rate');
    expect(told).toEqual([
      { type: 'change-retry', address: 'organisations.acme.billing', attempt: 1, delayMs: 5, status: 503, at: expect.any(Number) },
      { type: 'rate', reason: 'throttled', rps: 4, pausedMs: 1_000, waiting: 2, at: expect.any(Number) },
    ]);
    expect(view.sayings().indexOf('event:change-retry')).toBeLessThan(view.sayings().indexOf('event:change-end'));
  });

  it('tells nothing of the plan’s own reads being retried, nor of anything before or after the changes run', async () => {
    const { client, deps, inputs, listeners } = await setup();
    client.on('getOrganisations', () => {
      listeners().onRetry!({ requestId: 'r0', attempt: 1, delayMs: 5 });
      listeners().onRate!({ reason: 'announced', rps: 10, pausedMs: 0, waiting: 0 });
    });
    // The client tells the view itself, from Connect on: the view decides, so what counts is what it shows.
    const { out, err } = sinks();
    const view = createNdjsonApplyView({ out, err, review: false, color: false });
    await runApply(inputs, deps, view);
    listeners().onRate!({ reason: 'throttled', rps: 1, pausedMs: 10, waiting: 0 });
    const shown = out.text.trim().split('\n').map((line) => (JSON.parse(line) as { type: string }).type);
    expect(shown).toContain('change_end');
    expect(shown).not.toContain('change_retry');
    expect(shown).not.toContain('rate');
  });

  it('starts nothing new once the client halts, finishes what runs, and gives the reason in the outcome', async () => {
    const { client, deps, inputs, listeners } = await setup();
    const stalled = new OrgformError('RATE_LIMITED', 'No request succeeded for 10 minutes.');
    client.on('updateBillingDetails', () => listeners().onHalt!(stalled));
    const outcome = await runApply(inputs, deps, recordingApplyView());
    expect(outcome).toMatchObject({ kind: 'applied', halted: stalled, summary: { applied: 1, notStarted: 2, interrupted: true } });
    expect(writes(client)).toEqual(['updateBillingDetails org_acme']);
  });

  it('gives the view the client to read the rate from', async () => {
    const { client, deps, inputs } = await setup();
    const view = recordingApplyView();
    await runApply(inputs, deps, view);
    client.rate = { rps: 7, pausedMs: 0, waiting: 1, throttled: 0 };
    expect(view.meter?.rateStatus().rps).toBe(7);
  });

  it('interrupted while it reads, with the reads not yet sent refused unsent, writes nothing and says it was cancelled', async () => {
    const { client, deps, inputs } = await setup();
    const controller = new AbortController();
    client.on('getOrganisations', async () => {
      controller.abort();
      throw new NotSentError({ operation: 'getOrganisations', target: '(all pages)', why: 'interrupted' });
    });
    const view = recordingApplyView();
    expect(await runApply(inputs, { ...deps, signal: controller.signal }, view)).toEqual({ kind: 'cancelled' });
    expect(view.sayings()).toContain('cancelled');
    expect(writes(client)).toEqual([]);
  });

  it('on an interrupt lets the change in flight finish and starts nothing new', async () => {
    const { client, deps, inputs } = await setup();
    const controller = new AbortController();
    const held = gate();
    client.on('updateBillingDetails', held.script);
    const running = runApply(inputs, { ...deps, signal: controller.signal }, recordingApplyView());
    await held.held;
    controller.abort();
    held.release();
    expect(await running).toMatchObject({ kind: 'applied', summary: { applied: 1, notStarted: 2, interrupted: true } });
  });
});

describe('runApply: what is written is read after the answer', () => {
  it('writes billing from what the service holds once the answer is yes, not from what it held when planned', async () => {
    const { client, deps, inputs } = await setup();
    client.organisation('org_acme')!.billing = { billingEmail: 'old@acme.test', subscriptionId: 'sub_1', customerId: 'cus_1' };
    const ask = async () => {
      // A billing system renews the subscription while the question waits.
      Object.assign(client.organisation('org_acme')!.billing!, { subscriptionId: 'sub_2', customerId: 'cus_2' });
      return true;
    };
    const outcome = await runApply({ ...inputs, autoApprove: false }, { ...deps, confirmation: { ask } }, recordingApplyView());
    expect(outcome).toMatchObject({ kind: 'applied', summary: { applied: 3 } });
    expect(client.writes().find((c) => c.operation === 'updateBillingDetails')?.update).toEqual({ billingEmail: 'finance@acme.test', customerID: 'cus_2', subscriptionID: 'sub_2' });
    expect(client.organisation('org_acme')!.billing).toMatchObject({ subscriptionId: 'sub_2', customerId: 'cus_2' });
  });

  it('refuses as stale a billing change whose declared field someone changed while the question waited, and applies the rest', async () => {
    const { client, deps, inputs } = await setup();
    const ask = async () => ((client.organisation('org_acme')!.billing = { billingEmail: 'someone@acme.test' }), true);
    const outcome = await runApply({ ...inputs, autoApprove: false }, { ...deps, confirmation: { ask } }, recordingApplyView());
    expect(outcome).toMatchObject({ kind: 'applied', summary: { applied: 2, stale: 1 } });
    expect(client.organisation('org_acme')!.billing).toEqual({ billingEmail: 'someone@acme.test' });
  });
});

describe('runApply: a saved plan', () => {
  async function saved(config = CONFIG) {
    const world = await setup(config);
    await runPlan({ selection: { files: [] }, parallelism: 1, out: 'plan.json' }, world.deps, recordingPlanView());
    return world;
  }

  it('is applied as it was saved, without being shown or asked about', async () => {
    const { client, deps, inputs } = await saved();
    const view = recordingApplyView();
    const outcome = await runApply({ ...inputs, planFile: 'plan.json', autoApprove: false }, deps, view);
    expect(outcome).toMatchObject({ kind: 'applied', summary: { applied: 3 } });
    expect(view.sayings()).not.toContain('planMade');
    expect(writes(client)).toHaveLength(3);
  });

  it('is refused whole when what it was based on changed, naming what', async () => {
    const { client, deps, inputs } = await saved();
    client.organisation('org_acme')!.billing = { billingEmail: 'someone@acme.test' };
    const outcome = await runApply({ ...inputs, planFile: 'plan.json' }, deps, recordingApplyView());
    expect(outcome).toEqual({
      kind: 'refused',
      planFile: 'plan.json',
      refusal: { kind: 'stale', changed: ['organisations.acme.billing.billingEmail changed from "old@acme.test" to "someone@acme.test"'] },
    });
    expect(client.writes()).toEqual([]);
  });

  it('is applied with a field it does not declare as the service holds it now, when that changed since it was made', async () => {
    const { client, deps, inputs } = await saved();
    client.organisation('org_acme')!.billing = { billingEmail: 'old@acme.test', subscriptionId: 'sub_renewed' };
    const outcome = await runApply({ ...inputs, planFile: 'plan.json' }, deps, recordingApplyView());
    expect(outcome).toMatchObject({ kind: 'applied', summary: { applied: 3 } });
    expect(client.writes().find((c) => c.operation === 'updateBillingDetails')?.update).toEqual({ billingEmail: 'finance@acme.test', subscriptionID: 'sub_renewed' });
  });

  it('is refused, writing nothing, when edited to send a change to another organisation, its checksum made to match again', async () => {
    const { cwd, client, deps, inputs } = await saved();
    await editSavedPlan(join(cwd, 'plan.json'), (plan) => {
      const change = plan.changes.find((c: { kind: string }) => c.kind === 'billing');
      change.organisation.id = 'org_globex';
    });
    const outcome = await runApply({ ...inputs, planFile: 'plan.json' }, deps, recordingApplyView());
    expect(outcome).toEqual({ kind: 'refused', planFile: 'plan.json', refusal: { kind: 'not-derived', changes: ['organisations.acme.billing'] } });
    expect(client.writes()).toEqual([]);
  });

  it('is refused as stale when the service now needs a change the plan does not hold', async () => {
    const { cwd, client, deps, inputs } = await saved();
    await editSavedPlan(join(cwd, 'plan.json'), (plan) => {
      plan.changes = plan.changes.filter((c: { kind: string }) => c.kind !== 'revoke-invitation');
    });
    const outcome = await runApply({ ...inputs, planFile: 'plan.json' }, deps, recordingApplyView());
    expect(outcome).toMatchObject({ kind: 'refused', refusal: { kind: 'stale', changed: ['organisations.acme.invitations.revoke.inv_carol: the plan does not hold this change, which its desired state and the service now give'] } });
    expect(client.writes()).toEqual([]);
  });

  it('is applied without a one-shot change its journal recorded done when it was made, though that journal is gone now, when the plan is signed', async () => {
    const { cwd, client, deps, inputs } = await setup();
    await recordInFileState(join(cwd, '.orgform', 'state.json'), [
      { service: 'https://orgs.example.test', key: journalKey('revoke-invitation', 'org_acme', 'inv_carol'), entry: { kind: 'revoke-invitation', organisation: 'acme', outcome: 'applied', at: '2026-01-01T00:00:00Z' } },
    ]);
    await runPlan({ selection: { files: [] }, parallelism: 1, out: 'plan.json', planKey: PLAN_KEY }, deps, recordingPlanView());
    await rm(join(cwd, '.orgform'), { recursive: true });
    const outcome = await runApply({ ...inputs, planFile: 'plan.json', planKey: PLAN_KEY }, deps, recordingApplyView());
    expect(outcome).toMatchObject({ kind: 'applied', summary: { total: 2, applied: 2 } });
    expect(writes(client)).toEqual(['updateBillingDetails org_acme', 'acceptInvitation org_globex']);
  });

  it('is stale when an unsigned plan lists as journaled a one-shot change the journal does not record now: anyone may have edited that list to leave the change out', async () => {
    const { cwd, client, deps, inputs } = await setup();
    await recordInFileState(join(cwd, '.orgform', 'state.json'), [
      { service: 'https://orgs.example.test', key: journalKey('revoke-invitation', 'org_acme', 'inv_carol'), entry: { kind: 'revoke-invitation', organisation: 'acme', outcome: 'applied', at: '2026-01-01T00:00:00Z' } },
    ]);
    await runPlan({ selection: { files: [] }, parallelism: 1, out: 'plan.json' }, deps, recordingPlanView());
    await rm(join(cwd, '.orgform'), { recursive: true });
    const outcome = await runApply({ ...inputs, planFile: 'plan.json' }, deps, recordingApplyView());
    expect(outcome).toMatchObject({ kind: 'refused', refusal: { kind: 'stale', changed: [expect.stringContaining('organisations.acme.invitations.revoke.inv_carol: the plan lists this change as done by the journal when it was made, but the journal does not record it now, and an unsigned plan’s list is not taken') as string] } });
    expect(writes(client)).toEqual([]);
  });

  it('with a malformed field, its checksum made to match, is an error naming the field, not a bug', async () => {
    const { cwd, deps, inputs } = await saved();
    await editSavedPlan(join(cwd, 'plan.json'), (plan) => (plan.changes[0].targetId = 42));
    await expect(runApply({ ...inputs, planFile: 'plan.json' }, deps, recordingApplyView())).rejects.toMatchObject({
      code: 'PLAN_INVALID',
      message: expect.stringMatching(/^The saved plan plan\.json:\d+ \(change organisations\.[\w.-]+\) has a malformed field: change\.targetId must be string\./),
    });
  });

  it('is refused, before taking the lock, when made for another service', async () => {
    const { cwd, deps, inputs } = await saved();
    const other = createScriptedClient(world());
    Object.defineProperty(other, 'baseUrl', { value: new URL('https://elsewhere.example.test') });
    const outcome = await runApply({ ...inputs, planFile: 'plan.json' }, { ...deps, openClient: async () => ({ client: other }) }, recordingApplyView());
    expect(outcome).toMatchObject({ kind: 'refused', refusal: { kind: 'other-service', madeFor: 'https://orgs.example.test', serviceKey: 'https://elsewhere.example.test' } });
    expect(existsSync(join(cwd, '.orgform', 'state.json.lock'))).toBe(false);
    expect(other.closed).toBe(true);
  });

  it('that cannot be read is an error naming the file', async () => {
    const { deps, inputs } = await setup();
    await expect(runApply({ ...inputs, planFile: 'missing.json' }, deps, recordingApplyView())).rejects.toThrow('Cannot read the plan file missing.json: ENOENT.');
  });
});

describe('runApply: the lock', () => {
  it('refuses while another apply holds it, and closes the client', async () => {
    const { cwd, client, deps, inputs } = await setup();
    const lock = await lockFileState(join(cwd, '.orgform', 'state.json'));
    try {
      await expect(runApply(inputs, deps, recordingApplyView())).rejects.toMatchObject({ code: 'STATE_LOCKED' });
      expect(client.closed).toBe(true);
      expect(client.writes()).toEqual([]);
    } finally {
      await lock.release();
    }
  });

  it('tells the view when it takes over a lock whose process no longer runs', async () => {
    const { cwd, deps, inputs } = await setup();
    await mkdir(join(cwd, '.orgform'));
    await writeFile(join(cwd, '.orgform', 'state.json.lock'), JSON.stringify({ id: 'old', pid: 4242, host: hostname(), startedAt: '2026-01-01T00:00:00Z', command: 'orgform apply' }));
    const view = recordingApplyView();
    await runApply(inputs, { ...deps, lockEnvironment: { pid: 1, host: hostname(), now: Date.now, isAlive: () => false } }, view);
    expect(view.told[0]).toEqual({ said: 'lockTakenOver', args: [join(cwd, '.orgform', 'state.json'), 4242] });
  });
});

import { readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { clientCallbacks } from '../../../src/api/connect/open-client.js';
import { describe, expect, it } from 'vitest';
import type { PlanDeps } from '../../../src/commands/plan/flow.js';
import { runPlan } from '../../../src/commands/plan/flow.js';
import { ConfigError } from '../../../src/errors.js';
import { loadSchemaValidator } from '../../../src/config/schema-validator.js';
import { parseSavedPlan } from '../../../src/plan/saved-plan.js';
import { tempPathFor } from '../../../src/state/write-file-atomically.js';
import type { Plan } from '../../../src/plan/types.js';
import { recordInFileState } from '../../support/file-state.js';
import { journalKey } from '../../../src/model/journal-key.js';
import { recordingPlanView } from '../../support/recording-view.js';
import { BASE_URL, createScriptedClient, fail } from '../../support/scripted-client.js';
import { makeWorkspace } from '../../support/workspace.js';

const CONFIG = `version: 1
organisations:
  acme:
    billing:
      billingEmail: finance@acme.test
    invitations:
      revoke: [inv_carol]
`;

async function setup(config = CONFIG) {
  const cwd = await makeWorkspace({ 'orgs.yaml': config });
  const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true, billing: { billingEmail: 'old@acme.test' } }]);
  const deps: PlanDeps = { cwd, now: () => Date.parse('2026-11-23T10:00:00Z'), openClient: async () => ({ client }) };
  return { cwd, client, deps };
}

describe('runPlan', () => {
  it('tells the view of every wait the client tells of, on the side of the plan', async () => {
    const { client, deps } = await setup();
    const wait = { reason: 'answer' as const, what: 'the first page of the listing (all pages)', until: 2_000_000, at: 1_000 };
    let listeners = clientCallbacks(undefined, deps.now);
    client.on('getOrganisations', () => listeners.onWait(wait));
    const view = recordingPlanView();
    await runPlan({ selection: { files: [] }, parallelism: 1 }, { ...deps, openClient: async (given) => ((listeners = clientCallbacks(given.events, deps.now)), { client }) }, view);
    expect(view.sayings()).toEqual(['event:wait', 'planMade', 'planChecked']);
    expect(view.told[0]?.args[0]).toEqual({ type: 'wait', ...wait });
  });

  it('reads, shows the plan with what its checks found, reports, and never writes', async () => {
    const { client, deps } = await setup();
    const view = recordingPlanView();
    const outcome = await runPlan({ selection: { files: [] }, parallelism: 2 }, deps, view);
    expect(outcome.plan.changes.map((c) => c.address)).toEqual(['organisations.acme.billing', 'organisations.acme.invitations.revoke.inv_carol']);
    expect(outcome.hazards).toEqual([]);
    expect(view.sayings()).toEqual(['planMade', 'planChecked']);
    expect(view.told[0]?.args[1]).toEqual({ hazards: [] });
    expect(client.writes()).toEqual([]);
    expect(client.closed).toBe(true);
  });

  it('finds a plan over --max-changes, and gives the budget to the view', async () => {
    const { deps } = await setup();
    const view = recordingPlanView();
    const outcome = await runPlan({ selection: { files: [] }, parallelism: 1, maxChanges: 1 }, deps, view);
    expect(outcome.hazards).toEqual([{ kind: 'over-budget', changes: 2, maxChanges: 1 }]);
    expect(view.told[0]?.args[1]).toEqual({ hazards: outcome.hazards, budget: { changes: 2, maxChanges: 1 } });
  });

  it('saves exactly the plan shown, with its selection, base URL and files, with --out', async () => {
    const { cwd, deps } = await setup();
    const view = recordingPlanView();
    const outcome = await runPlan({ selection: { files: ['orgs.yaml'], targets: ['acme'] }, parallelism: 1, out: 'plan.json' }, deps, view);
    const { validate } = await loadSchemaValidator('saved-plan');
    const saved = parseSavedPlan(await readFile(join(cwd, 'plan.json'), 'utf8'), 'plan.json', validate);
    // The observations went to the file as they were planned, not into the plan held.
    expect(outcome.plan.observed).toEqual({});
    expect(Object.keys(saved.plan.observed)).toEqual(['acme']);
    expect({ ...saved.plan, observed: {} }).toEqual(JSON.parse(JSON.stringify(outcome.plan)) as Plan);
    expect(saved).toMatchObject({ baseUrl: BASE_URL, createdAt: '2026-11-23T10:00:00.000Z', selection: { targets: ['acme'], shard: null }, configFiles: [{ path: 'orgs.yaml' }] });
    expect(view.sayings()).toEqual(['planMade', 'planSaved', 'planChecked']);
    expect(view.told[1]?.args).toEqual(['plan.json']);
  });

  it('with --out, spools the observations to a file with no name while it reads (nothing of it left however the run ends), and saves them', async () => {
    const { cwd, client, deps } = await setup();
    const names: string[][] = [];
    client.on('getOrganisations', async () => void names.push(await readdir(cwd)));
    await runPlan({ selection: { files: [] }, parallelism: 1, out: 'plan.json' }, deps, recordingPlanView());
    // Killed now (plan does not catch SIGTERM), the run would leave nothing behind: no name to find or read.
    expect(names.length).toBeGreaterThan(0);
    for (const listed of names) expect(listed.filter((n) => n.endsWith('.tmp'))).toEqual([]);
    const { validate } = await loadSchemaValidator('saved-plan');
    expect(Object.keys(parseSavedPlan(await readFile(join(cwd, 'plan.json'), 'utf8'), 'plan.json', validate).plan.observed)).toEqual(['acme']);

    client.on('getOrganisations', fail(new Error('the listing broke')), Infinity);
    await expect(runPlan({ selection: { files: [] }, parallelism: 1, out: 'again.json' }, deps, recordingPlanView())).rejects.toThrow('the listing broke');
    expect((await readdir(cwd)).filter((n) => n.endsWith('.tmp') || n === 'again.json')).toEqual([]);
  });

  it('with --out, takes the next temp name for its spool when the next ones were planted (files, links out), and writes through none of them', async () => {
    const { cwd, deps } = await setup();
    const outside = await makeWorkspace();
    await writeFile(join(outside, 'victim'), 'untouched');
    // The names the next temp files of plan.json take in this process: .plan.json.PID.N.tmp.
    const next = Number(/\.(\d+)\.tmp$/.exec(tempPathFor(join(cwd, 'plan.json')))?.[1]);
    const planted = [1, 2, 3].map((i) => join(cwd, `.plan.json.${process.pid}.${next + i}.tmp`));
    await writeFile(planted[0] as string, 'planted');
    for (const path of planted.slice(1)) await symlink(join(outside, 'victim'), path);
    const outcome = await runPlan({ selection: { files: [] }, parallelism: 1, out: 'plan.json' }, deps, recordingPlanView());
    expect(outcome.plan.changes.length).toBeGreaterThan(0);
    const { validate } = await loadSchemaValidator('saved-plan');
    expect(Object.keys(parseSavedPlan(await readFile(join(cwd, 'plan.json'), 'utf8'), 'plan.json', validate).plan.observed)).toEqual(['acme']);
    expect(await readFile(join(outside, 'victim'), 'utf8')).toBe('untouched');
    expect(await readFile(planted[0] as string, 'utf8')).toBe('planted');
  });

  it('does not plan again what the journal records done', async () => {
    const { cwd, deps } = await setup();
    await recordInFileState(join(cwd, '.orgform', 'state.json'), [
      { service: BASE_URL, key: journalKey('revoke-invitation', 'org_acme', 'inv_carol'), entry: { kind: 'revoke-invitation', organisation: 'acme', outcome: 'applied', at: '2026-01-01T00:00:00Z' } },
    ]);
    const outcome = await runPlan({ selection: { files: [] }, parallelism: 1 }, deps, recordingPlanView());
    expect(outcome.plan.changes.map((c) => c.kind)).toEqual(['billing']);
    expect(outcome.plan.journaled).toEqual(['organisations.acme.invitations.revoke.inv_carol']);
  });

  it('tells the view of a configuration’s problems, then throws them, without connecting', async () => {
    const { deps } = await setup('version: 2\n');
    let connected = false;
    const view = recordingPlanView();
    await expect(runPlan({ selection: { files: [] }, parallelism: 1 }, { ...deps, openClient: async () => ((connected = true), { client: createScriptedClient([]) }) }, view)).rejects.toBeInstanceOf(ConfigError);
    expect(view.sayings()).toEqual(['configRejected']);
    expect(connected).toBe(false);
  });
});

/**
 * runApply and runPlan with a remote state (a real PostgreSQL, test/support/postgres.ts): the lock
 * lost part way halts the apply; a state that cannot be reached stops it before any write.
 */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runApply, type ApplyDeps, type ApplyInputs } from '../../../src/commands/apply/flow.js';
import { runPlan } from '../../../src/commands/plan/flow.js';
import { readStateSettings } from '../../../src/cli/settings.js';
import { createTestDatabase, query } from '../../support/postgres.js';
import { recordingApplyView, recordingPlanView } from '../../support/recording-view.js';
import { rejection } from '../../support/rejection.js';
import { createScriptedClient, gate } from '../../support/scripted-client.js';
import { makeWorkspace } from '../../support/workspace.js';

/** Five organisations with a channel to remove each: five one-shot changes, one after another. */
const SLUGS = ['a1', 'a2', 'a3', 'a4', 'a5'];
const CONFIG = ['version: 1', 'organisations:', ...SLUGS.flatMap((s) => [`  ${s}:`, '    notificationChannels:', `      remove: [chn_${s}]`])].join('\n') + '\n';

async function setup(state: string) {
  const cwd = await makeWorkspace({ 'orgs.yaml': CONFIG });
  const client = createScriptedClient(SLUGS.map((slug) => ({ id: `org_${slug}`, slug, member: true })));
  let halted!: () => void;
  const haltSeen = new Promise<void>((resolve) => (halted = resolve));
  const deps: ApplyDeps = {
    cwd,
    stateSettings: readStateSettings({ ORGFORM_STATE: state }),
    now: () => Date.now(),
    signal: new AbortController().signal,
    openClient: async (listeners) => {
      // The flow's own listeners object: told of the halt as the flow is.
      const onHalt = listeners.onHalt;
      listeners.onHalt = (error) => {
        onHalt?.(error);
        halted();
      };
      return { client };
    },
    confirmation: { unavailable: 'standard input is not a terminal' },
    sleep: async () => undefined,
  };
  const inputs: ApplyInputs = { selection: { files: [] }, parallelism: 1, autoApprove: true };
  return { cwd, client, deps, inputs, haltSeen };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('runApply with a PostgreSQL state', () => {
  it('halts when the session holding the lock is ended mid-apply: the change in flight finishes, done but not recorded, nothing new starts, and it says the lock was lost', async () => {
    const url = `${await createTestDatabase('flow_lost')}?state=prod`;
    const { client, deps, inputs, haltSeen } = await setup(url);
    const held = gate();
    client.on('deleteNotificationChannel', held.script);
    const running = runApply(inputs, deps, recordingApplyView());
    await held.held;
    // Someone ends the session that holds the advisory lock (a DBA, a failover, force-unlock).
    const [{ backend_pid }] = (await query<{ backend_pid: number }>(url.replace(/\?.*/, ''), "SELECT backend_pid FROM orgform.holders WHERE state = 'prod'")) as [{ backend_pid: number }];
    await query(url.replace(/\?.*/, ''), 'SELECT pg_terminate_backend($1, 5000)', [backend_pid]);
    // The halt comes from the connection's end: it arrives while the change is still in flight.
    await haltSeen;
    held.release();
    const outcome = await running;
    // Its entry cannot be committed any more: it is done on the service, and said to be not recorded.
    expect(outcome).toMatchObject({ kind: 'applied', summary: { applied: 0, failed: 1, notStarted: 4, interrupted: true }, halted: { code: 'STATE_LOCK_LOST' } });
    if (outcome.kind === 'applied') expect(outcome.summary.notApplied[0]!.failure!.message).toContain('done on the service, but not recorded in the state journal');
    expect(client.writes()).toHaveLength(1);
    if (outcome.kind === 'applied') expect(outcome.halted?.message).toContain('the database connection');
  });

  it('refuses before any write when the state cannot be reached', async () => {
    const { client, deps, inputs } = await setup(`postgres://ada:pw-9876@127.0.0.1:${await closedPort()}/ops`);
    const err = await rejection(runApply(inputs, deps, recordingApplyView()));
    expect(err.code).toBe('STATE_UNAVAILABLE');
    expect(err.message).not.toContain('pw-9876');
    expect(client.writes()).toEqual([]);
    expect(client.closed).toBe(true);
  });

  it('records what it applied, so that a plan from anywhere with the same state shows nothing to do', async () => {
    const url = `${await createTestDatabase('flow_plan')}?state=prod`;
    const first = await setup(url);
    expect(await runApply(first.inputs, first.deps, recordingApplyView())).toMatchObject({ summary: { applied: 5 } });
    // A fresh checkout: another directory, no .orgform/ at all; the service cannot list channels.
    const fresh = await setup(url);
    expect((await runPlan({ selection: { files: [] }, parallelism: 1 }, fresh.deps, recordingPlanView())).plan.changes).toEqual([]);
    const elsewhere = await setup(url.replace('state=prod', 'state=other'));
    expect((await runPlan({ selection: { files: [] }, parallelism: 1 }, elsewhere.deps, recordingPlanView())).plan.changes).toHaveLength(5);
  });
});

describe('runPlan with a remote state', () => {
  it('fails clearly when the state cannot be reached, rather than planning every deletion again', async () => {
    const { deps } = await setup(`postgres://127.0.0.1:${await closedPort()}/ops`);
    const err = await rejection(runPlan({ selection: { files: [] }, parallelism: 1 }, deps, recordingPlanView()));
    expect(err.code).toBe('STATE_UNAVAILABLE');
    expect(err.message).toContain('connection refused');
  });
});

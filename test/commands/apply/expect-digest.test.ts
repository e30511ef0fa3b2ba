/**
 * `apply --expect-digest DIGEST [--reviewed FILE]`: the fresh plan is applied, without a question,
 * only when it is the plan that was reviewed; otherwise nothing is written and the refusal says
 * what differs. Against a scripted service, whose values a test changes "by hand" between the
 * review (a plan) and the merge (the apply).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyInputs } from '../../../src/commands/apply/command.js';
import { runApply, type ApplyDeps, type ApplyInputs } from '../../../src/commands/apply/flow.js';
import { refusalError } from '../../../src/commands/apply/views/refusal-error.js';
import { createNdjsonApplyView } from '../../../src/commands/apply/views/ndjson-apply-view.js';
import { runPlan } from '../../../src/commands/plan/flow.js';
import { renderPlan } from '../../../src/commands/plan/view.js';
import { UsageError } from '../../../src/errors.js';
import { digestPlan } from '../../../src/plan/plan-digest.js';
import type { Plan } from '../../../src/plan/types.js';
import { createScriptedClient, type ScriptedClient, type WorldOrganisation } from '../../support/scripted-client.js';
import { recordingApplyView, recordingPlanView } from '../../support/recording-view.js';
import { sinks } from '../../support/sinks.js';
import { makeWorkspace } from '../../support/workspace.js';

const CONFIG = `version: 1
organisations:
  acme:
    billing:
      billingEmail: finance@acme.test
      customerID: cus_1
    invitations:
      revoke: [inv_carol]
`;

const world = (): WorldOrganisation[] => [
  { id: 'org_acme', slug: 'acme', member: true, billing: { billingEmail: 'old@acme.test', customerId: 'cus_1', subscriptionId: 'sub_1' } },
  // Declared by one test only, with the value it holds: nothing to change when reviewed.
  { id: 'org_globex', slug: 'globex', member: true, billing: { billingEmail: 'ops@globex.test' } },
];

async function setup() {
  const cwd = await makeWorkspace({ 'orgs.yaml': CONFIG });
  const client = createScriptedClient(world());
  let clock = 1_000;
  const deps: ApplyDeps = {
    cwd,
    now: () => (clock += 1),
    signal: new AbortController().signal,
    openClient: async () => ({ client }),
    confirmation: { unavailable: 'standard input is not a terminal' },
    sleep: async () => undefined,
  };
  return { cwd, client, deps };
}

/** The review: a plan of the files against the service as it is now, its digest and its Markdown (marker and all) in FILE. */
async function review(cwd: string, deps: ApplyDeps): Promise<{ plan: Plan; digest: string; file: string }> {
  const view = recordingPlanView();
  const { plan } = await runPlan({ selection: { files: [] }, parallelism: 1 }, { cwd, now: deps.now, openClient: deps.openClient }, view);
  await writeFile(join(cwd, 'review.md'), renderPlan(plan, 'markdown', { color: false }));
  return { plan, digest: digestPlan(plan), file: 'review.md' };
}

const byDigest = (digest: string, reviewedFile?: string): ApplyInputs => ({
  selection: { files: [] },
  parallelism: 1,
  autoApprove: false,
  expectDigest: digest,
  ...(reviewedFile === undefined ? {} : { reviewedFile }),
});

const writes = (client: ScriptedClient) => client.writes().map((c) => `${c.operation} ${c.organisationId}`);

describe('apply --expect-digest', () => {
  it('applies the fresh plan when it is the reviewed one, without a question (no terminal needed)', async () => {
    const { cwd, client, deps } = await setup();
    const { digest, file } = await review(cwd, deps);
    const outcome = await runApply(byDigest(digest, file), deps, recordingApplyView());
    expect(outcome).toMatchObject({ kind: 'applied', summary: { total: 2, applied: 2 } });
    expect(writes(client)).toEqual(['updateBillingDetails org_acme', 'deleteInvitation org_acme']);
  });

  it('applies nothing when a value was changed by hand since the review, and says which, as planned from', async () => {
    const { cwd, client, deps } = await setup();
    const { digest, file } = await review(cwd, deps);
    // By hand, in the service's UI: the customer id, which needed nothing when reviewed.
    client.organisation('org_acme')!.billing!.customerId = 'cus_hand';
    const view = recordingApplyView();
    const outcome = await runApply(byDigest(digest, file), deps, view);
    expect(outcome.kind).toBe('refused');
    expect(writes(client)).toEqual([]);
    expect(client.organisation('org_acme')!.billing!.customerId).toBe('cus_hand');
    const refusal = outcome.kind === 'refused' ? outcome.refusal : undefined;
    expect(refusal).toMatchObject({ kind: 'not-reviewed', expected: digest, difference: { added: [], gone: [] } });
    const error = refusalError(refusal!);
    expect(error.code).toBe('PLAN_NOT_REVIEWED');
    expect(error.message).toMatch(/^The plan now is not the one reviewed: its digest is sha256:[0-9a-f]{64}, the reviewed plan's sha256:[0-9a-f]{64}\. Nothing was changed\./);
    expect(error.details).toEqual(['~ organisations.acme.billing: changed since the review\n    customerID, as read when planned: "cus_1" when reviewed, "cus_hand" now']);
    expect(view.sayings()).toContain('planRefused');
  });

  it('applies nothing when an organisation that needed nothing at review needs something now, naming it added', async () => {
    const { cwd, client, deps } = await setup();
    await writeFile(join(cwd, 'orgs.yaml'), `${CONFIG}  globex:\n    id: org_globex\n    billing:\n      billingEmail: ops@globex.test\n`);
    const { digest, file } = await review(cwd, deps);
    client.organisation('org_globex')!.billing!.billingEmail = 'hand@globex.test';
    const outcome = await runApply(byDigest(digest, file), deps, recordingApplyView());
    expect(outcome).toMatchObject({ kind: 'refused', refusal: { kind: 'not-reviewed', difference: { added: [{ address: 'organisations.globex.billing' }], gone: [], changed: [] } } });
    expect(writes(client)).toEqual([]);
  });

  it('succeeds without writing when the fresh plan has no changes at all (applied already: a re-run)', async () => {
    const { cwd, client, deps } = await setup();
    const { digest } = await review(cwd, deps);
    await runApply(byDigest(digest), deps, recordingApplyView());
    const before = client.writes().length;
    const again = await runApply(byDigest(digest), deps, recordingApplyView());
    expect(again).toMatchObject({ kind: 'applied', summary: { total: 0 } });
    expect(client.writes().length).toBe(before);
  });

  it('without --reviewed, still refuses, and says what differs cannot be listed', async () => {
    const { cwd, client, deps } = await setup();
    const { digest } = await review(cwd, deps);
    client.organisation('org_acme')!.billing!.billingEmail = 'hand@acme.test';
    const outcome = await runApply(byDigest(digest), deps, recordingApplyView());
    expect(outcome.kind === 'refused' && refusalError(outcome.refusal).details).toEqual([expect.stringMatching(/came without its record/)]);
    expect(writes(client)).toEqual([]);
  });

  it('refuses a reviewed file that is another plan’s, or holds no marker, before the service is read', async () => {
    const { cwd, deps } = await setup();
    const { digest } = await review(cwd, deps);
    let opened = 0;
    const counting = { ...deps, openClient: async (...args: Parameters<ApplyDeps['openClient']>) => (opened++, deps.openClient(...args)) };
    await writeFile(join(cwd, 'other.md'), '**orgform plan:** nothing\n');
    await expect(runApply(byDigest(digest, 'other.md'), counting, recordingApplyView())).rejects.toThrow(/does not end with orgform's digest marker/);
    await expect(runApply(byDigest(`sha256:${'0'.repeat(64)}`, 'review.md'), counting, recordingApplyView())).rejects.toThrow(/is the plan with digest sha256:[0-9a-f]{64}, not sha256:0{64} \(--expect-digest\)/);
    expect(opened).toBe(0);
  });

  it('with --format json, writes the refusal as a line of data: the digests and what differs', async () => {
    const { cwd, client, deps } = await setup();
    const { digest, file } = await review(cwd, deps);
    client.organisation('org_acme')!.billing!.billingEmail = 'hand@acme.test';
    const { out, err } = sinks();
    await runApply(byDigest(digest, file), deps, createNdjsonApplyView({ out, err, review: true, color: false }));
    const lines = out.text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const refused = lines.find((l) => l.type === 'refused')!;
    expect(refused).toMatchObject({
      reason: 'not_reviewed',
      expected_digest: digest,
      digest: expect.stringMatching(/^sha256:/),
      code: 'PLAN_NOT_REVIEWED',
      difference: {
        added_count: 0,
        gone_count: 0,
        changed_count: 1,
        changed: [{ address: 'organisations.acme.billing', values: [{ aspect: 'seen', field: 'billingEmail', reviewed: 'old@acme.test', now: 'hand@acme.test' }] }],
      },
    });
    expect(lines.some((l) => l.type === 'apply_start')).toBe(false);
    expect(err.text).toContain('Plan digest: sha256:');
  });
});

describe('the --expect-digest flags', () => {
  it('are refused with a saved plan, and --reviewed without --expect-digest', () => {
    expect(() => applyInputs({ parallelism: 1, format: 'text', expectDigest: `sha256:${'a'.repeat(64)}` }, ['plan.json'])).toThrow(UsageError);
    expect(() => applyInputs({ parallelism: 1, format: 'text', reviewed: 'review.md' }, [])).toThrow(/give --expect-digest too/);
  });
});

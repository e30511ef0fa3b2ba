/**
 * What the merge's apply did, read from orgform's events and said in the one result comment
 * (pipeline/apply-outcome.mjs). The events here are in the form `apply --format json` writes them
 * (src/commands/apply/views/render-apply-json.ts); test/action/reviewed-apply.test.ts reads real ones.
 */
import { describe, expect, it } from 'vitest';
import { composeResultComment, describeOutcome, planOnlyOutcome, readApplyOutcome } from '../../pipeline/apply-outcome.mjs';
import { commentMarker, MAX_COMMENT_LENGTH } from '../../pipeline/sticky-comment.mjs';

const MARKER = commentMarker('', 'apply');
const REVIEWED = `sha256:${'a'.repeat(64)}`;
const NOW = `sha256:${'b'.repeat(64)}`;
const lines = (...events: object[]) => events.map((e) => JSON.stringify(e)).join('\n') + '\n';
const summary = (fields: Partial<Record<string, number | boolean>>) => ({ total: 0, applied: 0, already_done: 0, skipped: 0, not_started: 0, stale: 0, failed: 0, interrupted: false, elapsed_ms: 10, ...fields });
const input = {
  marker: MARKER,
  commit: '0123456789abcdef',
  runUrl: 'https://github.test/acme/config/actions/runs/9',
  applyByDigest: (d: string) => `run the workflow by hand with \`digest\` set to \`${d}\``,
  applyUnreviewed: 'run the workflow by hand with `apply-unreviewed` checked',
};

describe('readApplyOutcome', () => {
  it('reads an apply that applied everything, one that had nothing to do, and one whose changes failed, naming each failure', () => {
    expect(readApplyOutcome(lines({ type: 'apply_start', total: 2 }, { type: 'apply_end', summary: summary({ total: 2, applied: 2 }) }), '')).toMatchObject({ kind: 'applied', failures: [] });
    expect(readApplyOutcome(lines({ type: 'apply_end', summary: summary({}) }), '')).toMatchObject({ kind: 'nothing' });
    const failed = readApplyOutcome(
      lines(
        { type: 'change_end', address: 'organisations.acme.billing', outcome: 'failed', failure: { operation: 'updateBilling', status: 422, service_code: 'INVALID', service_message: 'bad VAT' } },
        { type: 'change_end', address: 'organisations.globex.billing', outcome: 'stale', reason: 'billingEmail changed since the plan' },
        { type: 'change_end', address: 'organisations.initech.billing', outcome: 'applied' },
        { type: 'apply_end', summary: summary({ total: 3, applied: 1, failed: 1, stale: 1 }) },
      ),
      '',
    );
    expect(failed).toEqual({
      kind: 'failed',
      summary: summary({ total: 3, applied: 1, failed: 1, stale: 1 }),
      failures: [
        { address: 'organisations.acme.billing', outcome: 'failed', message: 'updateBilling (HTTP 422): INVALID: bad VAT' },
        { address: 'organisations.globex.billing', outcome: 'stale', message: 'billingEmail changed since the plan' },
      ],
    });
  });

  it('reads a refusal as data, and, without any event (orgform stopped first), the end of its error without workflow commands; a line cut short is not an event', () => {
    const refused = readApplyOutcome(lines({ type: 'refused', reason: 'not_reviewed', expected_digest: REVIEWED, digest: NOW, message: 'The plan now is not the one reviewed', details: ['+ organisations.globex.billing: added since the review'] }), '');
    expect(refused).toEqual({ kind: 'refused', refusal: { reason: 'not_reviewed', message: 'The plan now is not the one reviewed', details: ['+ organisations.globex.billing: added since the review'], digest: NOW, expected_digest: REVIEWED } });
    expect(readApplyOutcome('{"type":"apply_start","tot', '::error file=orgs.yaml::bad\nError: orgs.yaml:5:7: unknown key\n')).toEqual({ kind: 'not-started', error: 'Error: orgs.yaml:5:7: unknown key' });
  });
});

describe('an apply stopped before its end (cancelled past its grace, killed, crashed)', () => {
  // What orgform had written when it was stopped: one change applied, one on the wire, no apply_end.
  const cut = lines(
    { type: 'apply_start', at: 1, total: 3, parallelism: 2 },
    { type: 'change_start', at: 2, address: 'organisations.acme.billing', organisation: 'acme', kind: 'billing' },
    { type: 'change_start', at: 2, address: 'organisations.globex.billing', organisation: 'globex', kind: 'billing' },
    { type: 'change_end', at: 3, address: 'organisations.acme.billing', organisation: 'acme', kind: 'billing', outcome: 'applied' },
  );

  it('is never reported as not started with nothing applied: it names what was applied and what may have been', () => {
    const outcome = readApplyOutcome(cut, 'Killed\n');
    expect(outcome).toEqual({ kind: 'cut-short', applied: ['organisations.acme.billing'], unknown: ['organisations.globex.billing'], failures: [], error: 'Killed' });
    const body = composeResultComment({ ...input, outcome });
    expect(body).not.toContain('Nothing was applied');
    expect(body).toContain('❌ **orgform apply: stopped before its end.** 1 applied, 1 started and not known to have ended; the rest not started.');
    expect(body).toContain('applied  organisations.acme.billing');
    expect(body).toContain('unknown  organisations.globex.billing');
    expect(body).toContain('**To finish:** re-run this job.');
    expect(describeOutcome(outcome)).toBe('orgform: the apply stopped before its end: 1 applied, 1 not known to have ended.');
  });
});

describe('planOnlyOutcome', () => {
  it('without a reviewed plan: nothing to apply, the unreviewed plan and its digest, or the error', () => {
    expect(planOnlyOutcome(0, 'No changes.\n', '', 'no pull request')).toMatchObject({ kind: 'nothing' });
    expect(planOnlyOutcome(2, `**orgform plan:** 1 to change\n\n<!-- orgform-digest ${NOW} -->\n`, '', 'no pull request')).toEqual({ kind: 'unreviewed-plan', markdown: '**orgform plan:** 1 to change\n', digest: NOW, reason: 'no pull request' });
    expect(planOnlyOutcome(1, '', 'Error: the service could not be reached\n', 'x')).toEqual({ kind: 'not-started', error: 'Error: the service could not be reached' });
  });
});

describe('composeResultComment', () => {
  it('starts with its marker and ends with the commit and the run’s link, and says what was applied', () => {
    const body = composeResultComment({ ...input, outcome: readApplyOutcome(lines({ type: 'apply_end', summary: summary({ total: 3, applied: 2, already_done: 1 }) }), '') });
    expect(body).toBe(
      `${MARKER}\n✅ **orgform apply: applied** the reviewed plan: 2 applied, 1 already done.\n\n<sub>orgform apply of 0123456: [the run](https://github.test/acme/config/actions/runs/9); a re-run updates this comment.</sub>\n`,
    );
  });

  it('for a plan that is not the reviewed one: nothing applied, both digests, what differs, and how to go on with the digest of the plan now', () => {
    const outcome = readApplyOutcome(lines({ type: 'refused', reason: 'not_reviewed', expected_digest: REVIEWED, digest: NOW, message: 'm', details: ['~ organisations.acme.billing billingEmail: "a@x" when reviewed, "b@x" now'] }), '');
    const body = composeResultComment({ ...input, outcome });
    expect(body).toContain('⛔ **orgform apply: refused.** The plan now is not the plan reviewed on this pull request. Nothing was applied.');
    expect(body).toContain(`Reviewed: \`${REVIEWED}\`  \nNow: \`${NOW}\``);
    expect(body).toContain('~ organisations.acme.billing billingEmail: "a@x" when reviewed, "b@x" now');
    expect(body).toContain(`run the workflow by hand with \`digest\` set to \`${NOW}\`: only a plan with that digest is applied.`);
    expect(body).toContain('- To apply a plan without a review, on purpose: run the workflow by hand with `apply-unreviewed` checked.');
  });

  it('for a failed apply, names the failures and says how to finish; with no reviewed plan, shows the plan nobody reviewed', () => {
    const failed = composeResultComment({
      ...input,
      outcome: { kind: 'failed', summary: summary({ total: 2, applied: 1, failed: 1 }) as never, failures: [{ address: 'organisations.acme.billing', outcome: 'failed', message: 'updateBilling (HTTP 422): bad VAT' }] },
    });
    expect(failed).toContain('❌ **orgform apply: failed.** 1 applied, 1 failed.');
    expect(failed).toContain('failed  organisations.acme.billing: updateBilling (HTTP 422): bad VAT');
    expect(failed).toContain('**To finish:** fix the cause the failures name, then re-run this job.');
    const unreviewed = composeResultComment({ ...input, outcome: planOnlyOutcome(2, `**orgform plan:** 1 to change\n\n<!-- orgform-digest ${NOW} -->\n`, '', 'this commit was pushed directly') });
    expect(unreviewed).toContain('⛔ **orgform apply: not started.** No reviewed plan: this commit was pushed directly. Nothing was applied.');
    expect(unreviewed).toContain(`The plan now (digest \`${NOW}\`), which nobody reviewed:`);
    expect(unreviewed).toContain('<details><summary>The plan</summary>\n\n**orgform plan:** 1 to change\n\n</details>');
    // No page was made of it: its links lead to the run.
    const linked = composeResultComment({ ...input, outcome: planOnlyOutcome(2, `**orgform plan:** 1 to change\n\n_See [the plan page](#orgform-plan-page)._\n`, '', 'no pull request') });
    expect(linked).toContain('_See [the plan page](https://github.test/acme/config/actions/runs/9)._');
  });

  it('never exceeds a comment’s 65,536 characters, and says what it cut', () => {
    const failures = Array.from({ length: 50 }, (_, i) => ({ address: `organisations.o${i}.billing`, outcome: 'failed', message: 'x'.repeat(2_000) }));
    const body = composeResultComment({ ...input, outcome: { kind: 'failed', summary: summary({ total: 50, failed: 50 }) as never, failures } });
    expect(body.length).toBeLessThanOrEqual(MAX_COMMENT_LENGTH);
    expect(body).toContain("_…cut to fit a comment: the rest is in the run's log._");
    expect(body.startsWith(`${MARKER}\n`)).toBe(true);
  });
});

describe('describeOutcome', () => {
  it('says in one log line what happened', () => {
    expect(describeOutcome({ kind: 'applied', summary: summary({ applied: 5 }) as never, failures: [] })).toBe('orgform: applied 5 changes.');
    expect(describeOutcome({ kind: 'unreviewed-plan', markdown: '', reason: 'no pull request' })).toBe('orgform: nothing was applied: no reviewed plan (no pull request).');
  });
});

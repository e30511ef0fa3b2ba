import { describe, expect, it } from 'vitest';
import type { ApplyEvent, Outcome } from '../../../../src/executor/events.js';
import { formatApplyLine, formatApplySummary, formatProgress } from '../../../../src/commands/apply/views/render-apply.js';
import { formatApplyEventJson } from '../../../../src/commands/apply/views/render-apply-json.js';
import { makeSummary, result } from '../../../support/plan-fixtures.js';

const serverError = {
  operation: 'updateBillingDetails',
  message: 'updateBillingDetails PUT /organisations/org_acme/billing failed with HTTP 500: internal: database unavailable (cause: pool exhausted)',
  status: 500,
  serviceCode: 'internal',
  serviceMessage: 'database unavailable',
  serviceCause: 'pool exhausted',
};

describe('formatApplyLine', () => {
  it('writes one line per finished change, retry and interrupt', () => {
    const events: ApplyEvent[] = [
      { type: 'change-end', at: 1, ...result({ outcome: 'applied' }) },
      { type: 'change-end', at: 2, ...result({ outcome: 'already-done', reason: 'the journal records it done', durationMs: 3 }) },
      { type: 'change-end', at: 3, ...result({ outcome: 'failed', failure: serverError, durationMs: 1_520 }) },
      { type: 'change-end', at: 3, ...result({ outcome: 'failed', failure: { operation: 'deleteInvitation', message: 'deleteInvitation DELETE /x failed: connection reset' } }) },
      { type: 'change-end', at: 4, ...result({ address: 'activeOrganisation', kind: 'set-active', outcome: 'skipped', reason: 'organisations.acme.billing failed' }) },
      { type: 'change-end', at: 5, ...result({ outcome: 'not-started', reason: 'apply was interrupted' }) },
      { type: 'change-retry', at: 6, address: 'organisations.acme.billing', attempt: 2, delayMs: 400, status: 503, errorCode: 'unavailable' },
      { type: 'change-retry', at: 7, address: 'organisations.acme.billing', attempt: 3, delayMs: 1_600 },
      { type: 'interrupted', at: 8, inFlight: 3 },
    ];
    expect(events.map(formatApplyLine).join('\n')).toMatchInlineSnapshot(`
      "✓ organisations.acme.billing applied (120 ms)
      ✓ organisations.acme.billing already done: the journal records it done (3 ms)
      ✗ organisations.acme.billing failed: updateBillingDetails: HTTP 500 internal: database unavailable (cause: pool exhausted) (1.5 s)
      ✗ organisations.acme.billing failed: deleteInvitation DELETE /x failed: connection reset (120 ms)
      – activeOrganisation skipped: organisations.acme.billing failed
      – organisations.acme.billing not started: apply was interrupted
      ↻ organisations.acme.billing retrying in 400 ms (attempt 2, HTTP 503 unavailable)
      ↻ organisations.acme.billing retrying in 1.6 s (attempt 3)
      Interrupted: no new changes will start; waiting for 3 changes in flight to finish."
    `);
  });

  it('has no line for the start and end of apply or the start of a change', () => {
    expect(formatApplyLine({ type: 'apply-start', at: 0, total: 3, parallelism: 4 })).toBeUndefined();
    expect(formatApplyLine({ type: 'change-start', at: 0, address: 'a', organisation: 'a', kind: 'billing' })).toBeUndefined();
    expect(formatApplyLine({ type: 'apply-end', at: 0, summary: makeSummary([]) })).toBeUndefined();
  });

  it('keeps escape sequences in service messages from reaching the terminal', () => {
    const failure = { ...serverError, serviceMessage: 'x\u001b[2Jy\nz' };
    const line = formatApplyLine({ type: 'change-end', at: 0, ...result({ outcome: 'failed', failure }) });
    expect(line).not.toMatch(/[\u001b\n]/);
    expect(line).toContain('x\\u001b[2Jy\\nz');
  });
});

describe('formatProgress', () => {
  it('shows invisible and bidirectional characters in organisations, addresses and service messages escaped, the organisation marked', () => {
    const failed = result({
      outcome: 'failed',
      organisation: 'ac\u202Eme',
      address: 'organisations["ac\u202Eme"].billing',
      failure: { operation: 'updateBillingDetails', message: 'm', status: 422, serviceCode: 'invalid', serviceMessage: 'bad value "sub\u200b_acme"' },
    });
    const line = formatApplyLine({ type: 'change-end', at: 1, ...failed })!;
    const summary = formatApplySummary(makeSummary([failed]), { color: false });
    expect(line + summary).not.toMatch(/[\u200B\u202E]/);
    expect(line).toContain('organisations["ac\\u202Eme"].billing failed: updateBillingDetails: HTTP 422 invalid: bad value "sub\\u200B_acme"');
    expect(summary).toContain('✗ ac\\u202Eme (contains invisible characters): organisations["ac\\u202Eme"].billing');
  });

  it('pads the count so the line keeps its width, and shows failures only when there are some', () => {
    expect(formatProgress({ done: 120, total: 1000, failed: 2, elapsedMs: 12_345 })).toBe('[  120/1000 ] 2 failed · 12.3 s');
    expect(formatProgress({ done: 5, total: 1000, failed: 0, elapsedMs: 400 })).toBe('[    5/1000 ] 0.4 s');
    expect(formatProgress({ done: 1000, total: 1000, failed: 0, elapsedMs: 400 }).indexOf(']')).toBe('[  120/1000 ]'.length - 1);
  });
});

describe('formatApplySummary', () => {
  it('says apply is complete when nothing failed', () => {
    const summary = makeSummary([...Array.from({ length: 10 }, () => result({ outcome: 'applied' })), result({ outcome: 'already-done' }), result({ outcome: 'already-done' })]);
    expect(formatApplySummary(summary, { color: false })).toMatchInlineSnapshot(`
      "Apply results: 10 applied, 2 already done, 0 skipped, 0 not started, 0 failed (12 changes in 12.3 s).

      Apply complete: 10 applied, 2 already done.
      "
    `);
  });

  it('lists every failure with its organisation, operation and the Error body, and says to run apply again', () => {
    const summary = makeSummary([
      result({ outcome: 'applied', address: 'organisations.globex.billing', organisation: 'globex' }),
      result({ outcome: 'failed', failure: serverError }),
      result({ outcome: 'failed', address: 'organisations.initech.invitations.accept.inv_1', organisation: 'initech', kind: 'accept-invitation', failure: { operation: 'acceptInvitation', message: 'acceptInvitation POST /x failed: timeout after 30 s' } }),
      result({ outcome: 'skipped', address: 'activeOrganisation', kind: 'set-active', reason: 'organisations.acme.billing failed' }),
    ]);
    expect(formatApplySummary(summary, { color: false })).toMatchInlineSnapshot(`
      "Apply results: 1 applied, 0 already done, 1 skipped, 0 not started, 2 failed (4 changes in 12.3 s).

      Failures:
        ✗ acme: organisations.acme.billing
            operation: updateBillingDetails (HTTP 500)
            error: internal: database unavailable
            cause: pool exhausted
        ✗ initech: organisations.initech.invitations.accept.inv_1
            operation: acceptInvitation
            error: acceptInvitation POST /x failed: timeout after 30 s

      Apply finished with 2 failures: run orgform apply again to retry what is left.
      "
    `);
  });

  it('says apply was interrupted and how much did not start', () => {
    const summary = makeSummary([result({ outcome: 'applied' }), result({ outcome: 'not-started' }), result({ outcome: 'not-started' })], { interrupted: true });
    expect(formatApplySummary(summary, { color: false }).trimEnd().split('\n').at(-1)).toBe(
      'Apply interrupted: 1 applied, 0 already done, 2 not started; run orgform apply again to finish.',
    );
  });

  it('lists every stale change with why it was not written, and says to plan again', () => {
    const reason = 'billing.billingEmail changed on the service since the plan, from "a@x" to "b@x" (the plan showed "a@x" → "c@x"); nothing was written for this organisation. Run orgform plan again to review it';
    const summary = makeSummary([result({ outcome: 'applied', address: 'organisations.globex.billing' }), result({ outcome: 'stale', reason })]);
    const text = formatApplySummary(summary, { color: false });
    expect(text).toContain('Apply results: 1 applied, 0 already done, 0 skipped, 0 not started, 1 stale, 0 failed (2 changes in 12.3 s).');
    expect(text).toContain(`Stale (changed on the service since the plan; nothing was written for them):\n  ! organisations.acme.billing: ${reason}\n`);
    expect(text.trimEnd().split('\n').at(-1)).toBe('Apply finished with 1 stale change: run orgform plan again to review it.');
    expect(formatApplyLine({ type: 'change-end', at: 0, ...result({ outcome: 'stale', reason: 'x' }) })).toBe('! organisations.acme.billing stale, not written: x');
  });

  it('uses colour only when asked', () => {
    const summary = makeSummary([result({ outcome: 'applied' }), result({ outcome: 'failed', failure: serverError })]);
    expect(formatApplySummary(summary, { color: false })).not.toMatch(/\u001b/);
    const colored = formatApplySummary(summary, { color: true });
    expect(colored).toContain('\u001b[31m1 failed\u001b[39m');
    expect(colored).toContain('\u001b[32m1 applied\u001b[39m');
    expect(colored).toContain('\u001b[1mFailures:\u001b[22m');
  });
});

describe('formatApplyEventJson', () => {
  it('writes one snake_case object per line with a type first, leaving out absent fields', () => {
    const events: ApplyEvent[] = [
      { type: 'apply-start', at: 10, total: 2, parallelism: 4 },
      { type: 'change-start', at: 11, address: 'organisations.acme.billing', organisation: 'acme', kind: 'billing' },
      { type: 'change-retry', at: 12, address: 'organisations.acme.billing', attempt: 1, delayMs: 200, status: 503, errorCode: 'unavailable' },
      { type: 'change-end', at: 13, ...result({ outcome: 'failed', failure: serverError }) },
      { type: 'change-end', at: 14, ...result({ outcome: 'already-done', kind: 'remove-channel', address: 'organisations.acme.notificationChannels.remove.ch_1', reason: '404 on delete' }) },
      { type: 'interrupted', at: 15, inFlight: 1 },
      { type: 'apply-end', at: 16, summary: makeSummary([result({ outcome: 'failed' }), result({ outcome: 'already-done' })], { interrupted: true }) },
    ];
    expect(events.map(formatApplyEventJson).join('\n')).toMatchInlineSnapshot(`
      "{"type":"apply_start","at":10,"total":2,"parallelism":4}
      {"type":"change_start","at":11,"address":"organisations.acme.billing","organisation":"acme","kind":"billing_update"}
      {"type":"change_retry","at":12,"address":"organisations.acme.billing","attempt":1,"delay_ms":200,"status":503,"error_code":"unavailable"}
      {"type":"change_end","at":13,"address":"organisations.acme.billing","organisation":"acme","kind":"billing_update","outcome":"failed","failure":{"operation":"updateBillingDetails","message":"updateBillingDetails PUT /organisations/org_acme/billing failed with HTTP 500: internal: database unavailable (cause: pool exhausted)","status":500,"service_code":"internal","service_message":"database unavailable","service_cause":"pool exhausted"},"duration_ms":120}
      {"type":"change_end","at":14,"address":"organisations.acme.notificationChannels.remove.ch_1","organisation":"acme","kind":"notification_channel_remove","outcome":"already_done","reason":"404 on delete","duration_ms":120}
      {"type":"interrupted","at":15,"in_flight":1}
      {"type":"apply_end","at":16,"summary":{"total":2,"applied":0,"already_done":1,"skipped":0,"not_started":0,"stale":0,"failed":1,"interrupted":true,"elapsed_ms":12345}}"
    `);
  });

  it('maps every outcome to a wire string', () => {
    const outcomes = Object.keys({ applied: 1, 'already-done': 1, skipped: 1, 'not-started': 1, stale: 1, failed: 1 } satisfies Record<Outcome, 1>) as Outcome[];
    const wire = outcomes.map((outcome) => (JSON.parse(formatApplyEventJson({ type: 'change-end', at: 0, ...result({ outcome }) })) as { outcome: string }).outcome);
    expect(wire).toEqual(['applied', 'already_done', 'skipped', 'not_started', 'stale', 'failed']);
  });

  it('keeps each object on one line, without a newline of its own, even when a reason has one', () => {
    const line = formatApplyEventJson({ type: 'change-end', at: 0, ...result({ outcome: 'skipped', reason: 'a\nb' }) });
    expect(line).not.toContain('\n');
    expect(JSON.parse(line)).toMatchObject({ reason: 'a\nb' });
  });
});

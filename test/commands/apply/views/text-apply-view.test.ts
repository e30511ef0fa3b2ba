import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ApplyEvent, ChangeResult } from '../../../../src/executor/events.js';
import type { RateStatus } from '../../../../src/api/rate/rate-gate.js';
import type { LogFrame } from '../../../../src/text/log-frame.js';
import { createTextApplyView, type TextApplyViewOptions } from '../../../../src/commands/apply/views/text-apply-view.js';
import { billing, makePlan, makeSummary, result } from '../../../support/plan-fixtures.js';
import { sinks } from '../../../support/sinks.js';

/** A frame that shows where it folds and guards. */
const MARKED: LogFrame = {
  fold: (title, text) => `<fold ${title}>\n${text}</fold>\n`,
  open: (title) => `<open ${title}>\n`,
  close: () => '</open>\n',
  guard: (text) => `<guard>${text}</guard>`,
};

function view(tty: boolean, options: Partial<TextApplyViewOptions> = {}, rate: Partial<RateStatus> = {}) {
  const { out, err } = sinks(tty);
  let clock = 0;
  const v = createTextApplyView({ out, err, color: false, now: () => clock, frame: MARKED, ...options });
  v.applyStarting({ rateStatus: () => ({ rps: undefined, pausedMs: 0, waiting: 0, throttled: 0, ...rate }) }, { changes: [], serviceKey: 'https://orgs.example.test' });
  return { v, out, err, tick: (ms: number) => (clock += ms) };
}

const end = (at: number, parts: Partial<ChangeResult> & Pick<ChangeResult, 'outcome'>): ApplyEvent => ({ type: 'change-end', at, ...result(parts) });
const failure = { operation: 'updateBillingDetails', message: 'boom', status: 500, serviceCode: 'internal', serviceMessage: 'database down' };

afterEach(() => {
  vi.useRealTimers();
});

describe('the text apply view in a log, up to the compact threshold', () => {
  it('shows the plan whole and folded, a line per change and retry folded under “Applying N changes”, then the summary guarded', async () => {
    const { v, out } = view(false);
    const plan = makePlan({ changes: [billing('acme', { billingEmail: ['a@x.test', 'b@x.test'] })] });
    await v.planMade(plan);
    v.event({ type: 'apply-start', total: 1, parallelism: 10, at: 0 });
    v.event({ type: 'change-start', address: 'organisations.acme.billing', organisation: 'acme', kind: 'billing', at: 0 });
    v.event({ type: 'change-retry', address: 'organisations.acme.billing', attempt: 1, delayMs: 5, status: 503, at: 1 });
    v.event(end(2, { outcome: 'applied' }));
    const summary = makeSummary([result({ outcome: 'applied' })]);
    v.event({ type: 'apply-end', at: 3, summary });
    v.applyStopped();
    await v.applyReported(summary);
    expect(out.text).toMatch(/^<fold Plan: 1 to change, 0 to remove, 0 to accept\.>\norgform plan for https:\/\/orgs\.example\.test\n[^]*billingEmail: "a@x\.test" → "b@x\.test"\n[^]*<\/fold>\n/);
    expect(out.text.slice(out.text.indexOf('</fold>\n') + 8)).toBe(
      [
        '<open Applying 1 change>',
        '↻ organisations.acme.billing retrying in 5 ms (attempt 1, HTTP 503)',
        '✓ organisations.acme.billing applied (120 ms)',
        '</open>',
        '<guard>Apply results: 1 applied, 0 already done, 0 skipped, 0 not started, 0 failed (1 change in 12.3 s).',
        '',
        'Apply complete: 1 applied, 0 already done.',
        '</guard>',
      ].join('\n'),
    );
  });

  it('closes the fold when the apply stops half-way, so that it does not swallow the rest of the log', () => {
    const { v, out } = view(false);
    v.event({ type: 'apply-start', total: 2, parallelism: 1, at: 0 });
    v.applyStopped();
    v.applyStopped();
    expect(out.text).toBe('<open Applying 2 changes>\n</open>\n');
  });
});

describe('the text apply view on a terminal', () => {
  it('redraws the live line in place, writes a failure above it, clears it at the end, and leaves the summary unguarded', async () => {
    const { v, out, tick } = view(true);
    v.event({ type: 'apply-start', total: 2, parallelism: 10, at: 0 });
    tick(1_500);
    v.event(end(1_500, { outcome: 'failed', failure }));
    v.event(end(1_600, { address: 'organisations.globex.billing', outcome: 'applied' }));
    const summary = makeSummary([result({ outcome: 'failed', failure }), result({ outcome: 'applied' })]);
    v.event({ type: 'apply-end', at: 2_000, summary });
    v.applyStopped();
    await v.applyReported(summary);
    expect(out.text.split('Apply results:')[0]).toBe(
      [
        '\r\x1b[2K[ 0/2 ] 0.0 s',
        '\r\x1b[2K✗ organisations.acme.billing failed: updateBillingDetails: HTTP 500 internal: database down (120 ms)\n',
        '\r\x1b[2K[ 1/2 ] 1 failed · 1.5 s · 0.7/s · ETA 2s',
        '\r\x1b[2K[ 2/2 ] 1 failed · 1.5 s · 1.3/s',
        '\r\x1b[2K',
      ].join(''),
    );
    expect(out.text).not.toContain('<guard>');
  });

  it('writes a wait above the live line while changes run, and as a guarded notice on standard error before they do', () => {
    const { v, out, err } = view(true);
    const wait = { reason: 'retry' as const, what: 'page 2 of the listing (all pages)', until: 8_000, after: 'HTTP 503', at: 0 };
    v.event({ type: 'wait', ...wait });
    expect([out.text, err.text]).toEqual(['', '<guard>Waiting until 00:00:08 UTC (in 8 s) to send page 2 of the listing (all pages) again, after HTTP 503.</guard>\n']);
    v.event({ type: 'apply-start', total: 1, parallelism: 10, at: 0 });
    v.event({ type: 'wait', ...wait });
    expect(out.text).toBe('\r\x1b[2K[ 0/1 ] 0.0 s' + '\r\x1b[2KWaiting until 00:00:08 UTC (in 8 s) to send page 2 of the listing (all pages) again, after HTTP 503.\n' + '\r\x1b[2K[ 0/1 ] 0.0 s');
    v.applyStopped();
  });

  it('shows the pause while the rate limiter holds requests back, and a line for each rate change', () => {
    const { v, out } = view(true, {}, { pausedMs: 800, waiting: 3, rps: 4 });
    v.event({ type: 'apply-start', total: 1, parallelism: 10, at: 0 });
    v.event({ type: 'rate', reason: 'throttled', rps: 4, pausedMs: 800, waiting: 3, at: 0 });
    expect(out.text).toBe(
      '\r\x1b[2K[ 0/1 ] 0.0 s · paused 800 ms (HTTP 429)' + '\r\x1b[2K⏸ rate limited (HTTP 429): every request paused 800 ms, then 4.0 requests/s\n' + '\r\x1b[2K[ 0/1 ] 0.0 s · paused 800 ms (HTTP 429)',
    );
  });

  it('redraws at most ten times a second however fast changes end, and shows their rate and the time left', () => {
    const { v, out, tick } = view(true);
    v.event({ type: 'apply-start', total: 3_000, parallelism: 16, at: 0 });
    // 2,000 changes in two seconds: one a millisecond.
    for (let i = 0; i < 2_000; i += 1) {
      tick(1);
      v.event(end(i, { address: `organisations.o${i}.billing`, outcome: 'applied' }));
    }
    const lines = out.text.split('\r\x1b[2K').filter(Boolean);
    expect(lines.length).toBeLessThanOrEqual(1 + 2 * 10);
    expect(lines.length).toBeGreaterThanOrEqual(2 * 10);
    expect(lines.at(-1)).toBe('[ 2000/3000 ] 2.0 s · 1000/s · ETA 1s');
  });

  it('keeps the elapsed time moving twice a second while changes wait, and stops when the apply does', () => {
    vi.useFakeTimers();
    const { v, out, tick } = view(true);
    v.event({ type: 'apply-start', total: 1, parallelism: 10, at: 0 });
    tick(1_000);
    vi.advanceTimersByTime(1_000);
    expect(out.text.split('\r\x1b[2K').filter(Boolean)).toEqual(['[ 0/1 ] 0.0 s', '[ 0/1 ] 1.0 s', '[ 0/1 ] 1.0 s']);
    v.applyStopped();
    vi.advanceTimersByTime(5_000);
    expect(out.text.split('\r\x1b[2K').filter(Boolean)).toHaveLength(3);
  });
});

describe('the text apply view in a log, past the compact threshold', () => {
  it('shows a digest of the plan, then progress lines on a timer and each failure or stale change as it happens, retries counted', async () => {
    vi.useFakeTimers();
    const { v, out, tick } = view(false, { compactAbove: 2, progressIntervalMs: 1_000 });
    const plan = makePlan({ changes: ['a', 'b', 'c'].map((s) => billing(s, { billingEmail: ['x@y.test', `${s}@y.test`] })) });
    await v.planMade(plan);
    expect(out.text).toContain('orgform will perform 3 changes:\n');
    out.text = '';
    v.event({ type: 'apply-start', total: 3, parallelism: 2, at: 0 });
    v.event({ type: 'change-retry', address: 'organisations.a.billing', attempt: 1, delayMs: 5, at: 0 });
    v.event(end(500, { address: 'organisations.a.billing', outcome: 'applied' }));
    v.event(end(600, { address: 'organisations.b.billing', outcome: 'failed', failure }));
    tick(1_000);
    vi.advanceTimersByTime(1_000);
    v.event(end(1_200, { address: 'organisations.c.billing', outcome: 'stale', reason: 'billing.billingEmail changed' }));
    v.event({ type: 'apply-end', at: 1_300, summary: makeSummary([]) });
    tick(5_000);
    vi.advanceTimersByTime(5_000);
    expect(out.text).toBe(
      [
        '<open Applying 3 changes>',
        'Applying 3 changes, 2 at a time. Progress every 1s at first (less often later) and each failure as it happens; one line per change with --format json.',
        '✗ organisations.b.billing failed: updateBillingDetails: HTTP 500 internal: database down (120 ms)',
        '[ 2/3 ] 2.0/s · ETA 1s · 1 failed · 1 retry · elapsed 1s',
        '! organisations.c.billing stale, not written: billing.billingEmail changed',
        '</open>',
        '',
      ].join('\n'),
    );
  });
});

describe('the text apply view around the apply', () => {
  it('with nothing to do adds nothing to a plan it showed, and says so for a saved plan it did not', async () => {
    const zero = makeSummary([]);
    const shown = view(false);
    await shown.v.planMade(makePlan());
    const before = shown.out.text;
    shown.v.event({ type: 'apply-start', total: 0, parallelism: 10, at: 0 });
    shown.v.event({ type: 'apply-end', at: 0, summary: zero });
    shown.v.applyStopped();
    await shown.v.applyReported(zero);
    expect(shown.out.text).toBe(before);

    const saved = view(true);
    saved.v.event({ type: 'apply-start', total: 0, parallelism: 10, at: 0 });
    await saved.v.applyReported(zero);
    expect(saved.out.text).toBe('No changes. Your organisations match the configuration.\n');
  });

  it('writes the budget and the cancellation with the plan, warnings and a taken-over lock on standard error', () => {
    const { v, out, err } = view(false);
    v.budgetChecked({ changes: 3, maxChanges: 5 });
    v.cancelled();
    v.warn('Warning: the token expires soon.');
    v.lockTakenOver('/repo/.orgform/state.json', 4242);
    expect(out.text).toBe('Change budget: 3 of at most 5.\n\nApply cancelled. Nothing was changed.\n');
    expect(err.text).toBe('Warning: the token expires soon.\nTook over a stale lock on /repo/.orgform/state.json left by pid 4242 (no longer running).\n');
  });
});

import { describe, expect, it } from 'vitest';
import { ApplyReportRecord } from '../../../../src/commands/apply/views/apply-report-record.js';
import type { ApplyEvent } from '../../../../src/executor/events.js';
import type { ApplicableChange } from '../../../../src/plan/types.js';
import { makeSummary, result } from '../../../support/plan-fixtures.js';

const T0 = 1_000_000;
const context = { baseUrl: 'https://orgs.example.test', startedAt: T0 };

function changes(n: number): ApplicableChange[] {
  return Array.from({ length: n }, (_, i) => ({ address: `organisations.org-${i}.billing`, kind: 'billing', action: 'update', organisation: { slug: `org-${i}`, id: `org_${i}` } }) as unknown as ApplicableChange);
}

const start = (i: number, at: number): ApplyEvent => ({ type: 'change-start', address: `organisations.org-${i}.billing`, organisation: `org-${i}`, kind: 'billing', at });
const end = (i: number, at: number, outcome: 'applied' | 'failed' | 'stale', extra = {}): ApplyEvent => ({
  type: 'change-end',
  address: `organisations.org-${i}.billing`,
  organisation: `org-${i}`,
  kind: 'billing',
  outcome,
  durationMs: 50,
  at,
  ...extra,
});

describe('what the apply report is made of', () => {
  it('keeps the changes as apply starts, in plan order, though apply lets each go as it ends', () => {
    const record = new ApplyReportRecord();
    const given = changes(3);
    record.starting(given);
    given.length = 0;
    const summary = makeSummary([]);
    record.event({ type: 'apply-end', at: T0 + 10, summary });
    const report = record.report(T0 + 20, context);
    expect(report.changes.map((c) => [c.address, c.kind, c.action, c.organisation.slug])).toEqual([
      ['organisations.org-0.billing', 'billing', 'update', 'org-0'],
      ['organisations.org-1.billing', 'billing', 'update', 'org-1'],
      ['organisations.org-2.billing', 'billing', 'update', 'org-2'],
    ]);
    expect(report.summary).toBe(summary);
    expect(report.baseUrl).toBe('https://orgs.example.test');
  });

  it('takes the run’s own summary once apply ends', () => {
    const record = new ApplyReportRecord();
    record.starting(changes(2));
    const summary = makeSummary([result({ outcome: 'applied' }), result({ outcome: 'failed' })]);
    record.event({ type: 'apply-start', total: 2, parallelism: 2, at: T0 });
    record.event(end(0, T0 + 5, 'applied'));
    record.event({ type: 'apply-end', at: T0 + 9, summary });
    expect(record.report(T0 + 9, context).summary).toBe(summary);
  });

  it('says, of a run that stopped without its summary, what ended as it ended, what was in flight as not known, and the rest as not started', () => {
    const record = new ApplyReportRecord();
    record.starting(changes(5));
    record.event({ type: 'apply-start', total: 5, parallelism: 2, at: T0 + 1_000 });
    record.event(start(0, T0 + 1_001));
    record.event(start(1, T0 + 1_002));
    record.event(end(0, T0 + 1_100, 'applied'));
    record.event(end(1, T0 + 1_200, 'stale', { reason: 'billingEmail changed since the plan' }));
    record.event(start(3, T0 + 1_300));
    record.event(start(2, T0 + 1_301));
    record.event(end(2, T0 + 1_400, 'failed', { failure: { operation: 'updateBillingDetails', message: 'HTTP 500', status: 500 } }));
    record.event({ type: 'interrupted', inFlight: 1, at: T0 + 1_450 });
    const { summary } = record.report(T0 + 1_500, context);
    expect(summary).toMatchObject({ total: 5, applied: 1, stale: 1, failed: 2, notStarted: 1, alreadyDone: 0, skipped: 0, interrupted: true, elapsedMs: 500 });
    expect(summary.notApplied.map((r) => [r.address, r.outcome, r.reason ?? r.failure?.message])).toEqual([
      ['organisations.org-1.billing', 'stale', 'billingEmail changed since the plan'],
      ['organisations.org-2.billing', 'failed', 'HTTP 500'],
      ['organisations.org-3.billing', 'failed', 'in flight when the run stopped: whether it was made is not known; run orgform plan to see'],
      ['organisations.org-4.billing', 'not-started', 'the run stopped before this change started'],
    ]);
  });

  it('reports a run stopped before apply started as having no changes, with why it stopped', () => {
    const report = new ApplyReportRecord().report(T0 + 700, { ...context, stopped: 'The saved plan is stale.' });
    expect(report.changes).toEqual([]);
    expect(report.summary).toMatchObject({ total: 0, applied: 0, notApplied: [], elapsedMs: 700 });
    expect(report.stopped).toBe('The saved plan is stale.');
  });
});

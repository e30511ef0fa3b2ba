import { describe, expect, it } from 'vitest';
import { createNdjsonApplyView } from '../../../../src/commands/apply/views/ndjson-apply-view.js';
import { billing, makePlan, makeSummary } from '../../../support/plan-fixtures.js';
import { sinks } from '../../../support/sinks.js';

describe('the NDJSON apply view', () => {
  it('writes one JSON object per event on standard output, and nothing else there', async () => {
    const { out, err } = sinks();
    const view = createNdjsonApplyView({ out, err, review: true, color: false });
    await view.planMade(makePlan({ changes: [billing('acme', {})] }));
    view.budgetChecked({ changes: 1, maxChanges: 2 });
    view.event({ type: 'apply-start', total: 0, parallelism: 10, at: 5 });
    view.event({ type: 'apply-end', at: 6, summary: makeSummary([], { elapsedMs: 1 }) });
    await view.applyReported(makeSummary([]));
    expect(out.text.trim().split('\n').map((line) => JSON.parse(line) as { type: string })).toEqual([
      { type: 'apply_start', at: 5, total: 0, parallelism: 10 },
      { type: 'apply_end', at: 6, summary: { total: 0, applied: 0, already_done: 0, skipped: 0, not_started: 0, stale: 0, failed: 0, interrupted: false, elapsed_ms: 1 } },
    ]);
    expect(err.text).toContain('Plan: 1 to change, 0 to remove, 0 to accept.');
  });

  it('shows the plan for review on standard error only when it will ask', async () => {
    const { out, err } = sinks();
    const view = createNdjsonApplyView({ out, err, review: false, color: false });
    await view.planMade(makePlan({ changes: [billing('acme', {})] }));
    expect(err.text).toBe('');
  });

  it('writes the cancellation, warnings and a taken-over lock on standard error', () => {
    const { out, err } = sinks();
    const view = createNdjsonApplyView({ out, err, review: true, color: false });
    view.cancelled();
    view.warn('Warning: soon.');
    view.lockTakenOver('/s.json', 7);
    expect(out.text).toBe('');
    expect(err.text).toBe('\nApply cancelled. Nothing was changed.\nWarning: soon.\nTook over a stale lock on /s.json left by pid 7 (no longer running).\n');
  });

  it('writes a wait as an event on standard output, whenever it comes', () => {
    const { out, err } = sinks();
    const view = createNdjsonApplyView({ out, err, review: true, color: false });
    view.event({ type: 'wait', reason: 'rate-limit', what: 'the first page of the listing (all pages)', until: 201_000, waiting: 1, at: 1_000 });
    view.event({ type: 'wait', reason: 'pacing', what: 'a read', until: 9_000, rps: 0.333, waiting: 3, at: 2_000 });
    expect(out.text).toBe(
      '{"type":"wait","at":1000,"reason":"rate_limit","what":"the first page of the listing (all pages)","until":201000,"waiting":1}\n' +
        '{"type":"wait","at":2000,"reason":"pacing","what":"a read","until":9000,"waiting":3,"rps":0.33}\n',
    );
    expect(err.text).toBe('');
  });
});

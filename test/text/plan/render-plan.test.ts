import { describe, expect, it } from 'vitest';
import { renderPlan } from '../../../src/text/plan/render-plan.js';
import { renderPlanForReview } from '../../../src/text/plan/render-plan-for-review.js';
import { billing, makePlan } from '../../support/plan-fixtures.js';

const plan = (n: number) => makePlan({ changes: Array.from({ length: n }, (_, i) => billing(`org-${i}`, { billingEmail: ['a@x.test', 'b@x.test'] })) });

describe('renderPlan', () => {
  it('renders the format asked for', () => {
    expect(renderPlan(plan(1), 'text', false)).toContain('Plan: 1 to change');
    expect(JSON.parse(renderPlan(plan(1), 'json', false))).toHaveProperty('format_version');
    expect(renderPlan(plan(1), 'markdown', false)).toContain('<details>');
  });

  it('colours text only when asked', () => {
    expect(renderPlan(plan(1), 'text', true)).toContain('\u001b[');
    expect(renderPlan(plan(1), 'text', false)).not.toContain('\u001b[');
  });
});

describe('renderPlanForReview', () => {
  it('shows the whole plan on a terminal, and in a log up to the threshold', () => {
    expect(renderPlanForReview(plan(3), { tty: true, color: false, compactAbove: 2 })).toBe(renderPlan(plan(3), 'text', false));
    expect(renderPlanForReview(plan(2), { tty: false, color: false, compactAbove: 2 })).toBe(renderPlan(plan(2), 'text', false));
  });

  it('shows a digest in a log past the threshold, never coloured', () => {
    const digest = renderPlanForReview(plan(3), { tty: false, color: true, compactAbove: 2 });
    expect(digest).toContain('orgform will perform 3 changes:');
    expect(digest).not.toContain('\u001b[');
  });

  it('colours as the caller says, in a log too (FORCE_COLOR)', () => {
    expect(renderPlanForReview(plan(1), { tty: false, color: true })).toContain('\u001b[');
    expect(renderPlanForReview(plan(1), { tty: true, color: false })).not.toContain('\u001b[');
  });
});

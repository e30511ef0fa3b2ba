import { describe, expect, it } from 'vitest';
import type { LogFrame } from '../../../src/text/log-frame.js';
import { createPlanView, renderPlan, type PlanFormat } from '../../../src/commands/plan/view.js';
import { desiredState, billing, makePlan } from '../../support/plan-fixtures.js';
import { sinks } from '../../support/sinks.js';

const FOLDED: LogFrame = { fold: (title, text) => `<${title}>\n${text}`, open: () => '', close: () => '', guard: (t) => t };
const plan = makePlan({ changes: [billing('acme', { billingEmail: ['a@x.test', 'b@x.test'] })] });

function render(format: PlanFormat) {
  const { out, err } = sinks();
  return { view: createPlanView({ format, out, err, color: false, frame: FOLDED }), out, err };
}

describe('the plan view', () => {
  it('folds a text plan under its verdict and shows the budget under it', async () => {
    const { view, out } = render('text');
    await view.planMade(plan, { hazards: [], budget: { changes: 1, maxChanges: 3 } });
    expect(out.text.startsWith('<Plan: 1 to change, 0 to remove, 0 to accept.>\norgform plan for ')).toBe(true);
    expect(out.text.endsWith('Plan: 1 to change, 0 to remove, 0 to accept.\nChange budget: 1 of at most 3.\n')).toBe(true);
  });

  it('keeps standard output to the document alone for json and markdown', async () => {
    for (const format of ['json', 'markdown'] as const) {
      const { view, out } = render(format);
      await view.planMade(plan, { hazards: [], budget: { changes: 1, maxChanges: 3 } });
      expect(out.text).not.toContain('Change budget');
      expect(out.text).not.toContain('<Plan:');
    }
    const { view, out } = render('json');
    await view.planMade(plan, { hazards: [] });
    expect(JSON.parse(out.text)).toMatchObject({ changes: [{ address: 'organisations.acme.billing' }] });
  });

  it('says where the plan was saved, and that it is over budget, on standard error', async () => {
    const { view, out, err } = render('markdown');
    view.planSaved('plan.json');
    await view.planChecked(plan, [{ kind: 'over-budget', changes: 5, maxChanges: 3 }], desiredState());
    expect(out.text).toBe('');
    expect(err.text).toBe(
      'Saved the plan to plan.json. Apply exactly these changes with: orgform apply plan.json\n' +
        'Error: The plan has 5 changes, more than --max-changes 3. Review the plan; then raise --max-changes to at least 5, or apply in parts with --target or --shard.\n',
    );
  });

  it('suggests an apply command that works pasted as it is, for a path with a space or starting with -', () => {
    const { view, err } = render('text');
    view.planSaved('my plan.json');
    view.planSaved('-x.json');
    expect(err.text).toBe(
      "Saved the plan to my plan.json. Apply exactly these changes with: orgform apply 'my plan.json'\n" +
        'Saved the plan to -x.json. Apply exactly these changes with: orgform apply ./-x.json\n',
    );
  });

  it('adds nothing at the end of a plan apply could go ahead with', async () => {
    const { view, out, err } = render('text');
    await view.planChecked(plan, [], desiredState());
    expect(out.text + err.text).toBe('');
  });
});

const sized = (n: number) => makePlan({ changes: Array.from({ length: n }, (_, i) => billing(`org-${i}`, { billingEmail: ['a@x.test', 'b@x.test'] })) });

describe('renderPlan', () => {
  it('renders the format asked for', () => {
    const plain = { color: false };
    expect(renderPlan(sized(1), 'text', plain)).toContain('Plan: 1 to change');
    expect(JSON.parse(renderPlan(sized(1), 'json', plain))).toHaveProperty('format_version');
    expect(renderPlan(sized(1), 'markdown', plain)).toContain('| Kind and field | Changes | Organisations | Groups | Single changes |');
    expect(renderPlan(sized(1), 'html', plain)).toMatch(/^<!doctype html>\n[^]*<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;;/);
  });

  it('colours text only when asked', () => {
    expect(renderPlan(sized(1), 'text', { color: true })).toContain('\u001b[');
    expect(renderPlan(sized(1), 'text', { color: false })).not.toContain('\u001b[');
  });

  it('links the plan page from the comment, and marks the changes of a stale saved plan on the page', () => {
    expect(renderPlan(sized(60), 'markdown', { color: false, pageUrl: 'https://ci.example/jobs/1/artifacts/file/plan.html', maxLength: 1_500 })).toContain('[the plan page](https://ci.example/jobs/1/artifacts/file/plan.html)');
    const reason = 'organisations.org-3: billingEmail is now c@x.test since the plan';
    const stale = { hazards: [{ kind: 'stale' as const, changed: [reason] }] };
    expect(renderPlan(sized(5), 'html', { color: false })).not.toContain(reason);
    expect(renderPlan(sized(5), 'html', { color: false, safety: stale })).toContain(reason);
  });
});

/**
 * The job summary (GitHub's $GITHUB_STEP_SUMMARY): counts, the organisations changed (capped),
 * problems, and for apply the failures in full, within GitHub's size limit, with outside text
 * escaped so that it cannot turn into Markdown or HTML.
 */
import { describe, expect, it } from 'vitest';
import { planHeadline, renderApplyStepSummary, renderPlanStepSummary } from '../../src/ci/render-step-summary.js';
import { billing, everyKindPlan, largePlan, makePlan, makeSummary, problem, result } from '../support/plan-fixtures.js';

describe('renderPlanStepSummary', () => {
  it('heads the organisations changed with exactly the number of bullets under it', () => {
    const text = renderPlanStepSummary(everyKindPlan());
    const [, count, list] = /\*\*Organisations changed \((\d+)\):\*\*\n\n((?:- .*\n)+)/.exec(text) ?? [];
    expect(list?.trimEnd().split('\n')).toHaveLength(Number(count));
  });

  it('gives the counts by action and names the organisations changed', () => {
    const text = renderPlanStepSummary(everyKindPlan());
    expect(text).toContain('### orgform plan');
    expect(text).toContain('**Plan: 2 to change, 2 to remove, 1 to accept.** · 2 unchanged · 1 already done (journal) · ⚠️ 1 problem');
    expect(text).toContain('| + accept | 1 |\n| ~ update | 2 |\n| - delete | 2 |');
    expect(text).toContain('**Organisations changed (2):**\n\n- acme: 3 changes\n- globex: 1 change\n\n**Active organisation:** → acme\n');
    expect(text).toContain('**Problems (1):**');
    expect(text).toContain('- umbrella: getOrganisation /organisations/umbrella failed with HTTP 403: forbidden: not a member');
  });

  it('caps the organisations named, saying how many more', () => {
    const text = renderPlanStepSummary(largePlan(120), { maxOrganisations: 50 });
    expect(text).toContain('**Organisations changed (120):**');
    expect(text).toContain('- org-00049: 3 changes\n- …and 70 more\n');
    expect(text).not.toContain('org-00050');
  });

  it('says there is nothing to do', () => {
    const text = renderPlanStepSummary(makePlan({ unchanged: ['acme'] }));
    expect(text).toContain('**No changes. Your organisations match the configuration.** · 1 unchanged');
    expect(text).not.toContain('| Action |');
  });

  it('escapes what came from the service or the file: no HTML, links, mentions or extra lines', () => {
    const plan = makePlan({ problems: [problem('evil<img src=x>', 'msg [link](https://x.example) @team\n## heading <script>')] });
    const text = renderPlanStepSummary(plan);
    expect(text).toContain('- evil&lt;img src=x&gt;: msg &#91;link&#93;(https:&#8203;//x.example) @&#8203;team&#92;n## heading &lt;script&gt;');
    expect(text).not.toMatch(/<img|<script|^## heading/m);
  });

  it('neutralises mentions and references in organisation names and problems, and shows invisible characters escaped and marked', () => {
    const plan = makePlan({ changes: [billing('@octocat', {}), billing('acme\u202Egnp.exe', {})], problems: [problem('#12', 'see GH-7 and owner/repo#3, ask @team')] });
    const text = renderPlanStepSummary(plan);
    expect(text).toContain('- @&#8203;octocat: 1 change');
    expect(text).toContain('- acme&#92;u202Egnp.exe (contains invisible characters): 1 change');
    expect(text).toContain('- #&#8203;12: see GH-&#8203;7 and owner/repo#&#8203;3, ask @&#8203;team');
    const shown = text.replace(/&#(\d+);/g, (_, n: string) => (n === '8203' ? '\u200B' : String.fromCodePoint(Number(n))));
    expect(shown).not.toMatch(/[\u202E]|@octocat|#\d|GH-\d/);
  });

  it('headline matches the text plan’s closing line', () => {
    expect(planHeadline(everyKindPlan())).toBe('Plan: 2 to change, 2 to remove, 1 to accept.');
    expect(planHeadline(makePlan({ problems: [problem('a', 'x')] }))).toBe('No changes in the organisations that could be read.');
  });
});

describe('renderApplyStepSummary', () => {
  const failure = result({
    outcome: 'failed',
    address: 'organisations.globex.billing',
    organisation: 'globex',
    failure: { operation: 'updateBillingDetails', message: 'HTTP 500', status: 500, serviceCode: 'internal', serviceMessage: 'database unavailable', serviceCause: 'replica lag', note: 'retried 5 times' },
  });

  it('gives the counts by outcome, the organisations changed and every failure in full', () => {
    const summary = makeSummary([result({ outcome: 'applied' }), result({ outcome: 'applied', address: 'organisations.acme.invitations.revoke.i' }), result({ outcome: 'skipped', organisation: 'initech' }), failure]);
    const text = renderApplyStepSummary(summary);
    expect(text).toContain('**Apply finished with 1 failure: 2 applied, 0 already done (4 changes in 12.3 s); run orgform apply again to retry what is left.**');
    expect(text).toContain('| ✓ applied | 2 |');
    expect(text).toContain('| ✗ failed | 1 |');
    expect(text).toContain('**Organisations changed (1):**\n\n- acme: 2 changes applied');
    expect(text).toContain(
      '#### Failures (1)\n\n- **globex**: organisations.globex.billing\n  - operation: updateBillingDetails (HTTP 500)\n  - error: internal: database unavailable\n  - cause: replica lag\n  - note: retried 5 times',
    );
  });

  it('counts stale changes and names each with why it was not written', () => {
    const summary = makeSummary([result({ outcome: 'applied', address: 'organisations.globex.billing', organisation: 'globex' }), result({ outcome: 'stale', reason: 'billing.billingEmail changed on the service since the plan' })]);
    const text = renderApplyStepSummary(summary);
    expect(text).toContain('**Apply finished with 1 stale change (changed on the service since the plan, not written): 1 applied, 0 already done (2 changes in 12.3 s); run orgform plan again to review them.**');
    expect(text).toContain('| ! stale | 1 |');
    expect(text).toContain('**Stale, not written (1):** changed on the service since the plan.\n\n- organisations.acme.billing: billing.billingEmail changed on the service since the plan');
  });

  it('counts every organisation changed though the summary names only the first of them', () => {
    const first = ['acme', 'globex', 'initech'].map((organisation) => ({ organisation, applied: 1 }));
    const summary = makeSummary([result({ outcome: 'applied' })], { applied: 5_000, total: 5_000, changed: { organisations: 5_000, first } });
    const text = renderApplyStepSummary(summary, { maxOrganisations: 2 });
    expect(text).toContain('**Organisations changed (5000):**\n\n- acme: 1 change applied\n- globex: 1 change applied\n- …and 4998 more\n');
    // Asked for more than the summary names: those it has, and how many more there are.
    expect(renderApplyStepSummary(summary, { maxOrganisations: 10 })).toContain('- initech: 1 change applied\n- …and 4997 more\n');
  });

  it('says when all went well, and when there was nothing to do', () => {
    expect(renderApplyStepSummary(makeSummary([result({ outcome: 'applied' })]))).toContain('**Apply complete: 1 applied, 0 already done (1 change in 12.3 s).**');
    const nothing = renderApplyStepSummary(makeSummary([]));
    expect(nothing).toContain('No changes. Your organisations match the configuration.');
    expect(nothing).not.toContain('| Outcome |');
  });

  it('stays under its byte budget with thousands of failures, counting those left out', () => {
    const failures = Array.from({ length: 5_000 }, (_, i) => ({ ...failure, organisation: `org-${i}`, address: `organisations.org-${i}.billing` }));
    const text = renderApplyStepSummary(makeSummary(failures), { maxBytes: 64 * 1024 });
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(64 * 1024);
    expect(text).toContain('#### Failures (5000)');
    expect(text).toMatch(/_…and \d+ more failures left out to stay under GitHub's summary limit; see the job log._/);
    expect(text).toContain('- **org-0**: organisations.org-0.billing');
  });

  it('escapes service text in failures', () => {
    const hostile = result({ outcome: 'failed', organisation: 'acme', failure: { operation: 'x', message: 'm', serviceCode: 'c', serviceMessage: '<b>bold</b>\n::set-output name=a::b' } });
    const text = renderApplyStepSummary(makeSummary([hostile]));
    expect(text).toContain('  - error: c: &lt;b&gt;bold&lt;/b&gt;&#92;n::set-output name=a::b');
  });
});

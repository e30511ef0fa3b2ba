import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderApplyStepSummary, withApplyPipeline } from '../../../../src/commands/apply/views/ci-apply-view.js';
import { desiredOrg, desiredState, makePlan, makeSummary, problem, result } from '../../../support/plan-fixtures.js';
import { recordingApplyView } from '../../../support/recording-view.js';
import { CONFIG_PROBLEM, githubStep } from '../../../support/github-step.js';
import { renderRunChartMermaid } from '../../../../src/text/plan/render-run-chart-mermaid.js';
import { rateLimitedTimeline } from '../../../text/plan/sample-apply-report.js';

const desired = desiredState({ organisations: [desiredOrg({ slug: 'umbrella' })] });
const configProblem = CONFIG_PROBLEM;

describe('withApplyPipeline', () => {
  it('annotates configuration problems and the organisations that could not be read, after telling the view', async () => {
    const { io, log, pipeline } = await githubStep();
    const inner = recordingApplyView();
    const view = withApplyPipeline(inner, pipeline, io.stdout);
    await view.configRejected!([configProblem]);
    const plan = makePlan({ problems: [problem('umbrella', 'HTTP 403')] });
    await view.planRefused!(plan, { kind: 'incomplete', problems: plan.problems }, desired);
    await view.planRefused!(plan, { kind: 'over-budget', changes: 9, maxChanges: 1 }, desired);
    expect(inner.sayings()).toEqual(['configRejected', 'planRefused', 'planRefused']);
    expect(log.text).toBe('::error file=orgs.yaml,line=5,col=7,title=orgform::unknown key "customerId"\n::error file=orgs.yaml,line=1,col=1,title=orgform::HTTP 403\n');
  });

  it('appends the outcome to the job summary after the view’s own report', async () => {
    const { cwd, io, pipeline } = await githubStep();
    const inner = recordingApplyView();
    await withApplyPipeline(inner, pipeline, io.stdout).applyReported(makeSummary([]));
    expect(inner.sayings()).toEqual(['applyReported']);
    expect(await readFile(join(cwd, 'summary.md'), 'utf8')).toBe('### orgform apply\n\n**No changes. Your organisations match the configuration.**\n\n\n');
  });

  it('annotates each failed change after the view’s report (outside its guard), and past ten says how many more', async () => {
    const { io, log, pipeline } = await githubStep();
    const failure = { operation: 'updateBillingDetails', message: 'HTTP 422', status: 422, serviceCode: 'invalid_email', serviceMessage: 'not an address' };
    const failed = Array.from({ length: 12 }, (_, i) => result({ address: `organisations.o${i}.billing`, organisation: `o${i}`, outcome: 'failed', failure }));
    await withApplyPipeline(recordingApplyView(), pipeline, io.stdout).applyReported(makeSummary([result({ outcome: 'applied' }), ...failed]));
    const lines = log.text.trimEnd().split('\n');
    expect(lines[0]).toBe('::error title=orgform::organisations.o0.billing failed in updateBillingDetails (HTTP 422): invalid_email: not an address');
    expect(lines.filter((l) => l.startsWith('::error '))).toHaveLength(10);
    expect(lines.at(-1)).toBe('::warning title=orgform::…and 2 more failed changes: every failure is in the job summary and the log.');
  });

  it('puts a configuration’s problems in the job summary, so that the run’s page is not blank', async () => {
    const { cwd, io, pipeline } = await githubStep();
    await withApplyPipeline(recordingApplyView(), pipeline, io.stdout).configRejected!([configProblem]);
    const summary = await readFile(join(cwd, 'summary.md'), 'utf8');
    expect(summary).toContain('### orgform apply\n\n**The configuration has 1 problem in 1 file; nothing was read from or sent to the service.**');
    expect(summary).toContain('- `orgs.yaml:5:7`: unknown key &quot;customerId&quot;');
  });

  it('passes everything else through to the view', async () => {
    const { io, pipeline } = await githubStep();
    const inner = recordingApplyView();
    const view = withApplyPipeline(inner, pipeline, io.stdout);
    view.warn('w');
    view.applyStopped();
    expect(inner.sayings()).toEqual(['warn', 'applyStopped']);
  });
});

/** The job summary of an apply: for the failures in full, within GitHub's size limit, service text escaped. */
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

  it('draws the run after the outcome table, whole, and leaves it out when it does not fit', () => {
    const timeline = rateLimitedTimeline();
    const chart = renderRunChartMermaid(timeline);
    const summary = makeSummary([result({ outcome: 'applied' }), failure]);
    const text = renderApplyStepSummary(summary, { chart });
    expect(text.indexOf('#### The run over time')).toBeGreaterThan(text.indexOf('| ✗ failed | 1 |'));
    expect(text.indexOf('#### The run over time')).toBeLessThan(text.indexOf('#### Failures (1)'));
    expect(text).toContain(chart.text);
    expect(text.match(/```mermaid/g)).toHaveLength(3);
    const small = renderApplyStepSummary(summary, { chart, maxBytes: Buffer.byteLength(chart.text) });
    expect(small).not.toContain('mermaid');
    expect(small).toContain('#### Failures (1)');
  });
});

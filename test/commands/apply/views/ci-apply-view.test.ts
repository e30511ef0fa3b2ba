import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withApplyPipeline } from '../../../../src/commands/apply/views/ci-apply-view.js';
import { desiredOrg, desiredState, makePlan, makeSummary, problem, result } from '../../../support/plan-fixtures.js';
import { recordingApplyView } from '../../../support/recording-view.js';
import { CONFIG_PROBLEM, githubStep } from '../../../support/github-step.js';

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

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withPlanPipeline } from '../../../../src/commands/plan/views/ci-plan-view.js';
import { desiredOrg, desiredState, makePlan, problem } from '../../../support/plan-fixtures.js';
import { recordingPlanView } from '../../../support/recording-view.js';
import { CONFIG_PROBLEM, githubStep } from '../../../support/github-step.js';

const desired = desiredState({ organisations: [desiredOrg({ slug: 'umbrella' })] });
const configProblem = CONFIG_PROBLEM;

describe('withPlanPipeline', () => {
  it('annotates, summarises and writes the reports, then lets the view end', async () => {
    const { cwd, io, log, pipeline } = await githubStep();
    const inner = recordingPlanView();
    const view = withPlanPipeline(inner, pipeline, { log: io.stdout, reports: [{ kind: 'gitlab-terraform', path: 'tf.json' }], files: [] });
    const plan = makePlan({ problems: [problem('umbrella', 'HTTP 403')] });
    await view.planChecked(plan, [], desired);
    expect(log.text).toContain('::error file=orgs.yaml,line=1,col=1,title=orgform::HTTP 403');
    expect(await readFile(join(cwd, 'summary.md'), 'utf8')).toContain('### orgform plan');
    expect(JSON.parse(await readFile(join(cwd, 'tf.json'), 'utf8'))).toEqual({ create: 0, update: 0, delete: 0 });
    expect(inner.sayings()).toEqual(['planChecked']);
  });

  it('writes the Code Quality report for a configuration’s problems, but no counts without a plan', async () => {
    const { cwd, io, pipeline } = await githubStep();
    const view = withPlanPipeline(recordingPlanView(), pipeline, {
      log: io.stdout,
      reports: [
        { kind: 'codequality', path: 'cq.json' },
        { kind: 'gitlab-terraform', path: 'tf.json' },
      ],
      files: ['team/orgs.yaml'],
    });
    await view.configRejected!([configProblem]);
    expect(JSON.parse(await readFile(join(cwd, 'cq.json'), 'utf8'))).toHaveLength(1);
    expect(await readFile(join(cwd, 'summary.md'), 'utf8')).toContain('### orgform plan\n\n**The configuration has 1 problem in 1 file;');
    await expect(readFile(join(cwd, 'tf.json'), 'utf8')).rejects.toThrow(/ENOENT/);
  });
});

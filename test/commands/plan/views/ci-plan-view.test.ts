import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderPlanStepSummary, withPlanPipeline } from '../../../../src/commands/plan/views/ci-plan-view.js';
import { planHeadline } from '../../../../src/text/plan/plan-headline.js';
import { billing, desiredOrg, desiredState, everyKindPlan, largePlan, makePlan, problem } from '../../../support/plan-fixtures.js';
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

/**
 * The job summary (GitHub's $GITHUB_STEP_SUMMARY): the verdict, then the same change said once, as
 * the comment says it, within GitHub's size limit, with outside text escaped so that it cannot turn
 * into Markdown or HTML.
 */
describe('renderPlanStepSummary', () => {
  it('heads the summary with the plan’s verdict and what else there is, then the kinds and fields at a glance', () => {
    const text = renderPlanStepSummary(everyKindPlan());
    expect(text.startsWith('### orgform plan\n\n**Plan: 2 to change, 2 to remove, 1 to accept.** · 2 unchanged · 1 already done (journal) · ⚠️ 1 problem\n')).toBe(true);
    expect(text).toContain('| Kind and field | Changes | Organisations | Groups | Single changes |');
    expect(text).toContain('#### ⚠️ Problems (1)');
    expect(text).toContain('#### - Notification channels to remove — 1 organisation: 1 single change\n\n| Change | Organisations |\n| --- | --- |\n| ch&#95;9 | globex |');
    expect(text).toContain('- **umbrella**: getOrganisation /organisations/umbrella failed with HTTP 403: forbidden: not a member');
    expect(text).toContain('_Every change by organisation, with filters: the plan page (`orgform show PLANFILE --format html`)._');
  });

  it('says the same change once, and links the plan page when its address is known', () => {
    const plan = makePlan({ changes: Array.from({ length: 500 }, (_, i) => billing(`org-${i}`, { platformID: ['plat_legacy', `plat_bulk_${i % 5}`] })) });
    const text = renderPlanStepSummary(plan, { pageUrl: 'https://ci.example/plan.html' });
    expect(text).toContain('**Plan: 500 to change, 0 to remove, 0 to accept.** · said in 5 groups of the same change\n');
    expect(text).toContain('| &quot;plat&#95;legacy&quot; → &quot;plat&#95;bulk&#95;0&quot; | **100**: org-0, org-5, org-10 and 97 more |');
    expect(text).toContain('[the plan page](https://ci.example/plan.html)');
  });

  it('stays within its byte budget, saying what it left out of each kind and field and where every change is', () => {
    const plan = largePlan(3_000);
    const text = renderPlanStepSummary(plan, { maxBytes: 30_000 });
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(30_000);
    expect(text.match(/single changes of .* are left out to fit the job summary: every one is on the plan page/g)).toHaveLength(3);
  });

  it('says there is nothing to do', () => {
    const text = renderPlanStepSummary(makePlan({ unchanged: ['acme'] }));
    expect(text).toBe('### orgform plan\n\n**No changes. Your organisations match the configuration.** · 1 unchanged\n');
  });

  it('escapes what came from the service or the file: no HTML, links, mentions or extra lines', () => {
    const plan = makePlan({ problems: [problem('evil<img src=x>', 'msg [link](https://x.example) @team\n## heading <script>')] });
    const text = renderPlanStepSummary(plan);
    expect(text).toContain('- **evil&lt;img src=x&gt;**: msg &#91;link&#93;(https:&#8203;//x.example) @&#8203;team&#92;n## heading &lt;script&gt;');
    expect(text).not.toMatch(/<img|<script|^## heading/m);
  });

  it('neutralises mentions and references in organisation names and problems, and shows invisible characters escaped and marked', () => {
    const plan = makePlan({ changes: [billing('@octocat', { customerID: ['a', 'b'] }), billing('acme\u202Egnp.exe', { customerID: ['a', 'c'] })], problems: [problem('#12', 'see GH-7 and owner/repo#3, ask @team')] });
    const text = renderPlanStepSummary(plan);
    expect(text).toContain(' | @&#8203;octocat |');
    expect(text).toContain(' | acme&#92;u202Egnp.exe (contains invisible characters) |');
    expect(text).toContain('- **#&#8203;12**: see GH-&#8203;7 and owner/repo#&#8203;3, ask @&#8203;team');
    const shown = text.replace(/&#(\d+);/g, (_, n: string) => (n === '8203' ? '\u200B' : String.fromCodePoint(Number(n))));
    expect(shown).not.toMatch(/[\u202E]|@octocat|#\d|GH-\d/);
  });

  it('headline matches the text plan’s closing line', () => {
    expect(planHeadline(everyKindPlan())).toBe('Plan: 2 to change, 2 to remove, 1 to accept.');
    expect(planHeadline(makePlan({ problems: [problem('a', 'x')] }))).toBe('No changes in the organisations that could be read.');
  });
});

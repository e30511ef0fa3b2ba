import { describe, expect, it } from 'vitest';
import { pullRequestJob as jobOf } from '../../src/ci/ci-settings.js';
import { readCiSettings } from '../../src/cli/output-settings.js';
import { readPlanKey } from '../../src/cli/settings.js';
import { runCli } from '../support/run-cli.js';
import { CHANGING_CONFIG, makeWorkspace } from '../support/workspace.js';

const KEY = 'k'.repeat(40);
type Env = Record<string, string | undefined>;
/** The job the CI variables of `env` describe. */
const pullRequestJob = (env: Env) => jobOf(readCiSettings(env));
/** ORGFORM_PLAN_KEY as the settings read it. */
const planKeyOutsidePullRequests = (env: Env) => readPlanKey(env, readCiSettings(env));

describe('pullRequestJob', () => {
  it('tells a GitHub pull request job and a GitLab merge request pipeline, and nothing else', () => {
    expect(pullRequestJob({ GITHUB_ACTIONS: 'true', GITHUB_EVENT_NAME: 'pull_request' })).toBe('a GitHub Actions job of a pull request (GITHUB_EVENT_NAME=pull_request)');
    expect(pullRequestJob({ GITHUB_ACTIONS: 'true', GITHUB_EVENT_NAME: 'pull_request_target' })).toContain('pull_request_target');
    expect(pullRequestJob({ GITLAB_CI: 'true', CI_MERGE_REQUEST_IID: '7' })).toBe('a GitLab merge request pipeline (CI_MERGE_REQUEST_IID=7)');
    expect(pullRequestJob({ GITLAB_CI: 'true', CI_EXTERNAL_PULL_REQUEST_IID: '3' })).toContain('CI_EXTERNAL_PULL_REQUEST_IID=3');
    for (const env of [{}, { GITHUB_ACTIONS: 'true', GITHUB_EVENT_NAME: 'push' }, { GITLAB_CI: 'true', CI_MERGE_REQUEST_IID: '' }, { GITHUB_EVENT_NAME: 'pull_request' }]) expect(pullRequestJob(env)).toBeUndefined();
  });
});

describe('readPlanKey', () => {
  it('gives the key on the default branch, and nothing when none is set, pull request or not', () => {
    expect(planKeyOutsidePullRequests({ GITHUB_ACTIONS: 'true', GITHUB_EVENT_NAME: 'push', ORGFORM_PLAN_KEY: KEY })).toBe(KEY);
    expect(planKeyOutsidePullRequests({ GITHUB_ACTIONS: 'true', GITHUB_EVENT_NAME: 'pull_request' })).toBeUndefined();
  });

  it('refuses the key in a pull request job, naming the job and never the key', () => {
    expect(() => planKeyOutsidePullRequests({ GITLAB_CI: 'true', CI_MERGE_REQUEST_IID: '7', ORGFORM_PLAN_KEY: KEY })).toThrow(
      "ORGFORM_PLAN_KEY is set in a GitLab merge request pipeline (CI_MERGE_REQUEST_IID=7), where the pull request's author can read it and sign any plan with it. Nothing was done.",
    );
  });

  it('stops plan, apply and show before they read a file or call the service', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const env = { GITHUB_ACTIONS: 'true', GITHUB_EVENT_NAME: 'pull_request', ORGFORM_PLAN_KEY: KEY, ORGFORM_BASE_URL: 'http://127.0.0.1:9', ORGFORM_TOKEN: 't' };
    for (const args of [['plan', '--out', 'plan.bin'], ['apply', '--auto-approve'], ['show', 'plan.bin']]) {
      const result = await runCli(args, { cwd, env });
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr).toContain('ORGFORM_PLAN_KEY is set in a GitHub Actions job of a pull request (GITHUB_EVENT_NAME=pull_request)');
      expect(result.stdout + result.stderr).not.toContain(KEY);
      expect(result.stderr).not.toMatch(/ECONNREFUSED|orgs\.yaml/);
    }
  });
});

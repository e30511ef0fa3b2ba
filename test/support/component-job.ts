/**
 * The GitLab component's jobs (templates/orgform.yml) as GitLab would run them: resolved by
 * gitlab-ci-local in a scratch project that includes the component, their scripts run through bash
 * (test/support/gitlab-ci.ts) against the emulator, GitLab's API faked on 127.0.0.1 (project 42,
 * merge request 7, the notes, issues and managed Terraform state) and the release the jobs download
 * faked by another (test/support/fake-release.ts), whose address the project variable
 * ORGFORM_RELEASES_URL gives, as a project variable wins over the component's.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { startFakeGitlab, type FakeComment, type FakeForge } from './fake-forges.js';
import { startFakeRelease, type FakeRelease } from './fake-release.js';
import { gitlabProject, previewPipeline, runJob, type Run } from './gitlab-ci.js';
import { CHANGING_CONFIG, makeWorkspace } from './workspace.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const COMPONENT = await readFile(join(ROOT, 'templates', 'orgform.yml'), 'utf8');
export const PACKAGE_VERSION = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** A project whose .gitlab-ci.yml includes the component once per entry of `includes`, with those inputs. */
export async function componentProject(includes: Array<Record<string, unknown>>, options: { branch?: string; files?: Record<string, string> } = {}): Promise<string> {
  const ci = stringify({ include: includes.map((inputs) => ({ local: 'templates/orgform.yml', inputs })) });
  return gitlabProject({ '.gitlab-ci.yml': ci, 'templates/orgform.yml': COMPONENT, 'orgs.yaml': CHANGING_CONFIG, ...options.files }, options.branch ? { branch: options.branch } : {});
}

export interface ComponentJobs {
  emulator: Emulator;
  gitlab: FakeForge;
  release: FakeRelease;
  /**
   * The job `name` of the project in `cwd`, with `project` over the example's CI/CD variables and
   * `predefined` over GitLab's own for a job (a merge request pipeline's, commit abc1234def567890);
   * `head`: the commit the job's branch points at while it runs (a newer merge since), by default the job's own.
   */
  run(cwd: string, name: string, project?: Record<string, string>, predefined?: Record<string, string>, head?: string): Promise<Run>;
  close(): Promise<void>;
}

export async function startComponentJobs(options: { comments?: FakeComment[] } = {}): Promise<ComponentJobs> {
  const emulator = await startEmulator({ slugDelayMs: 0 });
  const gitlab = await startFakeGitlab({ projectId: '42', iid: '7', token: 'glpat-note', userId: 9, jobToken: 'job-token', comments: options.comments ?? [] });
  const release = await startFakeRelease(PACKAGE_VERSION);
  // --preview shows every job whatever its rules, and depends on .gitlab-ci.yml alone: once per text.
  const previews = new Map<string, Promise<Json>>();
  return {
    emulator,
    gitlab,
    release,
    async run(cwd, name, project = {}, predefined = {}, head) {
      const ci = await readFile(join(cwd, '.gitlab-ci.yml'), 'utf8');
      if (!previews.has(ci)) previews.set(ci, previewPipeline(cwd));
      const pipeline = await previews.get(ci)!;
      const gitlabSets: Record<string, string> = {
        PATH: process.env.PATH ?? '',
        TMPDIR: await makeWorkspace(),
        CI: 'true',
        GITLAB_CI: 'true',
        CI_PROJECT_DIR: cwd,
        CI_PROJECT_ID: '42',
        CI_API_V4_URL: `${gitlab.url}/api/v4`,
        CI_JOB_ID: '1234',
        CI_JOB_URL: 'https://gitlab.example/acme/config/-/jobs/1234',
        CI_JOB_NAME: name,
        CI_JOB_TOKEN: 'job-token',
        CI_COMMIT_SHA: 'abc1234def567890',
        CI_MERGE_REQUEST_IID: '7',
      };
      // The branch as GitLab has it when the job runs: at this job's commit, unless the test merged more since.
      const job = { ...gitlabSets, ...predefined };
      if (job.CI_COMMIT_BRANCH) gitlab.heads.set(job.CI_COMMIT_BRANCH, head ?? job.CI_COMMIT_SHA ?? '');
      // Split as the example sets them up: plan reads with ORGFORM_PLAN_TOKEN, apply writes with ORGFORM_TOKEN.
      const example = { ORGFORM_RELEASES_URL: release.url, ORGFORM_BASE_URL: emulator.url, ORGFORM_PLAN_TOKEN: 'demo-token', ORGFORM_TOKEN: 'demo-token', GITLAB_API_TOKEN: 'glpat-note' };
      return runJob(pipeline[name] as Json, cwd, job, { ...example, ...project });
    },
    async close() {
      await emulator.stop();
      await gitlab.close();
      await release.close();
    },
  };
}

/**
 * A simulated GitHub Actions job for this repository's action.yml (run by
 * test/support/composite-action.ts): the service played by the emulator, GitHub's API by a fake on
 * 127.0.0.1 (pull request 7 of acme/config, the job's token ghs_job_token), the release the action
 * fetches by another (test/support/fake-release.ts), actions/upload-artifact by a stand-in that
 * keeps what it was given, and a directory first on PATH whose `npm` records being called, so that
 * a test can say nothing installed anything.
 */
import { existsSync } from 'node:fs';
import { chmod, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { runCompositeAction, type ActionRun, type ActionRunOptions } from './composite-action.js';
import { startFakeGithub, type FakeComment, type FakeForge } from './fake-forges.js';
import { startFakeRelease, type FakeRelease } from './fake-release.js';
import { CHANGING_CONFIG, makeWorkspace } from './workspace.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const PACKAGE_VERSION = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** A pull request event of pull request 7, its head at `head`. */
export function pullRequestEvent(head = '0123456789abcdef'): Record<string, unknown> {
  return { pull_request: { number: 7, head: { sha: head, repo: { full_name: 'acme/config' } } }, repository: { full_name: 'acme/config' } };
}

export interface JobOptions {
  eventName?: string;
  event?: Record<string, unknown>;
  /** GITHUB_SHA: the commit the job runs for. */
  sha?: string;
  /** The commit the job's branch points at while it runs (a newer merge since): by default the job's own. */
  head?: string;
  env?: Record<string, string>;
}

/** What actions/upload-artifact's stand-in was given, and the file it uploaded. */
export interface Upload {
  inputs: Record<string, string>;
  page: string;
}

/** The address the stand-in gives the Nth artifact (1-based) of the run. */
export const artifactUrl = (n: number) => `https://github.example/acme/config/actions/runs/4242/artifacts/${n}`;

export interface ActionJob {
  /** Replaceable: a test may restart it with other data; runs use the one set when they start. */
  emulator: Emulator;
  github: FakeForge;
  release: FakeRelease;
  /** GITHUB_WORKSPACE, holding orgs.yaml. */
  workspace: string;
  /** The directory on PATH whose `npm` records its calls. */
  trap: string;
  /** Every upload of every run, in order: the Nth has the address artifactUrl(N). */
  uploads: Upload[];
  /** Makes the upload fail, as a name another job took, or GitHub Enterprise Server, does. */
  uploadFails: boolean;
  /** The stand-ins for the actions that action.yml uses, for a test that runs it itself. */
  uses: NonNullable<ActionRunOptions['uses']>;
  run(inputs: Record<string, string>, options?: JobOptions): Promise<ActionRun & { runnerTemp: string }>;
  /** The arguments every `npm` call was given, one line each. */
  npmCalls(): Promise<string[]>;
  close(): Promise<void>;
}

export async function startActionJob(options: { comments?: FakeComment[]; config?: string } = {}): Promise<ActionJob> {
  const emulator = await startEmulator({ slugDelayMs: 0 });
  const github = await startFakeGithub({ repository: 'acme/config', number: 7, token: 'ghs_job_token', comments: options.comments ?? [] });
  const release = await startFakeRelease(PACKAGE_VERSION);
  const workspace = await makeWorkspace({ 'orgs.yaml': options.config ?? CHANGING_CONFIG });
  const trap = await makeWorkspace({ npm: `#!/bin/sh\necho "npm $*" >> "$(dirname "$0")/npm.log"\nexit 1\n` });
  await chmod(join(trap, 'npm'), 0o755);
  const job: ActionJob = {
    emulator,
    github,
    release,
    workspace,
    trap,
    uploads: [],
    uploadFails: false,
    uses: {
      'actions/upload-artifact': async (inputs): Promise<{ code: number; outputs: Record<string, string> }> => {
        if (job.uploadFails) return { code: 1, outputs: {} };
        job.uploads.push({ inputs, page: await readFile(inputs.path!, 'utf8') });
        return { code: 0, outputs: { 'artifact-id': String(job.uploads.length), 'artifact-url': artifactUrl(job.uploads.length) } };
      },
    },
    async run(inputs, runOptions = {}) {
      const runnerTemp = await makeWorkspace();
      const sha = runOptions.sha ?? 'fedcba9876543210';
      // The branch as GitHub has it when the job runs: at this job's commit, unless the test merged more since.
      const branch = String(runOptions.env?.GITHUB_REF ?? runOptions.event?.ref ?? '').replace(/^refs\/heads\//, '');
      if (branch !== '') github.heads.set(branch, runOptions.head ?? sha);
      const run = await runCompositeAction({
        actionDir: ROOT,
        with: inputs,
        workspace,
        runnerTemp,
        env: {
          PATH: `${trap}:${process.env.PATH ?? ''}`,
          HOME: workspace,
          ORGFORM_RELEASES_URL: release.url,
          ORGFORM_BASE_URL: job.emulator.url,
          ORGFORM_TOKEN: 'demo-token',
          ...runOptions.env,
        },
        github: {
          token: 'ghs_job_token',
          eventName: runOptions.eventName ?? 'pull_request',
          event: runOptions.event ?? pullRequestEvent(),
          repository: 'acme/config',
          apiUrl: github.url,
          sha,
        },
        uses: job.uses,
      });
      return { ...run, runnerTemp };
    },
    npmCalls: async () => (existsSync(join(trap, 'npm.log')) ? (await readFile(join(trap, 'npm.log'), 'utf8')).trim().split('\n') : []),
    async close() {
      await job.emulator.stop();
      await github.close();
      await release.close();
    },
  };
  return job;
}

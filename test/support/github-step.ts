/**
 * A GitHub Actions step in a fresh workspace, for the CI views: its environment (the job summary
 * file in the workspace), one log both streams write to, and the pipeline output opened on it.
 */
import { join } from 'node:path';
import type { CliIO } from '../../src/cli-io.js';
import { readCiSettings } from '../../src/cli/output-settings.js';
import { openPipelineOutput } from '../../src/ci/pipeline-output.js';
import { makeWorkspace } from './workspace.js';

export async function githubStep(env: Record<string, string> = {}) {
  const cwd = await makeWorkspace();
  const log = { text: '', write: (s: string) => void (log.text += s) };
  const io = { cwd, stdout: log, stderr: log } as unknown as CliIO;
  const ci = readCiSettings({ GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: cwd, GITHUB_STEP_SUMMARY: join(cwd, 'summary.md'), ...env });
  return { cwd, io, log, pipeline: await openPipelineOutput(io, ci) };
}

/** A configuration problem as the loader reports it. */
export const CONFIG_PROBLEM = { file: 'orgs.yaml', line: 5, col: 7, message: 'unknown key "customerId"' };

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { guardWorkflowCommands } from '../../src/ci/guard-workflow-commands.js';
import { readCiSettings } from '../../src/cli/output-settings.js';
import { openPipelineOutput } from '../../src/ci/pipeline-output.js';
import { runnerCommands } from '../support/github-runner.js';
import { makeWorkspace } from '../support/workspace.js';

async function github() {
  const cwd = await makeWorkspace();
  const ci = readCiSettings({ GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: cwd, GITHUB_STEP_SUMMARY: join(cwd, 'summary.md') });
  return { pipeline: await openPipelineOutput({ cwd }, ci) };
}

describe('the pipeline’s log frame', () => {
  it('folds and guards in GitHub Actions, and leaves text as it is elsewhere', async () => {
    const { pipeline } = await github();
    expect(pipeline.frame.fold('Plan: 1 to change', 'text\n')).toMatch(/^::group::Plan: 1 to change\n::stop-commands::[0-9a-f]{32}\ntext\n::[0-9a-f]{32}::\n::endgroup::\n$/);
    const plain = await openPipelineOutput({ cwd: '/' }, readCiSettings({}));
    expect(plain.frame.fold('t', 'text\n')).toBe('text\n');
    expect(plain.frame.open('t') + plain.frame.close()).toBe('');
    expect(plain.frame.guard('::x::')).toBe('::x::');
  });
});

describe('annotations', () => {
  it('are written only in GitHub Actions', async () => {
    const log = { text: '', write: (s: string) => void (log.text += s) };
    const finding = { check: 'config' as const, level: 'error' as const, message: 'bad', file: 'orgs.yaml', line: 2, col: 3 };
    await (await openPipelineOutput({ cwd: '/' }, readCiSettings({}))).annotate([finding], log);
    expect(log.text).toBe('');
    await (await github()).pipeline.annotate([finding], log);
    expect(log.text).toBe('::error file=orgs.yaml,line=2,col=3,title=orgform::bad\n');
  });
});

describe('through the guarded streams', () => {
  it('seals orgform’s own groups and annotations, which get through, while the text inside them cannot issue a command', async () => {
    const cwd = await makeWorkspace();
    const log = { text: '', write: (s: string) => void (log.text += s) };
    const ci = readCiSettings({ GITHUB_ACTIONS: 'true' });
    const io = guardWorkflowCommands({ cwd, stdout: log, stderr: log }, ci);
    const pipeline = await openPipelineOutput(io, ci);
    io.stdout.write(pipeline.frame.fold('Plan: 1 to change', '::add-mask::x\n'));
    io.stdout.write(pipeline.frame.open('Applying 1 change') + '::set-output name=y::1\n' + pipeline.frame.close());
    await pipeline.annotate([{ check: 'config', level: 'error', message: '::add-mask::z', file: 'orgs.yaml', line: 1, col: 1 }], io.stdout);
    const commands = runnerCommands(log.text).map((c) => (/^[0-9a-f]{32}$/.test(c.command) ? 'TOKEN' : c.command));
    expect(commands).toEqual(['group', 'stop-commands', 'TOKEN', 'endgroup', 'group', 'stop-commands', 'TOKEN', 'endgroup', 'error']);
    expect(log.text).toContain('\n\\u003a:add-mask::x\n');
    expect(log.text).toContain('\n\\u003a:set-output name=y::1\n');
  });
});

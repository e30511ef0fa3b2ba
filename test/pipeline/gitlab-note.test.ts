/**
 * pipeline/gitlab-note.mjs as the component's plan job runs it: a process, GitLab's job variables,
 * and the notes API faked on 127.0.0.1. The whole job is run in test/templates/orgform.test.ts;
 * here, the cases around it.
 */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeGitlab, type FakeForge } from '../support/fake-forges.js';
import { runProcess, type ProcessResult } from '../support/run-process.js';
import { makeWorkspace } from '../support/workspace.js';

const SCRIPT = fileURLToPath(new URL('../../pipeline/gitlab-note.mjs', import.meta.url));

let gitlab: FakeForge;
let dir: string;
beforeEach(async () => {
  gitlab = await startFakeGitlab({ projectId: '42', iid: '7', token: 'glpat-note', userId: 9, jobToken: 'job-token' });
  dir = await makeWorkspace({ 'plan.md': '**orgform plan:** 1 to change\n', 'plan.err': 'Saved the plan to plan.bin\n' });
});
afterEach(async () => gitlab?.close());

function note(env: Record<string, string>, args = [join(dir, 'plan.md'), join(dir, 'plan.err'), '2']): Promise<ProcessResult> {
  const base = { PATH: process.env.PATH ?? '', CI_API_V4_URL: `${gitlab.url}/api/v4`, CI_PROJECT_ID: '42', CI_MERGE_REQUEST_IID: '7', CI_COMMIT_SHA: 'abc1234def', CI_JOB_NAME: 'orgform-plan', GITLAB_API_TOKEN: 'glpat-note' };
  return runProcess(process.execPath, [SCRIPT, ...args], undefined, { ...base, ...env });
}

describe('pipeline/gitlab-note.mjs', { timeout: 60_000 }, () => {
  it('updates only a note of the token’s own user: another user’s note and a system note with the marker are left alone', async () => {
    gitlab.comments.push({ id: 1, body: '<!-- orgform-plan orgform-plan -->\nplanted', author: 3 }, { id: 2, body: '<!-- orgform-plan orgform-plan -->\nsystem', author: 9, system: true });
    const created = await note({});
    expect(created).toMatchObject({ code: 0, stdout: 'orgform: plan note 102 created on merge request !7.\n' });
    const updated = await note({ CI_COMMIT_SHA: 'def5678abc' });
    expect(updated.stdout).toBe('orgform: plan note 102 updated on merge request !7.\n');
    const unchanged = await note({ CI_COMMIT_SHA: 'def5678abc' });
    expect(unchanged.stdout).toBe('orgform: plan note 102 unchanged on merge request !7.\n');
    expect(gitlab.comments.map((c) => c.body.split('\n')[1])).toEqual(['planted', 'system', '**orgform plan:** 1 to change']);
  });

  it('posts a plan longer than GitHub’s 65,536 characters whole: GitLab takes 1,000,000', async () => {
    const long = `**orgform plan:** 1 to change\n${'| row | acme |\n'.repeat(20_000)}`;
    dir = await makeWorkspace({ 'plan.md': long, 'plan.err': '' });
    expect((await note({})).code).toBe(0);
    expect(gitlab.comments[0]!.body).toBe(`<!-- orgform-plan orgform-plan -->\n${long}\n<sub>orgform plan for abc1234; updated on every push.</sub>\n`);
    expect(gitlab.comments[0]!.body.length).toBeGreaterThan(300_000);
  });

  it('finds its note among many pages of notes', async () => {
    for (let i = 0; i < 250; i += 1) gitlab.comments.push({ id: i + 1, body: `comment ${i}`, author: i === 230 ? 9 : 3 });
    gitlab.comments[230]!.body = '<!-- orgform-plan orgform-plan -->\nold';
    expect((await note({})).stdout).toBe('orgform: plan note 231 updated on merge request !7.\n');
    expect(gitlab.requests.filter((r) => r.includes('/notes?')).map((r) => new URL(r.split(' ')[1]!, 'http://x').searchParams.get('page'))).toEqual([null, '2', '3']);
  });

  it('outside a merge request pipeline, or without GITLAB_API_TOKEN, writes nothing and passes, saying why', async () => {
    expect(await note({ CI_MERGE_REQUEST_IID: '' })).toMatchObject({ code: 0, stdout: 'orgform: not a merge request pipeline, so no note.\n' });
    const noToken = await note({ GITLAB_API_TOKEN: '' });
    expect(noToken.code).toBe(0);
    expect(noToken.stderr).toContain('GITLAB_API_TOKEN is not set, so no note. Add it under Settings > CI/CD > Variables');
    expect(gitlab.requests).toEqual([]);
  });

  it('fails the job when the note cannot be written, naming the status and what the token needs', async () => {
    const refused = await note({ GITLAB_API_TOKEN: 'wrong' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe("orgform: could not write the plan note: GET the token's user: HTTP 401 (401 Unauthorized). GITLAB_API_TOKEN needs the api scope and a role that may comment (Reporter or above).\n");
    expect(refused.stderr).not.toContain('wrong');
    gitlab.readOnly = true;
    const readOnly = await note({});
    expect(readOnly.code).toBe(1);
    expect(readOnly.stderr).toContain("POST merge request !7's notes: HTTP 403 (403 Forbidden)");
  });

  it('refuses a GITLAB_API_TOKEN with a control character before sending anything, naming it and never showing it', async () => {
    const result = await note({ GITLAB_API_TOKEN: 'glpat-SECRET\rX' });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('orgform: could not write the plan note: GITLAB_API_TOKEN holds a control character (U+000D), so it cannot be sent as a header and was not used. Set it again without it (its value is not shown).\n');
    expect(result.stdout + result.stderr).not.toMatch(/SECRET|glpat/);
    expect(gitlab.requests).toEqual([]);
  });

  it('fails on a call without its three arguments, or with a server that does not answer', async () => {
    expect(await note({}, [join(dir, 'plan.md')])).toMatchObject({ code: 1, stderr: 'usage: gitlab-note.mjs PLAN_MARKDOWN_FILE PLAN_STDERR_FILE EXIT_CODE\n' });
    const url = gitlab.url;
    await gitlab.close();
    const down = await note({ CI_API_V4_URL: `${url}/api/v4` });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^orgform: could not write the plan note: GET the token's user: .*ECONNREFUSED/);
  });
});

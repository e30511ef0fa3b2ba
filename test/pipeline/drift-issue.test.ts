/**
 * Drift kept in one issue (pipeline/drift-issue.mjs), against GitHub's and GitLab's issues APIs
 * faked on 127.0.0.1: opened, updated in place, closed with a note, an error written into it, and
 * never someone else's issue taken for it. The whole jobs, run, are in
 * test/action/reviewed-apply.test.ts and test/templates/orgform-reviewed.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { driftIssue, githubIssues, gitlabIssues, syncDriftIssue } from '../../pipeline/drift-issue.mjs';
import { commentMarker, MAX_COMMENT_LENGTH } from '../../pipeline/sticky-comment.mjs';
import { startFakeGithub, startFakeGitlab, type FakeForge } from '../support/fake-forges.js';

const MARKER = commentMarker('', 'drift');
const DRIFT = { exitCode: 2, markdown: '**orgform plan:** 1 to change\n\n<!-- orgform-digest sha256:' + 'a'.repeat(64) + ' -->\n', stderr: '', branch: 'main', runUrl: 'https://ci.test/runs/1', commit: '0123456789abcdef' };

let forge: FakeForge | undefined;
afterEach(async () => {
  await forge?.close();
  forge = undefined;
});

async function trackers() {
  const github = await startFakeGithub({ repository: 'acme/config', number: 7, token: 'ghs_job' });
  const gitlab = await startFakeGitlab({ projectId: '42', iid: '7', token: 'glpat-api', userId: 9, jobToken: 'job' });
  return [
    { name: 'GitHub', fake: github, tracker: githubIssues({ apiUrl: github.url, repository: 'acme/config', token: 'ghs_job', jobToken: true }), someoneElse: 'renovate[bot]' as string | number },
    { name: 'GitLab', fake: gitlab, tracker: gitlabIssues({ apiUrl: `${gitlab.url}/api/v4`, projectId: '42', token: 'glpat-api' }), someoneElse: 3 as string | number },
  ];
}

describe('syncDriftIssue', () => {
  it('opens one issue with the plan, updates that same issue on the next check, and closes it with a note once there is no drift (GitHub and GitLab)', async () => {
    for (const { name, fake, tracker } of await trackers()) {
      try {
        expect(await syncDriftIssue(tracker, MARKER, DRIFT), name).toEqual({ action: 'opened', id: 1 });
        expect(fake.issues).toHaveLength(1);
        expect(fake.issues[0]!.title).toBe('orgform: the service differs from main');
        expect(fake.issues[0]!.body).toMatch(new RegExp(`^${MARKER}\\nThe Organisations service differs from the configuration on \`main\``));
        expect(fake.issues[0]!.body).toContain('**orgform plan:** 1 to change');
        expect(fake.issues[0]!.body).not.toContain('orgform-digest');

        const later = { ...DRIFT, markdown: '**orgform plan:** 3 to change\n', commit: 'fedcba9876543210' };
        expect(await syncDriftIssue(tracker, MARKER, later), name).toEqual({ action: 'updated', id: 1 });
        expect(fake.issues).toHaveLength(1);
        expect(fake.issues[0]!.body).toContain('**orgform plan:** 3 to change');
        expect(fake.issues[0]!.body).toContain('Checked at fedcba9 of `main` by [this run](https://ci.test/runs/1)');

        expect(await syncDriftIssue(tracker, MARKER, { ...DRIFT, exitCode: 0, markdown: 'No changes.\n' }), name).toEqual({ action: 'closed', id: 1 });
        expect(fake.issues[0]).toMatchObject({ state: 'closed', notes: [expect.stringMatching(/^No drift any more: the plan of `main` at 0123456 has no changes/)] });

        // Nothing open and no drift: nothing is written. Drift again: a new issue.
        expect(await syncDriftIssue(tracker, MARKER, { ...DRIFT, exitCode: 0 }), name).toEqual({ action: 'none' });
        expect(await syncDriftIssue(tracker, MARKER, DRIFT), name).toEqual({ action: 'opened', id: 2 });
        expect(fake.issues.map((i) => i.state)).toEqual(['closed', 'open']);
      } finally {
        await fake.close();
      }
    }
  });

  it('writes an error into the issue, opening one if needed, rather than leaving it in a log; a failure never closes it', async () => {
    for (const { name, fake, tracker } of await trackers()) {
      try {
        const failed = { ...DRIFT, exitCode: 1, markdown: '', stderr: '::error::x\nError: could not reach https://api.example.com: connection refused\n' };
        expect(await syncDriftIssue(tracker, MARKER, failed), name).toEqual({ action: 'opened', id: 1 });
        expect(fake.issues[0]!.title).toBe('orgform: the drift check failed');
        expect(fake.issues[0]!.body).toContain('The scheduled drift check failed (exit code 1)');
        expect(fake.issues[0]!.body).toContain('Error: could not reach https://api.example.com: connection refused');
        expect(fake.issues[0]!.body).not.toContain('::error');
        expect(await syncDriftIssue(tracker, MARKER, DRIFT), name).toEqual({ action: 'updated', id: 1 });
        expect(fake.issues[0]!.title).toBe('orgform: the service differs from main');
        expect(await syncDriftIssue(tracker, MARKER, { ...failed, exitCode: 3 }), name).toEqual({ action: 'updated', id: 1 });
        expect(fake.issues[0]).toMatchObject({ state: 'open', title: 'orgform: the drift check failed', notes: [] });
      } finally {
        await fake.close();
      }
    }
  });

  it('never takes another author’s issue that starts with the marker for its own: that one is left as it is', async () => {
    for (const { name, fake, tracker, someoneElse } of await trackers()) {
      try {
        fake.issues.push({ number: 1, title: 'planted', body: `${MARKER}\nplanted`, state: 'open', author: someoneElse, notes: [] });
        expect(await syncDriftIssue(tracker, MARKER, { ...DRIFT, exitCode: 0 }), name).toEqual({ action: 'none' });
        expect(await syncDriftIssue(tracker, MARKER, DRIFT), name).toEqual({ action: 'opened', id: 2 });
        expect(fake.issues[0]).toEqual({ number: 1, title: 'planted', body: `${MARKER}\nplanted`, state: 'open', author: someoneElse, notes: [] });
      } finally {
        await fake.close();
      }
    }
  });

  it('keeps one issue per directory and files: another marker’s issue is not this one', async () => {
    const [github, gitlab] = await trackers();
    await gitlab!.fake.close();
    const { fake, tracker } = github!;
    forge = fake;
    await syncDriftIssue(tracker, commentMarker('team-b', 'drift'), DRIFT);
    expect(await syncDriftIssue(tracker, MARKER, DRIFT)).toEqual({ action: 'opened', id: 2 });
    expect(fake.issues.map((i) => i.body.split('\n')[0])).toEqual(['<!-- orgform-drift team-b -->', MARKER]);
  });
});

describe('driftIssue', () => {
  it('never exceeds an issue body’s limit: the plan is cut, saying so', () => {
    const { body } = driftIssue(MARKER, { ...DRIFT, markdown: 'p'.repeat(200_000) });
    expect(body.length).toBeLessThanOrEqual(MAX_COMMENT_LENGTH);
    expect(body).toContain("_…cut to fit: the whole plan is in the run's log._");
    expect(body.endsWith('and closed once there is no drift.</sub>\n')).toBe(true);
  });

  it('links the plan page where the plan says it is, else the run, whose log has the plan', () => {
    const markdown = `**orgform plan:** 1 to change\n\n_Every change by organisation, with filters: [the plan page](#orgform-plan-page)._\n`;
    const page = 'https://github.test/acme/config/actions/runs/1/artifacts/2';
    expect(driftIssue(MARKER, { ...DRIFT, markdown, pageUrl: page }).body).toContain(`[the plan page](${page})._`);
    expect(driftIssue(MARKER, { ...DRIFT, markdown }).body).toContain('[the plan page](https://ci.test/runs/1)._');
    expect(driftIssue(MARKER, { ...DRIFT, markdown, exitCode: 1, runUrl: '' }).body).toContain('[the plan page](#orgform-plan-page)._');
  });
});

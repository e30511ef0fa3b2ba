/**
 * Which plan the merge may apply (pipeline/reviewed-plan.mjs), against GitHub's and GitLab's APIs
 * faked on 127.0.0.1: the pull request the commit merged, the digest in orgform's own plan comment
 * on it and nobody else's, and what orgform is then run with. The whole jobs, run, are in
 * test/action/reviewed-apply.test.ts and test/templates/orgform-reviewed.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { applyArguments, decideApply, findReview, githubMergedPullRequest, gitlabMergedRequest, noReviewReason, reviewedDigestOf } from '../../pipeline/reviewed-plan.mjs';
import { SupersededError } from '../../pipeline/newer-config.mjs';
import { commentMarker, composePlanComment, githubThread, gitlabThread } from '../../pipeline/sticky-comment.mjs';
import { startFakeGithub, startFakeGitlab, type FakeForge } from '../support/fake-forges.js';

const MARKER = commentMarker('');
const DIGEST = `sha256:${'a'.repeat(64)}`;
const FORGED = `sha256:${'f'.repeat(64)}`;
const digestLine = (digest: string) => `<!-- orgform-digest ${digest} -->`;
/** A plan comment as the plan job writes it: the plan's Markdown ends with its digest marker. */
const planComment = (digest: string, commit = '0123456789') =>
  composePlanComment({ marker: MARKER, markdown: `**orgform plan:** 1 to change\n\n${digestLine(digest)}\n`, stderr: '', exitCode: 2, commit });

let forges: FakeForge[] = [];
afterEach(async () => {
  await Promise.all(forges.map((f) => f.close()));
  forges = [];
});

async function github(comments: Array<{ id: number; body: string; author: string }> = []) {
  const fake = await startFakeGithub({ repository: 'acme/config', number: 7, token: 'ghs_job', comments });
  forges.push(fake);
  return { fake, thread: githubThread({ apiUrl: fake.url, repository: 'acme/config', number: 7, token: 'ghs_job', jobToken: true }) };
}

async function gitlab(comments: Array<{ id: number; body: string; author: number; system?: boolean }> = []) {
  const fake = await startFakeGitlab({ projectId: '42', iid: '7', token: 'glpat-api', userId: 9, jobToken: 'job', comments });
  forges.push(fake);
  return { fake, thread: gitlabThread({ apiUrl: `${fake.url}/api/v4`, projectId: '42', mergeRequestIid: '7', token: 'glpat-api' }) };
}

describe('reviewedDigestOf', () => {
  it('reads the digest only from the line right after the comment’s own marker: a marker quoted in the plan is text', () => {
    expect(reviewedDigestOf(planComment(DIGEST), MARKER)).toEqual({ digest: DIGEST, marker: digestLine(DIGEST) });
    expect(reviewedDigestOf(`${MARKER}\n**orgform plan:** a value ${digestLine(FORGED)}\n${digestLine(FORGED)}\n`, MARKER)).toBeUndefined();
    expect(reviewedDigestOf(`x${MARKER}\n${digestLine(FORGED)}\n`, MARKER)).toBeUndefined();
    expect(reviewedDigestOf(`${commentMarker('team-b')}\n${digestLine(FORGED)}\n`, MARKER)).toBeUndefined();
  });
});

describe('findReview', () => {
  it('takes the digest of the job token’s own plan comment: another bot’s and a person’s, with the same marker and another digest, are never the review', async () => {
    const { thread } = await github([
      { id: 1, body: `${MARKER}\n${digestLine(FORGED)}\nrenovate was here`, author: 'renovate[bot]' },
      { id: 2, body: `${MARKER}\n${digestLine(FORGED)}\nI reviewed this`, author: 'User' },
      { id: 3, body: planComment(DIGEST), author: 'Bot' },
      { id: 4, body: `${MARKER}\n${digestLine(FORGED)}\nlater`, author: 'github-actions-lookalike[bot]' },
    ]);
    expect(await findReview(thread, MARKER)).toEqual({ review: { commentId: 3, digest: DIGEST, marker: digestLine(DIGEST) } });
  });

  it('with only others’ comments carrying the marker, finds no review', async () => {
    const { thread } = await github([
      { id: 1, body: `${MARKER}\n${digestLine(FORGED)}\n`, author: 'renovate[bot]' },
      { id: 2, body: `${MARKER}\n${digestLine(FORGED)}\n`, author: 'User' },
    ]);
    expect(await findReview(thread, MARKER)).toEqual({ missing: 'no-plan-comment' });
  });

  it('reads the comment the plan job keeps updating (the oldest of ours), not a later one of ours that is no longer updated', async () => {
    const { thread } = await github([
      { id: 1, body: planComment(DIGEST), author: 'Bot' },
      { id: 2, body: planComment(FORGED), author: 'Bot' },
    ]);
    expect(await findReview(thread, MARKER)).toMatchObject({ review: { commentId: 1, digest: DIGEST } });
  });

  it('finds no digest in a plan comment whose last plan failed', async () => {
    const failed = composePlanComment({ marker: MARKER, markdown: '', stderr: 'Error: the service could not be reached\n', exitCode: 1, commit: 'abc' });
    const { thread } = await github([{ id: 1, body: failed, author: 'Bot' }]);
    expect(await findReview(thread, MARKER)).toEqual({ missing: 'no-digest' });
  });

  it('on GitLab, takes only the token’s user’s note: another user’s note and a system note with the marker are not the review', async () => {
    const { thread } = await gitlab([
      { id: 1, body: `${MARKER}\n${digestLine(FORGED)}\n`, author: 3 },
      { id: 2, body: `${MARKER}\n${digestLine(FORGED)}\n`, author: 9, system: true },
      { id: 3, body: planComment(DIGEST), author: 9 },
    ]);
    expect(await findReview(thread, MARKER)).toMatchObject({ review: { commentId: 3, digest: DIGEST } });
  });

  it('with the merge’s time, takes no plan comment changed after it: a plan job run again on the merged pull request, or an edit, is not what was reviewed', async () => {
    const MERGED = '2026-03-01T12:00:00Z';
    const before = { createdAt: '2026-03-01T10:00:00Z', updatedAt: '2026-03-01T12:00:00Z' };
    const after = { createdAt: '2026-03-01T10:00:00Z', updatedAt: '2026-03-01T12:00:01Z' };
    expect(await findReview((await github([{ id: 1, body: planComment(DIGEST), author: 'Bot', ...before }])).thread, MARKER, MERGED)).toMatchObject({ review: { digest: DIGEST } });
    expect(await findReview((await github([{ id: 1, body: planComment(DIGEST), author: 'Bot', ...after }])).thread, MARKER, MERGED)).toEqual({ missing: 'changed-after-merge' });
    expect(await findReview((await gitlab([{ id: 1, body: planComment(DIGEST), author: 9, ...after }])).thread, MARKER, MERGED)).toEqual({ missing: 'changed-after-merge' });
    // A plan comment the API gives no time for cannot be told to be from before the merge.
    const timeless = { name: 't', author: async () => ({ login: 'github-actions[bot]' }), async *writtenBy() { yield { id: 1, body: planComment(DIGEST) }; }, create: async () => ({ id: 1, body: '' }), update: async () => ({ id: 1, body: '' }) };
    expect(await findReview(timeless, MARKER, MERGED)).toEqual({ missing: 'changed-after-merge' });
    expect(noReviewReason('changed-after-merge')).toBe("orgform's plan comment on the pull request was changed after it was merged (a plan job run again, or an edit), so what it shows is not what was reviewed before the merge");
  });

  it('when the token cannot tell whose it is, takes no comment for the review', async () => {
    const thread = {
      name: 'test',
      author: async () => undefined,
      // eslint-disable-next-line require-yield
      async *writtenBy(): AsyncGenerator<{ id: number; body: string }> {
        throw new Error('not asked');
      },
      create: async () => ({ id: 1, body: '' }),
      update: async () => ({ id: 1, body: '' }),
    };
    expect(await findReview(thread, MARKER)).toEqual({ missing: 'unknown-identity' });
  });
});

describe('the merged pull request', () => {
  const SHA = '1111111111111111111111111111111111111111';

  it('on GitHub, is the one merged into the branch with this commit as its merge commit; one that only contains it, is open, or went to another branch is not', async () => {
    const { fake } = await github();
    const options = { apiUrl: fake.url, repository: 'acme/config', token: 'ghs_job', sha: SHA, branch: 'main' };
    fake.pullsOf.set(SHA, [
      { number: 3, merged_at: null, merge_commit_sha: SHA, base: { ref: 'main' } },
      { number: 4, merged_at: '2026-01-01T00:00:00Z', merge_commit_sha: '2'.repeat(40), base: { ref: 'main' } },
      { number: 5, merged_at: '2026-01-01T00:00:00Z', merge_commit_sha: SHA, base: { ref: 'release' } },
    ]);
    expect(await githubMergedPullRequest(options)).toBeUndefined();
    fake.pullsOf.get(SHA)!.push({ number: 7, merged_at: '2026-01-01T00:00:00Z', merge_commit_sha: SHA, base: { ref: 'main' }, html_url: 'https://github.test/acme/config/pull/7' });
    expect(await githubMergedPullRequest(options)).toEqual({ number: 7, url: 'https://github.test/acme/config/pull/7', mergedAt: '2026-01-01T00:00:00Z' });
    expect(fake.requests.at(-1)).toBe(`GET /repos/acme/config/commits/${SHA}/pulls?per_page=100`);
  });

  it('on GitLab, is the merge request merged into the branch by this commit: its merge commit, its squash commit, or its last commit when fast-forwarded', async () => {
    const { fake } = await gitlab();
    const options = { apiUrl: `${fake.url}/api/v4`, projectId: '42', token: 'glpat-api', sha: SHA, branch: 'main' };
    const merged = { state: 'merged', target_branch: 'main', merge_commit_sha: null, squash_commit_sha: null, sha: '3'.repeat(40), merged_at: '2026-01-01T00:00:00Z' };
    fake.pullsOf.set(SHA, [
      { ...merged, iid: 1, state: 'opened', merge_commit_sha: SHA },
      { ...merged, iid: 2, target_branch: 'release', merge_commit_sha: SHA },
      { ...merged, iid: 3, merge_commit_sha: '2'.repeat(40), sha: SHA },
    ]);
    expect(await gitlabMergedRequest(options)).toBeUndefined();
    for (const [iid, fields] of [[7, { merge_commit_sha: SHA }], [8, { squash_commit_sha: SHA }], [9, { sha: SHA }]] as const) {
      fake.pullsOf.set(SHA, [{ ...merged, iid, ...fields }]);
      expect(await gitlabMergedRequest(options)).toMatchObject({ number: iid, mergedAt: '2026-01-01T00:00:00Z' });
    }
  });
});

describe('decideApply', () => {
  const PR = { number: 7, url: '' };
  async function decide(options: {
    pr?: typeof PR;
    expectDigest?: string;
    applyUnreviewed?: boolean;
    comments?: Array<{ id: number; body: string; author: string }>;
    newest?: () => Promise<void>;
  }) {
    const { thread } = await github(options.comments ?? [{ id: 1, body: planComment(DIGEST), author: 'Bot' }]);
    const saved: string[] = [];
    const decided = await decideApply({
      checkNewest: options.newest,
      expectDigest: options.expectDigest ?? '',
      applyUnreviewed: options.applyUnreviewed ?? false,
      mergedPullRequest: async () => options.pr,
      threadOf: () => thread,
      commentMarker: MARKER,
      saveMarker: (marker) => (saved.push(marker), '/tmp/reviewed.md'),
    });
    return { decided, saved };
  }

  it('applies the merged pull request’s reviewed plan by its digest, its marker saved for --reviewed', async () => {
    expect(await decide({ pr: PR })).toEqual({ decided: { mode: { mode: 'reviewed', digest: DIGEST, reviewedFile: '/tmp/reviewed.md' }, pullRequest: PR }, saved: [digestLine(DIGEST)] });
  });

  it('refuses a direct push, and a pull request without orgform’s plan comment: only a plan, with the reason', async () => {
    expect((await decide({})).decided).toEqual({ mode: { mode: 'no-review' }, reason: 'this commit was pushed directly: no merged pull request has it as its merge commit' });
    const forged = await decide({ pr: PR, comments: [{ id: 1, body: planComment(FORGED), author: 'renovate[bot]' }] });
    expect(forged.decided).toEqual({ mode: { mode: 'no-review' }, pullRequest: PR, reason: "the pull request has no plan comment of orgform's (for this directory and these files)" });
  });

  it('applies unreviewed, a direct push included, only when a person asked for it; a digest given is the only plan applied, whatever the comment says', async () => {
    expect((await decide({ applyUnreviewed: true })).decided).toEqual({ mode: { mode: 'unreviewed' } });
    expect((await decide({ pr: PR, applyUnreviewed: true })).decided).toEqual({ mode: { mode: 'unreviewed' }, pullRequest: PR });
    expect((await decide({ pr: PR, expectDigest: FORGED })).decided).toEqual({ mode: { mode: 'reviewed', digest: FORGED }, pullRequest: PR });
  });
  it('decides nothing, whatever the review, the digest given or apply-unreviewed, when a newer configuration is on the branch (a re-run of an old job)', async () => {
    const superseded = async () => {
      throw new SupersededError('1'.repeat(40), '2'.repeat(40), 'main', ['orgs.yaml']);
    };
    for (const options of [{ pr: PR }, { pr: PR, expectDigest: DIGEST }, { applyUnreviewed: true }]) {
      await expect(decide({ ...options, newest: superseded })).rejects.toBeInstanceOf(SupersededError);
    }
  });
});

describe('noReviewReason', () => {
  it('speaks of what the forge reviews: GitLab’s merge request', () => {
    expect(noReviewReason('no-pull-request', 'merge request')).toBe('this commit was pushed directly: no merged merge request has it as its merge commit');
    expect(noReviewReason('no-digest', 'merge request')).toMatch(/^orgform's plan comment on the merge request holds no plan/);
  });
});

describe('applyArguments', () => {
  it('applies by digest with the events as data last, applies unreviewed by name, or else only plans', () => {
    const common = ['-f', 'orgs.yaml', '--format', 'text'];
    expect(applyArguments({ mode: 'reviewed', digest: DIGEST, reviewedFile: 'r.md' }, common)).toEqual(['apply', '--expect-digest', DIGEST, '--reviewed', 'r.md', ...common, '--format', 'json']);
    expect(applyArguments({ mode: 'unreviewed' }, common)).toEqual(['apply', '--auto-approve', ...common, '--format', 'json']);
    expect(applyArguments({ mode: 'no-review' }, common)).toEqual(['plan', '--format', 'markdown', '--detailed-exitcode', ...common]);
  });
});

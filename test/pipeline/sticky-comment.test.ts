import { describe, expect, it } from 'vitest';
import { commentMarker, composePlanComment, GITLAB_NOTE_LENGTH, isAuthor, MAX_COMMENT_LENGTH, upsertComment } from '../../pipeline/sticky-comment.mjs';

const MARKER = commentMarker('');

describe('commentMarker', () => {
  it('is one hidden line, keyed when a key is given, and no key can end the HTML comment early', () => {
    expect(MARKER).toBe('<!-- orgform-plan -->');
    expect(commentMarker('team-b orgs.yaml')).toBe('<!-- orgform-plan team-b orgs.yaml -->');
    const hostile = commentMarker('x --> <script>alert(1)</script> <!--');
    expect(hostile.slice(4, -4)).not.toMatch(/--|<|>/);
  });
});

describe('composePlanComment', () => {
  it('is the marker, the Markdown plan and a footer naming the commit', () => {
    const body = composePlanComment({ marker: MARKER, markdown: '**orgform plan:** 1 to change\n', stderr: 'Saved the plan to plan.bin\n', exitCode: 2, commit: '0123456789abcdef' });
    expect(body).toBe('<!-- orgform-plan -->\n**orgform plan:** 1 to change\n\n<sub>orgform plan for 0123456; updated on every push.</sub>\n');
  });

  it('without a plan, shows the error in a code block that nothing in it can close, without workflow commands or colours', () => {
    const stderr = '::error file=orgs.yaml,line=5,col=7,title=orgform::bad\n\x1b[31mError:\x1b[0m bad key ```` here\n  ::stop-commands::abc\n';
    const body = composePlanComment({ marker: MARKER, markdown: '', stderr, exitCode: 1, commit: 'abc' });
    expect(body).toBe('<!-- orgform-plan -->\n**orgform plan failed** (exit code 1)\n\n`````text\nError: bad key ```` here\n`````\n\n<sub>orgform plan for abc; updated on every push.</sub>\n');
  });

  it('never exceeds GitHub’s 65,536 characters: an error is cut, and a plan too long is replaced by a pointer', () => {
    const longError = composePlanComment({ marker: MARKER, markdown: '', stderr: 'e'.repeat(200_000), exitCode: 1, commit: 'abc' });
    expect(longError.length).toBeLessThanOrEqual(MAX_COMMENT_LENGTH);
    expect(longError).toContain('e\n…\n');
    const longPlan = composePlanComment({ marker: MARKER, markdown: 'p'.repeat(70_000), stderr: '', exitCode: 2, commit: 'abc' });
    expect(longPlan.length).toBeLessThanOrEqual(MAX_COMMENT_LENGTH);
    expect(longPlan).toContain('the plan is too long for a comment (70,001 characters)');
  });

  it('takes a plan up to the forge’s limit it is given: GitLab’s notes hold 1,000,000 characters', () => {
    const plan = 'p'.repeat(900_000);
    expect(composePlanComment({ marker: MARKER, markdown: plan, stderr: '', exitCode: 2, commit: 'abc', maxLength: GITLAB_NOTE_LENGTH })).toContain(plan);
    expect(composePlanComment({ marker: MARKER, markdown: `${plan}${plan}`, stderr: '', exitCode: 2, commit: 'abc', maxLength: GITLAB_NOTE_LENGTH }).length).toBeLessThanOrEqual(GITLAB_NOTE_LENGTH);
  });
});

describe('upsertComment', () => {
  function thread(comments: Array<{ id: number; body: string; by?: string }>, author: string | null = 'us') {
    const calls: string[] = [];
    return {
      calls,
      name: 'test',
      author: async () => (author === null ? undefined : { login: author }),
      async *writtenBy(who: { login: string }) {
        for (const c of comments) if ((c.by ?? 'us') === who.login) yield c;
      },
      async create(body: string) {
        calls.push(`create ${body}`);
        return { id: 99, body };
      },
      async update(id: number | string, body: string) {
        calls.push(`update ${id} ${body}`);
        return { id, body };
      },
    };
  }

  it('creates the comment when none of ours starts with the marker', async () => {
    const t = thread([{ id: 1, body: 'see <!-- orgform-plan -->\n' }]);
    expect(await upsertComment(t, MARKER, `${MARKER}\nnew`)).toEqual({ action: 'created', id: 99 });
    expect(t.calls).toEqual([`create ${MARKER}\nnew`]);
  });

  it('updates the oldest of ours with the marker, and only when its text differs', async () => {
    const t = thread([{ id: 1, body: 'hello' }, { id: 2, body: `${MARKER}\nold` }, { id: 3, body: `${MARKER}\nolder copy` }]);
    expect(await upsertComment(t, MARKER, `${MARKER}\nnew`)).toEqual({ action: 'updated', id: 2 });
    expect(await upsertComment(thread([{ id: 2, body: `${MARKER}\nsame` }]), MARKER, `${MARKER}\nsame`)).toEqual({ action: 'unchanged', id: 2 });
    expect(t.calls).toEqual([`update 2 ${MARKER}\nnew`]);
  });

  it('never edits a comment of another author, and edits none when the token’s identity is unknown', async () => {
    const t = thread([{ id: 1, body: `${MARKER}\nrenovate`, by: 'renovate[bot]' }]);
    expect(await upsertComment(t, MARKER, `${MARKER}\nnew`)).toEqual({ action: 'created', id: 99 });
    const unknown = thread([{ id: 2, body: `${MARKER}\nold` }], null);
    expect(await upsertComment(unknown, MARKER, `${MARKER}\nnew`)).toEqual({ action: 'created', id: 99, unowned: true });
    expect([...t.calls, ...unknown.calls]).toEqual([`create ${MARKER}\nnew`, `create ${MARKER}\nnew`]);
  });

  it('tells one keyed marker from another', async () => {
    const t = thread([{ id: 5, body: `${commentMarker('team-b')}\nb` }]);
    expect((await upsertComment(t, MARKER, `${MARKER}\na`)).action).toBe('created');
  });
});

describe('isAuthor', () => {
  it('matches by id when both have one, else by login regardless of case; an absent account is nobody', () => {
    expect(isAuthor({ id: 5, login: 'renamed' }, { login: 'ops-bot', id: 5 })).toBe(true);
    expect(isAuthor({ id: 6, login: 'ops-bot' }, { login: 'ops-bot', id: 5 })).toBe(false);
    expect(isAuthor({ id: 41898282, login: 'GitHub-Actions[bot]' }, { login: 'github-actions[bot]' })).toBe(true);
    expect(isAuthor({ id: 1, username: 'project_42_bot' }, { login: 'project_42_bot' })).toBe(true);
    expect(isAuthor({ id: 1, login: 'renovate[bot]' }, { login: 'github-actions[bot]' })).toBe(false);
    expect(isAuthor(undefined, { login: 'x' })).toBe(false);
  });
});

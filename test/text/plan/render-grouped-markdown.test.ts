import { describe, expect, it } from 'vitest';
import { renderPlan } from '../../../src/commands/plan/view.js';
import { digestPlan } from '../../../src/plan/plan-digest.js';
import { summarisePlan, type Plan } from '../../../src/plan/types.js';
import { reviewedDigestOf } from '../../../pipeline/reviewed-plan.mjs';
import { itemsOf } from '../../../src/text/plan/group-same-changes.js';
import { GITHUB_COMMENT_LIMIT, GITLAB_NOTE_LIMIT, PLAN_PAGE_PLACEHOLDER, PLAN_PAGE_URL_MAX_LENGTH, renderGroupedMarkdown } from '../../../src/text/plan/render-grouped-markdown.js';
import {
  commentMarker,
  composePlanComment,
  GITLAB_NOTE_LENGTH,
  linkPlanPage,
  MAX_COMMENT_LENGTH,
  PLAN_PAGE_PLACEHOLDER as PIPELINE_PLACEHOLDER,
  PLAN_PAGE_URL_MAX_LENGTH as PIPELINE_URL_MAX_LENGTH,
} from '../../../pipeline/sticky-comment.mjs';
import { acceptInvitation, billing, billingKnownAfterAccept, everyKindPlan, largePlan, makePlan, problem, removeChannel, revokeInvitation } from '../../support/plan-fixtures.js';
import { planBulkExample } from './bulk-example-plan.js';
import { fivePatternPlan, singlesPlan } from './pattern-plans.js';

/** A section of the comment as a reader counts it: the changes its heading claims, those its rows show, and those its note says are left out. */
interface Accounted {
  heading: string;
  items: number;
  shown: number;
  leftOut: number;
}

/** Reads the comment back as a reviewer would, section by section: nothing here trusts the renderer's own numbers. */
function account(markdown: string): Accounted[] {
  const sections: Accounted[] = [];
  for (const line of markdown.split('\n')) {
    const heading = /^#{3,4} (.*) — (\d+) (?:organisations?|changes? in \d+ organisations?): /.exec(line);
    if (heading) {
      sections.push({ heading: heading[1]!, items: Number(heading[2]), shown: 0, leftOut: 0 });
      continue;
    }
    const section = sections[sections.length - 1];
    if (section === undefined || line === '| Change | Organisations |' || line === '| --- | --- |') continue;
    const groupRow = /^\| .* \| \*\*(\d+)\*\*: .* \|$/.exec(line);
    if (groupRow) section.shown += Number(groupRow[1]);
    else if (/^\| .* \| .* \|$/.test(line)) section.shown += 1;
    const note = /^_(?:(\d+) groups? \((\d+) organisations?\))?(?: and )?(?:(\d+) single changes?)? of .* (?:is|are) left out to fit the comment/.exec(line);
    if (note) section.leftOut += Number(note[2] ?? 0) + Number(note[3] ?? 0);
  }
  return sections;
}

/** Every section's heading is what its rows and notes add up to, and the headings add up to the plan, kind by kind. */
function expectEveryChangeAccountedFor(markdown: string, plan: Plan): void {
  const sections = account(markdown);
  for (const s of sections) expect(s, s.heading).toMatchObject({ items: s.shown + s.leftOut });
  const kindTotal = (title: RegExp) => sections.filter((s) => title.test(s.heading)).reduce((n, s) => n + s.items, 0);
  const count = (kind: string) => plan.changes.filter((c) => c.kind === kind).length;
  expect(kindTotal(/Invitations to accept/)).toBe(count('accept-invitation'));
  expect(kindTotal(/Invitations to revoke/)).toBe(count('revoke-invitation'));
  expect(kindTotal(/Notification channels to remove/)).toBe(count('remove-channel'));
  expect(kindTotal(/Active organisation/)).toBe(count('set-active'));
  expect(kindTotal(/Billing/)).toBe(plan.changes.flatMap(itemsOf).filter((i) => i.change.kind === 'billing').length);
  // The table at a glance says the same as the headings, section by section.
  const glance = [...markdown.matchAll(/^\| \S+ (.+?) \| (\d+) \| \d+ \| \d+ \| \d+ \|$/gm)].map((m) => [m[1]!, Number(m[2])]);
  expect(glance).toEqual(sections.map((s) => [s.heading.replace(/^\S+ /, ''), s.items]));
  const summary = summarisePlan(plan);
  expect(markdown).toContain(`**orgform plan:** ${summary.change} to change, ${summary.remove} to remove, ${summary.accept} to accept`);
}

describe('renderGroupedMarkdown', () => {
  it('says each kind and field with its counts, a row per group and per single change, and links the plan page', () => {
    expect(renderGroupedMarkdown(everyKindPlan())).toMatchInlineSnapshot(`
      "**orgform plan:** 2 to change, 2 to remove, 1 to accept · 2 unchanged · 1 already done (journal) · ⚠️ 1 problem

      | Kind and field | Changes | Organisations | Groups | Single changes |
      | --- | ---: | ---: | ---: | ---: |
      | + Invitations to accept | 1 | 1 | 0 | 1 |
      | &#126; Billing: billingEmail | 1 | 1 | 0 | 1 |
      | &#126; Billing: customerID | 1 | 1 | 0 | 1 |
      | - Invitations to revoke | 1 | 1 | 0 | 1 |
      | - Notification channels to remove | 1 | 1 | 0 | 1 |
      | &#126; Active organisation | 1 | 1 | 0 | 1 |

      ### ⚠️ Problems (1)

      These could not be read; their changes are missing from this plan.

      - **umbrella**: getOrganisation /organisations/umbrella failed with HTTP 403: forbidden: not a member

      ### + Invitations to accept — 1 organisation: 1 single change

      | Change | Organisations |
      | --- | --- |
      | inv&#95;1 | acme |

      ### &#126; Billing: billingEmail — 1 organisation: 1 single change

      | Change | Organisations |
      | --- | --- |
      | &quot;old@acme.test&quot; → &quot;new@acme.test&quot; | acme |

      ### &#126; Billing: customerID — 1 organisation: 1 single change

      | Change | Organisations |
      | --- | --- |
      | (none) → &quot;cus&#95;1&quot; | acme |

      ### - Invitations to revoke — 1 organisation: 1 single change

      > cannot be checked before apply: the interface cannot list invitations

      | Change | Organisations |
      | --- | --- |
      | inv&#95;2 | acme |

      ### - Notification channels to remove — 1 organisation: 1 single change

      | Change | Organisations |
      | --- | --- |
      | ch&#95;9 | globex |

      ### &#126; Active organisation — 1 organisation: 1 single change

      | Change | Organisations |
      | --- | --- |
      | globex → acme | acme |

      _Every change by organisation, with filters: [the plan page](#orgform-plan-page)._
      "
    `);
  });

  it('says the same change once: the count, the first organisations by name and how many more, old values counted', () => {
    const changes = ['a', 'b', 'c', 'd', 'e'].map((s, i) => (i < 4 ? billing(s, { platformID: ['plat_legacy', 'plat_bulk_1'] }) : billingKnownAfterAccept(s, 'inv', { platformID: 'plat_bulk_1' })));
    const markdown = renderGroupedMarkdown(makePlan({ changes }));
    expect(markdown).toContain('\n### &#126; Billing: platformID — 5 organisations: 1 group\n');
    expect(markdown).toContain('\n> (known after accept) means: current billing is known once an invitation is accepted');
    expect(markdown).toContain('\n| &quot;plat&#95;legacy&quot; ×4, (known after accept) ×1 → &quot;plat&#95;bulk&#95;1&quot; | **5**: a, b, c and 2 more |\n');
  });

  it('has every change of the 300-organisation example, grouped, within GitHub’s comment limit', async () => {
    const plan = await planBulkExample();
    const markdown = renderGroupedMarkdown(plan);
    expect(markdown.length).toBeLessThan(GITHUB_COMMENT_LIMIT);
    expectEveryChangeAccountedFor(markdown, plan);
    // Its 300 platformID moves are three rows, and nothing is left out.
    expect(markdown.match(/^\| &quot;plat&#95;legacy&quot; ×\d+, \(known after accept\) ×\d+ → &quot;plat&#95;bulk&#95;\d&quot; \| \*\*100\*\*: /gm)).toHaveLength(3);
    expect(markdown).not.toContain('left out');
    // Their single changes folded, so that the groups stay in view.
    expect(markdown).toContain('\n<details><summary>108 single changes</summary>\n\n| Change | Organisations |\n');
  }, 60_000);

  it('has every change of a plan of 10,000 changes in 5 patterns, in five rows', () => {
    const plan = fivePatternPlan(10_000);
    const markdown = renderGroupedMarkdown(plan);
    expect(markdown.length).toBeLessThan(3_000);
    expectEveryChangeAccountedFor(markdown, plan);
    expect(markdown.match(/\*\*2000\*\*: org-0000\d\d, org-0000\d\d, org-0000\d\d and 1997 more \|$/gm)).toHaveLength(5);
  });

  it('accounts for 100,000 single changes within the limit, naming how many each section left out and where they are', () => {
    const plan = singlesPlan(100_000);
    const markdown = renderGroupedMarkdown(plan);
    expect(markdown.length).toBeLessThanOrEqual(65_000);
    expectEveryChangeAccountedFor(markdown, plan);
    expect(markdown).toMatch(/\n_\d+ single changes of Billing: billingEmail are left out to fit the comment: every one is on \[the plan page\]\(#orgform-plan-page\)\._\n/);
    // The budget is used, not wasted: linked at the longest address, within a row's length of the limit.
    const linked = linkPlanPage(markdown, 'https://example.test/'.padEnd(PLAN_PAGE_URL_MAX_LENGTH, 'a'));
    expect(linked.length).toBeGreaterThan(64_000);
    expect(linked.length).toBeLessThanOrEqual(65_000);
  });

  it('shows every row in GitLab’s million characters', () => {
    const plan = singlesPlan(6_000);
    const markdown = renderGroupedMarkdown(plan, { maxLength: GITLAB_NOTE_LIMIT });
    expect(account(markdown).map((s) => s.leftOut)).toEqual([0, 0, 0]);
    expectEveryChangeAccountedFor(markdown, plan);
  });

  it('leaves out only a row too long to fit, saying so, and keeps the rows after it', () => {
    const changes = ['o1', 'o2', 'o3'].map((s, i) => billing(s, { customerID: ['old', i === 0 ? 'y'.repeat(70_000) : `new_${s}`] }));
    const markdown = renderGroupedMarkdown(makePlan({ changes }));
    expect(markdown.length).toBeLessThanOrEqual(65_000);
    expect(markdown).toContain('| &quot;old&quot; → &quot;new&#95;o2&quot; | o2 |');
    expect(markdown).toContain('| &quot;old&quot; → &quot;new&#95;o3&quot; | o3 |');
    expect(markdown).toContain('_1 single change of Billing: customerID is left out to fit the comment:');
  });

  it('keeps problems in view, up to half the comment, and counts those left out', () => {
    const plan = { ...fivePatternPlan(50), problems: Array.from({ length: 2_000 }, (_, i) => problem(`bad-${i}`, 'HTTP 403 forbidden')) };
    const markdown = renderGroupedMarkdown(plan, { maxLength: 20_000 });
    expect(markdown.length).toBeLessThanOrEqual(20_000);
    expect(markdown).toMatch(/\n- _…and \d+ more problems: see \[the plan page\]\(#orgform-plan-page\)\._\n/);
    expectEveryChangeAccountedFor(markdown, plan);
  });

  it('when not every row fits, shows some of each kind and field rather than the first taking all the room', () => {
    const plan = largePlan(300);
    const markdown = renderGroupedMarkdown(plan, { maxLength: 12_000 });
    const sections = account(markdown);
    expect(sections).toHaveLength(3);
    for (const section of sections) expect(section.shown, section.heading).toBeGreaterThan(20);
    expect(Math.max(...sections.map((s) => s.shown)) - Math.min(...sections.map((s) => s.shown))).toBeLessThanOrEqual(20);
    expectEveryChangeAccountedFor(markdown, plan);
  });

  /** Every section too long to show whole, so that each says what it left out with a link, and problems too. */
  function overfullPlan(): Plan {
    const changes = Array.from({ length: 8_000 }, (_, i) => {
      const s = `org-${String(i).padStart(5, '0')}`;
      return [billing(s, { billingEmail: ['a@x.test', `b${i}@x.test`], customerID: ['c', `c${i}`], subscriptionID: ['s', `s${i}`], platformID: ['p', `p${i}`] }), acceptInvitation(s, `inv_a${i}`), revokeInvitation(s, `inv_r${i}`), removeChannel(s, `chn_${i}`)];
    }).flat();
    return makePlan({ changes, problems: Array.from({ length: 3_000 }, (_, i) => problem(`bad-${i}`, 'HTTP 500')) });
  }
  /** An artifact's address in a repository with a long name: https://github.com/OWNER/REPO/actions/runs/RUN/artifacts/ID. */
  const LONG_URL = `https://github.com/${'o'.repeat(39)}/${'r'.repeat(100)}/actions/runs/12345678901/artifacts/2345678901`.padEnd(PLAN_PAGE_URL_MAX_LENGTH, '0');

  it('stays within GitHub’s limit once the Action links the page, however long (within reason) the page’s address', () => {
    const plan = overfullPlan();
    const markdown = renderGroupedMarkdown(plan);
    expect(markdown.split(`](${PLAN_PAGE_PLACEHOLDER})`).length - 1).toBe(9);
    const url = LONG_URL;
    const body = composePlanComment({ marker: commentMarker('orgs'), markdown: linkPlanPage(markdown, url), stderr: '', exitCode: 2, commit: 'a'.repeat(40) });
    expect(body.length).toBeLessThanOrEqual(MAX_COMMENT_LENGTH);
    expect(body).not.toContain('too long for a comment');
    expectEveryChangeAccountedFor(body, plan);
    // A longer address is refused, so that the promise holds (the Action then leaves the links as they are, and warns).
    expect(PIPELINE_URL_MAX_LENGTH).toBe(PLAN_PAGE_URL_MAX_LENGTH);
    expect(() => linkPlanPage(markdown, `${url}0`)).toThrow(/at most 300 characters/);
  });

  it('so does the plan as `plan --format markdown` writes it, the digest’s footer included: linked and in a comment, its digest on the second line for the apply', () => {
    const plan = overfullPlan();
    const markdown = renderPlan(plan, 'markdown', { color: false });
    // A long key, as several files in a directory give: the comment's own marker.
    const marker = commentMarker('infrastructure/organisations orgs/europe.yaml orgs/americas.yaml orgs/asia-pacific.yaml');
    const body = composePlanComment({ marker, markdown: linkPlanPage(markdown, LONG_URL), stderr: '', exitCode: 2, commit: 'a'.repeat(40) });
    expect(body.length).toBeLessThanOrEqual(MAX_COMMENT_LENGTH);
    expect(body).not.toContain('too long for a comment');
    expect(reviewedDigestOf(body, marker)?.digest).toBe(digestPlan(plan));
    expectEveryChangeAccountedFor(body, plan);
  });

  it('stays under any limit, however small', () => {
    const plan = singlesPlan(300);
    for (const maxLength of [10, 300, 1_000, 4_321]) expect(renderGroupedMarkdown(plan, { maxLength }).length).toBeLessThanOrEqual(maxLength);
  });

  it('renders the same plan to the same bytes every time', () => {
    expect(renderGroupedMarkdown(singlesPlan(3_000))).toBe(renderGroupedMarkdown(singlesPlan(3_000)));
  });
});

describe('the grouped comment against hostile values', () => {
  const hostile = [
    '</details><script>alert(1)</script>',
    '</script><img src=x onerror=alert(1)>',
    'javascript:alert(1)',
    '[click](javascript:alert(1))',
    `](${PLAN_PAGE_PLACEHOLDER})`,
    '`code` | pipe ~~~ ```',
    '@octocat #1 https://evil.example',
    'sub\u200b_acme',
    'acme\u202Egnp.exe',
  ];
  const plan = makePlan({
    changes: [
      ...hostile.map((value, i) => billing(`o${i}`, { customerID: ['x', value] })),
      ...hostile.map((value, i) => billing(`p${i}`, { customerID: ['x', value] })),
      acceptInvitation('<b>bold</b>', '</details>'),
      revokeInvitation('q', 'javascript:alert(1)'),
    ],
    problems: [problem('</details>', '<script>alert(1)</script>')],
  });
  const markdown = renderGroupedMarkdown(plan);

  it('shows every value escaped: no HTML, no link, no code span, no line of its own', () => {
    // Only the fold of this module's own: every < of a value is &lt;.
    expect(markdown).not.toMatch(/<(?!\/?(?:details|summary)>)[a-z/!]/i);
    expect(markdown).not.toMatch(/`/);
    expect(markdown).not.toMatch(/\]\((?!#orgform-plan-page\))/);
    expect(markdown).toContain('| &quot;x&quot; → &quot;&lt;/details&gt;&lt;script&gt;alert(1)&lt;/script&gt;&quot; | **2**: o0, p0 |');
    expect(markdown).toContain('| &lt;/details&gt; | &lt;b&gt;bold&lt;/b&gt; |');
    expect(markdown).toContain('| javascript:alert(1) | q |');
    expectEveryChangeAccountedFor(markdown, plan);
  });

  it('shows invisible and bidirectional characters escaped and marked, never merged with their look-alikes', () => {
    expect(markdown).not.toMatch(/[\u200B\u202E]/);
    expect(markdown).toContain('| &quot;x&quot; → &quot;sub&#92;u200B&#95;acme&quot; (contains invisible characters) | **2**: o7, p7 |');
    expect(markdown).toContain('| &quot;x&quot; → &quot;acme&#92;u202Egnp.exe&quot; (contains invisible characters) | **2**: o8, p8 |');
  });

  it('links the plan page from its own links only, once the Action knows its address (pipeline/sticky-comment.mjs)', () => {
    expect(PIPELINE_PLACEHOLDER).toBe(PLAN_PAGE_PLACEHOLDER);
    expect([MAX_COMMENT_LENGTH, GITLAB_NOTE_LENGTH]).toEqual([GITHUB_COMMENT_LIMIT, GITLAB_NOTE_LIMIT]);
    const linked = linkPlanPage(markdown, 'https://github.com/o/r/actions/runs/1/artifacts/2');
    expect(linked).not.toContain(`](${PLAN_PAGE_PLACEHOLDER})`);
    expect(linked.match(/\]\(https:\/\/github\.com\/o\/r\/actions\/runs\/1\/artifacts\/2\)/g)).toHaveLength(markdown.split(`](${PLAN_PAGE_PLACEHOLDER})`).length - 1);
    // The value that spells the placeholder is escaped, so it is not a link and stays as it was.
    expect(linked).toContain('&#93;(#orgform-plan-page)');
    expect(renderGroupedMarkdown(plan, { pageUrl: 'https://example.test/a(b)?c=<d>' })).toContain('](https://example.test/a%28b%29?c=%3Cd%3E)');
    for (const bad of ['javascript:alert(1)', 'https://', 'https://x/\u202e', 'data:text/html,x', 'https://x y']) {
      expect(() => linkPlanPage(markdown, bad), bad).toThrow(/must be an http or https URL of printable ASCII/);
      expect(() => renderGroupedMarkdown(plan, { pageUrl: bad }), bad).toThrow(/must be an http or https URL of printable ASCII/);
    }
  });
});

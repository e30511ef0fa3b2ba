import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../../src/text/plan/render-markdown.js';
import { billing, billingKnownAfterAccept, everyKindPlan, largePlan, makePlan, problem } from '../../support/plan-fixtures.js';

describe('renderMarkdown', () => {
  it('writes a summary line, problems, a table and folded diffs', () => {
    expect(renderMarkdown(everyKindPlan())).toMatchInlineSnapshot(`
      "**orgform plan:** 2 to change, 2 to remove, 1 to accept · 2 unchanged · 1 already done (journal) · ⚠️ 1 problem

      ### ⚠️ Problems

      These could not be read; their changes are missing from this plan.

      - **umbrella**: getOrganisation /organisations/umbrella failed with HTTP 403: forbidden: not a member

      | Organisation | Changes | Actions |
      | --- | ---: | --- |
      | acme | 3 | ~ billing, + accept 1 invitation, - revoke 1 invitation |
      | globex | 1 | - remove 1 notification channel |
      | activeOrganisation | 1 | ~ set active: globex → acme |

      <details><summary>acme — 3 changes</summary>

      \`\`\`diff
      ~ organisations.acme.billing
      -     billingEmail: "old@acme.test"
      +     billingEmail: "new@acme.test"
      -     customerID: (none)
      +     customerID: "cus_1"
      + organisations.acme.invitations.accept.inv_1
      - organisations.acme.invitations.revoke.inv_2
            # cannot be checked before apply: the interface cannot list invitations
      \`\`\`

      </details>

      <details><summary>globex — 1 change</summary>

      \`\`\`diff
      - organisations.globex.notificationChannels.remove.ch_9
      \`\`\`

      </details>

      <details><summary>activeOrganisation — 1 change</summary>

      \`\`\`diff
      ~ activeOrganisation: globex → acme
      \`\`\`

      </details>
      "
    `);
  });

  it('shows the current billing of an organisation being joined as known after accept', () => {
    const markdown = renderMarkdown(makePlan({ changes: [billingKnownAfterAccept('wayne', 'inv_bot', { billingEmail: 'new@wayne.example' })] }));
    expect(markdown).toContain('-     billingEmail: (known after accept)');
    expect(markdown).toContain('+     billingEmail: "new@wayne.example"');
  });

  it('writes a short comment when nothing differs', () => {
    expect(renderMarkdown(makePlan({ unchanged: ['acme', 'globex'] }))).toMatchInlineSnapshot(`
      "**orgform plan:** No changes. Your organisations match the configuration. · 2 unchanged
      "
    `);
  });

  it('keeps problems visible even when there are no changes', () => {
    const text = renderMarkdown(makePlan({ problems: [problem('acme', 'HTTP 500 internal: boom')] }));
    expect(text).toContain('### ⚠️ Problems');
    expect(text).toContain('- **acme**: HTTP 500 internal: boom');
    expect(text).not.toContain('match the configuration');
  });

  it('stays under 65,000 characters for 10,000 organisations and says what was left out', () => {
    const text = renderMarkdown(largePlan(10_000));
    expect(text.length).toBeLessThanOrEqual(65_000);
    expect(text.startsWith('**orgform plan:** 10000 to change, 10000 to remove, 10000 to accept · 1 unchanged\n')).toBe(true);
    const shownDetails = text.match(/<details>/g)?.length ?? 0;
    const shownRows = text.match(/^\| org-\d{5} \|/gm)?.length ?? 0;
    expect(shownRows).toBeGreaterThan(0);
    expect(shownRows).toBeLessThan(10_000);
    expect(text).toContain(`\n_${10_000 - shownRows} more rows left out of this table._\n`);
    expect(text).toContain(
      `_Details for ${10_000 - shownDetails} organisations left out to stay under GitHub's 65,536-character comment limit; run orgform plan locally or see the job log._`,
    );
  });

  it('keeps the table whole and leaves out only details when the table fits', () => {
    const text = renderMarkdown(largePlan(100), { maxLength: 12_000 });
    expect(text.length).toBeLessThanOrEqual(12_000);
    expect(text.match(/^\| org-\d{5} \|/gm)).toHaveLength(100);
    const shownDetails = text.match(/<details>/g)?.length ?? 0;
    expect(shownDetails).toBeGreaterThan(0);
    expect(text).toContain(`_Details for ${100 - shownDetails} organisations left out to stay under the 12000-character limit;`);
    expect(text).not.toContain('left out of this table');
  });

  it('leaves out only the details that do not fit: one organisation with a value too long for a comment hides no other diff', () => {
    const changes = ['o1', 'o2', 'o3'].map((slug, i) => billing(slug, { customerID: [i === 0 ? 'y'.repeat(70_000) : 'old', `new_${slug}`] }));
    const text = renderMarkdown(makePlan({ changes }));
    expect(text.length).toBeLessThanOrEqual(65_000);
    expect(text.match(/^<details><summary>[^<]*/gm)).toEqual(['<details><summary>o2 — 1 change', '<details><summary>o3 — 1 change']);
    expect(text).toContain('+     customerID: "new_o3"');
    expect(text).toContain("_Details for 1 organisation left out to stay under GitHub's 65,536-character comment limit;");
  });

  it('stays under any limit, however small, and keeps problems before the table', () => {
    const plan = { ...largePlan(50), problems: Array.from({ length: 500 }, (_, i) => problem(`bad-${i}`, 'HTTP 403 forbidden')) };
    for (const maxLength of [40, 300, 2_000, 9_999]) {
      expect(renderMarkdown(plan, { maxLength }).length).toBeLessThanOrEqual(maxLength);
    }
    const text = renderMarkdown(plan, { maxLength: 2_000 });
    expect(text).toMatch(/- _…and \d+ more problems left out; see the job log\._\n/);
    expect(text).not.toContain('| Organisation |');
    expect(text).toContain('\n_The table (50 rows) was left out._\n');
  });

  it('cannot be broken out of by backticks, pipes or HTML in slugs and values', () => {
    const slug = 'ev`il|<script>alert(1)</script>';
    const plan = makePlan({
      changes: [billing(slug, { billingEmail: ['```\n</details><img src=x onerror=alert(1)>', 'a|b`c'] })],
      problems: [problem('x|y', 'bad <b>html</b> and `code` and [link](https://evil.test)')],
    });
    const text = renderMarkdown(plan);
    const outsideCode = text.replace(/^(`{3,})diff\n[\s\S]*?\n\1\n/gm, '');
    expect(outsideCode).not.toMatch(/<script|<img|<b>|`/);
    expect(text).toContain('| ev&#96;il&#124;&lt;script&gt;alert(1)&lt;/script&gt; | 1 | ~ billing |');
    expect(text).toContain('<summary>ev&#96;il&#124;&lt;script&gt;alert(1)&lt;/script&gt; — 1 change</summary>');
    expect(text).toContain('- **x&#124;y**: bad &lt;b&gt;html&lt;/b&gt; and &#96;code&#96; and &#91;link&#93;(https:&#8203;//evil.test)');
    // The value holds a run of three backticks, so the fence is four long and the value stays on one line.
    expect(text).toContain('\n````diff\n~ organisations.ev`il|<script>alert(1)</script>.billing\n-     billingEmail: "```\\n</details>');
    expect(text).toContain('\n````\n\n</details>\n');
  });

  it('renders the same plan to the same bytes every time', () => {
    expect(renderMarkdown(largePlan(3_000))).toBe(renderMarkdown(largePlan(3_000)));
  });
});

describe('what reviewers see is what is there', () => {
  it('pings no one and links nothing from a declared organisation "@octocat" or "#123": not in the table, not in <summary>, not in problems', () => {
    const plan = makePlan({
      changes: [billing('@octocat', { billingEmail: ['a@x.example', 'b@x.example'] }), billing('#123', {}), billing('gh-9', {})],
      problems: [problem('@team', 'see GH-7, owner/repo#3 and https://evil.example, or www.evil.example; mail ops@acme.example')],
    });
    const text = renderMarkdown(plan);
    const outsideCode = text.replace(/^(`{3,})diff\n[\s\S]*?\n\1\n/gm, '');
    expect(outsideCode).toContain('<details><summary>@&#8203;octocat — 1 change</summary>');
    expect(outsideCode).toContain('<details><summary>#&#8203;123 — 1 change</summary>');
    expect(outsideCode).toContain('| @&#8203;octocat | 1 | ~ billing |');
    expect(outsideCode).toContain('- **@&#8203;team**: see GH-&#8203;7, owner/repo#&#8203;3 and https:&#8203;//evil.example, or www.&#8203;evil.example; mail ops@acme.example');
    // Nothing GitHub would turn into a mention, a reference or a link is left outside the code blocks.
    const shown = outsideCode.replace(/&#(\d+);/g, (_, n: string) => (n === '8203' ? '\u200B' : String.fromCodePoint(Number(n))));
    expect(shown.match(/(^|[^\w])@[A-Za-z0-9]|#\d|GH-\d|:\/\/|www\.\w/gim)).toBeNull();
  });

  it('shows invisible and bidirectional characters escaped and marks the value, in the summary, the table and the diff', () => {
    const plan = makePlan({ changes: [billing('acme\u202Egnp.exe', { subscriptionID: ['sub_acme', 'sub\u200b_acme'] })] });
    const text = renderMarkdown(plan);
    expect(text).not.toMatch(/[\u200B\u202E]/);
    expect(text).toContain('<details><summary>acme&#92;u202Egnp.exe (contains invisible characters) — 1 change</summary>');
    expect(text).toContain('| acme&#92;u202Egnp.exe (contains invisible characters) | 1 | ~ billing |');
    expect(text).toContain('-     subscriptionID: "sub_acme"\n+     subscriptionID: "sub\\u200B_acme" (contains invisible characters)\n');
  });
});

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkPlanSafety } from '../../../src/plan/check-plan-safety.js';
import { renderPlanPage } from '../../../src/text/plan/render-plan-page.js';
import { billing, everyKindPlan, makePlan, problem, revokeInvitation } from '../../support/plan-fixtures.js';
import { HOSTILE_VALUES, hostilePlan } from './hostile-plan.js';

/** The page's data as its script reads it: the text of the JSON element, parsed. */
function pageData(page: string): { rows: Array<Array<string | Array<string | number>>>; marks: Array<{ label: string; tone: string }> } {
  const json = /<script type="application\/json" id="orgform-data">([^<]*)<\/script>/.exec(page)?.[1];
  if (json === undefined) throw new Error('no data element');
  return JSON.parse(json);
}

/** The page without its data and its own script: the HTML a browser parses as markup. */
function markup(page: string): string {
  return page.replace(/<script type="application\/json" id="orgform-data">[^<]*<\/script>/, '').replace(/<script>[\s\S]*?<\/script>/, '').replace(/<style>[\s\S]*?<\/style>/, '');
}

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

describe('renderPlanPage', () => {
  it('forbids every request and runs only its own style and script, allowed by their hashes', () => {
    const page = renderPlanPage(everyKindPlan());
    const policy = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(page)?.[1]?.replaceAll('&#39;', "'");
    const style = /<style>([\s\S]*?)<\/style>/.exec(page)![1]!;
    const script = /<script>([\s\S]*?)<\/script>/.exec(page)![1]!;
    expect(policy).toBe(`default-src 'none'; style-src ${sha256(style)}; script-src ${sha256(script)}; base-uri 'none'; form-action 'none'`);
    // The policy comes before anything it governs, and nothing in the page points anywhere.
    expect(page.indexOf('Content-Security-Policy')).toBeLessThan(page.indexOf('<style>'));
    expect(markup(page)).not.toMatch(/\b(?:src|srcset|action|data|poster)=|href="(?!#)|url\(|@import/);
    expect(page.match(/<script/g)).toHaveLength(2);
  });

  it('has the summary, each kind and field with its groups, and every change as a row of its data', () => {
    const page = renderPlanPage(everyKindPlan());
    expect(page).toContain('<title>orgform plan: 2 to change, 2 to remove, 1 to accept</title>');
    expect(page).toContain('<li><span class="n">2</span> unchanged</li>');
    expect(page).toContain('<h2 id="problems-heading">Problems (1)</h2>');
    expect(page).toContain('<li><strong>umbrella</strong>: getOrganisation /organisations/umbrella failed with HTTP 403: forbidden: not a member</li>');
    expect(page).toMatch(/<h3 id="section-1"><span class="act act-update">~<\/span> Billing: billingEmail <span class="muted">— 1 organisation: 1 single change<\/span><\/h3>/);
    expect(pageData(page).rows.map((r) => r.slice(0, 6))).toEqual([
      ['acme', '~ update', 'billing', 'billingEmail', '"old@acme.test"', '"new@acme.test"'],
      ['acme', '~ update', 'billing', 'customerID', '(none)', '"cus_1"'],
      ['acme', '+ accept', 'accept invitation', 'invitation', '', 'inv_1'],
      ['acme', '- delete', 'revoke invitation', 'invitation', 'inv_2', ''],
      ['globex', '- delete', 'remove channel', 'notificationChannel', 'ch_9', ''],
      ['acme', '~ update', 'set active', 'activeOrganisation', 'globex', 'acme'],
    ]);
  });

  it('ties each row to its group, so that a group’s button shows exactly its members', () => {
    const changes = ['a', 'b', 'c'].map((s) => billing(s, { platformID: ['old', 'new'], customerID: [null, `cus_${s}`] }));
    const page = renderPlanPage(makePlan({ changes }));
    expect(page).toContain('<button type="button" data-group="g0" data-label="Billing: platformID: &quot;old&quot; → &quot;new&quot;">Show these 3</button>');
    // The section of platformID (a group) comes first, that of customerID (single changes only) second.
    expect(pageData(page).rows.map((r) => [r[0], r[3], r[8]])).toEqual([
      ['a', 'platformID', 'g0'],
      ['a', 'customerID', 's1'],
      ['b', 'platformID', 'g0'],
      ['b', 'customerID', 's1'],
      ['c', 'platformID', 'g0'],
      ['c', 'customerID', 's1'],
    ]);
  });

  it('marks what cannot be checked before apply, and each change of a stale saved plan with what changed', () => {
    const plan = makePlan({ changes: [revokeInvitation('acme', 'inv_2'), billing('globex', { customerID: ['old', 'new'] })] });
    const safety = { hazards: [{ kind: 'stale' as const, changed: ['organisations.globex.billing.customerID changed from "old" to "other"', 'config file orgs.yaml changed since the plan'] }] };
    const page = renderPlanPage(plan, { safety });
    expect(page).toContain('<strong>This saved plan is stale:</strong>');
    expect(page).toContain('<li>config file orgs.yaml changed since the plan</li>');
    const { rows, marks } = pageData(page);
    expect(rows.map((r) => (r[6] as Array<string | number>).slice(1).map((i) => marks[i as number]))).toEqual([
      [{ label: 'cannot be checked before apply', tone: 'info' }],
      [{ label: 'changed since the plan: organisations.globex.billing.customerID changed from "old" to "other"', tone: 'bad' }],
    ]);
  });

  it('says what stands in the way: problems that make it incomplete, more changes than the budget', () => {
    const plan = makePlan({ changes: [billing('a', {}), billing('b', {})], problems: [problem('c', 'HTTP 500')] });
    const page = renderPlanPage(plan, { safety: checkPlanSafety(plan, { maxChanges: 1 }) });
    expect(page).toContain('<strong>This plan is incomplete:</strong> 1 organisation could not be read');
    expect(page).toContain('<strong>Over budget:</strong> 2 changes, more than --max-changes 1; apply refuses it.');
  });

  it('says when there is nothing to do', () => {
    expect(renderPlanPage(makePlan({ unchanged: ['a'] }))).toContain('<p><strong>No changes. Your organisations match the configuration.</strong></p>');
  });

  it('renders the same plan to the same bytes every time', () => {
    expect(renderPlanPage(hostilePlan())).toBe(renderPlanPage(hostilePlan()));
  });
});

describe('the plan page against hostile values', () => {
  const page = renderPlanPage(hostilePlan(), { safety: { hazards: [{ kind: 'stale', changed: ['organisations.o0: </script><script>alert(1)</script>'] }] } });

  it('writes no markup of theirs: outside the data, every <, > and quote of a value is a character reference', () => {
    const html = markup(page);
    // Its own links go to its own sections only.
    expect(html).not.toMatch(/<(?:script|img|iframe|svg|details|\/details|b>)|<a (?!class="skip" href="#main">|href="#section-\d+">)/i);
    expect(html).toContain('&lt;/details&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('javascript:alert(1)');
    expect(html).not.toMatch(/href="javascript/i);
  });

  it('keeps its data data: nothing in it can end the element or start a comment, and it reads back exactly', () => {
    const json = /<script type="application\/json" id="orgform-data">([^<]*)<\/script>/.exec(page)![1]!;
    expect(json).not.toMatch(/<|>|&|\u2028|\u2029/);
    const cells = pageData(page).rows.flat().map((c) => (typeof c === 'string' ? c : c[0]));
    expect(cells).toContain('"</script><script>window.pwned = 1</script>"');
    expect(cells).toContain('"line\\u2028separator"');
  });

  it('shows invisible and bidirectional characters escaped and marked, never as they are', () => {
    expect(page).not.toMatch(/[\u200B\u202E\u2066\uFEFF]/);
    const { rows, marks } = pageData(page);
    const marked = rows.flatMap((r) => r.filter((c): c is Array<string | number> => typeof c !== 'string' && c.length > 1 && marks[c[1] as number]!.label === 'contains invisible characters').map((c) => c[0]));
    expect(marked).toEqual(expect.arrayContaining(['"sub\\u200B_acme"', '"acme\\u202Egnp.exe"', 'zw\\u200Bslug']));
    expect(HOSTILE_VALUES.length).toBeGreaterThan(5);
  });
});

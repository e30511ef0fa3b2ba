import { describe, expect, it } from 'vitest';
import { codeBlock, codeSpan, describeBadLinkTarget, escapeMarkdown, joinMarkdown, markdownLink, md } from '../../src/text/markdown-escape.js';

describe('escapeMarkdown', () => {
  it('turns every character with a meaning in Markdown or HTML into a character reference', () => {
    expect(escapeMarkdown('<b>&"\'`|\\*_[x]~!$').text).toBe('&lt;b&gt;&amp;&quot;&#39;&#96;&#124;&#92;&#42;&#95;&#91;x&#93;&#126;&#33;&#36;');
  });

  it('keeps mentions, issue references and links from being made, and leaves e-mail addresses and SHAs alone', () => {
    expect(escapeMarkdown('@octocat @org/team (@x) ops@acme.example').text).toBe('@&#8203;octocat @&#8203;org/team (@&#8203;x) ops@acme.example');
    expect(escapeMarkdown('#1 owner/repo#22 GH-3 gh-4 #a').text).toBe('#&#8203;1 owner/repo#&#8203;22 GH-&#8203;3 gh-&#8203;4 #a');
    expect(escapeMarkdown('https://x.example www.x.example 3f2c1e9a7b').text).toBe('https:&#8203;//x.example www.&#8203;x.example 3f2c1e9a7b');
  });

  it('breaks a mention after any character that is not a letter, digit or underscore, as GitHub and GitLab find them there', () => {
    expect(escapeMarkdown('a.@octocat x-@octocat @@octocat é@x @_bot @.dot').text).toBe(
      'a.@&#8203;octocat x-@&#8203;octocat @@&#8203;octocat é@&#8203;x @&#8203;&#95;bot @&#8203;.dot',
    );
    expect(escapeMarkdown('ops@acme.example first.last@acme.example').text).toBe('ops@acme.example first.last@acme.example');
  });

  it('keeps GitLab references from being made: merge requests !12, epics &3, snippets $4, milestones %v1, labels ~bug', () => {
    expect(escapeMarkdown('!12 grp/proj!12 &3 $4 %v1 %"m 1" ~bug ~"a b" ^alert#1').text).toBe(
      '&#33;&#8203;12 grp/proj&#33;&#8203;12 &amp;&#8203;3 &#36;&#8203;4 %&#8203;v1 %&#8203;&quot;m 1&quot; &#126;&#8203;bug &#126;&#8203;&quot;a b&quot; ^alert#&#8203;1',
    );
    expect(escapeMarkdown('R&D 100% ! & $ % ~').text).toBe('R&amp;D 100% &#33; &amp; &#36; % &#126;');
  });

  it('keeps an emoji shortcode from replacing the text it is written with', () => {
    expect(escapeMarkdown(':white_check_mark: :+1: a:b: 12:30').text).toBe(':&#8203;white&#95;check&#95;mark: :&#8203;+1: a:&#8203;b: 12:30');
  });

  it('shows line breaks, controls, invisible and bidirectional characters as escapes, on one line', () => {
    expect(escapeMarkdown('a\nb\u001b[31m\u200Bc\u202Ed').text).toBe('a&#92;nb&#92;u001b&#91;31m&#92;u200Bc&#92;u202Ed');
  });
});

describe('md', () => {
  it('keeps the template’s own text and escapes every interpolated string, so outside text cannot be forgotten', () => {
    const slug = '<img src=x>@you';
    expect(md`| **${slug}** | ${3} |`.text).toBe('| **&lt;img src=x&gt;@&#8203;you** | 3 |');
  });

  it('takes Markdown already made as it is, and joins Markdown with Markdown', () => {
    const cell = md`~ ${'a|b'}`;
    expect(md`| ${cell} |`.text).toBe('| ~ a&#124;b |');
    expect(joinMarkdown([md`a`, md`${'*'}`], md`, `).text).toBe('a, &#42;');
  });
});

describe('codeBlock', () => {
  it('fences lines as written, each on one line, with a fence longer than any run of backticks inside', () => {
    expect(codeBlock('diff', ['+ "```"', '- @octocat\u202E\nx']).text).toBe('````diff\n+ "```"\n- @octocat\\u202E\\nx\n````');
  });
});

describe('markdownLink', () => {
  it('links escaped text to an http or https address, with what could end the target percent-encoded', () => {
    expect(markdownLink('the [plan] page', 'https://ci.example/a(b)?c=<d>&e="f"').text).toBe('[the &#91;plan&#93; page](https://ci.example/a%28b%29?c=%3Cd%3E&e=%22f%22)');
    expect(markdownLink(md`**page**`, '#orgform-plan-page').text).toBe('[**page**](#orgform-plan-page)');
  });

  it('refuses any other target: a script, data, a bare word, a control or a space', () => {
    for (const bad of ['javascript:alert(1)', 'data:text/html,x', 'https://', 'page.html', 'https://x/\u202e', 'https://x y', '#a b']) {
      expect(() => markdownLink('x', bad), bad).toThrow(/http or https URL of printable ASCII/);
      if (!bad.startsWith('#')) expect(describeBadLinkTarget(bad)).toContain(JSON.stringify(bad));
    }
    expect(describeBadLinkTarget('http://ci.example/plan.html')).toBeUndefined();
  });
});

describe('codeSpan', () => {
  it('shows the text as written, on one line, in a span that no backtick inside can end', () => {
    expect(codeSpan('orgs/team_a.yaml:3:5').text).toBe('`orgs/team_a.yaml:3:5`');
    expect(codeSpan('a``b @octocat <b>\nc\u202E').text).toBe('```a``b @octocat <b>\\nc\\u202E```');
    expect(codeSpan('`x` ').text).toBe('`` `x`  ``');
    expect(codeSpan('').text).toBe('');
  });
});

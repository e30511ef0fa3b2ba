/**
 * GitHub workflow commands: the escaping rules, and that outside text replayed through the
 * runner's own parsing (test/support/github-runner.ts) never becomes a command.
 */
import { describe, expect, it } from 'vitest';
import { closeGroup, escapeData, escapeProperty, formatAnnotation, formatGroup, guardText, openGroup } from '../../src/ci/github-annotations.js';
import { runnerAnnotations, runnerCommands } from '../support/github-runner.js';

const TOKEN = '0123456789abcdef0123456789abcdef';

describe('escapeData and escapeProperty', () => {
  it('escape %, CR and LF in data, % first so that an escape in the input stays literal', () => {
    expect(escapeData('50% off\r\nnext')).toBe('50%25 off%0D%0Anext');
    expect(escapeData('already %0A escaped')).toBe('already %250A escaped');
    expect(escapeData('a:b,c')).toBe('a:b,c');
  });

  it('also escape : and , in property values', () => {
    expect(escapeProperty('dir:a,b%\n')).toBe('dir%3Aa%2Cb%25%0A');
  });
});

describe('formatAnnotation', () => {
  it('writes file, line, col and title, and the message as data', () => {
    expect(formatAnnotation({ level: 'error', file: 'orgs.yaml', line: 5, col: 7, message: 'unknown key "customerId"; did you mean "customerID"?' })).toBe(
      '::error file=orgs.yaml,line=5,col=7,title=orgform::unknown key "customerId"; did you mean "customerID"?',
    );
    expect(formatAnnotation({ level: 'warning', message: 'no file' })).toBe('::warning title=orgform::no file');
  });

  it('is read back by the runner exactly, whatever the path and message hold', () => {
    const file = 'teams/a,b:c%/orgs.yaml';
    const message = 'line one\nline two: 100% sure, really';
    const [read] = runnerAnnotations(formatAnnotation({ level: 'error', file, line: 3, col: 1, message, title: 'orgform: config' }));
    expect(read).toEqual({ command: 'error', properties: { file, line: '3', col: '1', title: 'orgform: config' }, data: message });
  });

  it('keeps a message holding a workflow command, a line break or a legacy command inert: one annotation, nothing else', () => {
    const message = 'billing@evil.example\n::set-output name=pwned::1\r::add-mask::x ##[set-output name=pwned;]2 ::endgroup::';
    const line = formatAnnotation({ level: 'error', file: 'orgs.yaml', line: 1, col: 1, message });
    expect(line.split('\n')).toHaveLength(1);
    expect(runnerCommands(line).map((c) => c.command)).toEqual(['error']);
    expect(runnerCommands(line)[0]?.data).toBe(message);
  });

  it('shows escape sequences instead of passing them to the log', () => {
    expect(formatAnnotation({ level: 'error', message: 'red \u001b[31malert' })).toBe('::error title=orgform::red \\u001b[31malert');
  });

  it('shows invisible and bidirectional characters as escapes in the message and the title: annotations are plain text on the pull request, so nothing else is escaped', () => {
    const line = formatAnnotation({ level: 'warning', title: 'acme\u202Egnp', message: 'subscriptionID "sub\u200b_acme" for @octocat #12' });
    expect(line).toBe('::warning title=acme\\u202Egnp::subscriptionID "sub\\u200B_acme" for @octocat #12');
  });

  it('leaves line and col out without a file, and makes nonsense positions 1', () => {
    expect(formatAnnotation({ level: 'error', line: 4, col: 2, message: 'm' })).toBe('::error title=orgform::m');
    expect(formatAnnotation({ level: 'error', file: 'f', line: 0, col: Number.NaN, message: 'm' })).toBe('::error file=f,line=1,col=1,title=orgform::m');
  });
});

describe('guarded text and groups', () => {
  const hostile = [
    '  ~ organisations.acme.billing',
    '      billingEmail: "old@acme.example" → "x@y.example ##[set-output name=pwned;]1"',
    '::set-output name=pwned::2',
    '::endgroup::',
    '::stop-commands::other',
    '  ##[add-mask]secret',
  ].join('\n');

  it('lets no command inside through: only the group, the guard and its end are acted on', () => {
    const log = formatGroup('Plan: 1 to change, 0 to remove, 0 to accept.', hostile, TOKEN);
    expect(runnerCommands(log).map((c) => c.command)).toEqual(['group', 'stop-commands', TOKEN, 'endgroup']);
    expect(log).toContain(hostile);
  });

  it('without the guard, the same text would issue commands (so the test can fail)', () => {
    expect(runnerCommands(hostile).map((c) => c.command)).toEqual(['set-output', 'set-output', 'endgroup', 'stop-commands']);
  });

  it('guards text written between openGroup and closeGroup alike', () => {
    const log = openGroup('Applying 2 changes', TOKEN) + `${hostile}\n` + closeGroup(TOKEN) + formatAnnotation({ level: 'error', message: 'after' });
    expect(runnerCommands(log).map((c) => c.command)).toEqual(['group', 'stop-commands', TOKEN, 'endgroup', 'error']);
  });

  it('escapes the group title and keeps it on one line', () => {
    const log = formatGroup('acme\n::set-output name=x::y', 'body', TOKEN);
    expect(log.split('\n')[0]).toBe('::group::acme\\n::set-output name=x::y');
    expect(runnerCommands(log).map((c) => c.command)).toEqual(['group', 'stop-commands', TOKEN, 'endgroup']);
  });

  it('refuses a guessable token and writes nothing for empty text', () => {
    expect(() => guardText('x', 'short')).toThrow(/16 or more/);
    expect(() => guardText('x', 'has:colon-and-more-than-16')).toThrow();
    expect(guardText('', TOKEN)).toBe('');
  });
});

import { describe, expect, it } from 'vitest';
import { formatError } from '../../src/text/format-error.js';
import { OrgformError } from '../../src/errors.js';

describe('formatError', () => {
  it('shows orgform’s own errors as the message and its details, without a stack', () => {
    expect(formatError(new OrgformError('PLAN_STALE', 'The plan is stale.', { details: ['a changed', 'b changed'] }))).toBe('Error: The plan is stale.\n  a changed\n  b changed\n');
  });

  it('shows invisible and bidirectional characters in a message as escapes, so that a quoted value cannot hide or reorder the line', () => {
    const text = formatError(new OrgformError('CONFIG_INVALID', 'organisation "acme\u202Egnp.exe" is not declared', { details: ['orgs.yaml:3:5: "sub\u200b_acme"\tbad'] }));
    expect(text).toBe('Error: organisation "acme\\u202Egnp.exe" is not declared\n  orgs.yaml:3:5: "sub\\u200B_acme"\\tbad\n');
  });

  it('calls anything else a bug, and says how to report it', () => {
    expect(formatError(new TypeError('x is undefined'))).toBe('Error: x is undefined\nThis is a bug in orgform; please report it with the command you ran.\n');
  });

  it('takes out what has a credential’s shape from an error orgform did not make, since nothing redacted it where it was made', () => {
    const text = formatError(new TypeError('invalid header: Authorization: Bearer abc123.secret.xyz for https://alice:s3cret@proxy.example/'));
    expect(text).not.toMatch(/abc123|s3cret/);
    expect(text).toContain('This is a bug in orgform');
    expect(formatError('thrown text')).toContain('Error: thrown text\n');
  });
});

import { describe, expect, it } from 'vitest';
import { formatError } from '../../src/cli/format-error.js';
import { OrgformError } from '../../src/errors.js';

describe('formatError', () => {
  it('shows orgform’s own errors as the message and its details, without a stack', () => {
    expect(formatError(new OrgformError('PLAN_STALE', 'The plan is stale.', { details: ['a changed', 'b changed'] }))).toBe('Error: The plan is stale.\n  a changed\n  b changed\n');
  });

  it('calls anything else a bug, and says how to report it', () => {
    expect(formatError(new TypeError('x is undefined'))).toBe('Error: x is undefined\nThis is a bug in orgform; please report it with the command you ran.\n');
    expect(formatError('thrown text')).toContain('Error: thrown text\n');
  });
});

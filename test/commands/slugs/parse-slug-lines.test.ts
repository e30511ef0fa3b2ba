import { describe, expect, it } from 'vitest';
import { parseSlugLines } from '../../../src/commands/slugs/command.js';

describe('parseSlugLines', () => {
  it('takes one slug per line, trimmed, skipping blank lines and # comments, for LF and CRLF alike', () => {
    expect(parseSlugLines('# wanted\nacme\r\n\n  new-team  \r\n   # indented comment\nlast')).toEqual(['acme', 'new-team', 'last']);
  });

  it('gives nothing for an empty input', () => {
    expect(parseSlugLines('')).toEqual([]);
    expect(parseSlugLines('\n\n# only comments\n')).toEqual([]);
  });
});

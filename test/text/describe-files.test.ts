import { describe, expect, it } from 'vitest';
import { shellWord } from '../../src/text/describe-files.js';

describe('shellWord', () => {
  it('leaves a plain path as it is', () => {
    expect(shellWord('plans/plan-1.json')).toBe('plans/plan-1.json');
    expect(shellWord('/tmp/a=b,c@d:e.json')).toBe('/tmp/a=b,c@d:e.json');
  });

  it('quotes a path with a space, a quote or a character the shell acts on', () => {
    expect(shellWord('my plan.json')).toBe("'my plan.json'");
    expect(shellWord("it's.json")).toBe("'it'\\''s.json'");
    expect(shellWord('$HOME;rm.json')).toBe("'$HOME;rm.json'");
  });

  it('keeps a path starting with - from being read as an option', () => {
    expect(shellWord('-x.json')).toBe('./-x.json');
    expect(shellWord('-my plan')).toBe("'./-my plan'");
  });
});

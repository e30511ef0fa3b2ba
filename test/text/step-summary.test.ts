import { describe, expect, it } from 'vitest';
import { renderConfigStepSummary } from '../../src/text/step-summary.js';

describe('renderConfigStepSummary', () => {
  it('names each problem’s place in a code span as written, which character references do not reach', () => {
    const summary = renderConfigStepSummary('validate', [
      { file: 'orgs/team_a.yaml', line: 3, col: 5, message: 'unknown key "customer_id"' },
      { file: 'odd`name.yaml', line: 1, col: 1, message: 'x' },
    ]);
    expect(summary).toContain('- `orgs/team_a.yaml:3:5`: unknown key &quot;customer&#95;id&quot;\n');
    // A backtick in the name cannot end the span: the span's delimiter is longer.
    expect(summary).toContain('- ``odd`name.yaml:1:1``: x\n');
  });
});

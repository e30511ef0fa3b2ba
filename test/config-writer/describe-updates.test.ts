import { describe, expect, it } from 'vitest';
import { describeUpdates, type UpdateOutcome } from '../../src/config-writer/describe-updates.js';

const CHANGED: UpdateOutcome = {
  path: 'orgs/a.yaml',
  changes: [
    { address: 'organisations.acme.billing.customerID', before: 'cus_1', after: 'cus_2' },
    { address: 'activeOrganisation', before: 'acme', after: 'bad\u001bname' },
  ],
  warnings: [],
};
const SAME: UpdateOutcome = { path: 'orgs/b.yaml', changes: [], warnings: [] };

describe('describeUpdates', () => {
  it('lists every value that differs, with control characters escaped, and what was written', () => {
    expect(describeUpdates([CHANGED, SAME], { mode: 'write', undeclared: 0 })).toEqual([
      'orgs/a.yaml: 2 values to bring in line with the service:',
      '  ~ organisations.acme.billing.customerID: "cus_1" -> "cus_2"',
      '  ~ activeOrganisation: "acme" -> "bad\\u001bname"',
      'Updated 1 file. Check with: orgform plan -f orgs/a.yaml -f orgs/b.yaml',
    ]);
  });

  it('shows invisible and bidirectional characters escaped and marks the value, so that a drift of one such character shows', () => {
    const lines = describeUpdates([{ path: 'orgs.yaml', changes: [{ address: 'organisations.acme.billing.subscriptionID', before: 'sub_acme', after: 'sub\u200b_acme' }], warnings: [] }], { mode: 'diff', undeclared: 0 });
    expect(lines[1]).toBe('  ~ organisations.acme.billing.subscriptionID: "sub_acme" -> "sub\\u200B_acme" (contains invisible characters)');
  });

  it('says when nothing differs, counts the differences left to the warnings, and the organisations no file declares', () => {
    expect(describeUpdates([SAME], { mode: 'diff', undeclared: 0 })).toEqual(['No differences: orgs/b.yaml matches the service.']);
    expect(describeUpdates([SAME, { ...SAME, path: 'orgs/c.yaml' }], { mode: 'diff', undeclared: 1 })).toEqual([
      'No differences: the 2 files match the service.',
      '1 organisation you belong to is not declared in these files (left out; `orgform export` without -f writes them all).',
    ]);
    expect(describeUpdates([{ ...SAME, warnings: ['w1', 'w2'] }], { mode: 'print', undeclared: 3 })).toEqual([
      '2 differences left as they are: see the warnings above.',
      '3 organisations you belong to are not declared in orgs/b.yaml (left out; `orgform export` without -f writes them all).',
    ]);
  });
});

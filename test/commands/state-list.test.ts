import { describe, expect, it } from 'vitest';
import { entryAddress, renderStateList } from '../../src/commands/state-list.js';
import { journalKey } from '../../src/state/journal.js';

describe('renderStateList', () => {
  it('shows every entry by service: its address, outcome, when and run, aligned', () => {
    const text = renderStateList(
      {
        version: 1,
        services: {
          'https://orgs.example': {
            [journalKey('remove-channel', 'org_1', 'chn 1')]: { kind: 'remove-channel', organisation: 'acme', outcome: 'applied', at: '2025-01-01T00:00:00.000Z', run: 'abc123' },
            [journalKey('revoke-invitation', 'org_1', 'inv_1')]: { kind: 'revoke-invitation', organisation: 'acme', outcome: 'already-done', at: '2025-01-02T00:00:00.000Z' },
          },
        },
      },
      '/repo/.orgform/state.json',
    );
    expect(text).toBe(
      [
        'State /repo/.orgform/state.json: 2 entries.',
        '',
        'https://orgs.example (2)',
        '  organisations.acme.invitations.revoke.inv_1              already done  2025-01-02T00:00:00.000Z  -',
        '  organisations.acme.notificationChannels.remove["chn 1"]  applied       2025-01-01T00:00:00.000Z  run abc123',
        '',
      ].join('\n'),
    );
  });

  it('says when there is nothing recorded, and shows a key it cannot read as it is', () => {
    expect(renderStateList({ version: 1, services: {} }, 'x')).toBe('State x: 0 entries (no one-shot change recorded yet).\n');
    expect(entryAddress('odd key', { kind: 'remove-channel', organisation: 'a', outcome: 'applied', at: '' })).toBe('odd key');
  });

  it('shows control characters in what the state holds as escapes: a tampered state cannot write to the terminal or fake a line', () => {
    const text = renderStateList(
      { version: 1, services: { 'https://x\u001b]0;pwned\u0007': { 'odd\nFAKE key': { kind: 'remove-channel', organisation: 'a', outcome: 'applied', at: '2025-01-01T00:00:00.000Z', run: 'r\u001b[2J' } } } },
      'x',
    );
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    expect(text).toContain('https://x\\u001b]0;pwned\\u0007 (1)');
    expect(text).toContain('  odd\\nFAKE key  applied  2025-01-01T00:00:00.000Z  run r\\u001b[2J\n');
  });
});

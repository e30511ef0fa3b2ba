import { describe, expect, it } from 'vitest';
import { entryAddress, renderStateList, StateListing } from '../../../src/commands/state/list.js';
import { journalKey } from '../../../src/model/journal-key.js';
import type { LoggedEntry } from '../../../src/state/journal-entry.js';

const SERVICE = 'https://orgs.example';

describe('renderStateList', () => {
  it('shows every entry by service: its address, outcome, when and run, aligned', () => {
    const text = renderStateList(
      [
        { service: SERVICE, key: journalKey('remove-channel', 'org_1', 'chn 1'), entry: { kind: 'remove-channel', organisation: 'acme', outcome: 'applied', at: '2025-01-01T00:00:00.000Z', run: 'abc123' } },
        { service: SERVICE, key: journalKey('revoke-invitation', 'org_1', 'inv_1'), entry: { kind: 'revoke-invitation', organisation: 'acme', outcome: 'already-done', at: '2025-01-02T00:00:00.000Z' } },
      ],
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
    expect(renderStateList([], 'x')).toBe('State x: 0 entries (no one-shot change recorded yet).\n');
    expect(entryAddress('odd key', { kind: 'remove-channel', organisation: 'a', outcome: 'applied', at: '' })).toBe('odd key');
  });

  it('shows control characters in what the state holds as escapes: a tampered state cannot write to the terminal or fake a line', () => {
    const text = renderStateList(
      [{ service: 'https://x\u001b]0;pwned\u0007', key: 'odd\nFAKE key', entry: { kind: 'remove-channel', organisation: 'a', outcome: 'applied', at: '2025-01-01T00:00:00.000Z', run: 'r\u001b[2J' } }],
      'x',
    );
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    expect(text).toContain('https://x\\u001b]0;pwned\\u0007 (1)');
    expect(text).toContain('  odd\\nFAKE key  applied  2025-01-01T00:00:00.000Z  run r\\u001b[2J\n');
  });

  it('lists 200,000 entries of one service without spreading them onto the stack, each once, by address', () => {
    const listing = new StateListing();
    const count = 200_000;
    for (let i = count - 1; i >= 0; i -= 1) {
      const id = `inv_${String(i).padStart(6, '0')}`;
      listing.add({ service: SERVICE, key: journalKey('revoke-invitation', 'org_1', id), entry: { kind: 'revoke-invitation', organisation: 'acme', outcome: 'applied', at: '2025-01-01T00:00:00.000Z' } } satisfies LoggedEntry);
    }
    let lines = 0;
    let first: string | undefined;
    for (const line of listing.render('x')) {
      if (line.startsWith('  ')) {
        lines += 1;
        first ??= line;
      }
    }
    expect(lines).toBe(count);
    expect(first).toBe('  organisations.acme.invitations.revoke.inv_000000  applied  2025-01-01T00:00:00.000Z  -\n');
  });
});

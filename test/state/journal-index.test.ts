import { describe, expect, it } from 'vitest';
import { indexEntries, KeyIndex } from '../../src/state/journal-index.js';
import { journalKey, journalTarget } from '../../src/model/journal-key.js';
import { journalInterest } from '../../src/plan/is-recorded-done.js';
import type { DesiredOrganisation } from '../../src/model/desired-state.js';
import type { LoggedEntry } from '../../src/state/journal-entry.js';

const at = '2026-01-01T00:00:00.000Z';
const entry = (service: string, key: string): LoggedEntry => ({ service, key, entry: { kind: 'revoke-invitation', organisation: 'a', outcome: 'applied', at } });
const organisation = (slug: string, revoke: string[], remove: string[]): DesiredOrganisation => ({
  slug,
  invitations: { accept: ['inv_accept'], revoke },
  notificationChannels: { remove },
  source: { file: 'orgs.yaml', line: 1, col: 1 },
});

describe('journalInterest', () => {
  it('is the target of every revocation and channel removal declared, and of nothing else', () => {
    const interest = journalInterest({ organisations: [organisation('acme', ['inv 1'], ['chn_1']), organisation('globex', [], ['chn_2'])] });
    expect([...interest.targets].sort()).toEqual(['remove-channel chn_1', 'remove-channel chn_2', 'revoke-invitation inv%201']);
  });
});

describe('KeyIndex', () => {
  it('keeps, per service, the keys of the entries of interest, whichever organisation id they name', () => {
    const interest = { targets: new Set([journalTarget('revoke-invitation', 'inv_1')]) };
    const index = indexEntries(
      [entry('s1', journalKey('revoke-invitation', 'org_a', 'inv_1')), entry('s1', journalKey('revoke-invitation', 'org_a', 'inv_2')), entry('s2', journalKey('revoke-invitation', 'org_b', 'inv_1')), entry('s1', 'odd key')],
      interest,
    );
    expect(index.size).toBe(2);
    expect(index.has('s1', journalKey('revoke-invitation', 'org_a', 'inv_1'))).toBe(true);
    expect(index.has('s2', journalKey('revoke-invitation', 'org_b', 'inv_1'))).toBe(true);
    expect(index.has('s1', journalKey('revoke-invitation', 'org_a', 'inv_2'))).toBe(false);
    expect(index.has('s3', journalKey('revoke-invitation', 'org_a', 'inv_1'))).toBe(false);
  });

  it('counts a key added twice once', () => {
    const index = new KeyIndex();
    index.add('s', 'k');
    index.add('s', 'k');
    expect(index.size).toBe(1);
  });
});

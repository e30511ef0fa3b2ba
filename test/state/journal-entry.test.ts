import { describe, expect, it } from 'vitest';
import { formatEntryLine, parseEntryLine, type LoggedEntry } from '../../src/state/journal-entry.js';
import { journalKey, journalTarget, targetOfKey } from '../../src/model/journal-key.js';

const logged: LoggedEntry = { service: 'https://orgs.example', key: journalKey('remove-channel', 'org 1', 'chn%1'), entry: { kind: 'remove-channel', organisation: 'acme', outcome: 'applied', at: '2026-01-01T00:00:00.000Z', run: 'abc' } };

describe('the journal entry line', () => {
  it('is one JSON line, its fields always in the same order, and reads back as it was', () => {
    const reordered = { ...logged, entry: { run: 'abc', outcome: 'applied', organisation: 'acme', kind: 'remove-channel', at: '2026-01-01T00:00:00.000Z' } } as LoggedEntry;
    const line = formatEntryLine(reordered);
    expect(line).toBe('{"service":"https://orgs.example","key":"remove-channel org%201 chn%251","entry":{"at":"2026-01-01T00:00:00.000Z","kind":"remove-channel","organisation":"acme","outcome":"applied","run":"abc"}}');
    expect(parseEntryLine(line)).toEqual(logged);
    expect(formatEntryLine({ ...logged, entry: { ...logged.entry, run: undefined } })).not.toContain('run');
  });

  it('reads nothing from a line cut short, damaged or of another shape', () => {
    const line = formatEntryLine(logged);
    expect(parseEntryLine(line.slice(0, -1))).toBeUndefined();
    expect(parseEntryLine('{"orgformJournal":2}')).toBeUndefined();
    expect(parseEntryLine(line.replace('2026-01-01T00:00:00.000Z', 'yesterday'))).toBeUndefined();
    expect(parseEntryLine('null')).toBeUndefined();
  });
});

describe('journal keys and their targets', () => {
  it('keep the kind and the escaped target of a key, whatever the organisation', () => {
    expect(targetOfKey(journalKey('revoke-invitation', 'org 1', 'inv 2'))).toBe(journalTarget('revoke-invitation', 'inv 2'));
    expect(targetOfKey(journalKey('revoke-invitation', 'org_9', 'inv 2'))).toBe('revoke-invitation inv%202');
    expect(targetOfKey('odd key')).toBeUndefined();
    expect(targetOfKey('a b c d')).toBeUndefined();
  });
});

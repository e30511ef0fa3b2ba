import { describe, expect, it } from 'vitest';
import { emptyDocument, mergeEntries, parseStateDocument, serializeStateDocument, whyNotOurs } from '../../src/state/terraform-document.js';

const at = '2025-01-01T00:00:00.000Z';
const journal = { version: 1 as const, services: { 'https://s': { k: { kind: 'remove-channel' as const, organisation: 'acme', outcome: 'applied' as const, at } } } };
const runs = { abc: { id: 'abc', pid: 7, host: 'ci-1', partition: { index: 1, count: 2 } } };

describe('the Terraform-shaped state document', () => {
  it('round-trips the journal and the registered runs inside Terraform’s shape, with serial and lineage', () => {
    const text = serializeStateDocument({ serial: 7, lineage: 'lin-1', data: journal, runs, stored: true }, '1.2.3');
    expect(JSON.parse(text)).toEqual({ version: 4, terraform_version: 'orgform 1.2.3', serial: 7, lineage: 'lin-1', outputs: {}, resources: [], orgform: { ...journal, runs } });
    expect(parseStateDocument(text, 'https://x/state')).toEqual({ serial: 7, lineage: 'lin-1', data: journal, runs, stored: true });
    // With no run registered, the document is what earlier versions wrote.
    expect(JSON.parse(serializeStateDocument({ serial: 1, lineage: 'l', data: journal, runs: {}, stored: true }, '1.2.3')).orgform).toEqual(journal);
  });

  it('reads an empty body as a state to be made, from serial 0', () => {
    const empty = parseStateDocument('', 'https://x/state');
    expect(empty).toMatchObject({ serial: 0, data: { version: 1, services: {} }, runs: {}, stored: false });
    expect(empty.lineage).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses an empty Terraform state (terraform_version 1.9.5, serial 12), naming it: orgform never overwrites what it did not write', () => {
    const terraform = '{"version":4,"terraform_version":"1.9.5","serial":12,"lineage":"5c1d…","outputs":{},"resources":[]}';
    expect(() => parseStateDocument(terraform, 'https://x/state')).toThrow(
      /holds something other than orgform's journal \(a Terraform state: terraform_version "1\.9\.5", serial 12, 0 resources, 0 outputs\)\. orgform will not overwrite it, even empty/,
    );
    // orgform's journal under another tool's version: someone else has written it since.
    expect(() => parseStateDocument('{"terraform_version":"1.9.5","serial":3,"lineage":"l","orgform":{"version":1,"services":{}}}', 'https://x/state')).toThrow(/terraform_version "1\.9\.5", serial 3/);
  });

  it('refuses what it must not overwrite: another tool’s state, text that is not JSON, a journal of an unknown version', () => {
    expect(() => parseStateDocument('{"version":4,"serial":3,"resources":[{"type":"x"}]}', 'https://x/state')).toThrow(/a Terraform state: serial 3, 1 resource, 0 outputs/);
    expect(() => parseStateDocument('{"something":"else"}', 'https://x/state')).toThrow(/holds something other than orgform's journal/);
    const outputsOnly = '{"version":4,"terraform_version":"1.9.0","serial":7,"lineage":"l","outputs":{"db_password":{"value":"x","type":"string","sensitive":true}},"resources":[]}';
    expect(() => parseStateDocument(outputsOnly, 'https://x/state')).toThrow(/1 output\)/);
    expect(() => parseStateDocument('{not json', 'https://x/state')).toThrow(/is not JSON/);
    expect(() => parseStateDocument('{"terraform_version":"orgform 0.1.0","serial":1,"lineage":"l","orgform":{"version":9,"services":{}}}', 'https://x/state')).toThrow(/has version 9/);
    expect(() => parseStateDocument('{"terraform_version":"orgform 0.1.0","lineage":"l","orgform":{"version":1,"services":{}}}', 'https://x/state')).toThrow(/has no serial/);
  });

  it('merges a batch keeping the first recorded entry of a key', () => {
    const doc = emptyDocument();
    const later = { kind: 'remove-channel' as const, organisation: 'acme', outcome: 'already-done' as const, at };
    expect(mergeEntries(doc.data, [{ service: 'https://s', key: 'k', entry: journal.services['https://s'].k }])).toBe(1);
    expect(mergeEntries(doc.data, [{ service: 'https://s', key: 'k', entry: later }])).toBe(0);
    expect(doc.data.services['https://s']!.k!.outcome).toBe('applied');
  });

  it('says why a document read before a write is not the one this run may write over', () => {
    const doc = { serial: 5, lineage: 'l', data: journal, runs, stored: true };
    expect(whyNotOurs(doc, { lineage: 'l', runId: 'abc' })).toBeUndefined();
    expect(whyNotOurs(doc, { lineage: 'l', runId: 'abc', serial: 5 })).toBeUndefined();
    expect(whyNotOurs(doc, { lineage: 'other', runId: 'abc' })).toContain('the state was replaced meanwhile');
    expect(whyNotOurs(doc, { lineage: 'l', runId: 'gone' })).toContain('its lock was broken (force-unlock)');
    expect(whyNotOurs(doc, { lineage: 'l', runId: 'abc', serial: 4 })).toContain('someone else wrote the state meanwhile (its serial is 5, not 4');
  });
});

import { describe, expect, it } from 'vitest';
import { parseStateDocument, serializeStateDocument } from '../../src/state/terraform-document.js';

const journal = { version: 1 as const, services: { 'https://s': { k: { kind: 'remove-channel' as const, organisation: 'acme', outcome: 'applied' as const, at: '2025-01-01T00:00:00.000Z' } } } };

describe('the Terraform-shaped state document', () => {
  it('round-trips the journal inside Terraform’s shape, with serial and lineage', () => {
    const text = serializeStateDocument({ serial: 7, lineage: 'lin-1', data: journal }, '1.2.3');
    expect(JSON.parse(text)).toEqual({ version: 4, terraform_version: 'orgform 1.2.3', serial: 7, lineage: 'lin-1', outputs: {}, resources: [], orgform: journal });
    expect(parseStateDocument(text, 'https://x/state')).toEqual({ serial: 7, lineage: 'lin-1', data: journal });
  });

  it('reads an empty body, or an empty Terraform state, as an empty journal from serial 0 or the one it has', () => {
    const empty = parseStateDocument('', 'https://x/state');
    expect(empty).toMatchObject({ serial: 0, data: { version: 1, services: {} } });
    expect(empty.lineage).toMatch(/^[0-9a-f-]{36}$/);
    expect(parseStateDocument('{"version":4,"serial":3,"lineage":"l","resources":[]}', 'https://x/state')).toEqual({ serial: 3, lineage: 'l', data: { version: 1, services: {} } });
  });

  it('refuses what it must not overwrite: another tool’s state, text that is not JSON, a journal of an unknown version', () => {
    expect(() => parseStateDocument('{"version":4,"serial":3,"resources":[{"type":"x"}]}', 'https://x/state')).toThrow(/holds something other than orgform's journal \(a Terraform state with 1 resource\)/);
    expect(() => parseStateDocument('{"something":"else"}', 'https://x/state')).toThrow(/holds something other than orgform's journal/);
    // A Terraform workspace with outputs and no resources: overwriting it would lose the outputs.
    const outputsOnly = '{"version":4,"terraform_version":"1.9.0","serial":7,"lineage":"l","outputs":{"db_password":{"value":"x","type":"string","sensitive":true}},"resources":[]}';
    expect(() => parseStateDocument(outputsOnly, 'https://x/state')).toThrow(/holds something other than orgform's journal \(a Terraform state with 1 output\)/);
    expect(() => parseStateDocument('{not json', 'https://x/state')).toThrow(/is not JSON/);
    expect(() => parseStateDocument('{"serial":1,"orgform":{"version":9,"services":{}}}', 'https://x/state')).toThrow(/has version 9/);
  });
});

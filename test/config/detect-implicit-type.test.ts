import { describe, expect, it } from 'vitest';
import { detectImplicitType } from '../../src/config/detect-implicit-type.js';

describe('detectImplicitType', () => {
  it.each([
    ['0123', 'number'],
    ['1e3', 'number'],
    ['1_000', 'number'],
    ['0x1F', 'number'],
    ['0o17', 'number'],
    ['0b101', 'number'],
    ['1:30', 'number'],
    ['-.5', 'number'],
    ['.inf', 'number'],
    ['on', 'boolean'],
    ['Off', 'boolean'],
    ['yes', 'boolean'],
    ['N', 'boolean'],
    ['TRUE', 'boolean'],
    ['2024-01-02', 'date'],
    ['2024-1-2 10:00:00', 'date'],
    ['~', 'null'],
    ['Null', 'null'],
    ['', 'null'],
  ])('knows that some YAML reader takes %j as a %s', (text, type) => {
    expect(detectImplicitType(text)).toBe(type);
  });

  it.each(['acme', 'org-0123', 'inv_1', '1a', '2024-01-02x', 'one', 'nan', '.', '-', 'v1.2.3', '1.2.3', 'cus_123'])('leaves %j a string', (text) => {
    expect(detectImplicitType(text)).toBeUndefined();
  });
});

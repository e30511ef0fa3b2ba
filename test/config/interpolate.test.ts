import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeInterpolation, interpolate } from '../../src/config/interpolate.js';

describe('interpolate', () => {
  it('replaces ${VAR} with its value from the environment given', () => {
    expect(interpolate('${USER_NAME}@${DOMAIN}.example', { USER_NAME: 'billing', DOMAIN: 'acme' })).toEqual({ ok: true, value: 'billing@acme.example' });
  });

  it('names every unset variable instead of using an empty string', () => {
    expect(interpolate('${A}-${B}-${C}', { B: 'b' })).toEqual({
      ok: false,
      messages: ['environment variable A is not set', 'environment variable C is not set'],
    });
  });

  it('refuses a variable that is set but empty, as CI passes a missing secret', () => {
    expect(interpolate('${ACME_CUSTOMER_ID}', { ACME_CUSTOMER_ID: '' })).toEqual({
      ok: false,
      messages: [expect.stringContaining('environment variable ACME_CUSTOMER_ID is set but empty')],
    });
  });

  it('reads $${ as a literal ${', () => {
    expect(interpolate('$${A} and $$ and $x', {})).toEqual({ ok: true, value: '${A} and $$ and $x' });
  });

  it('refuses a reference that is not closed or not a name', () => {
    expect(interpolate('${A', { A: 'x' })).toMatchObject({ ok: false, messages: [expect.stringContaining('without a closing "}"')] });
    expect(interpolate('${A-B}', {})).toMatchObject({ ok: false, messages: [expect.stringContaining('"${A-B}" is not a variable reference')] });
  });

  it('does not interpolate what a variable holds', () => {
    expect(interpolate('${A}', { A: '${B}', B: 'no' })).toEqual({ ok: true, value: '${B}' });
  });

  it('gives back any text that was escaped', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('$', '{', '}', 'a', 'B', '_') }), (text) => {
        expect(interpolate(escapeInterpolation(text), {})).toEqual({ ok: true, value: text });
      }),
    );
  });
});

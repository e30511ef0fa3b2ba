import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeInterpolation, interpolate } from '../../src/config/interpolate.js';

describe('interpolate', () => {
  it('replaces ${VAR} with its value from the environment given', () => {
    expect(interpolate('${ORGFORM_VAR_USER}@${ORGFORM_VAR_DOMAIN}.example', { ORGFORM_VAR_USER: 'billing', ORGFORM_VAR_DOMAIN: 'acme' })).toEqual({ ok: true, value: 'billing@acme.example' });
  });

  it('reads only variables named ORGFORM_VAR_…: any other is an error naming it, never its value', () => {
    const env = { ORGFORM_TOKEN: 'tok-canary', GITHUB_TOKEN: 'ghs-canary', ORGFORM_VAR_: 'bare', ORGFORM_VARX: 'near', orgform_var_x: 'lower' };
    for (const name of Object.keys(env)) {
      const result = interpolate(`\${${name}}`, env);
      expect(result).toEqual({ ok: false, messages: [expect.stringContaining(`\${${name}} cannot be read: only variables named ORGFORM_VAR_… are`)] });
      expect(JSON.stringify(result)).not.toContain(env[name as keyof typeof env]);
    }
    expect(interpolate('${GITHUB_TOKEN}', env)).toEqual({ ok: false, messages: [expect.stringContaining('set ORGFORM_VAR_GITHUB_TOKEN in the pipeline and write ${ORGFORM_VAR_GITHUB_TOKEN}')] });
  });

  it('names every unset variable instead of using an empty string', () => {
    expect(interpolate('${ORGFORM_VAR_A}-${ORGFORM_VAR_B}-${ORGFORM_VAR_C}', { ORGFORM_VAR_B: 'b' })).toEqual({
      ok: false,
      messages: ['environment variable ORGFORM_VAR_A is not set', 'environment variable ORGFORM_VAR_C is not set'],
    });
  });

  it('refuses a variable that is set but empty, as CI passes a missing secret', () => {
    expect(interpolate('${ORGFORM_VAR_ACME_CUSTOMER_ID}', { ORGFORM_VAR_ACME_CUSTOMER_ID: '' })).toEqual({
      ok: false,
      messages: [expect.stringContaining('environment variable ORGFORM_VAR_ACME_CUSTOMER_ID is set but empty')],
    });
  });

  it('reads $${ as a literal ${', () => {
    expect(interpolate('$${A} and $$ and $x', {})).toEqual({ ok: true, value: '${A} and $$ and $x' });
  });

  it('refuses a reference that is not closed or not a name', () => {
    expect(interpolate('${A', { A: 'x' })).toMatchObject({ ok: false, messages: [expect.stringContaining('without a closing "}"')] });
    expect(interpolate('${A-B}', {})).toMatchObject({ ok: false, messages: [expect.stringContaining('"${A-B}" is not a variable reference')] });
    // What stands between the braces is the file's text, of any length: quoted cut.
    const long = interpolate(`\${${'x-'.repeat(5_000)}}`, {});
    expect(long.ok ? '' : long.messages[0]!.length).toBeLessThan(200);
  });

  it('does not interpolate what a variable holds', () => {
    expect(interpolate('${ORGFORM_VAR_A}', { ORGFORM_VAR_A: '${ORGFORM_VAR_B}', ORGFORM_VAR_B: 'no' })).toEqual({ ok: true, value: '${ORGFORM_VAR_B}' });
  });

  it('gives back any text that was escaped', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('$', '{', '}', 'a', 'B', '_') }), (text) => {
        expect(interpolate(escapeInterpolation(text), {})).toEqual({ ok: true, value: text });
      }),
    );
  });
});

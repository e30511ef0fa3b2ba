import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAX_MAX_RPS, MIN_MAX_RPS } from '../src/api/rate/parse-max-rps.js';
import { ENV_RANGES, envInt, type NumericEnv } from '../src/env-int.js';
import { UsageError } from '../src/errors.js';

describe('envInt', () => {
  const ranges = Object.entries(ENV_RANGES) as Array<[NumericEnv, { min: number; max: number }]>;

  it.each(ranges)('refuses %s outside its range, naming the variable, the range and the value', (name, { min, max }) => {
    for (const bad of [String(min - 1), String(max + 1), '2147483648', '1e3', '-1']) {
      expect(() => envInt({ [name]: bad }, name)).toThrow(new UsageError(`${name} must be a whole number from ${min} to ${max} (got "${bad}").`));
    }
    expect(envInt({ [name]: String(min) }, name)).toBe(min);
    expect(envInt({ [name]: String(max) }, name)).toBe(max);
  });

  it('keeps every millisecond setting below 2^31 ms, which a timer cannot hold', () => {
    for (const [name, { max }] of ranges) if (name.endsWith('_MS')) expect(max).toBeLessThan(2 ** 31);
  });

  it('docs/cli.md documents every numeric variable, ORGFORM_MAX_RPS included, with the range it is checked against', () => {
    const page = readFileSync(new URL('../docs/cli.md', import.meta.url), 'utf8');
    const row = (name: string) => page.split('\n').find((line) => line.startsWith('|') && line.includes(`\`${name}\``))?.replaceAll(',', '');
    for (const [name, { min, max }] of ranges) expect(row(name), name).toContain(`${min} to ${max}`);
    expect(row('ORGFORM_MAX_RPS')).toContain(`${MIN_MAX_RPS} to ${MAX_MAX_RPS}`);
  });
});

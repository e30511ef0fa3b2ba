import { createRequire } from 'node:module';
import addFormatsModule from 'ajv-formats';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { appendErrorsInPlace, compileValidator, emitStandalone, readSchema, withoutUniqueItems } from '../../src/config/compile-schema.js';

const addFormats = addFormatsModule.default;

/** Organisations with a mistake each, in several places, so that errors come from several $ref'd schemas. */
function manyMistakes(n: number): unknown {
  const organisations: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) {
    organisations[`org-${i}`] = i % 3 === 0 ? { biling: {} } : i % 3 === 1 ? { billing: { billingEmail: 'not an address' } } : { invitations: { accept: [1, ''] } };
  }
  return { version: 1, organisations };
}

describe('compileSchema', () => {
  it('gathers the errors of referenced schemas in place, and finds exactly the errors that ajv\'s own code finds', () => {
    const ours = compileValidator('orgs').validate;
    const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
    addFormats(ajv, ['email']);
    const theirs = ajv.compile(readSchema('orgs'));
    const data = manyMistakes(30);
    expect(ours(data)).toBe(false);
    expect(theirs(data)).toBe(false);
    expect(ours.errors).toEqual(theirs.errors);
    expect(ours.errors!.length).toBeGreaterThan(30);
    // A second call starts afresh: the first call's errors were not appended to.
    expect(ours(manyMistakes(3))).toBe(false);
    expect(ours.errors).toHaveLength((theirs(manyMistakes(3)), theirs.errors!.length));
  });

  it('leaves no copy of all the errors so far in the precompiled validator', () => {
    const code = emitStandalone('orgs');
    expect(code).toContain('.forEach((e) => vErrors.push(e))');
    expect(code).not.toMatch(/vErrors\.concat\(/);
  });

  it('rewrites only ajv\'s gathering of a sub-schema\'s errors', () => {
    expect(appendErrorsInPlace('vErrors = vErrors === null ? validate22.errors : vErrors.concat(validate22.errors);x.concat(y);')).toBe(
      'vErrors = vErrors === null ? validate22.errors : (validate22.errors.forEach((e) => vErrors.push(e)), vErrors);x.concat(y);',
    );
  });
});

describe('the compiled check of id lists', () => {
  const twice = { version: 1, organisations: { acme: { invitations: { revoke: ['inv_1', 'inv_2', 'inv_1'] } } } };

  it('leaves duplicates to the check across lists (ajv compares every pair of a $ref\'d list: quadratic), at run time and precompiled', () => {
    const runtime = compileValidator('orgs').validate;
    expect([runtime(twice), runtime.errors ?? null]).toEqual([true, null]);
    const module = { exports: {} as { (data: unknown): boolean; errors?: unknown } };
    new Function('module', 'exports', 'require', emitStandalone('orgs'))(module, module.exports, createRequire(import.meta.url));
    expect([module.exports(twice), module.exports.errors ?? null]).toEqual([true, null]);
  });

  it('keeps uniqueItems in the schema file, for editors', () => {
    expect(JSON.stringify(readSchema('orgs'))).toContain('"uniqueItems":true');
    expect(JSON.stringify(withoutUniqueItems(readSchema('orgs')))).not.toContain('uniqueItems');
  });
});

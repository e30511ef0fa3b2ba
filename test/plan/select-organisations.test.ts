import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OrgformError, UsageError } from '../../src/errors.js';
import { fnv1a, parseShard, selectOrganisations, shardOf } from '../../src/plan/select-organisations.js';
import { desiredOrg, desiredState } from '../support/plan-fixtures.js';

const three = () =>
  desiredState({ organisations: [desiredOrg({ slug: 'acme' }), desiredOrg({ slug: 'globex' }), desiredOrg({ slug: 'initech' })], activeOrganisation: 'acme' });

const slugs = (state: ReturnType<typeof three>) => state.organisations.map((o) => o.slug);

describe('selectOrganisations with --target', () => {
  it('keeps every organisation and the active one when nothing is targeted', () => {
    const selected = selectOrganisations(three(), {});
    expect(slugs(selected)).toEqual(['acme', 'globex', 'initech']);
    expect(selected.activeOrganisation?.slug).toBe('acme');
  });

  it('keeps only the targeted organisations, and drops the active organisation when it is not targeted', () => {
    const selected = selectOrganisations(three(), { targets: ['initech', 'globex'] });
    expect(slugs(selected)).toEqual(['globex', 'initech']);
    expect(selected.activeOrganisation).toBeUndefined();
  });

  it('keeps the active organisation when it is targeted', () => {
    const selected = selectOrganisations(three(), { targets: ['acme'] });
    expect(slugs(selected)).toEqual(['acme']);
    expect(selected.activeOrganisation?.slug).toBe('acme');
  });

  it('accepts as a target an active organisation that is not declared under organisations', () => {
    const state = desiredState({ organisations: [desiredOrg({ slug: 'acme' })], activeOrganisation: 'initech' });
    const selected = selectOrganisations(state, { targets: ['initech'] });
    expect(slugs(selected)).toEqual([]);
    expect(selected.activeOrganisation?.slug).toBe('initech');
  });

  it('refuses a target the configuration does not declare, naming it', () => {
    const attempt = () => selectOrganisations(three(), { targets: ['acme', 'umbrela'] });
    expect(attempt).toThrow(UsageError);
    expect(attempt).toThrow('--target names organisations the configuration does not declare: umbrela.');
  });

  it('leaves the input untouched and keeps the files it was read from', () => {
    const state = three();
    const before = structuredClone(state);
    const selected = selectOrganisations(state, { targets: ['globex'] });
    expect(state).toEqual(before);
    expect(selected.files).toEqual(state.files);
  });
});

describe('parseShard', () => {
  it('reads i/n', () => {
    expect(parseShard('2/4')).toEqual({ index: 2, count: 4 });
    expect(parseShard('1/1')).toEqual({ index: 1, count: 1 });
    expect(parseShard('4/4')).toEqual({ index: 4, count: 4 });
  });

  it.each(['0/4', '5/4', 'a/b', '1/0', '', '2', '2/4/8', '-1/4', '1.5/4'])('refuses %j with a usage error that shows an example', (text) => {
    let error: unknown;
    try {
      parseShard(text);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as OrgformError).code).toBe('USAGE');
    expect((error as Error).message).toContain(`"${text}"`);
    expect((error as Error).message).toContain('--shard 2/4');
  });
});

describe('shards', () => {
  it('computes FNV-1a on the UTF-8 bytes (reference vectors)', () => {
    expect(fnv1a('')).toBe(0x811c9dc5);
    expect(fnv1a('a')).toBe(0xe40c292c);
    expect(fnv1a('foobar')).toBe(0xbf9cf968);
  });

  it('puts a slug in the same shard on every machine', () => {
    expect(shardOf('acme', 4)).toBe(4);
    expect(shardOf('globex', 7)).toBe(5);
    expect(shardOf('café', 3)).toBe(2);
  });

  it('splits any set of slugs into n shards that together hold every slug exactly once', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { maxLength: 40 }), fc.integer({ min: 1, max: 16 }), (all, n) => {
        const state = desiredState({ organisations: all.map((slug) => desiredOrg({ slug })) });
        const seen = new Map<string, number>();
        for (let index = 1; index <= n; index += 1) {
          for (const slug of slugs(selectOrganisations(state, { shard: { index, count: n } }))) {
            expect(seen.has(slug), `${slug} is in shard ${seen.get(slug)} and ${index}`).toBe(false);
            seen.set(slug, index);
          }
        }
        expect([...seen.keys()].sort()).toEqual([...all].sort());
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the active organisation in the one shard its slug falls in', () => {
    const state = three();
    const holding = [1, 2, 3, 4].filter((index) => selectOrganisations(state, { shard: { index, count: 4 } }).activeOrganisation !== undefined);
    expect(holding).toEqual([shardOf('acme', 4)]);
  });

  it('combines --target and --shard: an organisation must be targeted and in the shard', () => {
    const state = three();
    const shard = { index: shardOf('globex', 2), count: 2 };
    const other = { index: 3 - shard.index, count: 2 };
    expect(slugs(selectOrganisations(state, { targets: ['globex'], shard }))).toEqual(['globex']);
    expect(slugs(selectOrganisations(state, { targets: ['globex'], shard: other }))).toEqual([]);
  });
});

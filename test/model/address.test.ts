import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressSegment, changeAddress, organisationAddress } from '../../src/model/address.js';
import { KIND_ORDER, type ChangeKind } from '../../src/model/change-kind.js';

/** Reads an address back into its segments: `.name` or `["json string"]`. */
function segments(address: string): string[] {
  const head = /^[A-Za-z]+/.exec(address)?.[0] ?? '';
  const out = [head];
  const re = /\.([A-Za-z0-9_-]+)|\[("(?:[^"\\]|\\.)*")\]/y;
  re.lastIndex = head.length;
  while (re.lastIndex < address.length) {
    const m = re.exec(address);
    if (!m) throw new Error(`unparsable address ${address}`);
    out.push(m[1] ?? (JSON.parse(m[2]!) as string));
  }
  return out;
}

describe('changeAddress', () => {
  it('gives an address for every kind of change', () => {
    expect(changeAddress('accept-invitation', 'acme', 'inv_1')).toBe('organisations.acme.invitations.accept.inv_1');
    expect(changeAddress('billing', 'acme')).toBe('organisations.acme.billing');
    expect(changeAddress('revoke-invitation', 'acme', 'inv_2')).toBe('organisations.acme.invitations.revoke.inv_2');
    expect(changeAddress('remove-channel', 'acme', 'ch-9')).toBe('organisations.acme.notificationChannels.remove.ch-9');
    expect(changeAddress('set-active', 'acme')).toBe('activeOrganisation');
  });

  it('gives the address of an organisation as a whole', () => {
    expect(organisationAddress('acme')).toBe('organisations.acme');
  });

  it('quotes a slug with a dot, so that it cannot read as two segments', () => {
    expect(changeAddress('billing', 'acme.billing')).toBe('organisations["acme.billing"].billing');
    expect(changeAddress('billing', 'acme.billing')).not.toBe(changeAddress('billing', 'acme'));
  });

  it('quotes an id with spaces or quotes, escaping the quotes', () => {
    expect(changeAddress('revoke-invitation', 'acme', 'inv 2')).toBe('organisations.acme.invitations.revoke["inv 2"]');
    expect(changeAddress('remove-channel', 'my "org"', 'a"]b')).toBe('organisations["my \\"org\\""].notificationChannels.remove["a\\"]b"]');
  });

  it('quotes an empty segment rather than leaving a dangling dot', () => {
    expect(addressSegment('')).toBe('[""]');
  });

  it('reads back into exactly the slug and id it was made from, whatever they hold', () => {
    const kinds: ChangeKind[] = ['accept-invitation', 'revoke-invitation', 'remove-channel'];
    fc.assert(
      fc.property(fc.constantFrom(...kinds), fc.string(), fc.string(), (kind, slug, target) => {
        const parts = segments(changeAddress(kind, slug, target));
        expect(parts[1]).toBe(slug);
        expect(parts.at(-1)).toBe(target);
      }),
      { numRuns: 500 },
    );
  });

  it('gives different addresses to different (kind, slug, target) triples', () => {
    const kinds: ChangeKind[] = ['accept-invitation', 'billing', 'revoke-invitation', 'remove-channel'];
    const triple = fc.tuple(fc.constantFrom(...kinds), fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 }));
    fc.assert(
      fc.property(triple, triple, ([k1, s1, t1], [k2, s2, t2]) => {
        const a = changeAddress(k1, s1, k1 === 'billing' ? undefined : t1);
        const b = changeAddress(k2, s2, k2 === 'billing' ? undefined : t2);
        const same = k1 === k2 && s1 === s2 && (k1 === 'billing' || t1 === t2);
        expect(a === b).toBe(same);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('KIND_ORDER', () => {
  it('orders accept before billing before revoke before remove, with set-active last', () => {
    const kinds = Object.keys(KIND_ORDER) as ChangeKind[];
    expect(kinds.sort((a, b) => KIND_ORDER[a] - KIND_ORDER[b])).toEqual(['accept-invitation', 'billing', 'revoke-invitation', 'remove-channel', 'set-active']);
  });
});

import { describe, expect, it } from 'vitest';
import { DeclaredBySlug } from '../../../src/plan/read/read-whole-listing.js';
import { desiredOrg } from '../../support/plan-fixtures.js';

describe('DeclaredBySlug', () => {
  it('hands each declared organisation over once, by slug, and leaves those never asked for, in slug order', () => {
    // Not sorted as given: a desired state from anywhere else than the loader may not be.
    const declared = new DeclaredBySlug(['globex', 'acme', 'initech', 'hooli'].map((slug) => desiredOrg({ slug })));
    expect(declared.take('initech')?.slug).toBe('initech');
    expect(declared.take('initech')).toBeUndefined();
    expect(declared.take('umbrella')).toBeUndefined();
    expect(declared.take('acme')?.slug).toBe('acme');
    expect([...declared.left()].map((d) => d.slug)).toEqual(['globex', 'hooli']);
  });
});

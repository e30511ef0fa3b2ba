import { describe, expect, it } from 'vitest';
import type { SlugCheck } from '../../../../src/commands/slugs/check-slugs.js';
import { renderSlugJson, renderSlugTable } from '../../../../src/commands/slugs/views/render-slug-table.js';

const CHECKS: SlugCheck[] = [
  { slug: 'new-team', status: 'available', messages: [] },
  { slug: 'acme', status: 'unavailable', messages: ['This slug is already taken.'] },
  { slug: 'Admin_', status: 'unavailable', messages: ['A slug may contain only lowercase letters, digits and hyphens.', 'This slug is reserved.'] },
  { slug: '..', status: 'invalid', messages: ['Not checked: it cannot be sent in a URL path (".." would change the path).'] },
  { slug: 'boom', status: 'error', messages: [], error: 'getSlugAvailability slug "boom" failed with HTTP 503' },
];

describe('renderSlugTable', () => {
  it('shows slug, availability and reasons in aligned columns, then a summary', () => {
    expect(renderSlugTable(CHECKS, { color: false })).toMatchInlineSnapshot(`
      "SLUG      AVAILABLE  REASONS
      new-team  yes
      acme      no         This slug is already taken.
      Admin_    no         A slug may contain only lowercase letters, digits and hyphens. This slug is reserved.
      ..        invalid    Not checked: it cannot be sent in a URL path (".." would change the path).
      boom      error      getSlugAvailability slug "boom" failed with HTTP 503

      5 slugs checked: 1 available, 2 unavailable, 1 invalid, 1 could not be checked.
      "
    `);
  });

  it('keeps control characters in slugs and messages from reaching the terminal', () => {
    const table = renderSlugTable([{ slug: 'x\u001b[2Jy', status: 'unavailable', messages: ['bad\nline'] }], { color: false });
    expect(table).not.toContain('\u001b');
    expect(table).toContain('x\\u001b[2Jy');
    expect(table).toContain('bad\\nline');
  });

  it('shows invisible and bidirectional characters in slugs and messages escaped, and marks the slug', () => {
    const table = renderSlugTable([{ slug: 'ac\u200Bme', status: 'unavailable', messages: ['taken by "x\u202Ey"'] }], { color: false });
    expect(table).not.toMatch(/[\u200B\u202E]/);
    expect(table).toContain('ac\\u200Bme (contains invisible characters)  no         taken by "x\\u202Ey"');
  });

  it('colours the availability only when asked', () => {
    expect(renderSlugTable(CHECKS, { color: true })).toContain('\u001b[32myes\u001b[39m');
    expect(renderSlugTable(CHECKS, { color: false })).not.toContain('\u001b[');
  });
});

describe('renderSlugJson', () => {
  it('gives available true, false, or null when the check failed, with messages and the error', () => {
    const { slugs } = JSON.parse(renderSlugJson(CHECKS));
    expect(slugs.map((s: { available: boolean | null }) => s.available)).toEqual([true, false, false, false, null]);
    expect(slugs[1]).toEqual({ slug: 'acme', status: 'unavailable', available: false, messages: ['This slug is already taken.'] });
    expect(slugs[4]).toEqual({ slug: 'boom', status: 'error', available: null, messages: [], error: 'getSlugAvailability slug "boom" failed with HTTP 503' });
  });
});

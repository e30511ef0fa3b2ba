import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { YAMLMap } from 'yaml';
import type { Organisation } from '../../src/api/types.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { DesiredState } from '../../src/model/desired-state.js';
import { renderExport } from '../../src/config-writer/render-export.js';
import { propertyRuns } from '../support/soak.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orgform-export-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

/** What the real loader makes of the text, as orgform plan would read it. */
async function load(text: string): Promise<DesiredState> {
  await writeFile(join(dir, 'orgs.yaml'), text);
  const result = await loadConfig(['orgs.yaml'], { cwd: dir, variables: { HOME: '/home/someone' } });
  if (!result.ok) throw new Error(`the loader refused the export:\n${result.problems.map((p) => `${p.line}:${p.col}: ${p.message}`).join('\n')}\n---\n${text}`);
  return result.state;
}

function org(slug: string, id: string, billing: Organisation['billing'] = undefined): Organisation {
  return { id, slug, displayName: slug.toUpperCase(), owner: 'ada@acme.example', ...(billing && { billing }) };
}

const ACME = org('acme', 'org_acme', {
  platformId: 'plat_acme',
  customerId: 'cus_acme',
  billingEmail: 'billing@acme.example',
  subscriptionId: 'sub_acme',
  isSubscriptionActive: 1,
  boardQuota: 50,
});
const HOOLI = org('hooli-eu', 'org:hooli/eu', { customerId: 'cus_hooli_eu', platformType: 'stripe' });
const INITECH = org('initech', 'org_initech');

describe('renderExport', () => {
  it('writes every organisation sorted by slug with its id, its billing in the config spelling, and the active one', () => {
    expect(renderExport([INITECH, HOOLI, ACME], 'org_initech', { baseUrl: 'https://api.example.com' })).toMatchInlineSnapshot(`
      "# yaml-language-server: $schema=./node_modules/orgform/schemas/orgs.schema.json
      # Written by \`orgform export\` from https://api.example.com.
      # Each organisation is matched by its id; billing lists the fields the service has a value for.
      # Edit, then run \`orgform plan\` to see what applying the edits would change.
      version: 1
      activeOrganisation: initech
      organisations:
        acme:
          id: org_acme
          billing:
            billingEmail: billing@acme.example
            customerID: cus_acme
            subscriptionID: sub_acme
            platformID: plat_acme
        hooli-eu:
          id: "org:hooli/eu"
          billing:
            customerID: cus_hooli_eu
        initech:
          id: org_initech
      "
    `);
  });

  it('gives the same bytes whatever order the organisations come in, and repeats none', () => {
    const once = renderExport([ACME, HOOLI, INITECH], 'org_acme');
    expect(renderExport([INITECH, ACME, HOOLI, ACME], 'org_acme')).toBe(once);
  });

  it('quotes what some YAML reader would take for a number, boolean, date or null', () => {
    const tricky = ['0123', 'true', 'on', '2024-01-02', '1e3', 'null', '~', '0x1F', '1:30'];
    const text = renderExport(
      tricky.map((s, i) => org(`s${i}`, s, { customerId: s })),
      null,
    );
    for (const s of tricky) {
      expect(text).toContain(`id: "${s}"`);
      expect(text).toContain(`customerID: "${s}"`);
    }
    expect(text).toContain('"2024-01-02"');
  });

  it('writes text the loader reads back exactly: quotes, colons, comments, ${...}, line breaks, non-ASCII', async () => {
    const values = ['0123', 'true', '2024-01-02', '1e3', 'a: b', '#hash', 'x #y', '${HOME}', '$${x}', 'quo"te', 'back\\slash', 'line\nbreak', ' padded ', 'ünïcødé', '-dash', '@at'];
    const orgs = values.map((v, i) => org(`slug-${i}`, `id-${i}`, { customerId: v, subscriptionId: v, platformId: v }));
    const text = renderExport(orgs, null);
    const state = await load(text);
    const read = new Map(state.organisations.map((o) => [o.id, o.billing] as const));
    expect(orgs.map((o) => read.get(o.id))).toEqual(values.map((v) => ({ customerID: v, subscriptionID: v, platformID: v })));
  });

  it('quotes slugs that YAML would not read as text', async () => {
    const slugs = ['0123', 'yes', '2024-01-02', '1e3', '-x', '@x', 'a:b', 'a#b'];
    const state = await load(renderExport(slugs.map((s, i) => org(s, `org_${i}`)), 'org_0'));
    expect(state.organisations.map((o) => o.slug).sort()).toEqual([...slugs].sort());
    expect(state.activeOrganisation?.slug).toBe('0123');
  });

  it('leaves out the active organisation when it is not among those exported (a filtered export)', () => {
    const text = renderExport([ACME], 'org_initech', { filter: 'acme' });
    expect(text).not.toContain('activeOrganisation');
    expect(text).toContain('(only organisations matching "acme")');
  });

  it('writes an empty mapping when there is nothing to export, which the loader accepts', async () => {
    const text = renderExport([], null);
    expect(text).toContain('organisations: {}\n');
    expect((await load(text)).organisations).toEqual([]);
  });

  it('leaves out, and names in the header, organisations whose slug orgs.yaml cannot declare', async () => {
    const text = renderExport([org('a b', 'org_space'), org('..', 'org_dots'), org('x/y', 'org_slash'), org('${X}', 'org_var'), ACME], 'org_space');
    expect(text).toMatch(/^# {3}"\.\." \(id "org_dots"\): .+$/m);
    expect(text).toMatch(/^# {3}"a b" \(id "org_space"\): the slug contains whitespace/m);
    expect(text).toMatch(/^# {3}"x\/y" \(id "org_slash"\): the slug contains "\/"$/m);
    expect(text).toMatch(/^# {3}"\$\{X\}" \(id "org_var"\): .*"\$\{"/m);
    const state = await load(text);
    expect(state.organisations.map((o) => o.slug)).toEqual(['acme']);
    expect(state.activeOrganisation).toBeUndefined();
  });

  it('leaves out, saying why, an organisation whose slug or id holds an invisible character, which the loader refuses in identifiers', async () => {
    const text = renderExport([org('ac\u200bme', 'org_zw'), org('beta', 'org_\u202ertl'), ACME], null);
    expect(text).toContain('#   "ac\\u200Bme" (id "org_zw"): the slug holds U+200B (zero-width character), which orgs.yaml does not allow in identifiers\n');
    expect(text).toContain('#   "beta" (id "org_\\u202Ertl"): its id holds U+202E (bidirectional control), which orgs.yaml does not allow in identifiers\n');
    expect((await load(text)).organisations.map((o) => o.slug)).toEqual(['acme']);
  });

  it('writes an invisible character in a value as an escape, so that a review shows it', async () => {
    const text = renderExport([org('acme', 'org_acme', { subscriptionId: 'sub\u200b_acme', customerId: 'cus\u{e0041}' })], null);
    expect(text).toContain('      customerID: "cus\\U000E0041"\n      subscriptionID: "sub\\u200B_acme"\n');
    expect((await load(text)).organisations[0]?.billing).toEqual({ customerID: 'cus\u{e0041}', subscriptionID: 'sub\u200b_acme' });
  });

  it('leaves out a billing e-mail the loader would refuse, saying so, and keeps the other fields', async () => {
    const text = renderExport([org('acme', 'org_acme', { billingEmail: 'n/a', customerId: 'cus_1' })], null);
    expect(text).toContain('    # Left out: billingEmail "n/a": not an e-mail address that orgs.yaml accepts\n');
    expect((await load(text)).organisations[0]?.billing).toEqual({ customerID: 'cus_1' });
  });

  it('writes only billing fields that have a value', () => {
    const text = renderExport([org('acme', 'org_acme', { billingEmail: '', customerId: 'cus_1', platformId: undefined })], null);
    expect(text).toContain('    billing:\n      customerID: cus_1\n');
    expect(text).not.toContain('billingEmail');
    expect(text).not.toContain('platformID');
  });

  it('round-trips any organisations through the loader: same slugs, ids, billing and active organisation', async () => {
    const text = fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }));
    const arbitraryOrg = fc.record({
      id: fc.oneof(text, fc.constantFrom('0123', 'true', 'org:x/y', '${A}', ' a')),
      slug: fc.oneof(text, fc.constantFrom('0123', 'on', '2024-01-02', '..', 'a/b', 'a b')),
      billing: fc.record(
        {
          billingEmail: fc.oneof(fc.emailAddress(), text),
          customerId: text,
          subscriptionId: fc.oneof(text, fc.constantFrom('1e3', 'null', '')),
          platformId: text,
        },
        { requiredKeys: [] },
      ),
    });
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(arbitraryOrg, { selector: (o) => o.id, maxLength: 6 }), fc.nat(6), async (orgs, activeIndex) => {
        const activeId = orgs[activeIndex]?.id ?? null;
        const rendered = renderExport(orgs, activeId);
        const state = await load(rendered);
        const byId = new Map(orgs.map((o) => [o.id, o] as const));
        for (const d of state.organisations) {
          const source = byId.get(d.id as string);
          expect(source?.slug).toBe(d.slug);
          for (const [field, got] of Object.entries(d.billing ?? {})) {
            const wireField = { billingEmail: 'billingEmail', customerID: 'customerId', subscriptionID: 'subscriptionId', platformID: 'platformId' }[field] as keyof Organisation['billing'] & string;
            expect((source?.billing as Record<string, unknown>)[wireField]).toBe(got);
          }
        }
        // Nothing vanishes: every organisation is either declared or named in the header as left out.
        expect(state.organisations.length + (rendered.match(/^# {3}"/gm)?.length ?? 0)).toBe(orgs.length);
        if (state.activeOrganisation) expect(byId.get(activeId as string)?.slug).toBe(state.activeOrganisation.slug);
        expect(renderExport([...orgs].reverse(), activeId)).toBe(rendered);
      }),
      // 150 in the soak project; 40 in `npm test`.
      { numRuns: propertyRuns(150, 40) },
    );
  });
});

describe('renderExport of many organisations', () => {
  it('builds the mappings without YAMLMap.add, whose scan for a duplicate key made an export quadratic (the slugs are unique already)', () => {
    const add = vi.spyOn(YAMLMap.prototype, 'add');
    try {
      const orgs = Array.from({ length: 2_000 }, (_, i) => org(`org-${i}`, `org_${i}`, { customerId: `cus_${i}` }));
      const text = renderExport(orgs, 'org_0');
      expect(add).not.toHaveBeenCalled();
      expect(text.match(/^ {2}org-\d+:$/gm)).toHaveLength(2_000);
    } finally {
      add.mockRestore();
    }
  });
});

import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Billing, Organisation } from '../../src/api/types.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { DesiredState } from '../../src/model/desired-state.js';
import { applyEdits } from '../../src/config-writer/create-file-patch.js';
import { quoteYamlString } from '../../src/config-writer/format-yaml-string.js';
import { parseForUpdate } from '../../src/config-writer/parse-for-update.js';
import { renderExport } from '../../src/config-writer/render-export.js';
import { selectExportable } from '../../src/config-writer/select-exportable.js';
import { updateDocument, type LiveState } from '../../src/config-writer/update-document.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orgform-update-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

/** What the real loader makes of the text, as orgform plan would read it. */
async function loadText(text: string, env: Record<string, string>): Promise<DesiredState> {
  await writeFile(join(dir, 'orgs.yaml'), text);
  const result = await loadConfig(['orgs.yaml'], { cwd: dir, variables: env });
  if (!result.ok) throw new Error(`the loader refused the update:\n${result.problems.map((p) => `${p.line}:${p.col}: ${p.message}`).join('\n')}\n---\n${text}`);
  return result.state;
}

function org(slug: string, id: string, billing?: Billing): Organisation {
  return { id, slug, ...(billing && { billing }) };
}

const ACME = { customerId: 'cus_acme', subscriptionId: 'sub_acme', platformId: 'plat_acme', billingEmail: 'billing@acme.example' };

const FILE = `# The organisations we run.
version: 1

activeOrganisation: acme   # switched by hand now and then

defaults:
  billing:
    platformID: plat_acme

organisations:
  acme:
    id: org_acme            # never changes
    billing:
      customerID: cus_acme  # from the CRM
      subscriptionID: 'sub_acme'
      billingEmail: billing@acme.example
    invitations: { revoke: [inv_1] }

  # Initech is billed centrally.
  initech: {}
`;

function live(organisations: Organisation[], activeId: string | null = 'org_acme'): LiveState {
  return { organisations, activeId };
}

const IN_LINE = live([org('acme', 'org_acme', ACME), org('initech', 'org_initech', { platformId: 'plat_acme' })]);

describe('updateDocument', () => {
  it('gives back the very same text when nothing differs', () => {
    const update = updateDocument('orgs.yaml', FILE, IN_LINE, {});
    expect(update).toEqual({ text: FILE, changes: [], warnings: [] });
  });

  it('changes only the values that differ, keeping every other byte and the column of the comment after a value', () => {
    const update = updateDocument('orgs.yaml', FILE, live([org('acme', 'org_acme', { ...ACME, customerId: 'cus_7', subscriptionId: 'sub_2024' }), IN_LINE.organisations[1]!], 'org_initech'), {});
    expect(update.text).toBe(
      FILE.replace('activeOrganisation: acme   #', 'activeOrganisation: initech #')
        .replace('customerID: cus_acme  #', 'customerID: cus_7     #')
        .replace("subscriptionID: 'sub_acme'", "subscriptionID: 'sub_2024'"),
    );
    expect(update.changes).toEqual([
      { address: 'organisations.acme.billing.customerID', before: 'cus_acme', after: 'cus_7' },
      { address: 'organisations.acme.billing.subscriptionID', before: 'sub_acme', after: 'sub_2024' },
      { address: 'activeOrganisation', before: 'acme', after: 'initech' },
    ]);
    expect(update.warnings).toEqual([]);
  });

  it('leaves one space before a comment that a longer value reaches', () => {
    const long = 'cus_'.padEnd(40, 'x');
    const update = updateDocument('orgs.yaml', FILE, live([org('acme', 'org_acme', { ...ACME, customerId: long }), IN_LINE.organisations[1]!]), {});
    expect(update.text).toContain(`      customerID: ${long} # from the CRM\n`);
  });

  it('writes values so that the loader reads back exactly what the service holds, whatever style they replace', async () => {
    const tricky = ['on', '0123', '2024-01-02', '${HOME}', 'a: b', 'line\nbreak', 'quo"te #x', ' padded ', '~'];
    const file = ['version: 1', 'organisations:'];
    tricky.forEach((_, i) => file.push(`  o${i}:`, '    billing:', '      customerID: |', '        old', '        lines', `      platformID: !!str "p${i}"`, `      subscriptionID: 'sub'`));
    const orgs = tricky.map((v, i) => org(`o${i}`, `org_${i}`, { customerId: v, platformId: `${v}!`, subscriptionId: `x${v}` }));
    const update = updateDocument('orgs.yaml', file.join('\n') + '\n', live(orgs, null), {});
    expect(update.warnings).toEqual([]);
    // Each keeps its style where it can hold the value (a literal block, double quotes, single quotes), else double quotes.
    expect(update.text).toContain("      customerID: |-\n        on\n      platformID: !!str \"on!\"\n      subscriptionID: 'xon'\n");
    expect(update.text).toContain("      customerID: |-\n        $${HOME}\n      platformID: !!str \"$${HOME}!\"\n      subscriptionID: 'x$${HOME}'\n");
    expect(update.text).toContain("      customerID: |-\n        line\n        break\n      platformID: !!str \"line\\nbreak!\"\n      subscriptionID: \"xline\\nbreak\"\n");
    expect(update.text).toContain("      customerID: |2-\n         padded \n");
    const state = await loadText(update.text, { HOME: '/home/someone' });
    expect(state.organisations.map((o) => o.billing)).toEqual(tricky.map((v) => ({ customerID: v, platformID: `${v}!`, subscriptionID: `x${v}` })));
  });

  describe('keeping the quoting style of each value it updates', () => {
    const STYLES = `version: 1
organisations:
  acme:
    billing:
      customerID: cus_old            # plain
      subscriptionID: 'sub_old'      # single
      platformID: "plat_old"         # double
  beta:
    billing:
      customerID: |   # literal
        cus_old
      subscriptionID: >-
        sub_old
      platformID: |2-
          plat_old
`;
    const update = (acme: Billing, beta: Billing) => updateDocument('orgs.yaml', STYLES, live([org('acme', 'org_acme', acme), org('beta', 'org_beta', beta)], null), {});

    it('writes plain, single-quoted, double-quoted, literal and folded values in their own style', async () => {
      const result = update({ customerId: 'cus_new', subscriptionId: "sub_it's", platformId: 'plat_new' }, { customerId: 'cus_new\n', subscriptionId: 'sub new', platformId: ' plat_new' });
      expect(result.warnings).toEqual([]);
      expect(result.text).toBe(`version: 1
organisations:
  acme:
    billing:
      customerID: cus_new            # plain
      subscriptionID: 'sub_it''s'    # single
      platformID: "plat_new"         # double
  beta:
    billing:
      customerID: |   # literal
        cus_new
      subscriptionID: >-
        sub new
      platformID: |2-
         plat_new
`);
      expect((await loadText(result.text, {})).organisations.map((o) => o.billing)).toEqual([
        { customerID: 'cus_new', subscriptionID: "sub_it's", platformID: 'plat_new' },
        { customerID: 'cus_new\n', subscriptionID: 'sub new', platformID: ' plat_new' },
      ]);
    });

    it('writes the lines of a block scalar in a CRLF file with CRLF, as every other line of it', async () => {
      const crlf = STYLES.replaceAll('\n', '\r\n');
      const result = updateDocument('orgs.yaml', crlf, live([org('acme', 'org_acme', {}), org('beta', 'org_beta', { customerId: 'line 1\nline 2\n', subscriptionId: 'sub new', platformId: ' plat_new' })], null), {});
      expect(result.text.split('\r\n').filter((line) => line.includes('\n'))).toEqual([]);
      expect(result.text).toContain('customerID: |   # literal\r\n        line 1\r\n        line 2\r\n      subscriptionID: >-\r\n        sub new\r\n');
      expect((await loadText(result.text, {})).organisations[1]?.billing).toEqual({ customerID: 'line 1\nline 2\n', subscriptionID: 'sub new', platformID: ' plat_new' });
    });

    it('writes a value that its style cannot hold in the nearest style that can: double quotes, or a literal block for a folded one of several lines', async () => {
      const values = { acme: { customerId: 'on', subscriptionId: 'sub\u200b_x', platformId: 'plat\tx' }, beta: { customerId: 'bell\u0007', subscriptionId: 'two\nlines', platformId: 'crlf\r\n' } };
      const result = update(values.acme, values.beta);
      expect(result.text).toContain('      customerID: "on"               # plain\n');
      // Invisible characters are written as escapes, which only double quotes have.
      expect(result.text).toContain('      subscriptionID: "sub\\u200B_x"  # single\n');
      expect(result.text).toContain('      platformID: "plat\\tx"          # double\n');
      expect(result.text).toContain('      customerID: "bell\\u0007"   # literal\n');
      expect(result.text).toContain('      subscriptionID: |-\n        two\n        lines\n');
      expect(result.text).toContain('      platformID: "crlf\\r\\n"\n');
      expect((await loadText(result.text, {})).organisations.map((o) => o.billing)).toEqual([
        { customerID: 'on', subscriptionID: 'sub\u200b_x', platformID: 'plat\tx' },
        { customerID: 'bell\u0007', subscriptionID: 'two\nlines', platformID: 'crlf\r\n' },
      ]);
    });

    it('reads back exactly what the service holds, whatever the value and whatever the style it replaces', async () => {
      const value = fc.oneof(
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }),
        fc.string({ unit: fc.constantFrom('a', ' ', "'", '"', '\n', '\t', '#', ':', '-', '\\', '$', '{', '\u200b', '\u202e', 'é'), minLength: 1, maxLength: 8 }),
      );
      await fc.assert(
        fc.asyncProperty(fc.tuple(value, value, value, value, value, value), async ([a, b, c, d, e, f]) => {
          const result = update({ customerId: a, subscriptionId: b, platformId: c }, { customerId: d, subscriptionId: e, platformId: f });
          const loaded = (await loadText(result.text, {})).organisations.map((o) => o.billing);
          expect(result.warnings).toEqual([]);
          expect(loaded).toEqual([
            { customerID: a, subscriptionID: b, platformID: c },
            { customerID: d, subscriptionID: e, platformID: f },
          ]);
        }),
        { numRuns: 150 },
      );
    });
  });

  it('leaves a default, a variable, and an alias or a used anchor as they are, with a warning that says where and what to do', () => {
    const file = `version: 1
defaults:
  billing:
    billingEmail: finance@acme.example
organisations:
  acme:
    billing:
      customerID: \${ORGFORM_VAR_ACME_CUSTOMER}
      subscriptionID: &sub sub_shared
  beta:
    billing:
      subscriptionID: *sub
      platformID: &plat plat_beta
`;
    const env = { ORGFORM_VAR_ACME_CUSTOMER: 'cus_secret_old' };
    const update = updateDocument('orgs.yaml', file, live([
      org('acme', 'org_acme', { billingEmail: 'ap@acme.example', customerId: 'cus_new', subscriptionId: 'sub_acme' }),
      org('beta', 'org_beta', { billingEmail: 'finance@acme.example', subscriptionId: 'sub_beta', platformId: 'plat_new' }),
    ]), env);
    expect(update.warnings).toEqual([
      'orgs.yaml:6:3: organisation "acme": billing.billingEmail comes from defaults.billing ("finance@acme.example"), but the service has "ap@acme.example"; left as is, because the default applies to other organisations too: add billingEmail: "ap@acme.example" under organisations.acme.billing, or change the default',
      'orgs.yaml:8:19: organisation "acme": billing.customerID is ${ORGFORM_VAR_ACME_CUSTOMER}, and the service has "cus_new"; left as is (a variable is never replaced by a value): update the variable, or write the value instead',
      'orgs.yaml:9:28: organisation "acme": billing.subscriptionID is written through an alias or anchor that another place uses, and the service has "sub_acme"; left as is: change it by hand',
      'orgs.yaml:12:23: organisation "beta": billing.subscriptionID is written through an alias or anchor that another place uses, and the service has "sub_beta"; left as is: change it by hand',
    ]);
    expect(update.warnings.join('\n')).not.toContain('cus_secret_old');
    // An anchor no alias uses is an ordinary value: it changes, and the anchor stays.
    expect(update.changes.map((c) => c.address)).toEqual(['organisations.beta.billing.platformID']);
    expect(update.text).toBe(file.replace('&plat plat_beta', '&plat plat_new'));
  });

  it('keeps a declared field that the service holds no value for, and says so', () => {
    const update = updateDocument('orgs.yaml', FILE, live([org('acme', 'org_acme', { ...ACME, customerId: '' }), IN_LINE.organisations[1]!]), {});
    expect(update.text).toBe(FILE);
    expect(update.warnings).toEqual([
      'orgs.yaml:14:19: organisation "acme": billing.customerID is "cus_acme" here, but the service holds no value; left as is (orgs.yaml cannot declare an empty field): remove the line to stop declaring it, or apply to set it again',
    ]);
  });

  it('names a value from a variable as written, never by the variable\'s value', () => {
    const file = 'version: 1\norganisations:\n  acme:\n    id: ${ORGFORM_VAR_ACME_ID}\n    billing:\n      customerID: ${ORGFORM_VAR_ACME_CUSTOMER}\n';
    const env = { ORGFORM_VAR_ACME_ID: 'org_secret_id', ORGFORM_VAR_ACME_CUSTOMER: 'cus_secret' };
    const absent = updateDocument('orgs.yaml', file, live([org('acme', 'org_secret_id', { customerId: '' })]), env);
    expect(absent.warnings).toEqual([expect.stringContaining('orgs.yaml:6:19: organisation "acme": billing.customerID is ${ORGFORM_VAR_ACME_CUSTOMER} here, but the service holds no value')]);
    const otherId = updateDocument('orgs.yaml', file, live([org('acme', 'org_other', { customerId: 'cus_secret' })]), env);
    expect(otherId.warnings).toEqual([expect.stringContaining('has the id "org_other" on the service, not ${ORGFORM_VAR_ACME_ID};')]);
    expect([...absent.warnings, ...otherId.warnings].join('\n')).not.toMatch(/org_secret_id|cus_secret/);
  });

  it('never rewrites an id or a key: another id or slug on the service is a warning', () => {
    const renamed = updateDocument('orgs.yaml', FILE, live([org('acme-corp', 'org_acme', { ...ACME, customerId: 'cus_7' }), IN_LINE.organisations[1]!], null), {});
    expect(renamed.text).toBe(FILE);
    expect(renamed.warnings).toEqual([
      'orgs.yaml:11:3: organisation id "org_acme" has the slug "acme-corp" on the service, not "acme"; left as is (export never renames keys): rename the key to "acme-corp", and activeOrganisation if it names it',
    ]);
    const otherId = updateDocument('orgs.yaml', FILE, live([org('acme', 'org_acme_2', ACME), IN_LINE.organisations[1]!]), {});
    expect(otherId.warnings).toEqual([
      'orgs.yaml:12:9: organisation "acme" has the id "org_acme_2" on the service, not "org_acme"; left as is (export never rewrites ids): correct the id, or remove it to match by slug',
    ]);
  });

  it('names an organisation the service does not show, unless an invitation to it is still to accept', () => {
    const file = 'version: 1\norganisations:\n  gone: {}\n  joining:\n    id: org_j\n    invitations:\n      accept: [inv_1]\n    billing: { customerID: cus_j }\n';
    const update = updateDocument('orgs.yaml', file, live([], null), {});
    expect(update.warnings).toEqual(['orgs.yaml:3:3: organisation "gone" is not among the organisations you belong to; left as declared. Check the slug and id; plan will say the same']);
    expect(update.text).toBe(file);
  });

  it('says so when billing cannot be read, or holds a value that orgs.yaml cannot declare', () => {
    const unreadable = updateDocument('orgs.yaml', FILE, live([org('acme', 'org_acme', { customerId: 'a', customerID: 'b' } as Billing), IN_LINE.organisations[1]!]), {});
    expect(unreadable.warnings).toEqual([
      'orgs.yaml:11:3: the billing of organisation "acme" cannot be read (billing has two different values for customerId and customerID); its billing is left as declared. Plan reports the same; check the organisation on the service',
    ]);
    const invalid = updateDocument('orgs.yaml', FILE, live([org('acme', 'org_acme', { ...ACME, billingEmail: 'n/a' }), IN_LINE.organisations[1]!]), {});
    expect(invalid.warnings).toEqual(['orgs.yaml:16:21: organisation "acme": billing.billingEmail: the service has "n/a", which orgs.yaml cannot declare (not an e-mail address that orgs.yaml accepts); left as is']);
    expect(invalid.text).toBe(FILE);
  });

  it('changes activeOrganisation only where the file declares it', () => {
    const file = 'version: 1\norganisations:\n  acme: {}\n';
    expect(updateDocument('orgs.yaml', file, live([org('acme', 'org_acme'), org('b', 'org_b')], 'org_b'), {}).text).toBe(file);
  });

  it('writes back every byte of a file it changes nothing in: CRLF, a byte-order mark, tags, escapes, block scalars', async () => {
    const dirs = ['test/config/corpus/good', 'examples', 'examples/demo', 'examples/bulk'];
    const texts: string[] = [];
    for (const dir of dirs) for (const name of (await readdir(dir)).filter((n) => n.endsWith('.yaml'))) texts.push(await readFile(`${dir}/${name}`, 'utf8'));
    expect(texts.length).toBeGreaterThan(8);
    for (const text of [...texts, ...texts.map((t) => `\ufeff${t.replaceAll('\n', '\r\n')}`)]) expect(parseForUpdate('x.yaml', text).toText()).toBe(text);
  });

  it('updates a file whose lines end with CR alone, and writes it back with CR; refuses one that mixes CR and LF', async () => {
    const cr = FILE.replaceAll('\n', '\r');
    const update = updateDocument('orgs.yaml', cr, live([org('acme', 'org_acme', { ...ACME, customerId: 'cus_7' }), IN_LINE.organisations[1]!]), {});
    expect(update.text).toBe(cr.replace('customerID: cus_acme  #', 'customerID: cus_7     #'));
    expect(update.changes.map((c) => c.address)).toEqual(['organisations.acme.billing.customerID']);
    expect((await loadText(update.text, {})).organisations.find((o) => o.slug === 'acme')?.billing?.customerID).toBe('cus_7');
    expect(() => updateDocument('orgs.yaml', `version: 1\rorganisations:\n  acme: {}\n`, IN_LINE, {})).toThrow(
      'orgs.yaml cannot be updated: some of its lines end with CR alone and others with LF. Save it with one kind of line ending, then run export again',
    );
  });

  it('refuses, naming the file and what to run, text that is not one valid YAML document (the CLI validates first)', () => {
    expect(() => updateDocument('orgs.yaml', 'version: 1\norganisations: [\n', IN_LINE, {})).toThrow(/^orgs\.yaml cannot be updated: .+ Check it with: orgform validate -f orgs\.yaml$/s);
    expect(() => updateDocument('orgs.yaml', 'version: 1\n---\nversion: 1\n', IN_LINE, {})).toThrow('orgs.yaml cannot be updated: not exactly one YAML document.');
  });

  it('brings an export in line byte for byte as a fresh export would write it, but for the double quotes of a value it replaces', () => {
    const value = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 });
    const billing = fc.record({ billingEmail: fc.emailAddress(), customerId: value, subscriptionId: value, platformId: value }, { requiredKeys: [] });
    const world = fc.uniqueArray(fc.record({ id: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }), slug: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }), before: billing, after: billing }), { selector: (o) => o.id, maxLength: 6 });
    fc.assert(
      fc.property(world, fc.nat(6), fc.nat(6), (orgs, activeBefore, activeAfter) => {
        // The service keeps the same fields, with any values: the file then declares exactly what a fresh export would.
        const after = orgs.map((o) => org(o.slug, o.id, Object.fromEntries(Object.keys(o.before).map((k) => [k, (o.after as Record<string, string>)[k] ?? `z${(o.before as Record<string, string>)[k]}`]))));
        const before = orgs.map((o) => org(o.slug, o.id, o.before));
        const text = renderExport(before, orgs[activeBefore]?.id ?? null);
        // activeOrganisation follows the service where the file declares it, and only there.
        const declared = selectExportable(before, orgs[activeBefore]?.id ?? null).activeSlug !== null;
        const activeId = declared ? (orgs[activeAfter % orgs.length]?.id ?? null) : null;
        fc.pre(!declared || selectExportable(after, activeId).activeSlug !== null);
        const update = updateDocument('orgs.yaml', text, live(after, activeId), {});
        expect(update.warnings).toEqual([]);
        // A value that needed quotes before keeps them, though a fresh export would write the new one plain.
        const fresh = renderExport(after, activeId).split('\n');
        const quotedAsBefore = fresh.map((line) => line.replace(/^( *[A-Za-z]+: )([^"'\s].*)$/, (_, key: string, plain: string) => `${key}${quoteYamlString(plain)}`));
        update.text.split('\n').forEach((line, i) => expect([fresh[i], quotedAsBefore[i]]).toContain(line));
        expect(update.text.split('\n')).toHaveLength(fresh.length);
      }),
      { numRuns: 200 },
    );
  });
});

describe('updateDocument giving the edits it made', () => {
  const STYLES = ['version: 1', 'activeOrganisation: acme  # by hand', 'organisations:', '  acme:', '    billing:', '      customerID: cus_old   # plain', "      subscriptionID: 'sub_old'", '  beta:', '    billing:', '      customerID: |   # literal', '        cus_old', '      platformID: >-', '        plat_old', ''].join('\n');
  const world = live([org('acme', 'org_acme', { customerId: 'cus_new', subscriptionId: 'sub_new' }), org('beta', 'org_beta', { customerId: 'two\nlines', platformId: 'one "line"' })], 'org_beta');

  it.each([
    ['LF', STYLES],
    ['CRLF', STYLES.replaceAll('\n', '\r\n')],
    ['CR alone', STYLES.replaceAll('\n', '\r')],
  ])('gives, with %s line ends, edits over the values it replaced only, which make the very text it gives', (_, file) => {
    const update = updateDocument('orgs.yaml', file, world, {});
    expect(update.changes).toHaveLength(5);
    const replaced = update.edits!.map((edit) => file.slice(edit.start, edit.end).split(/[\r\n#]/)[0]!.trim());
    expect(replaced).toEqual(['acme', 'cus_old', "'sub_old'", '|', '>-']);
    expect(applyEdits(file, update.edits!)).toBe(update.text);
  });

  it('gives no edits when nothing differs', () => {
    expect(updateDocument('orgs.yaml', FILE, IN_LINE, {}).edits).toBeUndefined();
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Document, isScalar, visit } from 'yaml';
import { BILLING_FIELDS, type BillingDetails } from '../../src/model/billing.js';
import { firstLoneSurrogate, hasInvisibleCharacters } from '../../src/model/invisible-characters.js';
import { detectImplicitType } from '../../src/config/detect-implicit-type.js';
import { escapeInterpolation } from '../../src/config/interpolate.js';
import { parseSource } from '../../src/config/parse-source.js';
import { loadSchemaValidator } from '../../src/config/schema-validator.js';
import type { DesiredOrganisation, DesiredState } from '../../src/model/desired-state.js';
import { validateDocument } from '../../src/config/validate-config.js';
import { propertyRuns } from '../support/soak.js';

type Organisation = Omit<DesiredOrganisation, 'source'>;

/** Writes a desired state as an orgs file, quoting what YAML would otherwise read as another type. */
function toOrgsYaml(active: string | undefined, organisations: Organisation[]): string {
  const orgs: Record<string, unknown> = {};
  for (const org of organisations) {
    const entry: Record<string, unknown> = {};
    if (org.id !== undefined) entry.id = org.id;
    if (org.billing !== undefined) entry.billing = org.billing;
    const { accept, revoke } = org.invitations;
    if (accept.length + revoke.length > 0) entry.invitations = { ...(accept.length > 0 && { accept }), ...(revoke.length > 0 && { revoke }) };
    if (org.notificationChannels.remove.length > 0) entry.notificationChannels = org.notificationChannels;
    Object.defineProperty(orgs, org.slug, { value: entry, enumerable: true, writable: true, configurable: true });
  }
  const doc = new Document({ version: 1, ...(active !== undefined && { activeOrganisation: active }), organisations: orgs });
  visit(doc, {
    Scalar(key, node) {
      if (typeof node.value !== 'string') return;
      // Keys are not interpolated; values are, so a literal ${ in them is written $${.
      const value = key === 'key' ? node.value : escapeInterpolation(node.value);
      node.value = value;
      if (detectImplicitType(value) !== undefined) node.type = 'QUOTE_DOUBLE';
    },
  });
  return doc.toString();
}

const special = fc.constantFrom(...'abcXYZ019-_.:~$@{}[]#&*!|>%`\'"?,=+é€😀');
const anyChar = fc.oneof({ weight: 4, arbitrary: special }, { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) });
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const C1 = /[\u0080-\u009f]/;
/** No lone surrogate (UTF-8 cannot carry one), and in an identifier no invisible character: the loader refuses them. */
const sendable = (s: string, identifier: boolean) => firstLoneSurrogate(s) === undefined && (!identifier || !hasInvisibleCharacters(s));

const slug = fc
  .oneof(
    fc.string({ unit: anyChar, minLength: 1, maxLength: 12 }),
    fc.constantFrom('__proto__', 'constructor', 'on', 'yes', '0123', '1e3', '2024-01-02', 'null', '~', '<<', '-', '-a', '?', '#x', 'a:b', '.a', '...'),
  )
  .filter((s) => s !== '.' && s !== '..' && !/[/\s]/.test(s) && !CONTROL.test(s) && !C1.test(s) && !s.includes('${') && sendable(s, true));
const identifier = fc
  .oneof(fc.string({ unit: anyChar, minLength: 1, maxLength: 12 }), fc.constantFrom('org:hooli/eu', 'a b', '${X}', '$${Y}', 'true', '0x1F', '123'))
  .filter((s) => s !== '.' && s !== '..' && s.trim() === s && !CONTROL.test(s) && sendable(s, true));
// Billing values: the schema refuses an empty one (minLength 1), as orgs.yaml cannot declare "empty".
const text = fc.string({ unit: anyChar, minLength: 1, maxLength: 12 }).filter((s) => sendable(s, false));
const email = fc
  .tuple(fc.stringMatching(/^[a-z0-9+_-]{1,8}$/), fc.stringMatching(/^[a-z0-9]{1,8}$/), fc.constantFrom('example', 'co.uk'))
  .map(([local, domain, tld]) => `${local}@${domain}.${tld}`);
const billing: fc.Arbitrary<BillingDetails | undefined> = fc.option(
  fc.record({ billingEmail: email, customerID: text, subscriptionID: text, platformID: text }, { requiredKeys: [] }).filter((b) => Object.keys(b).length > 0),
  { nil: undefined },
);

const organisation: fc.Arbitrary<Organisation> = fc.record({
  slug,
  id: fc.option(identifier, { nil: undefined }),
  billing,
  invitations: fc.record({ accept: fc.array(identifier, { maxLength: 3 }), revoke: fc.array(identifier, { maxLength: 3 }) }),
  notificationChannels: fc.record({ remove: fc.array(identifier, { maxLength: 3 }) }),
});

/** Any valid desired state: ids listed once across the whole state, as validation demands. */
const desired = fc
  .tuple(fc.uniqueArray(organisation, { selector: (o) => o.slug, maxLength: 6 }), fc.option(slug, { nil: undefined }))
  .map(([orgs, active]) => {
    const seenIds = new Set<string>();
    const seenInvitations = new Set<string>();
    const seenChannels = new Set<string>();
    const once = (seen: Set<string>) => (id: string) => !seen.has(id) && (seen.add(id), true);
    const organisations = orgs
      .map((org) => {
        const { id, ...rest } = org;
        const keepId = id !== undefined && once(seenIds)(id);
        return {
          ...(keepId && { id }),
          ...rest,
          invitations: { accept: org.invitations.accept.filter(once(seenInvitations)), revoke: org.invitations.revoke.filter(once(seenInvitations)) },
          notificationChannels: { remove: org.notificationChannels.remove.filter(once(seenChannels)) },
        } as Organisation;
      })
      .map(({ slug: s, id, billing: b, invitations, notificationChannels }) => ({
        slug: s,
        ...(id !== undefined && { id }),
        ...(b !== undefined && { billing: Object.fromEntries(BILLING_FIELDS.filter((f) => b[f] !== undefined).map((f) => [f, b[f]])) }),
        invitations,
        notificationChannels,
      }))
      .sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
    return { active, organisations };
  });

function withoutSources(state: DesiredState) {
  return {
    active: state.activeOrganisation?.slug,
    organisations: state.organisations.map(({ source: _source, ...org }) => org),
  };
}

describe('a desired state written as YAML', () => {
  it('loads back equal, whatever its identifiers and values', async () => {
    const validator = await loadSchemaValidator('orgs');
    await fc.assert(
      fc.asyncProperty(desired, async ({ active, organisations }) => {
        const yaml = toOrgsYaml(active, organisations);
        const parsed = await parseSource(Buffer.from(yaml));
        if (!parsed.ok) throw new Error(`${yaml}\n${JSON.stringify(parsed.problems)}`);
        const result = validateDocument({ file: 'orgs.yaml', sha256: '', root: parsed.root }, { variables: {}, validator });
        if (!result.ok) throw new Error(`${yaml}\n${JSON.stringify(result.problems)}`);
        expect(withoutSources(result.state)).toEqual({ active, organisations });
      }),
      // 400 in the soak project; 100 in `npm test`.
      { numRuns: propertyRuns(400, 100) },
    );
  });
});

import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadSchemaValidator } from '../../src/config/schema-validator.js';
import { OrgformError } from '../../src/errors.js';
import { parseSavedPlan, serializeSavedPlan, serializeSavedPlanPieces, type SavedPlanBody } from '../../src/plan/saved-plan.js';
import { BASE_URL, desiredOrg, desiredState, largePlan, observedOrg, observedState, planFor } from '../support/plan-fixtures.js';

const PATH = 'plan.json';
const KEY = 'k'.repeat(40);
const { validate } = await loadSchemaValidator('saved-plan');

function savedBody(): SavedPlanBody {
  const desired = desiredState({
    organisations: [desiredOrg({ slug: 'acme', billing: { billingEmail: 'new@acme.test' }, revoke: ['inv_2'] })],
    activeOrganisation: 'acme',
  });
  const plan = planFor(desired, observedState({ organisations: [observedOrg({ slug: 'acme', billing: { billingEmail: 'old@acme.test' } })], activeId: 'org_x' }));
  return {
    orgformSavedPlan: 3,
    createdAt: '2025-01-02T03:04:05.000Z',
    baseUrl: BASE_URL,
    configFiles: desired.files,
    desired,
    selection: { targets: [], shard: null },
    plan,
  };
}

/** The refusal parseSavedPlan gives, or fails the test when it gives none. */
function refusal(text: string, key?: string): OrgformError {
  try {
    parseSavedPlan(text, PATH, validate, key);
  } catch (err) {
    expect(err).toBeInstanceOf(OrgformError);
    return err as OrgformError;
  }
  throw new Error('expected the saved plan to be refused');
}

/** The saved plan with `edit` made to it and its checksum made to match again, as anyone can. */
function edited(edit: (saved: Record<string, any>) => void, key?: string): string {
  const { checksum: _checksum, signature: _signature, ...body } = JSON.parse(serializeSavedPlan(savedBody())) as Record<string, any>;
  edit(body);
  return serializeSavedPlan(body as SavedPlanBody, key);
}

describe('saved plans', () => {
  it('read back exactly what was written', () => {
    const body = savedBody();
    const saved = parseSavedPlan(serializeSavedPlan(body), PATH, validate);
    const { checksum, ...rest } = saved;
    // As data: a billing change's display is worked out when shown, and written as its fields.
    expect(rest).toEqual(JSON.parse(JSON.stringify(body)));
    expect(rest.plan.changes.find((c) => c.kind === 'billing')?.display.fields).toEqual(body.plan.changes.find((c) => c.kind === 'billing')?.display.fields);
    expect(checksum).toMatch(/^[0-9a-f]{64}$/);
  });

  it('are written in pieces, with the bytes, checksum and signature of the whole body stringified at once, and read back', () => {
    const small = savedBody();
    const large = { ...savedBody(), plan: largePlan(5_000) };
    for (const body of [small, large]) {
      const compact = JSON.stringify(body);
      const checksum = createHash('sha256').update(compact).digest('hex');
      for (const key of [undefined, KEY]) {
        const signature = key === undefined ? {} : { signature: createHmac('sha256', key).update(compact).digest('hex') };
        const pieces = [...serializeSavedPlanPieces(body, key)];
        expect(pieces.join('')).toBe(`${JSON.stringify({ ...body, checksum, ...signature })}\n`);
        expect(parseSavedPlan(pieces.join(''), PATH, validate, key).plan.changes).toHaveLength(body.plan.changes.length);
      }
    }
    // Handed over in pieces, never as one string.
    expect([...serializeSavedPlanPieces(large)].length).toBeGreaterThan(20);
  });

  it('are written as compact JSON on one line, its format first, ending in a newline (indented, a plan is about 1.65 times as long, and must be read back as one text)', () => {
    const text = serializeSavedPlan(savedBody());
    expect(text.endsWith('}\n')).toBe(true);
    expect(text.startsWith('{"orgformSavedPlan":3,')).toBe(true);
    expect(text.trimEnd()).not.toContain('\n');
  });

  it('are refused when one character of a value was edited', () => {
    const text = serializeSavedPlan(savedBody());
    expect(text).toContain('"new@acme.test"');
    const err = refusal(text.replace('"new@acme.test"', '"new@acme.tesx"'));
    expect(err.code).toBe('PLAN_INVALID');
    expect(err.message).toBe(`The saved plan ${PATH} was changed after it was written (its checksum does not match). Make a new one with orgform plan --out ${PATH}.`);
  });

  it('are refused when the checksum itself was edited or removed', () => {
    const saved = JSON.parse(serializeSavedPlan(savedBody())) as Record<string, unknown>;
    expect(refusal(JSON.stringify({ ...saved, checksum: '0'.repeat(64) })).message).toContain('checksum does not match');
    delete saved.checksum;
    expect(refusal(JSON.stringify(saved)).message).toContain('checksum does not match');
  });

  it('are refused when truncated', () => {
    const text = serializeSavedPlan(savedBody());
    const err = refusal(text.slice(0, Math.floor(text.length / 2)));
    expect(err.code).toBe('PLAN_INVALID');
    expect(err.message).toBe(`The saved plan ${PATH} is not valid JSON (truncated, or not a plan file). Make a new one with orgform plan --out ${PATH}.`);
  });

  it('are refused when written in another format version, naming both versions', () => {
    const saved = JSON.parse(serializeSavedPlan(savedBody())) as Record<string, unknown>;
    const err = refusal(JSON.stringify({ ...saved, orgformSavedPlan: 2 }));
    expect(err.code).toBe('PLAN_INVALID');
    expect(err.message).toContain('has format version 2; this orgform reads version 3');
  });

  it.each([
    ['an object of something else', '{"changes": []}'],
    ['an array', '[]'],
    ['a string', '"orgformSavedPlan"'],
    ['null', 'null'],
    ['a number', '1'],
  ])('are refused when the file is not a plan: %s', (_what, text) => {
    const err = refusal(text);
    expect(err.code).toBe('PLAN_INVALID');
    expect(err.message).toBe(`The saved plan ${PATH} is not an orgform plan file. Make a new one with orgform plan --out ${PATH}.`);
  });

  it('are refused when parts are missing, even with a matching checksum, naming the part', () => {
    const err = refusal(edited((saved) => delete saved.plan));
    expect(err.code).toBe('PLAN_INVALID');
    expect(err.message).toBe(`The saved plan ${PATH} has a malformed field: plan is missing. Make a new one with orgform plan --out ${PATH}.`);
  });

  it.each([
    ['an organisation id that is a number', (s: Record<string, any>) => (s.plan.changes[0].organisation.id = 42), 'plan.changes[0].organisation.id must be string'],
    ['a change with no address', (s: Record<string, any>) => delete s.plan.changes[1].address, 'plan.changes[1].address is missing'],
    ['an unknown kind of change', (s: Record<string, any>) => (s.plan.changes[0].kind = 'delete-everything'), 'plan.changes[0].kind must be one of "accept-invitation", "billing"'],
    ['a field the format does not have', (s: Record<string, any>) => (s.plan.changes[0].request = { billingEmail: 'x@y.z' }), 'plan.changes[0] has a field it does not take: "request"'],
    ['declared billing that is not a string', (s: Record<string, any>) => (s.desired.organisations[0].billing.billingEmail = ['x']), 'desired.organisations[0].billing.billingEmail must be string'],
    ['invitations that are not a list', (s: Record<string, any>) => (s.desired.organisations[0].invitations.revoke = 'inv_2'), 'desired.organisations[0].invitations.revoke must be array'],
    ['a seen value of the wrong type', (s: Record<string, any>) => (s.plan.changes[0].seen.billingEmail = 7), 'plan.changes[0].seen.billingEmail must be string,null'],
    ['a slug orgs.yaml would refuse', (s: Record<string, any>) => (s.desired.organisations[0].slug = 'a/b'), 'desired.organisations[0].slug must match pattern'],
    ['a declared e-mail that is not one', (s: Record<string, any>) => (s.desired.organisations[0].billing.billingEmail = 'nobody'), 'desired.organisations[0].billing.billingEmail must match format "email"'],
  ])('are refused as invalid, naming the field, when a field is malformed and the checksum matches: %s', (_what, edit, field) => {
    const err = refusal(edited(edit));
    expect(err.code).toBe('PLAN_INVALID');
    expect(err.message).toContain(`has a malformed field: ${field}`);
    expect(err.message).not.toMatch(/bug in orgform/);
  });

  describe('with ORGFORM_PLAN_KEY', () => {
    it('are signed, and read back when the key is the same', () => {
      const text = serializeSavedPlan(savedBody(), KEY);
      const saved = parseSavedPlan(text, PATH, validate, KEY);
      expect(saved.signature).toMatch(/^[0-9a-f]{64}$/);
      expect(saved.plan).toEqual(JSON.parse(JSON.stringify(savedBody().plan)));
    });

    it('refuse a plan that is not signed', () => {
      const err = refusal(serializeSavedPlan(savedBody()), KEY);
      expect(err.code).toBe('PLAN_INVALID');
      expect(err.message).toContain('is not signed, and ORGFORM_PLAN_KEY is set');
    });

    it('refuse a plan signed with another key', () => {
      const err = refusal(serializeSavedPlan(savedBody(), 'x'.repeat(40)), KEY);
      expect(err.message).toContain('is not signed with ORGFORM_PLAN_KEY');
    });

    it('refuse a plan edited after signing, even with its checksum made to match again', () => {
      const text = serializeSavedPlan(savedBody(), KEY);
      const signature = (JSON.parse(text) as { signature: string }).signature;
      const forged = JSON.parse(edited((s) => (s.desired.organisations[0].billing.billingEmail = 'thief@evil.test'))) as Record<string, unknown>;
      const err = refusal(JSON.stringify({ ...forged, signature }), KEY);
      expect(err.message).toContain('is not signed with ORGFORM_PLAN_KEY');
    });

    it('a signed plan is refused when the key is not set, saying so', () => {
      const err = refusal(serializeSavedPlan(savedBody(), KEY));
      expect(err.code).toBe('PLAN_INVALID');
      expect(err.message).toContain('is signed, but ORGFORM_PLAN_KEY is not set');
    });
  });
});

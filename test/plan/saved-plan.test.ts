import { describe, expect, it } from 'vitest';
import { OrgformError } from '../../src/errors.js';
import { parseSavedPlan, serializeSavedPlan, type SavedPlanBody } from '../../src/plan/saved-plan.js';
import { BASE_URL, desiredOrg, desiredState, observedOrg, observedState, planFor } from './fixtures.js';

const PATH = 'plan.json';

function savedBody(): SavedPlanBody {
  const desired = desiredState({
    organisations: [desiredOrg({ slug: 'acme', billing: { billingEmail: 'new@acme.test' }, revoke: ['inv_2'] })],
    activeOrganisation: 'acme',
  });
  const plan = planFor(desired, observedState({ organisations: [observedOrg({ slug: 'acme', billing: { billingEmail: 'old@acme.test' } })], activeId: 'org_x' }));
  return {
    orgformSavedPlan: 2,
    createdAt: '2025-01-02T03:04:05.000Z',
    baseUrl: BASE_URL,
    configFiles: desired.files,
    desired,
    selection: { targets: [], shard: null },
    plan,
  };
}

/** The refusal parseSavedPlan gives, or fails the test when it gives none. */
function refusal(text: string): OrgformError {
  try {
    parseSavedPlan(text, PATH);
  } catch (err) {
    expect(err).toBeInstanceOf(OrgformError);
    return err as OrgformError;
  }
  throw new Error('expected the saved plan to be refused');
}

describe('saved plans', () => {
  it('read back exactly what was written', () => {
    const body = savedBody();
    const saved = parseSavedPlan(serializeSavedPlan(body), PATH);
    const { checksum, ...rest } = saved;
    expect(rest).toEqual(body);
    expect(checksum).toMatch(/^[0-9a-f]{64}$/);
  });

  it('are written as indented JSON ending in a newline', () => {
    const text = serializeSavedPlan(savedBody());
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toContain('\n  "orgformSavedPlan": 2,');
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
    const err = refusal(JSON.stringify({ ...saved, orgformSavedPlan: 1 }));
    expect(err.code).toBe('PLAN_INVALID');
    expect(err.message).toContain('has format version 1; this orgform reads version 2');
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

  it('are refused when parts are missing, even with a matching checksum', () => {
    const { plan: _plan, ...withoutPlan } = savedBody();
    const text = serializeSavedPlan(withoutPlan as SavedPlanBody);
    const err = refusal(text);
    expect(err.code).toBe('PLAN_INVALID');
    expect(err.message).toContain('is missing parts of the plan');
  });
});

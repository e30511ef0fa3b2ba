import { describe, expect, it } from 'vitest';
import { callJson, OTHER, orgPath, useEmulator } from './emulator-test-kit.js';

describe('GetOrganisation', () => {
  it('answers 200 with the organisation to a member', async () => {
    const emulator = await useEmulator();
    const { status, body, response } = await callJson(emulator, orgPath('org_acme'));
    expect(status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(body).toMatchObject({ id: 'org_acme', slug: 'acme', displayName: 'Acme Corporation', plan: 'enterprise' });
    expect(body.systemServiceAccountClientID).toBeTypeOf('string');
  });

  it('decodes exactly one path segment, so org%3Ahooli%2Feu is the identifier org:hooli/eu', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, '/api/organisations/v1/organisations/org%3Ahooli%2Feu');
    expect(status).toBe(200);
    expect(body.id).toBe('org:hooli/eu');
  });

  it('does not take an unencoded slash as part of the identifier', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, '/api/organisations/v1/organisations/org:hooli/eu');
    expect(status).toBe(404);
    expect(body.code).toBe('not_found');
  });

  it('answers 404 organisation_not_found to a non-member', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, orgPath('org_globex'));
    expect(status).toBe(404);
    expect(body.code).toBe('organisation_not_found');
    expect(body.message).toBeTypeOf('string');
  });

  it('answers 404 organisation_not_found to an unknown identifier', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, orgPath('org_nope'));
    expect(status).toBe(404);
    expect(body.code).toBe('organisation_not_found');
  });

  it('answers 400 invalid_request to a segment that is not valid percent-encoding', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, '/api/organisations/v1/organisations/%E0%A4%A');
    expect(status).toBe(400);
    expect(body.code).toBe('invalid_request');
  });
});

describe('SetActiveOrganisation', () => {
  it('answers 200 with the organisation now active and records it for the user', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, orgPath('org:hooli/eu', 'active'), { method: 'PUT' });
    expect(status).toBe(200);
    expect(body.id).toBe('org:hooli/eu');
    expect(emulator.store.users.get('demo-token')?.active).toBe('org:hooli/eu');
  });

  it('answers 404 organisation_not_found to a non-member and leaves the active one alone', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, orgPath('org_globex', 'active'), { method: 'PUT' });
    expect(status).toBe(404);
    expect(body.code).toBe('organisation_not_found');
    expect(emulator.store.users.get('demo-token')?.active).toBe('org_initech');
  });
});

describe('UpdateBillingDetails', () => {
  const billing = (id = 'org_acme') => orgPath(id, 'billing');

  it('takes customerID, subscriptionID and platformID in and answers customerId, subscriptionId and platformId', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, billing(), {
      method: 'PUT',
      body: { billingEmail: 'finance@acme.example', customerID: 'cus_new', subscriptionID: 'sub_new', platformID: 'plat_new' },
    });
    expect(status).toBe(200);
    expect(body.id).toBe('org_acme');
    expect(body.billing).toMatchObject({ billingEmail: 'finance@acme.example', customerId: 'cus_new', subscriptionId: 'sub_new', platformId: 'plat_new' });
    expect(body.billing).not.toHaveProperty('customerID');
    expect(emulator.store.organisations.get('org_acme')?.billing?.customerId).toBe('cus_new');
  });

  it('leaves absent fields unchanged and ignores unknown ones', async () => {
    const emulator = await useEmulator();
    const { body } = await callJson(emulator, billing(), { method: 'PUT', body: { customerID: 'cus_2', plan: 'free', customerId: 'ignored' } });
    expect(body.billing).toMatchObject({ customerId: 'cus_2', subscriptionId: 'sub_acme', billingEmail: 'billing@acme.example', boardQuota: 50 });
    expect(body.plan).toBe('enterprise');
  });

  it('answers 422 validation_failed naming the field when a field is not a string', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, billing(), { method: 'PUT', body: { subscriptionID: 42 } });
    expect(status).toBe(422);
    expect(body).toMatchObject({ code: 'validation_failed', cause: 'subscriptionID' });
    expect(emulator.store.organisations.get('org_acme')?.billing?.subscriptionId).toBe('sub_acme');
  });

  it('answers 422 validation_failed to a billing e-mail that is not an e-mail address', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, billing(), { method: 'PUT', body: { billingEmail: 'not-an-address' } });
    expect(status).toBe(422);
    expect(body).toMatchObject({ code: 'validation_failed', cause: 'billingEmail' });
  });

  it.each([
    ['malformed JSON', '{"billingEmail":'],
    ['an array', '[]'],
    ['null', 'null'],
    ['a string', '"x"'],
  ])('answers 400 invalid_request to %s', async (_name, raw) => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, billing(), { method: 'PUT', body: raw });
    expect(status).toBe(400);
    expect(body.code).toBe('invalid_request');
  });

  it('answers 400 invalid_request to an empty body', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, billing(), { method: 'PUT' });
    expect(status).toBe(400);
    expect(body.code).toBe('invalid_request');
  });

  it('answers 404 organisation_not_found to a non-member before looking at the body', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, billing('org_acme'), { method: 'PUT', token: OTHER, body: { customerID: 'x' } });
    expect(status).toBe(200);
    const refused = await callJson(emulator, billing('org_initech'), { method: 'PUT', token: OTHER, body: '{oops' });
    expect(refused.status).toBe(404);
    expect(refused.body.code).toBe('organisation_not_found');
    expect(body.billing.customerId).toBe('x');
  });

  it('answers 413 payload_too_large to a body over 64 KiB and applies nothing', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, billing(), { method: 'PUT', body: { customerID: 'x'.repeat(70 * 1024) } });
    expect(status).toBe(413);
    expect(body.code).toBe('payload_too_large');
    expect(emulator.store.organisations.get('org_acme')?.billing?.customerId).toBe('cus_acme');
  });

  it('accepts a body just under 64 KiB', async () => {
    const emulator = await useEmulator();
    const { status } = await callJson(emulator, billing(), { method: 'PUT', body: { customerID: 'x'.repeat(60 * 1024) } });
    expect(status).toBe(200);
  });
});

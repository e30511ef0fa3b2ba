import { describe, expect, it } from 'vitest';
import type { OrganisationList } from '../../src/api/types.js';
import { call, callJson, DEMO, OTHER, ORG_API, V2_API, useEmulator } from './emulator-test-kit.js';

const acceptPath = (org: string, inv: string) =>
  `${ORG_API}/organisations/${encodeURIComponent(org)}/invitations/${encodeURIComponent(inv)}/accept`;
const invitationPath = (org: string, inv: string) =>
  `${ORG_API}/organisations/${encodeURIComponent(org)}/invitations/${encodeURIComponent(inv)}`;
const channelPath = (org: string, ch: string) => `${V2_API}/o/${encodeURIComponent(org)}/notification_channels/${encodeURIComponent(ch)}`;

describe('AcceptInvitation', () => {
  it('answers 204 with no body, makes the user a member and consumes the invitation', async () => {
    const emulator = await useEmulator();
    const response = await call(emulator, acceptPath('org_globex', 'inv_globex_ada'), { method: 'PUT' });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expect(emulator.store.invitations.get('inv_globex_ada')?.pending).toBe(false);
    const list = await callJson<OrganisationList>(emulator, `${ORG_API}/organisations`);
    expect(list.body.organisations.map((o) => o.slug)).toContain('globex');
  });

  it('matches the e-mail case-insensitively', async () => {
    const emulator = await useEmulator();
    expect(emulator.store.invitations.get('inv_wonka_ada')?.email).toBe('Ada@Acme.example');
    const response = await call(emulator, acceptPath('org_wonka', 'inv_wonka_ada'), { method: 'PUT' });
    expect(response.status).toBe(204);
  });

  it('answers 404 invitation_not_found to a second accept', async () => {
    const emulator = await useEmulator();
    await call(emulator, acceptPath('org_globex', 'inv_globex_ada'), { method: 'PUT' });
    const { status, body } = await callJson(emulator, acceptPath('org_globex', 'inv_globex_ada'), { method: 'PUT' });
    expect(status).toBe(404);
    expect(body.code).toBe('invitation_not_found');
  });

  it('answers 403 invitation_email_mismatch when the invitation is for someone else, and keeps it pending', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, acceptPath('org_acme', 'inv_acme_carol'), { method: 'PUT' });
    expect(status).toBe(403);
    expect(body.code).toBe('invitation_email_mismatch');
    expect(emulator.store.invitations.get('inv_acme_carol')?.pending).toBe(true);
  });

  it('answers 404 organisation_not_found to an unknown organisation', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, acceptPath('org_nope', 'inv_globex_ada'), { method: 'PUT' });
    expect(status).toBe(404);
    expect(body.code).toBe('organisation_not_found');
  });

  it('answers 404 invitation_not_found to an invitation of another organisation or an unknown one', async () => {
    const emulator = await useEmulator();
    for (const [org, inv] of [['org_wonka', 'inv_globex_ada'], ['org_globex', 'inv_nope']] as const) {
      const { status, body } = await callJson(emulator, acceptPath(org, inv), { method: 'PUT' });
      expect(status).toBe(404);
      expect(body.code).toBe('invitation_not_found');
    }
  });
});

describe('DeleteInvitation', () => {
  it('answers 204 and removes the invitation; a second delete answers 404 invitation_not_found', async () => {
    const emulator = await useEmulator();
    const first = await call(emulator, invitationPath('org_acme', 'inv_acme_carol'), { method: 'DELETE' });
    expect(first.status).toBe(204);
    expect(emulator.store.invitations.has('inv_acme_carol')).toBe(false);
    const second = await callJson(emulator, invitationPath('org_acme', 'inv_acme_carol'), { method: 'DELETE' });
    expect(second.status).toBe(404);
    expect(second.body.code).toBe('invitation_not_found');
  });

  it('answers 404 organisation_not_found to a non-member', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, invitationPath('org_globex', 'inv_globex_ada'), { method: 'DELETE' });
    expect(status).toBe(404);
    expect(body.code).toBe('organisation_not_found');
    expect(emulator.store.invitations.has('inv_globex_ada')).toBe(true);
  });

  it('answers 404 invitation_not_found to an accepted invitation', async () => {
    const emulator = await useEmulator();
    await call(emulator, acceptPath('org_globex', 'inv_globex_ada'), { method: 'PUT' });
    const { status, body } = await callJson(emulator, invitationPath('org_globex', 'inv_globex_ada'), { method: 'DELETE' });
    expect(status).toBe(404);
    expect(body.code).toBe('invitation_not_found');
  });

  it('finds the invitation under an awkward organisation identifier', async () => {
    const emulator = await useEmulator();
    const response = await call(emulator, invitationPath('org:hooli/eu', 'inv_hooli_bob'), { method: 'DELETE' });
    expect(response.status).toBe(204);
  });
});

describe('Delete a notification channel', () => {
  it('answers 204 with no body and removes the channel', async () => {
    const emulator = await useEmulator();
    const response = await call(emulator, channelPath('org_acme', 'chn_acme_slack'), { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expect(emulator.store.channels.has('chn_acme_slack')).toBe(false);
  });

  it('answers 404 channel_not_found to a channel of another organisation and to a second delete', async () => {
    const emulator = await useEmulator();
    const other = await callJson(emulator, channelPath('org_acme', 'chn_hooli_pager'), { method: 'DELETE' });
    expect(other.status).toBe(404);
    expect(other.body.code).toBe('channel_not_found');
    await call(emulator, channelPath('org_acme', 'chn_acme_email'), { method: 'DELETE' });
    const again = await callJson(emulator, channelPath('org_acme', 'chn_acme_email'), { method: 'DELETE' });
    expect(again.body.code).toBe('channel_not_found');
  });

  it('answers 404 organisation_not_found to a non-member', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, channelPath('org_globex', 'chn_globex_email'), { method: 'DELETE' });
    expect(status).toBe(404);
    expect(body.code).toBe('organisation_not_found');
  });

  it('accepts the token in a bearerToken cookie', async () => {
    const emulator = await useEmulator();
    const response = await call(emulator, channelPath('org_globex', 'chn_globex_email'), {
      method: 'DELETE',
      token: null,
      headers: { cookie: `theme=dark; bearerToken=${OTHER}` },
    });
    expect(response.status).toBe(204);
    expect(emulator.requestLog.at(-1)?.authorization).toBe('cookie');
  });

  it('prefers the Authorization header over the cookie', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, channelPath('org_globex', 'chn_globex_email'), {
      method: 'DELETE',
      token: 'wrong',
      headers: { cookie: `bearerToken=${OTHER}` },
    });
    expect(status).toBe(401);
    expect(body.code).toBe('unauthenticated');
  });
});

describe('the bearerToken cookie on v1', () => {
  it('is not accepted: 401 unauthenticated', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, `${ORG_API}/organisations`, { token: null, headers: { cookie: `bearerToken=${DEMO}` } });
    expect(status).toBe(401);
    expect(body.code).toBe('unauthenticated');
    expect(emulator.requestLog.at(-1)?.authorization).toBe('none');
  });
});

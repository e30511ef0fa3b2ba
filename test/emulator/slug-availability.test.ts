import { describe, expect, it } from 'vitest';
import { call, callJson, ORG_API, useEmulator } from './emulator-test-kit.js';

const slugPath = (slug: string) => `${ORG_API}/slug/${encodeURIComponent(slug)}/availability`;

describe('GetSlugAvailability', () => {
  it('answers ok with no messages for a free, valid slug', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, slugPath('new-venture-42'));
    expect(status).toBe(200);
    expect(body).toEqual({ ok: true, messages: [] });
  });

  it('answers not ok with "already taken" for an existing slug, whatever its case', async () => {
    const emulator = await useEmulator();
    expect((await callJson(emulator, slugPath('globex'))).body).toEqual({ ok: false, messages: ['This slug is already taken.'] });
    const upper = await callJson(emulator, slugPath('GLOBEX'));
    expect(upper.body.ok).toBe(false);
    expect(upper.body.messages).toContain('This slug is already taken.');
  });

  it('answers not ok with "is reserved" for a reserved slug', async () => {
    const emulator = await useEmulator();
    const { body } = await callJson(emulator, slugPath('admin'));
    expect(body).toEqual({ ok: false, messages: ['This slug is reserved.'] });
  });

  it.each([
    ['ab', ['A slug must be at least 3 characters long.']],
    ['a'.repeat(41), ['A slug must be at most 40 characters long.']],
    ['Zebra', ['A slug may contain only lowercase letters, digits and hyphens.']],
    ['Acme', ['A slug may contain only lowercase letters, digits and hyphens.', 'This slug is already taken.']],
    ['9lives', ['A slug must start with a letter.']],
    ['trailing-', ['A slug must not end with a hyphen.']],
    ['double--dash', ['A slug must not contain two hyphens in a row.']],
    ['-x', ['A slug must be at least 3 characters long.', 'A slug must start with a letter.']],
    ['has space', ['A slug may contain only lowercase letters, digits and hyphens.']],
  ])('gives one message per broken rule for %j', async (slug, messages) => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, slugPath(slug));
    expect(status).toBe(200);
    expect(body).toEqual({ ok: false, messages });
  });

  it('accepts exactly 3 and exactly 40 characters', async () => {
    const emulator = await useEmulator();
    expect((await callJson(emulator, slugPath('abc'))).body.ok).toBe(true);
    expect((await callJson(emulator, slugPath('a'.repeat(40)))).body.ok).toBe(true);
  });

  it('is deliberately slow by the configured delay', async () => {
    const emulator = await useEmulator({ slugDelayMs: 300 });
    const started = Date.now();
    const response = await call(emulator, slugPath('slow-one'));
    expect(response.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('answers 401 unauthenticated without a token', async () => {
    const emulator = await useEmulator();
    const { status, body } = await callJson(emulator, slugPath('acme'), { token: null });
    expect(status).toBe(401);
    expect(body.code).toBe('unauthenticated');
  });
});

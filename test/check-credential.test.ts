import { describe, expect, it } from 'vitest';
import { checkCredential } from '../src/check-credential.js';
import { TerraformHttpState } from '../src/state/http/terraform-http-state.js';
import { parseStateSpec } from '../src/state/parse-state-spec.js';
import { readSettings, readStateSettings } from '../src/cli/settings.js';

const SECRET = 'canary-Secret-1234567890abcdef-0123456789';

describe('checkCredential', () => {
  it.each(['\r', '\n', '\u0000', '\u001b[2J', '\u007f', '\u0085', '\t'])('refuses a credential holding %j, naming where it came from and never its value', (control) => {
    const value = `${SECRET}${control}X-Injected: 1`;
    expect(() => checkCredential(value, 'ORGFORM_STATE_PASSWORD')).toThrow(/^ORGFORM_STATE_PASSWORD holds a control character \(U\+00[0-9A-F]{2}, at position 42\): refused before it is used/);
    try {
      checkCredential(value, 'ORGFORM_STATE_PASSWORD');
    } catch (err) {
      expect(String((err as Error).message)).not.toContain('canary');
    }
  });

  it('lets a credential of printable characters through, Latin-1 and beyond included', () => {
    expect(() => checkCredential(`${SECRET}é€`, 'ORGFORM_TOKEN')).not.toThrow();
  });

  it('guards the plan key, the state user and password, and a password in a postgres:// address', () => {
    expect(() => readSettings({ ORGFORM_PLAN_KEY: `${SECRET}\n` }, {}, ['planKey'])).toThrow(/^ORGFORM_PLAN_KEY holds a control character/);
    const spec = parseStateSpec('https://state.example/s', '/repo');
    if (spec.kind !== 'http') throw new Error('not an http spec');
    const open = (env: Record<string, string>) => new TerraformHttpState(spec, { settings: readStateSettings(env), describe: () => ({ command: 'plan', pid: 1, host: 'h', who: 'u@h', startedAt: '' }), network: {} });
    expect(() => open({ ORGFORM_STATE_USERNAME: 'gitlab-ci-token', ORGFORM_STATE_PASSWORD: `${SECRET}\r` })).toThrow(/^ORGFORM_STATE_PASSWORD holds a control character/);
    expect(() => open({ ORGFORM_STATE_USERNAME: `ci\u0007`, ORGFORM_STATE_PASSWORD: SECRET })).toThrow(/^ORGFORM_STATE_USERNAME holds a control character/);
    expect(() => parseStateSpec(`postgres://ada:${encodeURIComponent(`${SECRET}\n`)}@db/ops`, '/repo')).toThrow(/^The password in the postgres:\/\/ state address holds a control character/);
    expect(() => parseStateSpec(`postgres://ada:${encodeURIComponent(`${SECRET}\n`)}@db/ops`, '/repo')).not.toThrow(/canary/);
  });
});

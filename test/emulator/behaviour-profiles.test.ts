/**
 * Profiles and their resolution, the admin view of the behaviour, and the CLI grammar of
 * `orgform emulator`: --profile, --point, --rate-limit(-headers), --quota(-headers), --token-lifetime-*, --renew-every and --help.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { run } from '../../src/commands/emulator.js';
import { parsePointAssignment, POINT_NAMES, POINTS, PROFILES, resolveBehaviour } from '../../src/emulator/behaviour.js';
import { startEmulator } from '../../src/emulator/server.js';
import { CONTRACT_PATH } from '../support/openapi-contract.js';
import { createIO } from '../support/create-io.js';
import { runCli } from '../support/run-cli.js';
import { call, callJson, ORG_API, useEmulator, waitUntil } from './emulator-test-kit.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STRICT = {
  'billing-put': 'replace',
  'page-size': 'fixed-50',
  'next-link': 'absolute',
  'last-next': 'empty',
  'success-body': 'mixed',
  'repeat-delete': 'not-found',
  'gone-channel': 'gone',
  'extra-fields': 'on',
  'retry-after': 'http-date',
  'listing-billing': 'omitted',
  'read-spelling': 'update',
  'non-member-reads': 'readable',
  'membership-lag': 2,
  'gateway-404': 'v2-once',
  'empty-pages': 'one',
  'fresh-cursors': 'on',
};

describe('profiles', () => {
  it('lenient is the first value of every point, and the default', () => {
    const firsts = Object.fromEntries(POINT_NAMES.map((name) => [name, name === 'membership-lag' ? 0 : POINTS[name].values[0]]));
    expect(PROFILES.lenient).toEqual(firsts);
    expect(resolveBehaviour()).toEqual(PROFILES.lenient);
  });

  it('strict is the decided value of every point', () => {
    expect(resolveBehaviour('strict')).toEqual(STRICT);
    expect([...POINT_NAMES].sort()).toEqual(Object.keys(STRICT).sort());
  });

  it('takes overrides on top of the profile, each point on its own', () => {
    const behaviour = resolveBehaviour('strict', { 'billing-put': 'merge', 'membership-lag': 0 });
    expect(behaviour).toEqual({ ...STRICT, 'billing-put': 'merge', 'membership-lag': 0 });
    expect(resolveBehaviour('lenient', { 'gateway-404': 'v2' })).toEqual({ ...PROFILES.lenient, 'gateway-404': 'v2' });
    expect(PROFILES.strict['billing-put']).toBe('replace');
  });

  it('refuses an unknown profile, point or value, naming what is allowed', () => {
    expect(() => resolveBehaviour('sloppy' as never)).toThrow('Unknown behaviour profile "sloppy"; the profiles are lenient, strict.');
    expect(() => resolveBehaviour('lenient', { 'billing-patch': 'merge' } as never)).toThrow(/Unknown behaviour point "billing-patch"; the points are billing-put, page-size, .*gateway-404, empty-pages, fresh-cursors\./);
    expect(() => resolveBehaviour('lenient', { 'last-next': 'missing' } as never)).toThrow('Behaviour point last-next takes omit | empty | null (got "missing").');
    expect(() => resolveBehaviour('lenient', { 'membership-lag': -1 })).toThrow(/membership-lag takes a whole number/);
    expect(() => resolveBehaviour('lenient', { 'membership-lag': 1.5 })).toThrow(TypeError);
  });

  it('reads NAME=VALUE assignments, membership-lag as a number', () => {
    expect(parsePointAssignment('success-body=text-200')).toEqual({ 'success-body': 'text-200' });
    expect(parsePointAssignment('membership-lag=3')).toEqual({ 'membership-lag': 3 });
    expect(() => parsePointAssignment('membership-lag=many')).toThrow('Behaviour point membership-lag takes a whole number (0 for none) (got "many").');
    expect(() => parsePointAssignment('gateway-404')).toThrow(/NAME=VALUE \(got "gateway-404"\)/);
  });

  it('startEmulator exposes the resolved behaviour, refuses bad overrides, and GET /__emulator/behaviour answers it', async () => {
    const emulator = await useEmulator({ profile: 'strict', behaviour: { 'gateway-404': 'off' } });
    expect(emulator.behaviour).toEqual({ ...STRICT, 'gateway-404': 'off' });
    const { status, body } = await callJson(emulator, '/__emulator/behaviour', { token: null });
    expect([status, body]).toEqual([200, { ...STRICT, 'gateway-404': 'off' }]);
    expect((await callJson(await useEmulator(), '/__emulator/behaviour', { token: null })).body).toEqual(PROFILES.lenient);
    await expect(startEmulator({ behaviour: { 'extra-fields': 'maybe' } as never })).rejects.toThrow(/extra-fields takes off \| on/);
  });
});

const listeningUrl = (out: string) => /Organisations emulator listening on (http:\/\/\S+)/.exec(out)?.[1];

describe('orgform emulator: the command line', () => {
  it('--help lists the profiles and every point with its values and what strict uses', async () => {
    const { code, stdout } = await runCli(['emulator', '--help'], { cwd: ROOT });
    expect(code).toBe(0);
    for (const option of ['--profile <name>', '--point <name=value>', '--rate-limit <rps[:burst]>', '--rate-limit-headers <style>', '--quota <requests:seconds>', '--quota-headers <style>', '--token-lifetime-requests <n>', '--token-lifetime-seconds <n>', '--renew-every <n>']) {
      expect(stdout).toContain(option);
    }
    expect(stdout).toMatch(/lenient\s+the project's decisions \(default\)/);
    expect(stdout).toMatch(/strict\s+the least convenient plausible answer/);
    for (const name of POINT_NAMES) {
      const values = name === 'membership-lag' ? '0 | N (a whole number)' : POINTS[name].values.join(' | ');
      expect(stdout).toMatch(new RegExp(`\\n  ${name} +${values.replace(/[|()]/g, '\\$&')}  \\[strict: ${String(PROFILES.strict[name])}\\]\\n +${POINTS[name].description.slice(0, 20).replace(/[()]/g, '\\$&')}`));
    }
  });

  it.each([
    [['--point', 'billing-patch=merge'], /Unknown behaviour point "billing-patch"; the points are billing-put, page-size/],
    [['--point', 'billing-put=sideways'], /Behaviour point billing-put takes merge \| replace \(got "sideways"\)/],
    [['--point', 'billing-put'], /NAME=VALUE/],
    [['--profile', 'sloppy'], /Allowed choices are lenient, strict/],
    [['--rate-limit', '0'], /--rate-limit takes RPS or RPS:BURST/],
    [['--rate-limit', '10:x'], /--rate-limit takes RPS or RPS:BURST/],
    [['--rate-limit-headers', 'draft'], /Allowed choices are none, ratelimit, x-ratelimit/],
    [['--quota', '5000'], /--quota takes REQUESTS:SECONDS/],
    [['--quota', '0:86400'], /--quota takes REQUESTS:SECONDS/],
    [['--quota', '5:86400', '--quota-headers', 'none'], /Allowed choices are ratelimit, x-ratelimit/],
    [['--token-lifetime-requests', '0'], /--token-lifetime-requests must be a whole number of at least 1/],
    [['--renew-every', '0'], /--renew-every must be a whole number of at least 1/],
  ])('refuses %j with a clear error and exit 1, before starting anything', async (args, message) => {
    const { code, stderr, stdout } = await runCli(['emulator', '--port', '0', ...args], { cwd: ROOT });
    expect(code).toBe(1);
    expect(stderr).toMatch(message);
    expect(stdout).not.toContain('listening');
  });

  it('parses --profile, repeated --point, --rate-limit, --quota and the token lifetimes, and says so on start', async () => {
    const stopped = new AbortController();
    stopped.abort();
    const { code, stdout } = await runCli(
      ['emulator', '--port', '0', '--slug-delay', '0', '--profile', 'strict', '--point', 'billing-put=merge', '--point', 'membership-lag=5', '--rate-limit', '20:7', '--rate-limit-headers', 'x-ratelimit', '--quota', '5000:86400', '--quota-headers', 'x-ratelimit', '--token-lifetime-requests', '3', '--renew-every', '50'],
      { cwd: ROOT, signal: stopped.signal },
    );
    expect(code).toBe(0);
    expect(stdout).toContain('Behaviour: profile strict, with billing-put=merge membership-lag=5\n');
    expect(stdout).toContain('Rate limit: 20 requests/s, burst 7, headers x-ratelimit\n');
    expect(stdout).toContain('Quota: 5000 requests every 86400 s, headers x-ratelimit\n');
    expect(stdout).toContain('Tokens expire after 3 requests; fresh ones: orgform emulator token URL (POST /__emulator/tokens)');
    expect(stdout).toContain('A subscription is renewed every 50 service requests (new subscriptionId and customerId)\n');
  });

  it('plays the options it was given, over HTTP', async () => {
    const controller = new AbortController();
    const cli = createIO({ cwd: ROOT, signal: controller.signal });
    const exit = run(
      { port: 0, slugDelay: 0, profile: 'strict', point: ['gateway-404=off', 'membership-lag=0'], rateLimit: '1:2', rateLimitHeaders: 'ratelimit', tokenLifetimeRequests: 10 },
      cli.io,
      [],
    );
    await waitUntil(() => listeningUrl(cli.out()) !== undefined);
    const url = listeningUrl(cli.out())!;
    const behaviour = (await (await fetch(`${url}/__emulator/behaviour`)).json()) as Record<string, unknown>;
    expect(behaviour).toEqual({ ...STRICT, 'gateway-404': 'off', 'membership-lag': 0 });
    const answers = [];
    for (let i = 0; i < 3; i += 1) {
      const r = await fetch(`${url}${ORG_API}/organisations`, { headers: { authorization: 'Bearer demo-token' } });
      answers.push([r.status, r.headers.get('ratelimit-policy'), r.headers.get('retry-after')]);
    }
    // The bucket holds 2 and refills one a second: the third, a few milliseconds later, is refused.
    expect(answers).toEqual([
      [200, '"default";q=1;w=1', null],
      [200, '"default";q=1;w=1', null],
      [429, '"default";q=1;w=1', expect.stringMatching(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/)],
    ]);
    controller.abort();
    expect(await exit).toBe(0);
  });

  it('refuses --rate-limit-headers without --rate-limit, and a bad --point given to run directly, as usage errors', async () => {
    await expect(run({ port: 0, rateLimitHeaders: 'ratelimit' }, createIO({ cwd: ROOT }).io, [])).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining('--rate-limit-headers needs --rate-limit') });
    await expect(run({ port: 0, point: ['retry-after=never'] }, createIO({ cwd: ROOT }).io, [])).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining('retry-after takes seconds | http-date') });
    await expect(run({ port: 0, rateLimit: '5:0' }, createIO({ cwd: ROOT }).io, [])).rejects.toMatchObject({ code: 'USAGE' });
  });
});

describe('the OpenAPI description', () => {
  it('marks every point as an open point whose answers the client must tolerate', () => {
    const text = readFileSync(CONTRACT_PATH, 'utf8').replace(/\n\s+/g, ' ');
    for (const name of POINT_NAMES) {
      const notes = text.split(`Open point (not shown in the interface), \`${name}\`:`).slice(1);
      expect(notes.length, name).toBeGreaterThan(0);
      for (const note of notes) expect(note.slice(0, 400), name).toMatch(/must tolerate/);
    }
  });
});

describe('aliases', () => {
  it('successStyle still works, and the success-body point wins over it', async () => {
    const alias = await useEmulator({ successStyle: 'empty-200' });
    expect(alias.behaviour['success-body']).toBe('empty-200');
    expect((await call(alias, `${ORG_API}/organisations/org_acme/invitations/inv_acme_carol`, { method: 'DELETE' })).status).toBe(200);
    const both = await useEmulator({ successStyle: 'empty-200', behaviour: { 'success-body': 'no-content' } });
    expect((await call(both, `${ORG_API}/organisations/org_acme/active`, { method: 'PUT' })).status).toBe(204);
  });
});

/**
 * Reliability cases 14–16: where the token may be sent, that it never shows anywhere, and that
 * identifiers cannot reshape a request path.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type OrganisationsClient } from '../../src/api/client.js';
import { startEmulator } from '../../src/emulator/server.js';
import { CHANGING_CONFIG } from '../support/workspace.js';
import { ORG_API, startWorld } from './support.js';

const clients: OrganisationsClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

const CHANGES = `${CHANGING_CONFIG}  umbrella:
    billing:
      customerID: cus_umbrella_2
`;

describe('security', () => {
  it.each([
    ['http://api.example.com', 'api.example.com'],
    ['http://10.1.2.3:4010', '10.1.2.3'],
    ['http://127.0.0.1.example.com', '127.0.0.1.example.com'],
  ])('case 14: a plain http:// base URL that is not loopback (%s) is refused before any request', async (baseUrl, host) => {
    const world = await startWorld({ config: CHANGES });
    const started = Date.now();
    for (const command of [['plan'], ['apply', '--auto-approve']]) {
      const result = await world.cli([...command, '--base-url', baseUrl]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`Refusing plain http:// to ${host}: the token would travel unencrypted`);
      expect(result.stdout).toBe('');
    }
    expect(Date.now() - started).toBeLessThan(2_000);
    world.leaks.expectClean();
  });

  it('case 14: http:// is accepted for loopback, and NODE_TLS_REJECT_UNAUTHORIZED=0 is refused before any request', async () => {
    const world = await startWorld({ config: CHANGES });
    const port = new URL(world.emulator.url).port;
    for (const baseUrl of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      const plan = await world.cli(['plan', '--base-url', baseUrl]);
      expect(plan.stderr).toBe('');
      expect(plan.code).toBe(0);
    }
    world.emulator.resetCounters();
    for (const command of [['plan'], ['apply', '--auto-approve'], ['export']]) {
      const result = await world.cli(command, { env: { NODE_TLS_REJECT_UNAUTHORIZED: '0' } });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('Refusing to run with NODE_TLS_REJECT_UNAUTHORIZED=0');
    }
    expect(world.emulator.counters.total).toBe(0);
    world.leaks.expectClean();
  });

  it('case 15: the canary token never appears in stdout, stderr, the journal, saved plans or errors, on success or failure', async () => {
    const world = await startWorld({ config: CHANGES });
    const { token, leaks } = world;
    const echo = `token ${token} is not welcome here; Bearer ${token}`;

    // Success paths, in every output format.
    for (const args of [['plan'], ['plan', '--format', 'json'], ['plan', '--format', 'markdown'], ['plan', '--out', 'plan.json'], ['validate']]) {
      expect((await world.cli(args)).code).toBe(0);
    }
    // A service that echoes the token in its Error body, its cause, an HTML page, a redirect and
    // truncated JSON; lost answers; a rate limit beyond the budget.
    world.emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'status', status: 400, body: JSON.stringify({ code: `bad_${token}`, message: echo, cause: echo }) } });
    world.emulator.faults.add({ operation: 'updateBillingDetails', fault: { kind: 'status', status: 429, retryAfter: 3600, body: JSON.stringify({ code: 'rate_limited', message: echo }) } });
    world.emulator.faults.add({ operation: 'deleteInvitation', fault: { kind: 'lost-response' } });
    world.emulator.faults.add({ operation: 'deleteNotificationChannel', fault: { kind: 'redirect', status: 307, location: `https://evil.example/steal?token=${token}&t=${encodeURIComponent(token)}` } });
    world.emulator.faults.add({ operation: 'acceptInvitation', fault: { kind: 'status', status: 403, body: `<html><body>${echo}</body></html>`, contentType: 'text/html' } });
    world.emulator.faults.add({ operation: 'setActiveOrganisation', fault: { kind: 'status', status: 200, body: `{"id":"org_acme","note":"${echo}` } });
    const failed = await world.cli(['apply', '--auto-approve', '--parallelism', '1']);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/[1-9] failed/);
    // The echoes reached the output, redacted.
    expect(failed.stdout).toContain('bad_[REDACTED]: token [REDACTED] is not welcome here');

    const json = await world.cli(['apply', '--auto-approve', '--format', 'json'], { env: {} });
    expect(json.stdout).toContain('"type":"apply_end"');
    // The saved plan is now stale, and refused.
    expect((await world.cli(['apply', 'plan.json'])).code).toBe(1);

    // The token from a file; --token refused without echoing it; a service that does not know it.
    await writeFile(join(world.cwd, 'token.txt'), `${token}\n`);
    expect((await world.cli(['plan', '--token-file', 'token.txt'], { env: { ORGFORM_TOKEN: undefined } })).code).toBe(0);
    const onArgv = await world.cli(['plan', '--token', token], { env: { ORGFORM_TOKEN: undefined } });
    expect(onArgv.stderr).toContain('Refusing --token');
    const stranger = await startEmulator({ slugDelayMs: 0 });
    try {
      const denied = await world.cli(['plan'], { env: { ORGFORM_BASE_URL: stranger.url } });
      expect(denied.stderr).toContain('HTTP 401');
    } finally {
      await stranger.stop();
    }
    // The built CLI, through the same failures.
    world.emulator.faults.add({ operation: 'getOrganisations', fault: { kind: 'status', status: 400, body: JSON.stringify({ code: 'x', message: echo }) } });
    const spawned = await world.spawn(['plan']);
    expect(spawned.code).toBe(1);
    expect(spawned.stderr).toContain('[REDACTED]');

    // Errors as objects, straight from the client.
    const client = createClient({ baseUrl: world.emulator.url, token, retryPolicy: { maxAttempts: 1 } });
    clients.push(client);
    world.emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'status', status: 500, body: JSON.stringify({ code: 'internal', message: echo, cause: echo }) } });
    world.emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'redirect', status: 302, location: `http://127.0.0.1:1/?t=${token}` } });
    world.emulator.faults.add({ operation: 'getOrganisation', fault: { kind: 'drop' } });
    for (let i = 0; i < 3; i += 1) leaks.addError(`client error ${i}`, await client.getOrganisation('org_acme').catch((e: unknown) => e));

    // Every file orgform wrote: the journal, saved plans, any lock or temp file (not our token file).
    await leaks.addTree(world.cwd, [join(world.cwd, 'token.txt')]);
    expect(leaks.size).toBeGreaterThan(25);
    leaks.expectClean();
    // And the scan would have seen it: the token file holds it.
    leaks.add('control', token);
    expect(() => leaks.expectClean()).toThrow();
  });

  it('case 16: identifiers ".", "..", empty and 10 KB long are rejected before any request, by every operation', async () => {
    const world = await startWorld();
    const client = createClient({ baseUrl: world.emulator.url, token: world.token });
    clients.push(client);
    for (const bad of ['', '.', '..', 'x'.repeat(10 * 1024)]) {
      const calls: Array<() => Promise<unknown>> = [
        () => client.getOrganisation(bad),
        () => client.setActiveOrganisation(bad),
        () => client.updateBillingDetails(bad, { billingEmail: 'a@b.example' }),
        () => client.getSlugAvailability(bad),
        () => client.acceptInvitation(bad, 'inv_globex_ada'),
        () => client.acceptInvitation('org_globex', bad),
        () => client.deleteInvitation(bad, 'inv_acme_carol'),
        () => client.deleteInvitation('org_acme', bad),
        () => client.deleteNotificationChannel(bad, 'chn_acme_slack'),
        () => client.deleteNotificationChannel('org_acme', bad),
      ];
      for (const call of calls) await expect(call()).rejects.toMatchObject({ code: 'UNSAFE_INPUT' });
    }
    expect(world.emulator.counters.total).toBe(0);

    // From a configuration file: refused by validation, FILE:LINE:COL, before any request.
    for (const [id, line] of [['"."', 4], ['".."', 4], ['""', 4], [`"${'x'.repeat(10 * 1024)}"`, 4]] as const) {
      await writeFile(join(world.cwd, 'orgs.yaml'), `version: 1\norganisations:\n  acme:\n    id: ${id}\n`);
      const plan = await world.cli(['plan']);
      expect(plan.code).toBe(1);
      expect(plan.stderr).toMatch(new RegExp(`^  orgs\\.yaml:${line}:\\d+: `, 'm'));
    }
    expect(world.emulator.counters.total).toBe(0);
    world.leaks.expectClean();
  });

  it.each(['a/b', 'a?x', 'a#b', '%2e%2e', 'a b', 'ü/..'])('case 16: the identifier %j is delivered as exactly one path segment', async (id) => {
    const world = await startWorld({ config: `version: 1\norganisations:\n  acme:\n    invitations:\n      revoke: [${JSON.stringify(id)}]\n    notificationChannels:\n      remove: [${JSON.stringify(id)}]\n` });
    const result = await world.cli(['apply', '--auto-approve']);
    expect(result.stderr).toBe('');
    const deletes = world.emulator.requestLog.filter((r) => r.method === 'DELETE');
    // The revocation and the channel removal run at once (one organisation's deletes), in either order.
    expect(deletes.map((r) => r.path.split('/').length).sort()).toEqual([7, 8]);
    for (const request of deletes) expect(decodeURIComponent(request.path.split('/').at(-1)!)).toBe(id);
    // The service saw unknown identifiers (404) in a readable organisation: nothing else was touched.
    expect(deletes.map((r) => r.status)).toEqual([404, 404]);
    expect(world.emulator.store.dump().invitations).toHaveLength(4);
    expect(world.emulator.store.dump().channels).toHaveLength(4);

    const client = createClient({ baseUrl: world.emulator.url, token: world.token });
    clients.push(client);
    await expect(client.getOrganisation(id)).rejects.toMatchObject({ status: 404 });
    const read = world.emulator.requestLog.at(-1)!.path;
    expect(read.startsWith(`${ORG_API}/organisations/`)).toBe(true);
    expect(decodeURIComponent(read.slice(`${ORG_API}/organisations/`.length))).toBe(id);
    world.leaks.expectClean();
  });

  it('case 26: a listing whose `next` link points to another origin is refused, and that origin receives nothing', async () => {
    const world = await startWorld({ config: 'version: 1\norganisations:\n  acme: {}\n' });
    const other = await startEmulator({ slugDelayMs: 0 });
    try {
      for (const next of [`${other.url}${ORG_API}/organisations?cursor=abc`, `//127.0.0.1:${new URL(other.url).port}${ORG_API}/organisations?cursor=abc`]) {
        world.emulator.faults.add({
          operation: 'getOrganisations',
          fault: { kind: 'status', status: 200, contentType: 'application/json', body: JSON.stringify({ organisations: [{ id: 'org_x', slug: 'x' }], next }) },
        });
        const plan = await world.cli(['plan']);
        expect(plan.code).toBe(1);
        expect(plan.stderr).toContain(`the "next" link points to another origin (${other.url})`);
      }
      expect(other.counters.total).toBe(0);
    } finally {
      await other.stop();
    }
    world.leaks.expectClean();
  });

  it('case 27: a token holding a line break (header injection) is refused before any request, without being shown', async () => {
    const world = await startWorld({ config: 'version: 1\norganisations:\n  acme: {}\n' });
    for (const bad of [`${world.token}\r\nX-Injected: 1`, `${world.token}\n`, `${world.token}\u0000`]) {
      const result = await world.cli(['plan'], { env: { ORGFORM_TOKEN: bad } });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/ORGFORM_TOKEN holds a control character \(U\+000[AD0], at position \d+\): refused before it is used/);
    }
    expect(world.emulator.counters.total).toBe(0);
    world.leaks.expectClean();
  });

  it('case 27b: a token holding a character a header cannot carry (an escape sequence, one beyond Latin-1) is refused before any request, by where it is, not as a failed connection', async () => {
    const world = await startWorld({ config: 'version: 1\norganisations:\n  acme: {}\n' });
    for (const [bad, message] of [
      [`${world.token}\u001b[0m`, 'ORGFORM_TOKEN holds a control character (U+001B'],
      [`${world.token}\u20ac`, 'The token holds a character an HTTP header cannot carry (U+20AC'],
      [`${world.token}\u007f`, 'ORGFORM_TOKEN holds a control character (U+007F'],
    ] as const) {
      const result = await world.cli(['plan'], { env: { ORGFORM_TOKEN: bad } });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(message);
      expect(result.stderr).not.toContain('connection');
    }
    expect(world.emulator.counters.total).toBe(0);
    world.leaks.expectClean();
  });
});

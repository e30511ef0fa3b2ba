/**
 * What the service, the state's server and the pipeline's own settings can make orgform say: a
 * hostile answer (a redirect to a signed address, an error that echoes the token), a state address
 * that holds a signature or a password, an option given from the Action's inputs, a credential with
 * a line break in it. Every address is shown redacted, and no credential is echoed.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { afterEachTest } from '../support/after-each-test.js';
import { createTestDatabase } from '../support/postgres.js';
import { GITLAB_REPORTS, startHostileWorld } from './hostile-world.js';

const ORGS = 'version: 1\norganisations:\n  acme:\n    billing:\n      customerID: cus_acme_2\n  globex:\n    id: org_globex\n    invitations:\n      accept: [inv_globex_ada]\n';

const servers: Server[] = [];
afterEachTest(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A state server that answers everything with a redirect to `location`, as a misconfigured GitLab may. */
async function startRedirectingServer(location: string): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(307, { location });
    res.end();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/api/v4/projects/7/terraform/state/orgform`;
}

describe('a hostile service', () => {
  it('gets no credential echoed, and no query value of where it redirects shown, in any output', async () => {
    const world = await startHostileWorld({ files: { 'orgs.yaml': ORGS } });
    const signature = `svc-canary-${randomBytes(6).toString('hex')}`;
    world.watch('SERVICE_SIGNATURE', signature);
    const token = world.canaries.ORGFORM_TOKEN!;
    const echo = `token ${token}; see https://ada:${signature}@files.example/x?X-Amz-Signature=${signature}&code=${signature}`;
    const faults = world.emulator.faults;
    for (let i = 0; i < 4; i++) {
      faults.add({ operation: 'getOrganisations', fault: { kind: 'redirect', status: 307, location: `https://evil.example/collect?X-Amz-Signature=${signature}&private_token=${signature}&t=${token}#access_token=${signature}` } });
      faults.add({ operation: 'getOrganisations', fault: { kind: 'status', status: 400, body: JSON.stringify({ code: `bad_${token}`, message: echo, cause: echo }) } });
    }
    for (const args of [['plan'], ['plan', '--format', 'json'], ['plan', '--format', 'markdown', '--out', 'plan.bin', ...GITLAB_REPORTS], ['plan']]) {
      const result = await world.run(args);
      expect(result.code).toBe(1);
    }
    const redirected = await world.run(['plan']);
    expect(redirected.stderr).toContain('the service answered with a redirect to https://evil.example/collect?X-Amz-Signature=[REDACTED]&private_token=[REDACTED]&t=[REDACTED]');
    await world.expectNoCanary();
  });

  it('gets no credential out by echoing it into its data: such an answer is refused whole, never shown or saved', async () => {
    const world = await startHostileWorld({ files: { 'orgs.yaml': ORGS } });
    const token = world.canaries.ORGFORM_TOKEN!;
    // The listing (the billing of acme) and a read by id (globex) each hold the token.
    world.emulator.store.changeBilling('org_acme', { customerId: `cus_${token}` });
    world.emulator.store.changeBilling('org_globex', { billingEmail: `${encodeURIComponent(token)}@globex.example` });
    for (const args of [['plan'], ['plan', '--format', 'json'], ['plan', '--format', 'markdown', '--detailed-exitcode', '--out', 'plan.bin', ...GITLAB_REPORTS], ['export'], ['apply', '--auto-approve']]) {
      const result = await world.run(args);
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stderr + result.stdout).toContain('the answer holds the credential orgform sent with the request');
    }
    await world.expectNoCanary();
  });
});

describe("the state's address and server", () => {
  it('show no signature, password or token: in the address, in a redirect the server answers, in a failure to reach it', async () => {
    const world = await startHostileWorld({ files: { 'orgs.yaml': ORGS } });
    const { canaries } = world;
    // GitLab answering with a redirect that carries a token (the private_token=glpat-…).
    const redirecting = await startRedirectingServer(`https://gitlab.example/api/v4/projects/7/terraform/state/orgform?private_token=${canaries.GITLAB_API_TOKEN}`);
    const plan = await world.run(['plan'], { ORGFORM_STATE: `${redirecting}?sig=${canaries.ORGFORM_STATE}` });
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain('with a redirect to https://gitlab.example/api/v4/projects/7/terraform/state/orgform?private_token=[REDACTED]');
    expect(plan.stderr).toContain('/terraform/state/orgform?sig=[REDACTED]');
    // Nothing listening: the address is named, redacted (a signed one, a postgres one with a password).
    for (const state of [`http://127.0.0.1:1/state?sig=${canaries.ORGFORM_STATE}&sv=1`, `postgres://orgform:${canaries.STATE_DB_PASSWORD}@127.0.0.1:1/ops?sslmode=disable&state=prod`]) {
      const failed = await world.run(['plan', '--format', 'markdown'], { ORGFORM_STATE: state, ORGFORM_STATE_TIMEOUT_MS: '2000' });
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(/(\?sig=\[REDACTED\]&sv=\[REDACTED\]|postgres:\/\/\[REDACTED\]@127\.0\.0\.1:1\/ops\?sslmode=disable&state=prod)/);
    }
    await world.expectNoCanary();
  });

  it('reached with a password in its address, plans, and shows the address without it', async () => {
    const world = await startHostileWorld({ state: 'file', files: { 'orgs.yaml': ORGS } });
    const database = new URL(await createTestDatabase('security'));
    database.password = world.canaries.STATE_DB_PASSWORD!;
    database.searchParams.set('state', 'pr-7');
    const env = { ORGFORM_STATE: database.toString() };
    expect((await world.run(['plan', '--format', 'markdown', '--out', 'plan.bin'], env)).code).toBe(0);
    const list = await world.run(['state', 'list'], env);
    expect(list.code).toBe(0);
    expect((await world.run(['state', 'list', '--state', `${database.toString()}&schema=Bad-Name`])).stderr).toContain('[REDACTED]@127.0.0.1');
    await world.expectNoCanary();
  });
});

describe('the pipeline settings a pull request cannot change, but that may be wrong', () => {
  it('refuse a credential with a control character before it is used, naming the variable, never the value', async () => {
    const world = await startHostileWorld({ files: { 'orgs.yaml': ORGS } });
    const { canaries, env } = world;
    const cases: Array<[Record<string, string>, string]> = [
      [{ ORGFORM_TOKEN: `${canaries.ORGFORM_TOKEN}\r\nX-Injected: 1` }, 'ORGFORM_TOKEN holds a control character (U+000D'],
      [{ ORGFORM_STATE_PASSWORD: `${canaries.ORGFORM_STATE_PASSWORD}\r` }, 'ORGFORM_STATE_PASSWORD holds a control character (U+000D'],
      [{ ORGFORM_PLAN_KEY: `${env.ORGFORM_PLAN_KEY}\n` }, 'ORGFORM_PLAN_KEY holds a control character (U+000A'],
    ];
    for (const [more, message] of cases) {
      const result = await world.run(['plan', '--out', 'plan.bin'], more);
      expect(result.code, message).toBe(1);
      expect(result.stderr).toContain(message);
    }
    await world.expectNoCanary();
  });

  it("echo no credential or signature given in an option's value (the Action's inputs): base URL, state, files", async () => {
    const world = await startHostileWorld({ files: { 'orgs.yaml': ORGS } });
    const secret = world.canaries.GITHUB_TOKEN!;
    for (const baseUrl of [`https://x-access-token:${secret}@api.example`, `https://api.example/?sig=${secret}`, `https ://api.example/?sig=${secret}`, `https://api.example/api/organisations/v1/organisations?sig=${secret}`]) {
      const result = await world.run(['plan', '--base-url', baseUrl]);
      expect(result.code, baseUrl).toBe(1);
    }
    for (const state of [`https://state.example/s?sig=${secret}#frag`, `s3://user:${secret}@bucket/state`, `postgres://ada:${secret}@db/ops?schema=Bad-Name`]) {
      const result = await world.run(['plan', '--state', state]);
      expect(result.code, state).toBe(1);
    }
    expect(world.emulator.counters.total).toBe(0);
    await world.expectNoCanary();
  });
});

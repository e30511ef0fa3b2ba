/**
 * The rules every HTTP client of orgform keeps, played as one table through the three of them: the
 * transport (the service's requests), the Terraform HTTP state (on the transport) and the pipeline
 * scripts' forge API (plain Node fetch, no dependencies: they share these rules, not code). A
 * redirect is never followed, and is named without the secrets its address may carry; a failure to
 * reach an address names none of the secrets in it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestJson } from '../../pipeline/forge-api.mjs';
import { Redactor } from '../../src/redact.js';
import { DEFAULT_STATE_SETTINGS } from '../../src/state/state-settings.js';
import { TerraformHttpState } from '../../src/state/http/terraform-http-state.js';
import { DEFAULT_RETRY_POLICY } from '../../src/transport/retry-policy.js';
import { Transport } from '../../src/transport/transport.js';
import { parseStateSpec } from '../../src/state/parse-state-spec.js';
import { NO_INTEREST } from '../../src/state/journal-index.js';
import { rejection } from '../support/rejection.js';

const SECRET = 'canary-rule-5ecret-7d3f';

/** A client, asked for `url`: the error it fails with. */
type Client = (url: string) => Promise<Error>;

const transport: Client = async (url) => {
  const client = new Transport({ retry: { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 }, maxResponseBytes: 1 << 20, redactor: new Redactor(), peer: { name: 'the service', address: 'the base URL' } });
  try {
    return await rejection(client.send({ method: 'GET', url: new URL(url), headers: { authorization: 'Bearer t0ken-for-the-rules' }, operation: 'getOrganisations', target: '(all pages)', what: 'the listing' }));
  } finally {
    await client.close();
  }
};

const httpState: Client = async (url) => {
  const spec = parseStateSpec(url, '/');
  if (spec.kind !== 'http') throw new Error('not an http spec');
  const settings = { ...DEFAULT_STATE_SETTINGS, timeoutMs: 2_000, http: { username: 'gitlab-ci-token', password: 'job-token-of-the-rules' } };
  const state = new TerraformHttpState(spec, { settings, describe: () => ({ command: 'plan', pid: 1, host: 'h', who: 'u', startedAt: '' }), network: {} });
  return rejection(state.readIndex(NO_INTEREST));
};

const forgeApi: Client = async (url) => {
  try {
    await requestJson('GET notes', url, { headers: { 'private-token': 'glpat-of-the-rules' } });
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
};

const CLIENTS: ReadonlyArray<[string, Client]> = [
  ['the transport', transport],
  ['the Terraform HTTP state', httpState],
  ['the pipeline scripts (forge-api.mjs)', forgeApi],
];

let redirecting: Server;
let elsewhere: Server;
let arrivals = 0;
let status = 307;
let location = '';
const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

beforeAll(async () => {
  elsewhere = createServer((_req, res) => {
    arrivals += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
  });
  redirecting = createServer((_req, res) => res.writeHead(status, { location }).end());
  await Promise.all([elsewhere, redirecting].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))));
});

afterAll(async () => {
  await Promise.all([elsewhere, redirecting].map((s) => new Promise((resolve) => s.close(resolve))));
});

describe.each(CLIENTS)('%s', (_name, client) => {
  it.each([301, 302, 303, 307, 308])('follows no %i redirect, and names where it points without the secrets the address carries', async (answer) => {
    status = answer;
    location = `${urlOf(elsewhere).replace('//', `//ci:${SECRET}@`)}/api/v4/projects/7/terraform/state?private_token=${SECRET}&X-Amz-Signature=${SECRET}#access_token=${SECRET}`;
    arrivals = 0;
    const err = await client(`${urlOf(redirecting)}/api/v4/projects/7/terraform/state/orgform`);
    expect(err.message).toMatch(/redirect/);
    expect(err.message).toContain(`${urlOf(elsewhere).slice('http://'.length)}/api/v4/projects/7/terraform/state?private_token=`);
    expect(err.message).not.toContain(SECRET);
    expect(arrivals).toBe(0);
  });

  it('names a redirect to a path on the same server, without the secrets in its query', async () => {
    status = 302;
    location = `/login?next=%2Fstate&token=${SECRET}`;
    const err = await client(`${urlOf(redirecting)}/state`);
    expect(err.message).toMatch(/redirect/);
    expect(err.message).toContain('/login?next=');
    expect(err.message).not.toContain(SECRET);
  });

  it('names none of the secrets of an address it cannot reach', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `${urlOf(closed)}/state?sig=${SECRET}&sv=1`;
    await new Promise((resolve) => closed.close(resolve));
    const err = await client(url);
    expect(err.message).toMatch(/refused/i);
    expect(err.message).not.toContain(SECRET);
  });
});

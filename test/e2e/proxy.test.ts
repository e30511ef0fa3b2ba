/**
 * Networks as they are: orgform behind a real forward proxy on 127.0.0.1, the emulator behind it,
 * over plain HTTP and over HTTPS with a private certificate authority, NO_PROXY, and the proxy's
 * credentials never shown.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TransportError } from '../../src/api/api-error.js';
import { createClient } from '../../src/api/client.js';
import { readProxySettings } from '../../src/transport/proxy-settings.js';
import { startProxy, type TestProxy } from '../support/http-proxy.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { runCli, spawnCli } from '../support/run-cli.js';
import { makeCertificates, startTlsTerminator, type TlsTerminator } from '../support/tls-terminator.js';
import { startTerraformBackend, type TerraformBackend } from '../support/terraform-http-backend.mjs';
import { CHANGING_CONFIG, makeWorkspace } from '../support/workspace.js';

const running: Array<TestProxy | TlsTerminator | TerraformBackend> = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function proxy(options: Parameters<typeof startProxy>[0] = {}) {
  const started = await startProxy(options);
  running.push(started);
  return started;
}

const SECRET = 'pr0xy-s3cret';

describe('orgform behind a proxy', () => {
  it('sends every request of plan through HTTP_PROXY, with the proxy credentials from its URL', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const p = await proxy({ credentials: `alice:${SECRET}` });
    const result = await runCli(['plan', '--detailed-exitcode'], { cwd, env: { ...env, HTTP_PROXY: `http://alice:${SECRET}@127.0.0.1:${p.port}` } });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(2);
    const host = new URL(emulator.url).host;
    expect(p.log.length).toBeGreaterThan(0);
    expect(p.log.every((line) => line === `CONNECT ${host}`)).toBe(true);
    expect(p.credentialsSeen).toContain(`alice:${SECRET}`);
  });

  it("keeps the client's retries and timeouts for proxied requests: a 503 is retried, a silent answer times out", async () => {
    const { emulator } = await setupEmulatorWorkspace();
    const p = await proxy();
    const client = createClient({
      baseUrl: emulator.url,
      token: 'demo-token',
      proxy: readProxySettings({ HTTP_PROXY: p.url })!,
      retryPolicy: { baseDelayMs: 5, maxDelayMs: 20, maxAttempts: 3 },
      timeouts: { headersMs: 300, totalMs: 5_000 },
    });
    try {
      emulator.faults.add({ operation: 'getOrganisations', times: 2, fault: { kind: 'status', status: 503 } });
      const slugs: string[] = [];
      for await (const org of client.listOrganisations()) slugs.push(org.slug);
      expect(slugs).toContain('acme');
      expect(emulator.counters.byOperation.getOrganisations).toBe(3);
      expect(p.log.length).toBeGreaterThan(0);

      emulator.faults.add({ operation: 'getOrganisation', times: Infinity, fault: { kind: 'hang' } });
      const failure = await client.getOrganisation('org_acme').catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(TransportError);
      expect((failure as TransportError).failure).toBe('timeout');
      expect((failure as TransportError).attempts).toBe(3);
    } finally {
      await client.close();
    }
  });

  it('gives up on a proxy that never answers its CONNECT within the connect timeout, and closes without waiting for it', async () => {
    const { emulator } = await setupEmulatorWorkspace();
    const p = await proxy({ stall: true });
    const client = createClient({
      baseUrl: emulator.url,
      token: 'demo-token',
      proxy: readProxySettings({ HTTP_PROXY: p.url })!,
      retryPolicy: { baseDelayMs: 5, maxDelayMs: 20, maxAttempts: 2 },
      timeouts: { connectMs: 300, headersMs: 300, totalMs: 60_000 },
    });
    try {
      const failure = await client.getOrganisation('org_acme').catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(TransportError);
      expect((failure as TransportError).attempts).toBe(2);
      expect(p.log).toEqual([`CONNECT ${new URL(emulator.url).host}`, `CONNECT ${new URL(emulator.url).host}`]);
      expect(emulator.requestLog).toHaveLength(0);
    } finally {
      // undici's own proxy client waits 300 s for a CONNECT's answer, and close() waited for it.
      await client.close();
    }
  }, 20_000);

  it('reaches a Terraform HTTP state backend through the proxy too', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const backend = await startTerraformBackend({ users: { ci: 'job-token-123' } });
    running.push(backend);
    const p = await proxy();
    const state = { ORGFORM_STATE: `${backend.url}/api/v4/projects/42/terraform/state/orgform`, ORGFORM_STATE_USERNAME: 'ci', ORGFORM_STATE_PASSWORD: 'job-token-123' };
    const result = await runCli(['apply', '--auto-approve'], { cwd, env: { ...env, ...state, http_proxy: p.url } });
    expect(result.code).toBe(0);
    expect(new Set(p.log)).toEqual(new Set([`CONNECT ${new URL(emulator.url).host}`, `CONNECT ${new URL(backend.url).host}`]));
  });

  it('takes the lower-case spelling over the upper-case one, as undici and curl do', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const p = await proxy();
    const result = await runCli(['plan'], { cwd, env: { ...env, http_proxy: p.url, HTTP_PROXY: 'http://127.0.0.1:9' } });
    expect(result.code).toBe(0);
    expect(p.log.length).toBeGreaterThan(0);
  });

  it('goes straight to a host listed in NO_PROXY, and through the proxy to one not listed', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const p = await proxy();
    const listed = await runCli(['plan'], { cwd, env: { ...env, HTTP_PROXY: p.url, NO_PROXY: 'example.com, 127.0.0.1' } });
    expect(listed.code).toBe(0);
    expect(p.log).toEqual([]);
    const other = await runCli(['plan'], { cwd, env: { ...env, HTTP_PROXY: p.url, NO_PROXY: 'example.com,localhost' } });
    expect(other.code).toBe(0);
    expect(p.log.length).toBeGreaterThan(0);
  });

  it('goes straight to an IPv6 address listed bare in NO_PROXY (::1, as curl and most defaults write it), not only [::1]', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG }, { host: '::1' });
    expect(emulator.url).toMatch(/^http:\/\/\[::1\]:/);
    const p = await proxy();
    for (const noProxy of ['localhost,127.0.0.1,::1', '[::1]']) {
      const result = await runCli(['plan'], { cwd, env: { ...env, HTTP_PROXY: p.url, NO_PROXY: noProxy } });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    }
    expect(p.log).toEqual([]);
  });

  it('names the proxy, redacted, when it asks for credentials, and never shows them', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const p = await proxy({ credentials: 'alice:the-right-one' });
    const result = await runCli(['plan'], { cwd, env: { ...env, HTTP_PROXY: `http://alice:${SECRET}@127.0.0.1:${p.port}` } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`the proxy http://[REDACTED]@127.0.0.1:${p.port} (from HTTP_PROXY) asks for credentials (HTTP 407)`);
    expect(result.stderr + result.stdout).not.toContain(SECRET);
    expect(result.stderr).not.toContain('alice');
    expect(emulator.requestLog).toHaveLength(0);
  });

  it('says the proxy refused the service, naming both', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const p = await proxy({ refuseWith: 403 });
    const result = await runCli(['plan'], { cwd, env: { ...env, http_proxy: p.url } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`the proxy ${p.url} (from http_proxy) refused to connect to ${new URL(emulator.url).host} (HTTP 403)`);
  });

  it('says the proxy cannot be reached, not the service, when nothing listens there', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const p = await proxy();
    await p.close();
    const result = await runCli(['plan'], { cwd, env: { ...env, ORGFORM_MAX_ATTEMPTS: '1', HTTP_PROXY: `http://bob:${SECRET}@127.0.0.1:${p.port}` } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`could not reach the proxy http://[REDACTED]@127.0.0.1:${p.port} (from HTTP_PROXY): the connection was refused`);
    expect(result.stderr).not.toContain(SECRET);
  });

  it('refuses a proxy variable that is not a URL before sending anything, without echoing credentials', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const result = await runCli(['plan'], { cwd, env: { ...env, HTTPS_PROXY: `bob:${SECRET}@proxy.corp:3128` } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('HTTPS_PROXY must be the URL of an HTTP proxy, such as http://proxy.example.com:3128 (got "[REDACTED]")');
    expect(result.stderr).not.toContain(SECRET);
    expect(emulator.requestLog).toHaveLength(0);
  });
});

describe('HTTPS with a private certificate authority', () => {
  async function https(options: { selfSigned?: boolean } = {}) {
    const world = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const certificates = makeCertificates(await makeWorkspace(), options);
    const tls = await startTlsTerminator(Number(new URL(world.emulator.url).port), certificates);
    running.push(tls);
    return { ...world, tls, caFile: certificates.caFile, env: { ...world.env, ORGFORM_BASE_URL: tls.url, ORGFORM_MAX_ATTEMPTS: '1' } };
  }

  it('plans and applies through HTTPS_PROXY when NODE_EXTRA_CA_CERTS names the authority', async () => {
    const { cwd, env, tls, caFile, emulator } = await https();
    const p = await proxy();
    const withProxy = { ...env, HTTPS_PROXY: p.url, NODE_EXTRA_CA_CERTS: caFile };
    const plan = await spawnCli(['plan', '--detailed-exitcode'], { cwd, env: withProxy });
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(2);
    const apply = await spawnCli(['apply', '--auto-approve'], { cwd, env: withProxy });
    expect(apply.code).toBe(0);
    expect(emulator.counters.writes).toBeGreaterThan(0);
    expect(new Set(p.log)).toEqual(new Set([`CONNECT ${new URL(tls.url).host}`]));
  });

  it('goes through a proxy that is itself https://, its certificate from the same private authority', async () => {
    const world = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const certificates = makeCertificates(await makeWorkspace());
    const service = await startTlsTerminator(Number(new URL(world.emulator.url).port), certificates);
    const p = await proxy({ credentials: `alice:${SECRET}` });
    const secureProxy = await startTlsTerminator(p.port, certificates);
    running.push(service, secureProxy);
    const proxyUrl = new URL(secureProxy.url);
    const env = { ...world.env, ORGFORM_BASE_URL: service.url, HTTPS_PROXY: `https://alice:${SECRET}@${proxyUrl.host}`, NODE_EXTRA_CA_CERTS: certificates.caFile };
    const plan = await spawnCli(['plan', '--detailed-exitcode'], { cwd: world.cwd, env });
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(2);
    expect(new Set(p.log)).toEqual(new Set([`CONNECT ${new URL(service.url).host}`]));
    expect(p.credentialsSeen).toContain(`alice:${SECRET}`);
  });

  it('names NODE_EXTRA_CA_CERTS when the authority is unknown (UNABLE_TO_VERIFY_LEAF_SIGNATURE)', async () => {
    const { cwd, env } = await https();
    const result = await runCli(['plan'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('is signed by a certificate authority this machine does not trust (UNABLE_TO_VERIFY_LEAF_SIGNATURE)');
    expect(result.stderr).toContain('set NODE_EXTRA_CA_CERTS=/path/to/ca.pem');
  });

  it('names NODE_EXTRA_CA_CERTS for a self-signed certificate, through the proxy too (DEPTH_ZERO_SELF_SIGNED_CERT)', async () => {
    const { cwd, env } = await https({ selfSigned: true });
    const p = await proxy();
    const result = await runCli(['plan'], { cwd, env: { ...env, HTTPS_PROXY: p.url } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the certificate of localhost is self-signed (DEPTH_ZERO_SELF_SIGNED_CERT)');
    expect(result.stderr).toContain('NODE_EXTRA_CA_CERTS');
    expect(p.log.length).toBeGreaterThan(0);
  });

  it('says when NODE_EXTRA_CA_CERTS is set but holds another authority', async () => {
    const { cwd, env } = await https();
    const other = makeCertificates(await makeWorkspace());
    const result = await spawnCli(['plan'], { cwd, env: { ...env, NODE_EXTRA_CA_CERTS: other.caFile } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`NODE_EXTRA_CA_CERTS is set (${other.caFile}), but no certificate in it signed this one`);
  });
});

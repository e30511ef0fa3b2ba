/**
 * The words for certificate and proxy failures. The real failures are made end to end in
 * test/e2e/proxy.test.ts (a proxy and a TLS server on loopback); here, the codes a test server
 * cannot easily produce (an expired certificate, a host name mismatch) and what is left alone.
 */
import { describe, expect, it } from 'vitest';
import { describeNetworkFailure } from '../../src/transport/describe-failure.js';
import { readProxySettings } from '../../src/transport/proxy-settings.js';

const url = new URL('https://orgs.example.com/api/organisations/v1/organisations');
const fetchFailed = (cause: object) => Object.assign(new TypeError('fetch failed'), { cause });

describe('describeNetworkFailure', () => {
  it.each(['SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'DEPTH_ZERO_SELF_SIGNED_CERT'])('names NODE_EXTRA_CA_CERTS for %s', (code) => {
    expect(describeNetworkFailure(fetchFailed({ code }), { url })?.detail).toMatch(new RegExp(`^the certificate of orgs\\.example\\.com .*\\(${code}\\)\\. .*NODE_EXTRA_CA_CERTS=/path/to/ca\\.pem`));
  });

  it('points at the clock and at NODE_EXTRA_CA_CERTS for an expired certificate', () => {
    const detail = describeNetworkFailure(fetchFailed({ code: 'CERT_HAS_EXPIRED' }), { url, extraCaCerts: '/etc/ca.pem' })?.detail;
    expect(detail).toBe(
      "the certificate of orgs.example.com, or of an authority above it, has expired (CERT_HAS_EXPIRED): check this machine's clock; when the authority is your own and NODE_EXTRA_CA_CERTS (/etc/ca.pem) holds an out-of-date certificate of it, replace that; otherwise the certificate's owner must renew it",
    );
  });

  it('says a certificate for another host is that, not a trust problem', () => {
    expect(describeNetworkFailure(fetchFailed({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' }), { url })?.detail).toMatch(/not for orgs\.example\.com .*check the base URL/);
  });

  it('finds a certificate code under a proxy’s wrapping error', () => {
    const wrapped = fetchFailed({ code: 'UND_ERR_PRX_TLS', cause: { code: 'ERR_TLS_CERT_ALTNAME_INVALID' } });
    expect(describeNetworkFailure(wrapped, { url })?.detail).toContain('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('names the proxy when its host name cannot be resolved, and not when the service’s cannot', () => {
    const proxy = readProxySettings({ HTTPS_PROXY: 'http://u:secret-pass@proxy.corp:3128' })!;
    expect(describeNetworkFailure(fetchFailed({ code: 'ENOTFOUND', hostname: 'proxy.corp' }), { url, proxy })?.detail).toBe(
      "could not reach the proxy http://[REDACTED]@proxy.corp:3128 (from HTTPS_PROXY): the proxy's host name could not be resolved",
    );
    expect(describeNetworkFailure(fetchFailed({ code: 'ENOTFOUND', hostname: 'orgs.example.com' }), { url, proxy })).toBeUndefined();
  });

  it('leaves other failures to the caller', () => {
    expect(describeNetworkFailure(fetchFailed({ code: 'ECONNRESET' }), { url })).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { proxyForScheme, proxySecrets, readProxySettings } from '../../src/transport/proxy-settings.js';

describe('readProxySettings', () => {
  it('names no proxy when the environment names none', () => {
    expect(readProxySettings({ NO_PROXY: 'localhost' })).toBeUndefined();
    expect(readProxySettings({ HTTPS_PROXY: '' })).toBeUndefined();
  });

  it('takes the lower-case spelling first, even set empty, as undici does', () => {
    expect(readProxySettings({ https_proxy: 'http://a:3128', HTTPS_PROXY: 'http://b:3128' })?.https?.variable).toBe('https_proxy');
    expect(readProxySettings({ http_proxy: '', HTTP_PROXY: 'http://b:3128', HTTPS_PROXY: 'http://c:1' })?.http).toBeUndefined();
    expect(readProxySettings({ HTTP_PROXY: 'http://b:3128', no_proxy: 'x', NO_PROXY: 'y' })?.noProxy).toBe('x');
  });

  it('shows a proxy without its credentials, and keeps them, decoded and as Basic, for redaction', () => {
    const settings = readProxySettings({ HTTPS_PROXY: 'http://alice:p%40ss-word@proxy.corp:3128' })!;
    expect(settings.https).toMatchObject({ display: 'http://[REDACTED]@proxy.corp:3128', variable: 'HTTPS_PROXY', hostname: 'proxy.corp', port: 3128 });
    expect(proxySecrets(settings)).toEqual(expect.arrayContaining(['alice', 'p%40ss-word', 'p@ss-word', Buffer.from('alice:p@ss-word').toString('base64')]));
  });

  it('uses HTTP_PROXY for https:// too when HTTPS_PROXY is unset, and only HTTPS_PROXY for https:// otherwise', () => {
    const onlyHttp = readProxySettings({ HTTP_PROXY: 'http://p:1' })!;
    expect(proxyForScheme(onlyHttp, new URL('https://x'))?.variable).toBe('HTTP_PROXY');
    const onlyHttps = readProxySettings({ HTTPS_PROXY: 'http://p:1' })!;
    expect(proxyForScheme(onlyHttps, new URL('http://127.0.0.1:4010'))).toBeUndefined();
  });

  it.each(['proxy.corp:3128', 'socks5://proxy.corp:1080', 'http://'])('refuses %s, naming the variable', (value) => {
    expect(() => readProxySettings({ HTTPS_PROXY: value })).toThrow(/^HTTPS_PROXY must be the URL of an HTTP proxy/);
  });

  it('refuses a proxy URL with a path, as a password with an unencoded / makes one, without showing any of it', () => {
    // http://alice:4321/s3cret@proxy reads as host alice, port 4321, path /s3cret@proxy: undici throws "invalid url".
    for (const value of ['http://alice:4321/s3cret@proxy.corp:3128', 'http://proxy.corp:3128/path', 'http://proxy.corp:3128/?a=b']) {
      let message = '';
      try {
        readProxySettings({ HTTPS_PROXY: value });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/^HTTPS_PROXY must be the URL of an HTTP proxy.*percent-encode/);
      expect(message).not.toContain('s3cret');
      expect(message).not.toContain('4321');
    }
    expect(readProxySettings({ HTTPS_PROXY: 'http://alice:4321%2Fs3cret@proxy.corp:3128/' })!.https!.display).toBe('http://[REDACTED]@proxy.corp:3128');
  });
});

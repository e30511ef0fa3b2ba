import { OrgformError } from '../errors.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * Checks a base URL before any request: https, or http on loopback only (a token sent in clear
 * over a network can be read by anyone on the path). No credentials, query or fragment.
 * Returns it without a trailing slash.
 */
export function parseBaseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OrgformError('USAGE', `The base URL "${raw}" is not a URL. Pass e.g. --base-url https://api.example.com`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new OrgformError('USAGE', `The base URL must use https:// (got ${url.protocol}//).`);
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new OrgformError(
      'USAGE',
      `Refusing plain http:// to ${url.hostname}: the token would travel unencrypted. Use https://, or http:// only for a loopback address such as 127.0.0.1.`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new OrgformError('USAGE', 'The base URL must not carry a user name or password; pass the token with ORGFORM_TOKEN or --token-file.');
  }
  if (url.search !== '' || url.hash !== '') {
    throw new OrgformError('USAGE', 'The base URL must not have a query string or fragment.');
  }
  url.pathname = url.pathname.replace(/\/+$/, '');
  return url;
}

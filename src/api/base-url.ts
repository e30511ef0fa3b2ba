import { OrgformError } from '../errors.js';
import { redactAddress } from '../redact.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** The roots the client appends to the base URL (the interface's `{org_api}` and `{v2_api}`). */
const API_ROOTS = ['/api/organisations/v1', '/api/v2'];

/**
 * Checks a base URL before any request: https, or http on loopback only (a token sent in clear
 * over a network can be read by anyone on the path). No credentials, query or fragment.
 * Returns it without a trailing slash, and without an API root it ends in: people copy the URL
 * of the API (`…/api/organisations/v1`) from the service's documentation, and the client would
 * add that root again and get a 404 on a doubled path. The same service, so the same base URL:
 * state and saved plans name the service by it. A URL that goes on below the root (an
 * endpoint's) is refused, naming the base URL to use.
 */
export function parseBaseUrl(raw: string): URL {
  // As messages show it: made once, here.
  const shown = redactAddress(raw);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OrgformError('USAGE', `The base URL "${shown}" is not a URL. Pass e.g. --base-url https://api.example.com`);
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
  for (const root of API_ROOTS) {
    if (url.pathname.endsWith(root)) {
      url.pathname = url.pathname.slice(0, -root.length);
      return url;
    }
    const at = url.pathname.indexOf(`${root}/`);
    if (at >= 0) {
      const base = `${url.origin}${url.pathname.slice(0, at)}`;
      throw new OrgformError(
        'USAGE',
        `The base URL "${shown}" is the address of an endpoint: orgform adds ${root} and the rest itself. Pass the service's base URL: --base-url ${base}`,
      );
    }
  }
  return url;
}

/**
 * The proxies the environment names, read as undici's EnvHttpProxyAgent reads them (the
 * lower-case spelling first, then the upper-case; HTTPS requests use HTTP_PROXY when no
 * HTTPS_PROXY is set; NO_PROXY lists hosts, `.domain` suffixes, `host:port` or `*`), but from the
 * variables cli/settings.ts hands over rather than process.env. The matching itself is left to undici; here the
 * values are checked, so that a mistake is a usage error naming the variable rather than a
 * failure deep in a request, and each proxy gets a redacted name for messages: a proxy URL may
 * carry a user name and password (`http://user:secret@proxy:3128`), which must never be shown.
 */
import { isIPv6 } from 'node:net';
import { OrgformError } from '../errors.js';
import { redactAddress } from '../redact.js';

export interface ProxyUrl {
  /** As given: credentials included. Only the dispatcher sees it. */
  url: string;
  /** Which variable named it: `HTTPS_PROXY`, `http_proxy`, … */
  variable: string;
  /** For messages: `http://[REDACTED]@proxy.example.com:3128`. */
  display: string;
  /** Where the proxy listens, to recognise a failure to reach it. */
  hostname: string;
  port: number;
  /** The user name and password, as given and decoded, for redaction. */
  secrets: string[];
}

/** The proxies and the private certificate authority every request goes through (the service's and a remote state's). */
export interface NetworkSettings {
  proxy?: ProxySettings;
  /** NODE_EXTRA_CA_CERTS, named in the hint of a failed certificate check. */
  extraCaCerts?: string;
}

/** The variables the proxies are read from, in either case (http_proxy, HTTPS_PROXY, no_proxy, …). */
export type ProxyVariables = Readonly<Record<string, string | undefined>>;

export interface ProxySettings {
  http?: ProxyUrl;
  https?: ProxyUrl;
  /** NO_PROXY as given, bare IPv6 addresses bracketed ('' when unset). */
  noProxy: string;
}

function pick(variables: ProxyVariables, lower: string): { variable: string; value: string } | undefined {
  const upper = lower.toUpperCase();
  // undici's rule: a lower-case variable that is set wins, even when empty.
  const variable = variables[lower] !== undefined ? lower : variables[upper] !== undefined ? upper : undefined;
  if (variable === undefined || variables[variable] === '') return undefined;
  return { variable, value: variables[variable]! };
}

/** A proxy URL as every address is shown (redactAddress), without the path `/` that a proxy's URL always has. */
export function displayProxyUrl(url: URL): string {
  return redactAddress(url.href).replace(/\/$/, '');
}

function parseProxy(variable: string, value: string): ProxyUrl {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  // A path, query or fragment: undici refuses the URL ("invalid url"). It is most often a password
  // with an unencoded / ? or # (`http://alice:12/ab@proxy` reads as host alice, port 12).
  const extra = url !== undefined && (url.pathname !== '/' || url.search !== '' || url.hash !== '');
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '' || extra) {
    // The value may be credentials without a scheme (`user:secret@proxy:3128`): never echoed.
    const shown = value.includes('@') && !/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? '[REDACTED]' : redactAddress(value);
    throw new OrgformError(
      'USAGE',
      `${variable} must be the URL of an HTTP proxy, such as http://proxy.example.com:3128 (got ${JSON.stringify(shown)}).` +
        (extra ? ' It has a path; percent-encode any / ? # @ : in the user name or password (%2F %3F %23 %40 %3A).' : ''),
    );
  }
  const secrets = [url.username, url.password, safeDecode(url.username), safeDecode(url.password)].filter((s) => s.length >= 4);
  if (url.username !== '' || url.password !== '') {
    // Sent as Proxy-Authorization: Basic base64(user:password); never echoed either.
    secrets.push(Buffer.from(`${safeDecode(url.username)}:${safeDecode(url.password)}`).toString('base64'));
  }
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { url: url.href, variable, display: displayProxyUrl(url), hostname: url.hostname.replace(/^\[|\]$/g, ''), port, secrets: [...new Set(secrets)] };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * NO_PROXY with each bare IPv6 address in brackets (`::1` → `[::1]`), the one form undici matches:
 * it reads `::1` as host `:` and port 1, so the common `localhost,127.0.0.1,::1` went through the
 * proxy for http://[::1]. Every other entry is left to undici as written.
 */
function bracketBareIpv6(noProxy: string): string {
  return noProxy.replace(/[^,\s]+/g, (entry) => (isIPv6(entry) ? `[${entry}]` : entry));
}

/** The proxies `variables` name, or undefined when they name none (then no proxy agent is made at all). */
export function readProxySettings(variables: ProxyVariables): ProxySettings | undefined {
  const http = pick(variables, 'http_proxy');
  const https = pick(variables, 'https_proxy');
  if (http === undefined && https === undefined) return undefined;
  const noProxy = bracketBareIpv6(variables.no_proxy ?? variables.NO_PROXY ?? '');
  return {
    ...(http === undefined ? {} : { http: parseProxy(http.variable, http.value) }),
    ...(https === undefined ? {} : { https: parseProxy(https.variable, https.value) }),
    noProxy,
  };
}

/** The proxy a request to `target` goes through unless NO_PROXY exempts it: undici's choice by scheme. */
export function proxyForScheme(settings: ProxySettings, target: URL): ProxyUrl | undefined {
  return target.protocol === 'https:' ? (settings.https ?? settings.http) : settings.http;
}

/** Every credential the proxies carry, for redaction. */
export function proxySecrets(settings: ProxySettings | undefined): string[] {
  return settings === undefined ? [] : [...(settings.http?.secrets ?? []), ...(settings.https?.secrets ?? [])];
}

/**
 * Where the bearer token comes from: fixed (ORGFORM_TOKEN, --token-file), or a command run again
 * whenever the token runs out (ORGFORM_TOKEN_COMMAND, --token-command), the way git credential
 * helpers, AWS `credential_process` and kubectl exec plugins work. Running the command is the
 * caller's (src/cli); this decides when, and makes sure that many requests refused at once run it
 * once.
 */
import { readJwtExpiry, type JwtExpiry } from './read-jwt-expiry.js';

export interface TokenSource {
  /** The token to send now; from a command, a JWT about to expire is replaced first. */
  current(): Promise<string>;
  /**
   * A fresh token after `stale` was refused (HTTP 401), or undefined when the source cannot give
   * another (a fixed token). Calls with the same stale token while one runs share it; a call with a
   * token already replaced gets the replacement without running anything.
   */
  refresh(stale: string): Promise<string | undefined>;
  readonly kind: 'fixed' | 'command';
  /** Where the token comes from, for messages: `ORGFORM_TOKEN`, `--token-file FILE`, `--token-command`… */
  readonly source?: string;
  /** Every token handed out so far, live: what no error, log or file may show. */
  readonly secrets: readonly string[];
}

export function fixedTokenSource(token: string, source?: string): TokenSource {
  const secrets = [token];
  return {
    kind: 'fixed',
    ...(source === undefined ? {} : { source }),
    secrets,
    current: () => Promise.resolve(token),
    refresh: () => Promise.resolve(undefined),
  };
}

export interface CommandTokenOptions {
  /** Runs the command; rejects with an OrgformError saying why when it gives no token. */
  obtain: () => Promise<string>;
  now?: () => number;
  /** Replace a JWT this long before its `exp` (at most a quarter of its lifetime). */
  refreshBeforeMs?: number;
  /** Where the command comes from, for messages: `ORGFORM_TOKEN_COMMAND` or `--token-command`. */
  source?: string;
}

export const DEFAULT_REFRESH_BEFORE_MS = 60_000;

export function commandTokenSource(options: CommandTokenOptions): TokenSource {
  const now = options.now ?? Date.now;
  const refreshBeforeMs = options.refreshBeforeMs ?? DEFAULT_REFRESH_BEFORE_MS;
  const secrets: string[] = [];
  let token: string | undefined;
  let expiry: JwtExpiry | undefined;
  let obtainedAt = 0;
  /** The token a replacement before expiry was last tried for: a command that hands back the same one is not run again for it. */
  let renewedFor: string | undefined;
  let running: Promise<string> | undefined;
  /** Once the command failed, the run is over: every later call fails the same way, without running it again. */
  let failure: unknown;

  const run = (): Promise<string> => {
    running ??= options.obtain().then(
      (fresh) => {
        running = undefined;
        // Remembered before anything can fail with it in a message.
        if (!secrets.includes(fresh)) secrets.push(fresh);
        token = fresh;
        expiry = readJwtExpiry(fresh);
        obtainedAt = now();
        return fresh;
      },
      (err: unknown) => {
        running = undefined;
        failure = err;
        throw err;
      },
    );
    return running;
  };

  const expiresSoon = (): boolean => {
    if (expiry === undefined || token === undefined || renewedFor === token) return false;
    const lifetime = expiry.expiresAt - (expiry.issuedAt ?? obtainedAt);
    const margin = Math.min(refreshBeforeMs, Math.max(0, lifetime / 4));
    return now() >= expiry.expiresAt - margin;
  };

  return {
    kind: 'command',
    ...(options.source === undefined ? {} : { source: options.source }),
    secrets,
    async current() {
      if (failure !== undefined) throw failure;
      if (running) return running;
      if (token === undefined) return run();
      if (expiresSoon()) {
        renewedFor = token;
        return run();
      }
      return token;
    },
    async refresh(stale) {
      if (failure !== undefined) throw failure;
      if (running) return running;
      if (token !== undefined && token !== stale) return token;
      return run();
    },
  };
}

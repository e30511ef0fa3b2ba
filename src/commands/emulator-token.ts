/**
 * `orgform emulator token [URL] [--user USER]`: prints a fresh token from a running emulator
 * (POST /__emulator/tokens), so that it can serve as a token command wherever orgform is installed:
 * `ORGFORM_TOKEN_COMMAND="npx orgform emulator token http://127.0.0.1:4010"`. The token is of a
 * fake user of the local emulator: printing it is the point.
 */
import { OrgformError, UsageError } from '../errors.js';
import type { CliIO, ExitCode } from '../cli-io.js';

const TIMEOUT_MS = 10_000;

/** ORGFORM_BASE_URL and ORGFORM_EMULATOR_USER, as cli/settings.ts read them: the argument and --user beat them. */
export interface EmulatorTokenSettings {
  emulatorToken: { baseUrl?: string; user?: string };
}

export async function run(options: Record<string, unknown>, io: CliIO, args: string[], settings: EmulatorTokenSettings): Promise<ExitCode> {
  const base = args[0] ?? settings.emulatorToken.baseUrl;
  if (base === undefined) throw new UsageError('Give the emulator\'s URL (orgform emulator token http://127.0.0.1:4010) or set ORGFORM_BASE_URL.');
  let url: URL;
  try {
    url = new URL('/__emulator/tokens', base);
  } catch {
    throw new UsageError(`${JSON.stringify(base)} is not a URL: give the emulator's, such as http://127.0.0.1:4010.`);
  }
  const user = typeof options.user === 'string' ? options.user : settings.emulatorToken.user;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: user === undefined ? '' : JSON.stringify({ user }),
      signal: AbortSignal.any([io.signal, AbortSignal.timeout(TIMEOUT_MS)]),
    });
  } catch (err) {
    const why = err instanceof Error && err.cause instanceof Error ? err.cause.message : (err as Error).message;
    throw new OrgformError('TRANSPORT_ERROR', `Cannot reach the emulator at ${url.origin}: ${why}. Start it with orgform emulator, or give its URL.`, { cause: err });
  }
  const token = await readToken(response);
  if (!response.ok || token === undefined) {
    const said =
      response.status !== 404 ? ', and no token: is it an orgform emulator?' : user === undefined ? ': it has no users' : `: no user has the token or e-mail address ${JSON.stringify(user)}`;
    throw new OrgformError('API_ERROR', `The emulator at ${url.origin} answered HTTP ${response.status}${said}`);
  }
  io.stdout.write(`${token}\n`);
  return 0;
}

async function readToken(response: Response): Promise<string | undefined> {
  try {
    const body = (await response.json()) as { token?: unknown };
    return typeof body.token === 'string' ? body.token : undefined;
  } catch {
    return undefined;
  }
}

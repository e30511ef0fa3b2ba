/**
 * Where to connect and with what token, from flags and the environment. The token never comes
 * from argv: anything there is visible to every user of the machine through `ps`.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { OrgformError, UsageError } from '../errors.js';
import type { CliIO } from './io.js';

export interface ConnectionFlags {
  baseUrl?: string;
  tokenFile?: string;
  token?: string;
}

export interface Connection {
  baseUrl: string;
  token: string;
}

export async function resolveConnection(flags: ConnectionFlags, io: Pick<CliIO, 'env' | 'cwd'>): Promise<Connection> {
  if (flags.token !== undefined) {
    throw new UsageError(
      'Refusing --token: a token on the command line is visible to other users through `ps` and lands in shell history. Set ORGFORM_TOKEN or pass --token-file FILE.',
    );
  }
  if (io.env.NODE_TLS_REJECT_UNAUTHORIZED === '0') {
    throw new UsageError(
      'Refusing to run with NODE_TLS_REJECT_UNAUTHORIZED=0: it turns off certificate checks, so the token could be sent to an impostor. Unset it; for a private certificate authority use NODE_EXTRA_CA_CERTS.',
    );
  }
  const baseUrl = flags.baseUrl ?? io.env.ORGFORM_BASE_URL;
  if (baseUrl === undefined || baseUrl === '') {
    throw new UsageError('No service URL: pass --base-url URL or set ORGFORM_BASE_URL (for the built-in emulator: run `orgform emulator`, then use --base-url http://127.0.0.1:4010).');
  }
  let token: string | undefined;
  if (flags.tokenFile !== undefined) {
    const path = resolve(io.cwd, flags.tokenFile);
    try {
      token = (await readFile(path, 'utf8')).trim();
    } catch (err) {
      throw new OrgformError('CONFIG_IO', `Cannot read the token file ${flags.tokenFile}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}.`);
    }
    if (token === '') throw new UsageError(`The token file ${flags.tokenFile} is empty.`);
  } else {
    token = io.env.ORGFORM_TOKEN;
  }
  if (token === undefined || token === '') {
    throw new UsageError('No token: set ORGFORM_TOKEN or pass --token-file FILE.');
  }
  if (/[\r\n\0]/.test(token)) throw new UsageError('The token contains a line break or NUL; check ORGFORM_TOKEN or the token file.');
  return { baseUrl, token };
}

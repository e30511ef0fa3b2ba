/**
 * Where to connect and with what token, from flags and the environment. The token never comes
 * from argv: anything there is visible to every user of the machine through `ps`. A token
 * command may (it is a command, not a secret); when one is set, it is the source of the token.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { OrgformError, UsageError } from '../errors.js';
import type { CliIO } from './io.js';

export interface ConnectionFlags {
  baseUrl?: string;
  tokenFile?: string;
  token?: string;
  tokenCommand?: string;
}

/** A fixed token, or a command that prints one (run by openClient, not here). */
export type Connection = { baseUrl: string; token: string; tokenCommand?: undefined } | { baseUrl: string; token?: undefined; tokenCommand: string };

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
  if (flags.tokenCommand !== undefined && flags.tokenFile !== undefined) {
    throw new UsageError('Pass --token-command or --token-file, not both: each is a source of the token.');
  }
  // An empty variable counts as unset, as for ORGFORM_TOKEN; an empty flag is a mistake to point out.
  const tokenCommand = flags.tokenCommand ?? (io.env.ORGFORM_TOKEN_COMMAND === '' ? undefined : io.env.ORGFORM_TOKEN_COMMAND);
  if (tokenCommand !== undefined) {
    if (tokenCommand.trim() === '') {
      throw new UsageError(`The token command is empty (${flags.tokenCommand !== undefined ? '--token-command' : 'ORGFORM_TOKEN_COMMAND'}): give a shell command that prints a token, such as \`cat ~/.orgform-token\`.`);
    }
    return { baseUrl, tokenCommand };
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
    throw new UsageError('No token: set ORGFORM_TOKEN, pass --token-file FILE, or set ORGFORM_TOKEN_COMMAND (or --token-command) to a command that prints one.');
  }
  if (/[\r\n\0]/.test(token)) throw new UsageError('The token contains a line break or NUL; check ORGFORM_TOKEN or the token file.');
  return { baseUrl, token };
}

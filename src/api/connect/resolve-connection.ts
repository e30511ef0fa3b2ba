/**
 * Where to connect and with what token, from flags and the environment. The token never comes
 * from argv: anything there is visible to every user of the machine through `ps`. A token
 * command may (it is a command, not a secret).
 */
import { resolve } from 'node:path';
import { checkCredential } from '../../check-credential.js';
import { OrgformError, UsageError } from '../../errors.js';
import type { CliIO } from '../../cli-io.js';
import { findWorkTree, readTextInTree } from '../../work-tree.js';

/** The flags every command that talks to the service takes (cli/program.ts's `connection`). */
export interface ConnectionFlags {
  baseUrl?: string;
  tokenFile?: string;
  token?: string;
  tokenCommand?: string;
  maxRps?: number;
}

/**
 * A fixed token, or a command that prints one (run by openClient, not here); `source` names where
 * it came from (`ORGFORM_TOKEN`, `--token-file FILE`, ...), for the messages about it.
 */
export type Connection = { baseUrl: string; source: string } & ({ token: string; tokenCommand?: undefined } | { token?: undefined; tokenCommand: string });

/**
 * A command-line option beats the environment, for every setting: `--base-url` over
 * ORGFORM_BASE_URL, and for the token `--token-command`, then `--token-file`, then
 * ORGFORM_TOKEN_COMMAND, then ORGFORM_TOKEN (a command set in the environment is the token's
 * source there, as a credential helper is).
 */
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
  if (flags.tokenCommand !== undefined) return commandConnection(baseUrl, flags.tokenCommand, '--token-command');
  if (flags.tokenFile !== undefined) return { baseUrl, token: await readTokenFile(flags.tokenFile, io.cwd), source: `--token-file ${flags.tokenFile}` };
  // An empty variable counts as unset, as for ORGFORM_TOKEN; an empty flag is a mistake to point out.
  const envCommand = io.env.ORGFORM_TOKEN_COMMAND;
  if (envCommand !== undefined && envCommand !== '') return commandConnection(baseUrl, envCommand, 'ORGFORM_TOKEN_COMMAND');
  const token = io.env.ORGFORM_TOKEN;
  if (token === undefined || token === '') {
    throw new UsageError('No token: set ORGFORM_TOKEN, pass --token-file FILE, or set ORGFORM_TOKEN_COMMAND (or --token-command) to a command that prints one.');
  }
  checkCredential(token, 'ORGFORM_TOKEN');
  const bad = describeBadToken(token);
  if (bad !== undefined) throw new UsageError(`The token ${bad}; check ORGFORM_TOKEN.`);
  return { baseUrl, token, source: 'ORGFORM_TOKEN' };
}

function commandConnection(baseUrl: string, tokenCommand: string, source: string): Connection {
  if (tokenCommand.trim() === '') {
    throw new UsageError(`The token command is empty (${source}): give a shell command that prints a token, such as \`cat ~/.orgform-token\`.`);
  }
  return { baseUrl, tokenCommand, source };
}

async function readTokenFile(file: string, cwd: string): Promise<string> {
  let read;
  try {
    // Named in the working tree, it must stay in it: a link planted there would send a file of the runner as the token.
    read = await readTextInTree(await findWorkTree(cwd), resolve(cwd, file), 'stay', file);
  } catch (err) {
    throw new OrgformError('CONFIG_IO', `Cannot read the token file ${file}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}.`);
  }
  if (!read.ok) throw new OrgformError('CONFIG_IO', `Cannot read the token file: ${read.reason}. Nothing was read from it.`);
  const token = read.text.trim();
  if (token === '') throw new UsageError(`The token file ${file} is empty.`);
  checkCredential(token, `The token file ${file}`);
  const bad = describeBadToken(token);
  if (bad !== undefined) throw new UsageError(`The token ${bad}; check the token file ${file}.`);
  return token;
}

/**
 * What keeps a token out of an Authorization header, never quoting it: a control character (an
 * escape sequence pasted with it) or one beyond Latin-1. Sent, the HTTP client refuses it with what reads as
 * a failed connection. Undefined when it can be sent.
 */
export function describeBadToken(token: string): string | undefined {
  const at = token.search(/[^\t\x20-\x7e\x80-\xff]/);
  if (at < 0) return undefined;
  const code = token.codePointAt(at)!;
  return `holds a character an HTTP header cannot carry (U+${code.toString(16).toUpperCase().padStart(4, '0')}, at position ${at + 1})`;
}

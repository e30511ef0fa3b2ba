/**
 * Where to connect and with what token, from the connection settings (cli/settings.ts reads them:
 * options beat variables, `--token` and NODE_TLS_REJECT_UNAUTHORIZED=0 are refused there). The
 * token never comes from argv: anything there is visible to every user of the machine through
 * `ps`. A token command may (it is a command, not a secret).
 */
import { resolve } from 'node:path';
import { checkCredential } from '../../check-credential.js';
import { OrgformError, UsageError } from '../../errors.js';
import { findWorkTree, readTextInTree } from '../../work-tree.js';

/** The flags every command that talks to the service takes (cli/program.ts's `connection`). */
export interface ConnectionFlags {
  baseUrl?: string;
  tokenFile?: string;
  token?: string;
  tokenCommand?: string;
  maxRps?: number;
}

/** Where the token comes from: a command (--token-command, ORGFORM_TOKEN_COMMAND), a file (--token-file) or ORGFORM_TOKEN. */
export type TokenSetting = { command: string; source: string } | { file: string } | { value: string; source: 'ORGFORM_TOKEN' };

/** The environment a token command runs with: orgform's own, handed through as it is and read by nothing here. */
export type ChildEnvironment = Readonly<Record<string, string | undefined>>;

export interface ConnectionSettings {
  /** --base-url, else ORGFORM_BASE_URL; checked when connecting (a command may run without one). */
  baseUrl?: string;
  /** The token's source by precedence (--token-command, --token-file, ORGFORM_TOKEN_COMMAND, ORGFORM_TOKEN); absent when none is set. */
  token?: TokenSetting;
  childEnv: ChildEnvironment;
  /**
   * Where the token command runs when not in the working directory: in a pull request's job, the
   * home directory (cli/settings.ts decides).
   */
  tokenCommandDirectory?: string;
}

/**
 * A fixed token, or a command that prints one (run by openClient, not here); `source` names where
 * it came from (`ORGFORM_TOKEN`, `--token-file FILE`, ...), for the messages about it.
 */
export type Connection = { baseUrl: string; source: string } & ({ token: string; tokenCommand?: undefined } | { token?: undefined; tokenCommand: string });

/** The service and the token, or a usage error saying what is missing; a token file is read here. */
export async function resolveConnection(settings: ConnectionSettings, cwd: string): Promise<Connection> {
  const baseUrl = settings.baseUrl;
  if (baseUrl === undefined || baseUrl === '') {
    throw new UsageError('No service URL: pass --base-url URL or set ORGFORM_BASE_URL (for the built-in emulator: run `orgform emulator`, then use --base-url http://127.0.0.1:4010).');
  }
  const token = settings.token;
  if (token === undefined) {
    throw new UsageError('No token: set ORGFORM_TOKEN, pass --token-file FILE, or set ORGFORM_TOKEN_COMMAND (or --token-command) to a command that prints one.');
  }
  if ('command' in token) return commandConnection(baseUrl, token.command, token.source);
  if ('file' in token) return { baseUrl, token: await readTokenFile(token.file, cwd), source: `--token-file ${token.file}` };
  checkCredential(token.value, 'ORGFORM_TOKEN');
  const bad = describeBadToken(token.value);
  if (bad !== undefined) throw new UsageError(`The token ${bad}; check ORGFORM_TOKEN.`);
  return { baseUrl, token: token.value, source: 'ORGFORM_TOKEN' };
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

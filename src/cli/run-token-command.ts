/**
 * Runs the token command (ORGFORM_TOKEN_COMMAND, --token-command) through the shell, with the
 * environment orgform was given and no stdin, and answers its trimmed stdout: the way git
 * credential helpers, AWS `credential_process` and kubectl exec plugins hand over a credential.
 * Anything else (a non-zero exit, a signal, no output, more than one line, taking too long) is a
 * TokenCommandError quoting the command's stderr with every token redacted.
 */
import { spawn } from 'node:child_process';
import { redactSecrets } from '../api/redact.js';
import { TokenCommandError } from '../errors.js';

export interface TokenCommandOptions {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Tokens handed out so far: the command's stderr must not show them. */
  secrets: readonly string[];
  /** At the start nothing has been sent; on a refresh the run stops part way. */
  when: 'start' | 'refresh';
  timeoutMs?: number;
}

export const TOKEN_COMMAND_TIMEOUT_MS = 60_000;
const MAX_STDOUT_BYTES = 1024 * 1024;
const MAX_STDERR_BYTES = 64 * 1024;
const STDERR_LINES_SHOWN = 10;
const STDERR_LINE_LENGTH = 300;

/** The command's stderr as detail lines: redacted first (a cut could split a token), control characters out, shortened. */
function stderrLines(stderr: string, secrets: readonly string[]): string[] {
  const lines = redactSecrets(stderr, secrets)
    // eslint-disable-next-line no-control-regex
    .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')
    // eslint-disable-next-line no-control-regex
    .replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '')
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '');
  const shown = lines.slice(-STDERR_LINES_SHOWN).map((l) => (l.length > STDERR_LINE_LENGTH ? `${l.slice(0, STDERR_LINE_LENGTH)}…` : l));
  const left = lines.length - shown.length;
  return [...(left > 0 ? [`… (${left} earlier line${left === 1 ? '' : 's'} of stderr left out)`] : []), ...shown.map((l) => `stderr: ${l}`)];
}

export function runTokenCommand(command: string, options: TokenCommandOptions): Promise<string> {
  const timeoutMs = options.timeoutMs ?? TOKEN_COMMAND_TIMEOUT_MS;
  const advice =
    options.when === 'start'
      ? 'Nothing was sent. Fix the token command (ORGFORM_TOKEN_COMMAND or --token-command) and run again.'
      : 'The run stops here; what was done is recorded. Fix the token command (ORGFORM_TOKEN_COMMAND or --token-command) and run again.';
  const when = options.when === 'start' ? '' : ' (run again for a fresh token)';

  return new Promise<string>((resolve, reject) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, { shell: true, cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    } catch (err) {
      reject(new TokenCommandError(`The token command could not be started${when}: ${(err as NodeJS.ErrnoException).code ?? 'unknown error'}. ${advice}`));
      return;
    }
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = '';
    let overflow = false;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > MAX_STDOUT_BYTES) {
        overflow = true;
        child.kill('SIGKILL');
        return;
      }
      stdout.push(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR_BYTES) stderr += chunk.toString('utf8');
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new TokenCommandError(`The token command could not be started${when}: ${err.code ?? err.message}. ${advice}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const out = Buffer.concat(stdout).toString('utf8').trim();
      // Whatever it printed may be a token even when it failed: keep it out of the stderr shown.
      const secrets = [...options.secrets, out, ...out.split(/\s+/)].filter((s) => s.length >= 4);
      const details = stderrLines(stderr, secrets);
      const status = code ?? undefined;
      const fail = (what: string) => reject(new TokenCommandError(`The token command ${what}${when}. ${advice}`, { ...(status === undefined ? {} : { exitStatus: status }), details }));
      if (timedOut) return fail(`did not finish within ${Math.round(timeoutMs / 1000)} s and was stopped`);
      if (overflow) return fail(`printed more than ${MAX_STDOUT_BYTES / 1024} KiB; it must print the token alone`);
      if (signal) return fail(`was killed by ${signal}`);
      if (code !== 0) return fail(`failed with exit status ${code}`);
      if (out === '') return fail('printed nothing (exit status 0); it must print the token on stdout');
      if (/[\r\n\0]/.test(out)) return fail('printed more than one line (exit status 0); it must print the token alone');
      resolve(out);
    });
  });
}

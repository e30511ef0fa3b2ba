/**
 * Runs the token command (ORGFORM_TOKEN_COMMAND, --token-command) through the shell, with the
 * environment orgform was given and no stdin, and answers its trimmed stdout: the way git
 * credential helpers, AWS `credential_process` and kubectl exec plugins hand over a credential.
 * Anything else (a non-zero exit, a signal, no output, more than one line, taking too long) is a
 * TokenCommandError with the exit status and a hint to run the command by hand.
 *
 * Its stderr is never shown, not even redacted: a token the command prints there is not known as a
 * secret yet (`echo $TOKEN >&2; exit 3`). It goes nowhere.
 *
 * The command runs in a process group of its own, and the whole group is killed when the time
 * limit hits, when orgform is interrupted, or when orgform exits while it runs: killing only the
 * shell would leave its children (`sleep 400; echo t`) holding the pipe, and orgform waiting.
 */
import { spawn } from 'node:child_process';
import { OrgformError, TokenCommandError } from '../../errors.js';
import { describeBadToken, type ChildEnvironment } from './resolve-connection.js';

export interface TokenCommandOptions {
  /** orgform's environment, handed to the command as it is. */
  childEnv: ChildEnvironment;
  cwd: string;
  /** At the start nothing has been sent; on a refresh the run stops part way. */
  when: 'start' | 'refresh';
  /** Where the command comes from, named in messages: ORGFORM_TOKEN_COMMAND or --token-command. */
  source?: string;
  timeoutMs?: number;
  /** Aborted when orgform is interrupted: the command's group is killed and no token comes. */
  signal?: AbortSignal;
}

export const TOKEN_COMMAND_TIMEOUT_MS = 60_000;
const MAX_STDOUT_BYTES = 1024 * 1024;
/**
 * Once the shell has exited, how long its output may still take to arrive: a background process
 * it left (`cmd &`) may hold the pipe open for as long as it lives. After this the pipe is closed
 * and what arrived is the answer; the leftovers are the command's own business.
 */
const AFTER_EXIT_MS = 1_000;

export function runTokenCommand(command: string, options: TokenCommandOptions): Promise<string> {
  const timeoutMs = options.timeoutMs ?? TOKEN_COMMAND_TIMEOUT_MS;
  const name = `The token command${options.source === undefined ? '' : ` (${options.source})`}`;
  const byHand = 'Run the command by hand to see what it says (orgform never shows its error output, which may hold a token), fix it, and run again.';
  const advice = options.when === 'start' ? `Nothing was sent. ${byHand}` : `The run stops here; what was done is recorded. ${byHand}`;
  const when = options.when === 'start' ? '' : ' (run again for a fresh token)';

  return new Promise<string>((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(interrupted(name, options.when));
      return;
    }
    let child: ReturnType<typeof spawn> | undefined;
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let overflow = false;
    let timedOut = false;
    let stopped = false;
    let settled = false;

    const killGroup = () => {
      if (child?.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    };
    // orgform leaving (process.exit, a second Ctrl+C) takes the command with it: its own group does
    // not get the terminal's signals.
    process.on('exit', killGroup);
    // A command that installs no signal handler (validate, plan, export: see cli/main.ts) ends by the
    // signal's default, which runs no exit handler: take the command with it, then end the same way.
    // Installed before the command starts: a signal between its start and this would otherwise end
    // orgform by the default and leave the command's group running, orphaned. SIGHUP too: a closed
    // terminal or dropped ssh session ends orgform by it, and the command's own group never gets it.
    const unhandled = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).filter((s) => process.listenerCount(s) === 0);
    const offSignals = () => unhandled.forEach((s) => process.off(s, onSignal));
    const onSignal = (signal: NodeJS.Signals) => {
      killGroup();
      offSignals();
      process.kill(process.pid, signal);
    };
    unhandled.forEach((s) => process.on(s, onSignal));
    let timer: ReturnType<typeof setTimeout> | undefined;
    let afterExit: ReturnType<typeof setTimeout> | undefined;
    const onAbort = () => {
      stopped = true;
      stop();
    };
    const cleanUp = () => {
      settled = true;
      clearTimeout(timer);
      clearTimeout(afterExit);
      options.signal?.removeEventListener('abort', onAbort);
      process.off('exit', killGroup);
      offSignals();
    };
    /** Kills the group and stops reading: a process that left the group must not keep orgform waiting either. */
    const stop = () => {
      killGroup();
      child?.stdout?.destroy();
    };

    try {
      // detached: a process group of its own (its pid is the group's id), so that the group can be
      // killed whole. stderr goes nowhere (see above).
      child = spawn(command, { shell: true, detached: true, cwd: options.cwd, env: options.childEnv, stdio: ['ignore', 'pipe', 'ignore'], windowsHide: true });
    } catch (err) {
      cleanUp();
      reject(new TokenCommandError(`${name} could not be started${when}: ${(err as NodeJS.ErrnoException).code ?? 'unknown error'}. ${advice}`));
      return;
    }
    timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, timeoutMs);
    options.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout!.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > MAX_STDOUT_BYTES) {
        overflow = true;
        stop();
        return;
      }
      stdout.push(chunk);
    });
    // A destroyed stream may still report the error that ended it.
    child.stdout!.on('error', () => undefined);
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (settled) return;
      cleanUp();
      reject(new TokenCommandError(`${name} could not be started${when}: ${err.code ?? err.message}. ${advice}`));
    });
    child.on('exit', () => {
      afterExit = setTimeout(() => child.stdout?.destroy(), AFTER_EXIT_MS);
    });
    child.on('close', (code, signal) => {
      if (settled) return;
      cleanUp();
      if (stopped) return reject(interrupted(name, options.when));
      const out = Buffer.concat(stdout).toString('utf8').trim();
      const status = code ?? undefined;
      const fail = (what: string) => reject(new TokenCommandError(`${name} ${what}${when}. ${advice}`, status === undefined ? {} : { exitStatus: status }));
      if (timedOut) return fail(`did not finish within ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 100) / 10} s` : `${timeoutMs} ms`} and was stopped, with every process it started`);
      if (overflow) return fail(`printed more than ${MAX_STDOUT_BYTES / 1024} KiB; it must print the token alone`);
      if (signal) return fail(`was killed by ${signal}`);
      if (code !== 0) return fail(`failed with exit status ${code}`);
      if (out === '') return fail('printed nothing (exit status 0); it must print the token on stdout');
      if (/[\r\n\0]/.test(out)) return fail('printed more than one line (exit status 0); it must print the token alone');
      const bad = describeBadToken(out);
      if (bad !== undefined) return fail(`printed a token that ${bad}`);
      resolve(out);
    });
  });
}

/** orgform was interrupted while the command ran: not the command's failure, and nothing new is sent. */
function interrupted(name: string, when: TokenCommandOptions['when']): OrgformError {
  return new OrgformError('INTERRUPTED', `${name} was stopped: orgform was interrupted${when === 'start' ? '. Nothing was sent.' : '.'}`);
}

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
/** What a token command that could not be spawned (or failed to start) is said to be. */
const NOT_STARTED = 'could not be started';

export function runTokenCommand(command: string, options: TokenCommandOptions): Promise<string> {
  return new TokenCommandRun(command, options).token;
}

type Child = ReturnType<typeof spawn>;

/** One run of the command: its process group, its stdout, and how it ended, as a token or a TokenCommandError. */
class TokenCommandRun {
  readonly token: Promise<string>;
  private resolve!: (token: string) => void;
  private reject!: (err: Error) => void;
  private readonly name: string;
  private readonly timeoutMs: number;
  private child: Child | undefined;
  private readonly stdout: Buffer[] = [];
  private stdoutBytes = 0;
  private overflow = false;
  private timedOut = false;
  /** Interrupted: the signal was aborted. */
  private stopped = false;
  private settled = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private afterExit: ReturnType<typeof setTimeout> | undefined;
  /** The signals no one else handles: orgform would end by their default, leaving the command's group behind. */
  private unhandled: NodeJS.Signals[] = [];

  constructor(
    command: string,
    private readonly options: TokenCommandOptions,
  ) {
    this.name = `The token command${options.source === undefined ? '' : ` (${options.source})`}`;
    this.timeoutMs = options.timeoutMs ?? TOKEN_COMMAND_TIMEOUT_MS;
    this.token = new Promise<string>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    if (options.signal?.aborted) {
      this.reject(interrupted(this.name, options.when));
      return;
    }
    this.guardExit();
    this.start(command);
  }

  /**
   * orgform leaving (process.exit, a second Ctrl+C) takes the command with it: its own group does
   * not get the terminal's signals. A command that installs no signal handler (validate, plan,
   * export: see cli/main.ts) ends by the signal's default, which runs no exit handler: take the
   * command with it, then end the same way. Installed before the command starts: a signal between
   * its start and this would otherwise end orgform by the default and leave the command's group
   * running, orphaned. SIGHUP too: a closed terminal or dropped ssh session ends orgform by it, and
   * the command's own group never gets it.
   */
  private guardExit(): void {
    process.on('exit', this.killGroup);
    this.unhandled = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).filter((s) => process.listenerCount(s) === 0);
    for (const s of this.unhandled) process.on(s, this.onSignal);
  }

  private readonly killGroup = (): void => {
    if (this.child?.pid === undefined) return;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  };

  private readonly onSignal = (signal: NodeJS.Signals): void => {
    this.killGroup();
    this.offSignals();
    process.kill(process.pid, signal);
  };

  private readonly onAbort = (): void => {
    this.stopped = true;
    this.stop();
  };

  private offSignals(): void {
    for (const s of this.unhandled) process.off(s, this.onSignal);
  }

  private start(command: string): void {
    let child: Child;
    try {
      // detached: a process group of its own (its pid is the group's id), so that the group can be
      // killed whole. stderr goes nowhere (see the top of this file).
      child = spawn(command, { shell: true, detached: true, cwd: this.options.cwd, env: this.options.childEnv, stdio: ['ignore', 'pipe', 'ignore'], windowsHide: true });
    } catch (err) {
      this.cleanUp();
      this.reject(this.failure(NOT_STARTED, undefined, (err as NodeJS.ErrnoException).code ?? 'unknown error'));
      return;
    }
    this.child = child;
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.stop();
    }, this.timeoutMs);
    this.options.signal?.addEventListener('abort', this.onAbort, { once: true });
    child.stdout!.on('data', (chunk: Buffer) => this.read(chunk));
    // A destroyed stream may still report the error that ended it.
    child.stdout!.on('error', () => undefined);
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (this.settled) return;
      this.cleanUp();
      this.reject(this.failure(NOT_STARTED, undefined, err.code ?? err.message));
    });
    child.on('exit', () => {
      this.afterExit = setTimeout(() => child.stdout?.destroy(), AFTER_EXIT_MS);
    });
    child.on('close', (code, signal) => this.end(code, signal));
  }

  private read(chunk: Buffer): void {
    this.stdoutBytes += chunk.length;
    if (this.stdoutBytes <= MAX_STDOUT_BYTES) {
      this.stdout.push(chunk);
      return;
    }
    this.overflow = true;
    this.stop();
  }

  private end(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.settled) return;
    this.cleanUp();
    if (this.stopped) return this.reject(interrupted(this.name, this.options.when));
    const out = Buffer.concat(this.stdout).toString('utf8').trim();
    const wrong = this.describeFailure(code, signal, out);
    if (wrong === undefined) return this.resolve(out);
    this.reject(this.failure(wrong, code ?? undefined));
  }

  /** What went wrong, or undefined when `out` is the token. */
  private describeFailure(code: number | null, signal: NodeJS.Signals | null, out: string): string | undefined {
    const { timeoutMs } = this;
    if (this.timedOut) return `did not finish within ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 100) / 10} s` : `${timeoutMs} ms`} and was stopped, with every process it started`;
    if (this.overflow) return `printed more than ${MAX_STDOUT_BYTES / 1024} KiB; it must print the token alone`;
    if (signal) return `was killed by ${signal}`;
    if (code !== 0) return `failed with exit status ${code}`;
    if (out === '') return 'printed nothing (exit status 0); it must print the token on stdout';
    if (/[\r\n\0]/.test(out)) return 'printed more than one line (exit status 0); it must print the token alone';
    const bad = describeBadToken(out);
    return bad === undefined ? undefined : `printed a token that ${bad}`;
  }

  /** `what` happened to the command (with the system's `detail`), and what to do now. */
  private failure(what: string, exitStatus?: number, detail?: string): TokenCommandError {
    const byHand = 'Run the command by hand to see what it says (orgform never shows its error output, which may hold a token), fix it, and run again.';
    const atStart = this.options.when === 'start';
    const advice = atStart ? `Nothing was sent. ${byHand}` : `The run stops here; what was done is recorded. ${byHand}`;
    const again = atStart ? '' : ' (run again for a fresh token)';
    return new TokenCommandError(`${this.name} ${what}${again}${detail === undefined ? '' : `: ${detail}`}. ${advice}`, exitStatus === undefined ? {} : { exitStatus });
  }

  private cleanUp(): void {
    this.settled = true;
    clearTimeout(this.timer);
    clearTimeout(this.afterExit);
    this.options.signal?.removeEventListener('abort', this.onAbort);
    process.off('exit', this.killGroup);
    this.offSignals();
  }

  /** Kills the group and stops reading: a process that left the group must not keep orgform waiting either. */
  private stop(): void {
    this.killGroup();
    this.child?.stdout?.destroy();
  }
}

/** orgform was interrupted while the command ran: not the command's failure, and nothing new is sent. */
function interrupted(name: string, when: TokenCommandOptions['when']): OrgformError {
  return new OrgformError('INTERRUPTED', `${name} was stopped: orgform was interrupted${when === 'start' ? '. Nothing was sent.' : '.'}`);
}

/**
 * The process entry: the only module that builds the commands' CliIO from `process` (streams,
 * working directory, signals), reads `process.env` (handed to the program, which reads each
 * command's settings from it: settings.ts) and calls `process.exit`.
 */
import { fstatSync } from 'node:fs';
import { guardWorkflowCommands } from '../ci/guard-workflow-commands.js';
import { buildProgram } from './program.js';
import { readOutputSettings, type OutputSettings } from './output-settings.js';
import type { CliIO } from '../cli-io.js';

/**
 * The commands that watch `io.signal` and wind down on the first interrupt, SIGINT, SIGTERM or
 * SIGHUP (`state migrate` holds two locks, and an HTTP backend's outlives the process: it finishes
 * and lets go). The others install no handler at all: the signals keep the system's default and end
 * the process at once, even in the middle of a synchronous parse (a JavaScript handler would wait
 * for it to end), as a process ended by the signal, which a shell reports as 128 + the signal (130
 * for Ctrl+C).
 */
const GRACEFUL_ON_INTERRUPT = new Set(['apply', 'check', 'emulator', 'migrate']);

/** The emulator stands in for a service: its memory is not orgform's, and it is kept quick. */
const HEAP_AS_V8_CHOOSES = new Set(['emulator']);

async function main(): Promise<void> {
  const controller = new AbortController();
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupts += 1;
    if (interrupts > 1) {
      process.stderr.write(`\nSecond ${signal}: stopping now.\n`);
      leave(130, { drain: false });
    }
    controller.abort(new Error(signal));
  };

  const env = process.env;
  const output = readOutputSettings(env);
  // Guarded here, once, so that a fatal error goes through the same guard as the commands' output.
  const io: CliIO = guardWorkflowCommands(
    {
      stdout: process.stdout,
      stderr: process.stderr,
      stdin: process.stdin,
      cwd: process.cwd(),
      signal: controller.signal,
      now: () => Date.now(),
    },
    output.ci,
    { unread: { stdout: isRegularFile(1), stderr: isRegularFile(2) } },
  );
  // Standard output closed by its reader (`orgform plan | head`): a read-only command ends at once,
  // as one killed by SIGPIPE (141), without a stack trace; apply goes on to the end of what it
  // started and the rest of its output is dropped, since stopping it there could leave the service
  // half-changed with no one told.
  let action = '';
  let stdoutClosed = false;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (stdoutClosed) return;
    if (err.code !== 'EPIPE') throw err;
    stdoutClosed = true;
    if (!GRACEFUL_ON_INTERRUPT.has(action)) leave(SIGPIPE_EXIT, { drain: false });
    else process.stderr.write('orgform: standard output was closed; the rest of its output is dropped, and the command goes on to its end.\n');
  });
  let code: number = 0;
  const program = buildProgram(
    io,
    (c) => {
      code = c;
    },
    env,
    output,
  );
  program.hook('preAction', async (_program, command) => {
    action = command.name();
    if (GRACEFUL_ON_INTERRUPT.has(action)) {
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      // A closed terminal or a dropped ssh session: wound down like Ctrl+C, not cut off mid-write.
      process.on('SIGHUP', onSignal);
    }
    if (!HEAP_AS_V8_CHOOSES.has(action)) (await import('./limit-heap-growth.js')).limitHeapGrowth();
  });
  try {
    await program.parseAsync(process.argv);
  } catch (err) {
    code = await reportFatal(err, io, output);
  }
  leave(code, { drain: true });
}

/** A stream redirected to a file (`> plan.json`): the runner cannot read it, so it is written as it is. */
function isRegularFile(fd: number): boolean {
  try {
    return fstatSync(fd).isFile();
  } catch {
    return false;
  }
}

/** The one way out of the process. Draining lets a pipe take the rest of a large plan first. */
const SIGPIPE_EXIT = 128 + 13;

function leave(code: number, options: { drain: boolean }): void {
  const exit = () => process.exit(code);
  // The last write can fail with EPIPE before the stream's error event is heard: the same end.
  const drained = (err?: Error | null) => ((err as NodeJS.ErrnoException | null | undefined)?.code === 'EPIPE' && code === 0 ? process.exit(SIGPIPE_EXIT) : exit());
  if (options.drain && !process.stdout.destroyed) process.stdout.write('', drained);
  else exit();
}

async function reportFatal(err: unknown, io: CliIO, output: OutputSettings): Promise<number> {
  const e = err as { code?: string; exitCode?: number; message?: string };
  if (typeof e?.code === 'string' && e.code.startsWith('commander.')) {
    // commander has already printed help, the version or the usage error.
    return e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help'
      ? 0
      : 1;
  }
  const { formatError } = await import('../text/format-error.js');
  // An error may quote the service or the files: in GitHub Actions io.stderr neutralises any line
  // that could issue a workflow command, and the text is also framed by stop-commands, as the
  // views frame such text (elsewhere guard() leaves it as it is).
  const { openPipelineOutput } = await import('../ci/pipeline-output.js');
  io.stderr.write((await openPipelineOutput(io, output.ci)).frame.guard(formatError(err)));
  return 1;
}

await main();

/**
 * What a command may touch of the outside world, injected so that commands can be run in-process
 * by tests. Only src/cli/main.ts builds one from `process`. The environment is not in it: it is
 * read once, into the settings (cli/settings.ts), and each command gets the settings it uses.
 */
export interface OutputStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
}

export interface CliIO {
  stdout: OutputStream;
  stderr: OutputStream;
  /** Standard input, for `slugs check -` and the apply confirmation. */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  cwd: string;
  /** Aborted on SIGINT/SIGTERM: commands stop starting new work and finish cleanly. */
  signal: AbortSignal;
  /** Milliseconds since the epoch; injected so that output can be tested. */
  now: () => number;
  /**
   * In GitHub Actions, set by guardWorkflowCommands: seals one line as orgform's own workflow
   * command (an annotation, a group), the only kind of line that the guarded streams let through.
   */
  workflowCommand?: (line: string) => string;
}

/** A command's result: the process exit code. */
export type ExitCode = 0 | 1 | 2;

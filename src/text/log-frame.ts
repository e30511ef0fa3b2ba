/**
 * Where views write, and how their text is framed in a CI log. Shared by the plan and apply views;
 * ci/pipeline-output.ts supplies GitHub's frame, everything else PLAIN_FRAME.
 */

/** Where a view writes: a stream, or a string in a test. */
export interface TextSink {
  write(text: string): unknown;
  isTTY?: boolean;
}

/**
 * How text is framed in a CI log: folded under a title, and unable to issue workflow commands
 * (GitHub Actions). PLAIN_FRAME leaves text as it is.
 */
export interface LogFrame {
  /** A whole text folded under a title. */
  fold(title: string, text: string): string;
  /** The two halves of a fold whose lines are written as they come. */
  open(title: string): string;
  close(): string;
  /** Text that may quote the service or the files, made inert. */
  guard(text: string): string;
}

export const PLAIN_FRAME: LogFrame = {
  fold: (_title, text) => text,
  open: () => '',
  close: () => '',
  guard: (text) => text,
};

/** Output streams that keep what is written to them, for the views' tests. */
export interface Sink {
  text: string;
  isTTY?: boolean;
  write(chunk: string): void;
}

/** One stream; a terminal when `isTTY` (left unset, as a stream that does not say). */
export function sink(isTTY?: boolean): Sink {
  const stream: Sink = { text: '', ...(isTTY === undefined ? {} : { isTTY }), write: (chunk) => void (stream.text += chunk) };
  return stream;
}

/** A view's two streams: standard output a terminal when `tty`, standard error never. */
export function sinks(tty = false): { out: Sink; err: Sink } {
  return { out: sink(tty), err: sink() };
}

/** Text made a line at a time, written in chunks of about 64 KiB: one write per line would cost a system call each, one string of all would cost its whole size. */
import type { OutputStream } from '../../cli-io.js';

const CHUNK = 64 * 1024;

export async function writeInChunks(out: OutputStream, lines: Iterable<string> | AsyncIterable<string>): Promise<void> {
  let chunk = '';
  for await (const line of lines) {
    chunk += line;
    if (chunk.length >= CHUNK) {
      out.write(chunk);
      chunk = '';
    }
  }
  if (chunk !== '') out.write(chunk);
}

import { createInterface } from 'node:readline';
import type { CliIO, OutputStream } from '../../cli-io.js';

/** Asks one question on the terminal and resolves with the answer (or '' if input ends or apply is interrupted). */
export function readAnswer(question: string, io: CliIO, output: OutputStream = io.stdout): Promise<string> {
  // Interrupted before the question (e.g. while the plan was read): 'abort' will not fire again.
  if (io.signal.aborted) return Promise.resolve('');
  return new Promise((resolvePromise) => {
    const rl = createInterface({ input: io.stdin, terminal: false });
    let settled = false;
    const settle = (answer: string) => {
      if (settled) return;
      settled = true;
      io.signal.removeEventListener('abort', onAbort);
      rl.close();
      resolvePromise(answer);
    };
    const onAbort = () => settle('');
    io.signal.addEventListener('abort', onAbort, { once: true });
    rl.once('close', () => settle(''));
    output.write(question);
    rl.once('line', (line) => settle(line.trim()));
  });
}

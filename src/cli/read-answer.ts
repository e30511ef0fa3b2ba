import { createInterface } from 'node:readline';
import type { CliIO } from './io.js';

/** Asks one question on the terminal and resolves with the answer (or '' if input ends or apply is interrupted). */
export function readAnswer(question: string, io: CliIO): Promise<string> {
  // Interrupted before the question (e.g. while the plan was read): 'abort' will not fire again.
  if (io.signal.aborted) return Promise.resolve('');
  return new Promise((resolvePromise) => {
    const rl = createInterface({ input: io.stdin, output: io.stdout as NodeJS.WritableStream, terminal: false });
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
    io.stdout.write(question);
    rl.once('line', (line) => settle(line.trim()));
  });
}

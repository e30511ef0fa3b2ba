/** A CliIO for running one command's module in-process, its output captured. */
import { PassThrough } from 'node:stream';
import type { CliIO } from '../../src/cli-io.js';

export function createIO(options: { cwd: string; signal?: AbortSignal }) {
  const controller = new AbortController();
  let out = '';
  let err = '';
  const io: CliIO = {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    stdin: new PassThrough(),
    cwd: options.cwd,
    signal: options.signal ?? controller.signal,
    now: () => 0,
  };
  return { io, stop: () => controller.abort(), out: () => out, err: () => err };
}

import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CliIO } from '../../../src/cli-io.js';
import { readAnswer } from '../../../src/commands/apply/command.js';

function terminal(signal = new AbortController().signal) {
  const stdin = new PassThrough();
  let shown = '';
  const io = { stdin, signal, stdout: { write: (s: string) => ((shown += s), true) } } as unknown as CliIO;
  return { io, stdin, shown: () => shown };
}

describe('readAnswer', () => {
  it('asks, and resolves with the line typed, trimmed', async () => {
    const { io, stdin, shown } = terminal();
    const answer = readAnswer('Sure? ', io);
    stdin.write('  yes \n');
    expect(await answer).toBe('yes');
    expect(shown()).toBe('Sure? ');
  });

  it('resolves with nothing when input ends before a line', async () => {
    const { io, stdin } = terminal();
    const answer = readAnswer('Sure? ', io);
    stdin.end();
    expect(await answer).toBe('');
  });

  it('resolves with nothing on an interrupt, before or while it asks', async () => {
    const controller = new AbortController();
    const { io, shown } = terminal(controller.signal);
    const waiting = readAnswer('Sure? ', io);
    controller.abort();
    expect(await waiting).toBe('');
    const late = terminal(controller.signal);
    expect(await readAnswer('Again? ', late.io)).toBe('');
    expect(late.shown()).toBe('');
    expect(shown()).toBe('Sure? ');
  });
});

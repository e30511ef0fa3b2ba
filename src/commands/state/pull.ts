/**
 * `orgform state pull`: every entry of the state on stdout, whatever the backend, in the file
 * state's own format (a header line, then one entry line each, sorted), so that
 * `orgform state pull > state.json` is a journal file --state can use. Streamed: nothing is held.
 */
import { formatEntryLine, type LoggedEntry } from '../../state/journal-entry.js';
import { BASE_HEADER } from '../../state/file/journal-lines.js';
import type { CliIO, ExitCode } from '../../cli-io.js';
import { openCommandState, type StateCommandSettings } from '../../state/open-state.js';
import { writeInChunks } from './write-in-chunks.js';

export async function run(flags: { state?: string }, io: CliIO, _args: string[], settings: StateCommandSettings): Promise<ExitCode> {
  const state = await openCommandState(flags.state, io, settings);
  try {
    await writeInChunks(io.stdout, pulledLines(state.entries()));
  } finally {
    await state.close();
  }
  return 0;
}

async function* pulledLines(entries: AsyncIterable<LoggedEntry>): AsyncGenerator<string> {
  yield `${BASE_HEADER}\n`;
  for await (const logged of entries) yield `${formatEntryLine(logged)}\n`;
}

/**
 * `orgform state pull`: the journal as JSON on stdout, in the file's own format whatever the
 * backend, so that `orgform state pull > state.json` is a journal file --state can use.
 */
import { serializeJournal } from '../../state/journal.js';
import type { JournalData } from '../../state/journal-entry.js';
import type { CliIO, ExitCode } from '../../cli-io.js';
import { openCommandState, type StateCommandSettings } from '../../state/open-state.js';

export async function run(flags: { state?: string }, io: CliIO, _args: string[], settings: StateCommandSettings): Promise<ExitCode> {
  const state = await openCommandState(flags.state, io, settings);
  try {
    const data: JournalData = { version: 1, services: {} };
    for await (const { service, key, entry } of state.entries()) (data.services[service] ??= {})[key] = entry;
    io.stdout.write(serializeJournal(data));
  } finally {
    await state.close();
  }
  return 0;
}

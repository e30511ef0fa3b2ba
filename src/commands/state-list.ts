/** `orgform state list`: every entry of the state journal (address, outcome, when, which run), whatever the backend. */
import { renderStateList } from './state-list-table.js';
import type { CliIO, ExitCode } from '../io.js';
import { openCommandState } from '../state/state-settings.js';

export async function run(flags: { state?: string }, io: CliIO): Promise<ExitCode> {
  const state = await openCommandState(flags.state, io);
  io.stdout.write(renderStateList(await state.read(), state.location));
  return 0;
}

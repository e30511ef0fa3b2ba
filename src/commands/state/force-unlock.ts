/** `orgform force-unlock ID`: breaks a state lock left behind, only if its ID matches, whatever the backend; other holders (shards) keep theirs. */
import type { CliIO, ExitCode } from '../../cli-io.js';
import { openCommandState, type StateCommandSettings } from '../../state/open-state.js';

export async function run(flags: { state?: string }, io: CliIO, args: string[], settings: StateCommandSettings): Promise<ExitCode> {
  const id = args[0] ?? '';
  const state = await openCommandState(flags.state, io, settings);
  try {
    const holder = await state.forceUnlock(id);
    const known = holder.pid !== undefined && holder.host !== undefined ? `pid ${holder.pid} on ${holder.host}` : holder.who;
    const held = known === undefined ? '' : ` (held by ${known}${holder.startedAt === undefined ? '' : ` since ${holder.startedAt}`})`;
    io.stdout.write(`Released the lock ${id} on ${state.location}${held}.\n`);
  } finally {
    await state.close();
  }
  return 0;
}

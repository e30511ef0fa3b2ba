/** `orgform force-unlock ID`: breaks a state lock left behind, only if its ID matches. */
import { resolve } from 'node:path';
import { forceUnlock } from '../../state/lock.js';
import type { CliIO, ExitCode } from '../io.js';

export async function run(flags: { state: string }, io: CliIO, args: string[]): Promise<ExitCode> {
  const id = args[0] ?? '';
  const statePath = resolve(io.cwd, flags.state);
  const holder = await forceUnlock(statePath, id);
  io.stdout.write(`Released the lock ${id} on ${flags.state} (held by pid ${holder.pid} on ${holder.host} since ${holder.startedAt}).\n`);
  return 0;
}

/** `orgform state migrate --to URL`: copies the journal to another state, checks the copy, leaves the source as it was. */
import { UsageError } from '../errors.js';
import { migrateState } from '../state/migrate-state.js';
import type { CliIO, ExitCode } from '../cli-io.js';
import { openCommandState, type StateCommandSettings } from '../state/open-state.js';

export async function run(flags: { state?: string; to: string }, io: CliIO, _args: string[], settings: StateCommandSettings): Promise<ExitCode> {
  const source = await openCommandState(flags.state, io, settings);
  const target = await openCommandState(flags.to, io, settings);
  if (source.location === target.location) throw new UsageError(`--to names the state being migrated (${source.location}): give another one.`);
  // An empty source is most often a mistyped --state (a file that does not exist reads as empty):
  // "copied 0 entries … point --state at the target" would then lose the real journal from view.
  const held = Object.values((await source.read()).services).reduce((n, entries) => n + Object.keys(entries).length, 0);
  if (held === 0) throw new UsageError(`${source.location} holds no entries: there is nothing to migrate, and nothing was written to ${target.location}. Check --state (a file that does not exist reads as an empty state).`);
  // The copy is all in memory and on its way: stopping half way would leave a lock to force-unlock.
  io.signal.addEventListener('abort', () => io.stderr.write('Interrupted: finishing the copy and letting go of both locks (interrupt again to stop at once, which may leave a lock behind).\n'), { once: true });
  const result = await migrateState(source, target, async () => (await openCommandState(flags.to, io, settings)).read());
  const entries = (n: number) => `${n} entr${n === 1 ? 'y' : 'ies'}`;
  io.stdout.write(
    `Copied ${entries(result.copied)} from ${source.location} to ${target.location}${result.present > 0 ? ` (${result.present} already there, kept as they were)` : ''}.\n` +
      `Read back and checked: ${target.location} holds all ${entries(result.total)} of ${source.location}, which is unchanged.\n` +
      `From now on, point --state or ORGFORM_STATE at ${target.location}.\n`,
  );
  return 0;
}

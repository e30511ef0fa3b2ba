/**
 * `orgform state migrate --to URL [--from SRC]…`: copies the journal of one state, or merges those
 * of several (states kept under a name per shard), into another; checks the copy; leaves the
 * sources as they were.
 */
import { UsageError } from '../../errors.js';
import { migrateStates, type MigratedState, type MigrateResult } from '../../state/migrate-state.js';
import type { StateBackend } from '../../state/state-backend.js';
import type { CliIO, ExitCode } from '../../cli-io.js';
import { commandLockRequest, openCommandState, type StateCommandSettings } from '../../state/open-state.js';

export async function run(flags: { state?: string; from?: string[]; to: string }, io: CliIO, _args: string[], settings: StateCommandSettings): Promise<ExitCode> {
  if (flags.state !== undefined && flags.from !== undefined) throw new UsageError('Give the states to copy from with --from (repeated for several), or one with --state, not both.');
  const locations = [...(flags.from ?? [flags.state]), flags.to];
  const opened: StateBackend[] = [];
  try {
    for (const location of locations) opened.push(await openCommandState(location, io, settings));
    const states: MigratedState[] = opened.map((state, i) => ({ state, reopen: () => openCommandState(locations[i], io, settings) }));
    const sources = states.slice(0, -1);
    const target = states.at(-1)!;
    await checkSources(sources, target.state);
    // The copy is on its way: stopping half way would leave a lock to force-unlock.
    io.signal.addEventListener('abort', () => io.stderr.write('Interrupted: finishing the copy and letting go of every lock (interrupt again to stop at once, which may leave a lock behind).\n'), { once: true });
    const result = await migrateStates(sources, target, commandLockRequest('orgform state migrate', io, settings));
    io.stdout.write(describeResult(result, sources.map((s) => s.state.location).join(', '), sources.length, target.state.location));
    return 0;
  } finally {
    for (const state of opened) await state.close();
  }
}

function describeResult(result: MigrateResult, from: string, count: number, to: string): string {
  const entries = (n: number) => `${n} entr${n === 1 ? 'y' : 'ies'}`;
  return (
    `Copied ${entries(result.copied)} from ${from} to ${to}${result.present > 0 ? ` (${result.present} already there, kept as they were)` : ''}.\n` +
    `Read back and checked: ${to} holds all ${entries(result.total)} of ${from}, which ${count === 1 ? 'is' : 'are'} unchanged.\n` +
    `From now on, point --state or ORGFORM_STATE at ${to}.\n`
  );
}

/**
 * Refuses a source that is the target, named twice, or empty (most often a mistyped path: a file
 * that does not exist reads as empty). Each is read through a backend of its own.
 */
async function checkSources(sources: readonly MigratedState[], target: StateBackend): Promise<void> {
  const seen = new Set<string>();
  for (const { state, reopen } of sources) {
    if (state.location === target.location) throw new UsageError(`--to names a state being migrated (${state.location}): give another one.`);
    if (seen.has(state.location)) throw new UsageError(`${state.location} is named twice: give each state to copy from once.`);
    seen.add(state.location);
    const reader = await reopen();
    const first = await reader.entries()[Symbol.asyncIterator]().next().finally(() => reader.close());
    if (first.done === true) {
      throw new UsageError(`${state.location} holds no entries: there is nothing to migrate, and nothing was written to ${target.location}. Check --state or --from (a file that does not exist reads as an empty state).`);
    }
  }
}

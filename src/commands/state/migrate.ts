/**
 * `orgform state migrate --to URL [--from SRC]…`: copies the journal of one state, or merges those
 * of several (states kept under a name per shard), into another; checks the copy; leaves the
 * sources as they were.
 */
import { UsageError } from '../../errors.js';
import { migrateStates } from '../../state/migrate-state.js';
import type { StateBackend } from '../../state/state-backend.js';
import type { CliIO, ExitCode } from '../../cli-io.js';
import { commandLockRequest, openCommandState, type StateCommandSettings } from '../../state/open-state.js';

export async function run(flags: { state?: string; from?: string[]; to: string }, io: CliIO, _args: string[], settings: StateCommandSettings): Promise<ExitCode> {
  if (flags.state !== undefined && flags.from !== undefined) throw new UsageError('Give the states to copy from with --from (repeated for several), or one with --state, not both.');
  const opened: StateBackend[] = [];
  try {
    for (const from of flags.from ?? [flags.state]) opened.push(await openCommandState(from, io, settings));
    const target = await openCommandState(flags.to, io, settings);
    opened.push(target);
    const sources = opened.slice(0, -1);
    await checkSources(sources, target);
    // The copy is on its way: stopping half way would leave a lock to force-unlock.
    io.signal.addEventListener('abort', () => io.stderr.write('Interrupted: finishing the copy and letting go of every lock (interrupt again to stop at once, which may leave a lock behind).\n'), { once: true });
    const result = await migrateStates(sources, target, () => openCommandState(flags.to, io, settings), commandLockRequest('orgform state migrate', io, settings));
    const entries = (n: number) => `${n} entr${n === 1 ? 'y' : 'ies'}`;
    const from = sources.map((s) => s.location).join(', ');
    io.stdout.write(
      `Copied ${entries(result.copied)} from ${from} to ${target.location}${result.present > 0 ? ` (${result.present} already there, kept as they were)` : ''}.\n` +
        `Read back and checked: ${target.location} holds all ${entries(result.total)} of ${from}, which ${sources.length === 1 ? 'is' : 'are'} unchanged.\n` +
        `From now on, point --state or ORGFORM_STATE at ${target.location}.\n`,
    );
    return 0;
  } finally {
    for (const state of opened) await state.close();
  }
}

/** Refuses a source that is the target, named twice, or empty (most often a mistyped path: a file that does not exist reads as empty). */
async function checkSources(sources: readonly StateBackend[], target: StateBackend): Promise<void> {
  const seen = new Set<string>();
  for (const source of sources) {
    if (source.location === target.location) throw new UsageError(`--to names a state being migrated (${source.location}): give another one.`);
    if (seen.has(source.location)) throw new UsageError(`${source.location} is named twice: give each state to copy from once.`);
    seen.add(source.location);
    const first = await source.entries()[Symbol.asyncIterator]().next();
    if (first.done === true) {
      throw new UsageError(`${source.location} holds no entries: there is nothing to migrate, and nothing was written to ${target.location}. Check --state or --from (a file that does not exist reads as an empty state).`);
    }
  }
}

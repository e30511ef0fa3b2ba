/**
 * `orgform state list`: every entry of the journal, whatever the backend and whichever run or
 * shard wrote it, one line each, by service: the change's address (or its key, if it cannot be
 * read back), the outcome, when, and which run recorded it. Linear in the entries: one string is
 * kept per entry (to sort by address), and the output goes out in chunks.
 */
import { KIND_ORDER } from '../../model/change-kind.js';
import { changeAddress } from '../../model/address.js';
import type { JournalEntry, LoggedEntry } from '../../state/journal-entry.js';
import { terminalSafe } from '../../text/ansi.js';
import type { CliIO, ExitCode } from '../../cli-io.js';
import { openCommandState, type StateCommandSettings } from '../../state/open-state.js';
import { writeInChunks } from './write-in-chunks.js';

export async function run(flags: { state?: string }, io: CliIO, _args: string[], settings: StateCommandSettings): Promise<ExitCode> {
  const state = await openCommandState(flags.state, io, settings);
  try {
    const listed = new StateListing();
    for await (const logged of state.entries()) listed.add(logged);
    await writeInChunks(io.stdout, listed.render(state.location));
  } finally {
    await state.close();
  }
  return 0;
}

/** A journal key's three parts (model/journal-key.ts escapes `%` and spaces in each), or undefined if it is not one. */
function splitKey(key: string): { kind: string; targetId: string } | undefined {
  const parts = key.split(' ');
  if (parts.length !== 3) return undefined;
  const unescape = (part: string) => part.replace(/%20/g, ' ').replace(/%25/g, '%');
  return { kind: parts[0]!, targetId: unescape(parts[2]!) };
}

export function entryAddress(key: string, entry: JournalEntry): string {
  const parts = splitKey(key);
  if (parts === undefined || !Object.hasOwn(KIND_ORDER, parts.kind) || parts.kind !== entry.kind) return key;
  return changeAddress(entry.kind, entry.organisation, parts.targetId);
}

/** Separates a row's columns while it waits to be sorted: lower than any character terminalSafe lets through. */
const COLUMN = '\u0000';

/** The entries to list, a row string each, grouped by service, with the widths of each service's columns. */
export class StateListing {
  private readonly services = new Map<string, { rows: string[]; widths: [number, number, number] }>();
  private count = 0;

  add({ service, key, entry }: LoggedEntry): void {
    // A remote state is text anyone with write access to it may have written: no control character reaches the terminal.
    const columns = [terminalSafe(entryAddress(key, entry)), entry.outcome === 'applied' ? 'applied' : 'already done', terminalSafe(entry.at), entry.run === undefined ? '-' : `run ${terminalSafe(entry.run)}`];
    let listed = this.services.get(service);
    if (listed === undefined) {
      listed = { rows: [], widths: [0, 0, 0] };
      this.services.set(service, listed);
    }
    for (let i = 0; i < 3; i += 1) if (columns[i]!.length > listed.widths[i]!) listed.widths[i] = columns[i]!.length;
    listed.rows.push(columns.join(COLUMN));
    this.count += 1;
  }

  /** The listing's lines, each with its newline, services in order and each one's rows by address. */
  *render(location: string): Generator<string> {
    const n = this.count;
    yield `State ${location}: ${n} entr${n === 1 ? 'y' : 'ies'}${n === 0 ? ' (no one-shot change recorded yet)' : ''}.\n`;
    for (const service of [...this.services.keys()].sort()) {
      const { rows, widths } = this.services.get(service)!;
      const [a, o, w] = widths;
      // By address first: the separator sorts below every character of it.
      rows.sort();
      yield `\n${terminalSafe(service)} (${rows.length})\n`;
      for (const row of rows) {
        const [address, outcome, at, run] = row.split(COLUMN) as [string, string, string, string];
        yield `  ${address.padEnd(a)}  ${outcome.padEnd(o)}  ${at.padEnd(w)}  ${run}\n`;
      }
    }
  }
}

/** The listing of `entries` as one text (tests, and small states). */
export function renderStateList(entries: Iterable<LoggedEntry>, location: string): string {
  const listed = new StateListing();
  for (const logged of entries) listed.add(logged);
  return [...listed.render(location)].join('');
}

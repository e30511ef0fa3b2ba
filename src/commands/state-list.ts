/**
 * `orgform state list`: every entry of the journal, whatever the backend, one line each, by
 * service: the change's address (or its key, if it cannot be read back), the outcome, when, and
 * which run recorded it.
 */
import { KIND_ORDER } from '../model/change-kind.js';
import { changeAddress } from '../model/address.js';
import type { JournalData, JournalEntry } from '../state/journal.js';
import { terminalSafe } from '../text/ansi.js';
import type { CliIO, ExitCode } from '../cli-io.js';
import { openCommandState, type StateCommandSettings } from '../state/open-state.js';

export async function run(flags: { state?: string }, io: CliIO, _args: string[], settings: StateCommandSettings): Promise<ExitCode> {
  const state = await openCommandState(flags.state, io, settings);
  io.stdout.write(renderStateList(await state.read(), state.location));
  return 0;
}

/** A journal key's three parts (journal.ts escapes `%` and spaces in each), or undefined if it is not one. */
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

export function renderStateList(data: JournalData, location: string): string {
  const services = Object.keys(data.services).sort();
  const count = services.reduce((n, s) => n + Object.keys(data.services[s]!).length, 0);
  const lines = [`State ${location}: ${count} entr${count === 1 ? 'y' : 'ies'}${count === 0 ? ' (no one-shot change recorded yet)' : ''}.`];
  for (const service of services) {
    const rows = Object.entries(data.services[service]!)
      // A remote state is text anyone with write access to it may have written: no control character reaches the terminal.
      .map(([key, entry]) => [terminalSafe(entryAddress(key, entry)), entry.outcome === 'applied' ? 'applied' : 'already done', terminalSafe(entry.at), entry.run === undefined ? '-' : `run ${terminalSafe(entry.run)}`] as const)
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    lines.push('', `${terminalSafe(service)} (${rows.length})`);
    const width = (i: 0 | 1 | 2) => Math.max(...rows.map((r) => r[i].length));
    const [a, o, w] = [width(0), width(1), width(2)];
    for (const row of rows) lines.push(`  ${row[0].padEnd(a)}  ${row[1].padEnd(o)}  ${row[2].padEnd(w)}  ${row[3]}`);
  }
  return lines.join('\n') + '\n';
}

/**
 * What the state journal holds, whatever the backend: one entry per one-shot change done (an
 * invitation revoked, a channel removed, or found already so), keyed by service and by the change's
 * journal key (model/journal-key.ts). An entry travels as one JSON line, `{"service":…,"key":…,
 * "entry":{…}}`, its fields always in the same order: the file state's logs and its base are made of
 * such lines, and `state pull` prints them.
 *
 * Before version 2, the file was one JSON document of entries grouped by service (`JournalData`);
 * the Terraform HTTP backend's document still holds its journal that way.
 */
import { OrgformError } from '../errors.js';
import type { ChangeKind } from '../model/change-kind.js';

export interface JournalEntry {
  kind: ChangeKind;
  organisation: string;
  outcome: 'applied' | 'already-done';
  at: string;
  /** The apply that recorded it: its lock ID (entries written before orgform recorded runs have none). */
  run?: string;
}

/** One entry with where it belongs: a service (its base URL) and the change's journal key. */
export interface LoggedEntry {
  // `service`, not serviceKey: the lines' own key, a format that older logs were written in.
  service: string;
  key: string;
  entry: JournalEntry;
}

export const JOURNAL_VERSION = 1;

/** The journal as one document (version 1), entries grouped by service. */
export interface JournalData {
  version: typeof JOURNAL_VERSION;
  services: Record<string, Record<string, JournalEntry>>;
}

/** Whether `value` is an entry every reader can use: kind, organisation, outcome and `at` (a time) as text; `run`, if any, as text. */
export function isJournalEntry(value: unknown): value is JournalEntry {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  return (
    typeof e.kind === 'string' &&
    typeof e.organisation === 'string' &&
    typeof e.outcome === 'string' &&
    typeof e.at === 'string' &&
    !Number.isNaN(Date.parse(e.at)) &&
    (e.run === undefined || typeof e.run === 'string')
  );
}

/** The entry's line (without its newline): the fields always in one order, so that equal entries are equal lines. */
export function formatEntryLine(logged: LoggedEntry): string {
  const { entry } = logged;
  const ordered: Record<string, string> = { at: entry.at, kind: entry.kind, organisation: entry.organisation, outcome: entry.outcome };
  if (entry.run !== undefined) ordered.run = entry.run;
  return JSON.stringify({ service: logged.service, key: logged.key, entry: ordered });
}

/** A line back into its entry; undefined for anything that is not a whole, valid entry line. */
export function parseEntryLine(line: string): LoggedEntry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const logged = value as Partial<LoggedEntry>;
  if (typeof logged.service !== 'string' || typeof logged.key !== 'string' || !isJournalEntry(logged.entry)) return undefined;
  return { service: logged.service, key: logged.key, entry: logged.entry };
}

/** Whether two entries say the same (their times compared as instants: a database gives them back in its own form). */
export function isSameEntry(a: JournalEntry, b: JournalEntry): boolean {
  return a.kind === b.kind && a.organisation === b.organisation && a.outcome === b.outcome && Date.parse(a.at) === Date.parse(b.at) && a.run === b.run;
}

/** A journal that cannot be used as it is: what is wrong, and that orgform will not overwrite it. */
export function journalDamagedError(where: string, problem: string): OrgformError {
  return new OrgformError(
    'STATE_INVALID',
    `The state journal ${where} ${problem}. orgform will not overwrite it: restore it from git or your pipeline cache, or move it aside to start a new one (one-shot deletions it recorded will then be planned again, and found already gone).`,
  );
}

/** Pure: parsed JSON → a version 1 journal document, or a clear error naming `where` (a file, or a remote state's place). */
export function checkJournalData(value: unknown, where: string): JournalData {
  const data = value as Partial<JournalData> | null;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw journalDamagedError(where, 'is not a JSON object');
  if (data.version !== JOURNAL_VERSION) {
    const v = typeof data.version === 'number' ? `version ${data.version}` : 'no version';
    throw journalDamagedError(where, `has ${v}; this orgform reads version ${JOURNAL_VERSION} (a newer orgform may have written it)`);
  }
  if (typeof data.services !== 'object' || data.services === null || Array.isArray(data.services)) {
    throw journalDamagedError(where, 'has no "services" object');
  }
  for (const [serviceKey, entries] of Object.entries(data.services)) {
    if (typeof entries !== 'object' || entries === null || Array.isArray(entries)) throw journalDamagedError(where, `has a malformed entry list for ${serviceKey}`);
    // Every entry is read by has(), listed, pulled and copied by migrate (into timestamptz columns):
    // a tampered one is refused here, by name, rather than crashing state list or migrate later.
    for (const [key, entry] of Object.entries(entries as Record<string, unknown>)) {
      if (!isJournalEntry(entry)) {
        throw journalDamagedError(where, `has a malformed entry ${key} for ${serviceKey} (an entry holds kind, organisation, outcome and at, a time, as text, and run, if any, as text)`);
      }
    }
  }
  return data as JournalData;
}

/** Every entry of a version 1 document, in no particular order. */
export function* entriesOfData(data: JournalData): Generator<LoggedEntry> {
  for (const [service, entries] of Object.entries(data.services)) {
    for (const [key, entry] of Object.entries(entries)) yield { service, key, entry };
  }
}

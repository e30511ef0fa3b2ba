/**
 * The state journal: every invitation revocation and channel removal orgform completed (or found
 * already gone), because the interface cannot list invitations or channels. Accepts are not
 * recorded: membership, which the listing shows, decides them (plan/is-recorded-done.ts); entries
 * for accepts that earlier versions wrote are kept and never read. Entries are grouped by service
 * base URL, so one journal can serve several services without mixing them.
 *
 * Writes are atomic (temp file, fsync, rename, fsync of the directory) and grouped: entries
 * recorded while a write is under way go out together in the next one, and `record` resolves
 * only once its entry is on disk.
 */
import { readdir, readFile, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { OrgformError } from '../errors.js';
import type { ChangeKind } from '../model/change-kind.js';
import { replaceFile } from './write-file-atomically.js';

export const JOURNAL_VERSION = 1;

export interface JournalEntry {
  kind: ChangeKind;
  organisation: string;
  outcome: 'applied' | 'already-done';
  at: string;
  /** The apply that recorded it: its lock ID (entries written before orgform recorded runs have none). */
  run?: string;
}

export interface JournalData {
  version: typeof JOURNAL_VERSION;
  services: Record<string, Record<string, JournalEntry>>;
}

/** Keeps a key's three parts apart whatever the ids hold: only `%` and spaces are escaped, so keys stay readable. */
function keyPart(id: string): string {
  return id.replace(/%/g, '%25').replace(/ /g, '%20');
}

export function journalKey(kind: ChangeKind, organisationId: string, targetId: string): string {
  return `${kind} ${keyPart(organisationId)} ${keyPart(targetId)}`;
}

function stateError(path: string, problem: string): OrgformError {
  return new OrgformError(
    'STATE_INVALID',
    `The state journal ${path} ${problem}. orgform will not overwrite it: restore it from git or your pipeline cache, or move it aside to start a new one (one-shot deletions it recorded will then be planned again, and found already gone).`,
  );
}

/** Pure: the journal's text → its data, or a clear error. Never guesses. */
export function parseJournal(text: string, path: string): JournalData {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw stateError(path, 'is not valid JSON (corrupt or truncated)');
  }
  return checkJournalData(value, path);
}

/** Pure: parsed JSON → the journal's data, or a clear error naming `path` (a file, or a remote state's place). */
export function checkJournalData(value: unknown, path: string): JournalData {
  const data = value as Partial<JournalData> | null;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw stateError(path, 'is not a JSON object');
  if (data.version !== JOURNAL_VERSION) {
    const v = typeof data.version === 'number' ? `version ${data.version}` : 'no version';
    throw stateError(path, `has ${v}; this orgform reads version ${JOURNAL_VERSION} (a newer orgform may have written it)`);
  }
  if (typeof data.services !== 'object' || data.services === null || Array.isArray(data.services)) {
    throw stateError(path, 'has no "services" object');
  }
  for (const [service, entries] of Object.entries(data.services)) {
    if (typeof entries !== 'object' || entries === null || Array.isArray(entries)) throw stateError(path, `has a malformed entry list for ${service}`);
    // Every entry is read by has(), listed, pulled and copied by migrate (into timestamptz columns):
    // a tampered one is refused here, by name, rather than crashing state list or migrate later.
    for (const [key, entry] of Object.entries(entries as Record<string, unknown>)) {
      if (!isJournalEntry(entry)) throw stateError(path, `has a malformed entry ${key} for ${service} (an entry holds kind, organisation, outcome and at, a time, as text, and run, if any, as text)`);
    }
  }
  return data as JournalData;
}

function isJournalEntry(value: unknown): value is JournalEntry {
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

export class Journal {
  private pending: Array<() => void> = [];
  private failures: Array<(err: unknown) => void> = [];
  private writing: Promise<void> | null = null;
  private dirty = false;

  constructor(
    readonly path: string,
    /** Every entry, as recorded so far (read only: `record` is the way in). */
    readonly data: JournalData,
  ) {}

  static empty(path: string): Journal {
    return new Journal(path, { version: JOURNAL_VERSION, services: {} });
  }

  /** Reads the journal; a missing file is an empty journal, anything unreadable is an error. */
  static async read(path: string): Promise<Journal> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Journal.empty(path);
      throw stateError(path, `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    return new Journal(path, parseJournal(text, path));
  }

  /**
   * Removes temp files (`.NAME.PID.N.tmp`, see write-file-atomically.ts) that a killed writer left
   * beside the journal. Only the lock holder writes, so once the lock is held every such file is an
   * orphan. Returns how many were removed.
   */
  static async removeOrphanTempFiles(path: string): Promise<number> {
    const dir = dirname(path);
    const prefix = `.${basename(path)}.`;
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return 0;
    }
    const orphans = names.filter((n) => n.startsWith(prefix) && n.endsWith('.tmp'));
    await Promise.all(orphans.map((n) => unlink(join(dir, n)).catch(() => undefined)));
    return orphans.length;
  }

  has(service: string, key: string): boolean {
    return this.data.services[service]?.[key] !== undefined;
  }

  get(service: string, key: string): JournalEntry | undefined {
    return this.data.services[service]?.[key];
  }

  entries(service: string): Readonly<Record<string, JournalEntry>> {
    return this.data.services[service] ?? {};
  }

  /** Records an entry and resolves once it is durably on disk. */
  record(service: string, key: string, entry: JournalEntry): Promise<void> {
    (this.data.services[service] ??= {})[key] = entry;
    this.dirty = true;
    const done = new Promise<void>((resolve, reject) => {
      this.pending.push(resolve);
      this.failures.push(reject);
    });
    if (this.writing === null) this.writing = this.flushLoop();
    return done;
  }

  private async flushLoop(): Promise<void> {
    while (this.dirty) {
      this.dirty = false;
      const resolvers = this.pending;
      const rejecters = this.failures;
      this.pending = [];
      this.failures = [];
      try {
        await replaceFile(this.path, serializeJournal(this.data));
        for (const r of resolvers) r();
      } catch (err) {
        const error = new OrgformError('STATE_INVALID', `Could not write the state journal ${this.path}: ${(err as Error).message}`, { cause: err });
        for (const r of rejecters) r(error);
      }
    }
    this.writing = null;
  }

  /** Waits for every recorded entry to be written. */
  async flush(): Promise<void> {
    while (this.writing !== null) await this.writing;
  }
}

/** The journal file's text: keys sorted, so that it diffs cleanly when committed to git (`state pull` prints the same). */
export function serializeJournal(data: JournalData): string {
  return JSON.stringify(data, sortedReplacer, 2) + '\n';
}

/** Sorted keys, so that the journal diffs cleanly when committed to git. */
function sortedReplacer(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

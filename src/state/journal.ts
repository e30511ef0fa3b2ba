/**
 * The state journal: every invitation revocation and channel removal orgform completed (or found
 * already gone), because the interface cannot list invitations or channels. Accepts are not
 * recorded: membership, which the listing shows, decides them (plan/is-recorded-done.ts); entries
 * for accepts that earlier versions wrote are kept and never read. Entries are grouped by service
 * base URL, so one journal can serve several services without mixing them.
 *
 * The file itself is the sorted JSON document (it diffs cleanly in git). An apply does not rewrite
 * it per change: entries are appended to a log beside it (PATH.log, one JSON line each) and
 * fdatasync'd, and `record` resolves only once its entry is on disk; entries recorded while a
 * write is under way go out together in the next one. The log is folded into the document
 * (compaction: temp file, fsync, rename, fsync of the directory, then the log is removed) every
 * COMPACT_AFTER entries, after a failed write, when the lock is taken and when it is released. A killed writer loses
 * nothing it acknowledged: every reader replays the log over the document (twice is harmless, an
 * entry is keyed), and only a last line cut short, never acknowledged, is left out.
 */
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { OrgformError } from '../errors.js';
import { fileStateError } from './file-state-error.js';
import { checkJournalData, isJournalEntry, journalDamagedError, JOURNAL_VERSION, type JournalData, type JournalEntry, type LoggedEntry } from './journal-entry.js';
import { replaceFile, syncDirectory } from './write-file-atomically.js';

function stateError(path: string, problem: string): OrgformError {
  return journalDamagedError(path, problem);
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

/** Entries appended to the log before it is folded into the document: a rewrite of the whole file per this many. */
export const COMPACT_AFTER = 5_000;

/** Where the appended entries of the journal at `path` are kept until they are folded in. */
export function journalLogPath(path: string): string {
  return `${path}.log`;
}

/**
 * Pure: the log's text replayed over `data`; returns how many entries it held. A last line cut
 * short (the process was killed while writing it, before its entry was acknowledged) is left out;
 * a line that cannot be read before a good one is damage, and an error.
 */
export function replayJournalLog(data: JournalData, text: string, path: string): number {
  const lines = text.split('\n');
  let replayed = 0;
  let bad: number | undefined;
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!;
    if (line === '') continue;
    let logged: LoggedEntry | undefined;
    try {
      logged = JSON.parse(line) as LoggedEntry;
    } catch {
      logged = undefined;
    }
    const ok = logged !== undefined && typeof logged === 'object' && logged !== null && typeof logged.service === 'string' && typeof logged.key === 'string' && isJournalEntry(logged.entry);
    if (!ok) {
      bad ??= i;
      continue;
    }
    if (bad !== undefined) throw stateError(path, `has a damaged line ${bad + 1} in its log ${journalLogPath(path)}`);
    (data.services[logged!.service] ??= {})[logged!.key] = logged!.entry;
    replayed += 1;
  }
  return replayed;
}

export class Journal {
  private pending: Array<() => void> = [];
  private failures: Array<(err: unknown) => void> = [];
  private unwritten: LoggedEntry[] = [];
  private writing: Promise<void> | null = null;
  /** A write failed, or a killed writer cut the log's last line short: the log may end in part of a line, so the next write replaces the document instead. */
  private broken = false;
  /** What went out: appends to the log, and whole documents written. */
  readonly written = { appends: 0, documents: 0 };

  constructor(
    readonly path: string,
    /** Every entry, as recorded so far (read only: `record` is the way in). */
    readonly data: JournalData,
    /** Entries in the log beside the document, not folded into it yet. */
    private logged = 0,
  ) {}

  static empty(path: string): Journal {
    return new Journal(path, { version: JOURNAL_VERSION, services: {} });
  }

  /** Reads the journal and replays its log; a missing file is an empty journal, anything unreadable is an error. */
  static async read(path: string): Promise<Journal> {
    const text = await readIfThere(path);
    const data = text === undefined ? { version: JOURNAL_VERSION, services: {} } : parseJournal(text, path);
    const logText = await readIfThere(journalLogPath(path));
    const logged = logText === undefined ? 0 : replayJournalLog(data as JournalData, logText, path);
    const journal = new Journal(path, data as JournalData, logged);
    // A last line cut short (a writer killed mid-append) must not be appended to: the next entry
    // would be glued to it and lost with it. The first write folds the log away instead.
    if (logText !== undefined && logText !== '' && !logText.endsWith('\n')) journal.broken = true;
    return journal;
  }

  has(serviceKey: string, key: string): boolean {
    return this.data.services[serviceKey]?.[key] !== undefined;
  }

  get(serviceKey: string, key: string): JournalEntry | undefined {
    return this.data.services[serviceKey]?.[key];
  }

  entries(serviceKey: string): Readonly<Record<string, JournalEntry>> {
    return this.data.services[serviceKey] ?? {};
  }

  /** Records an entry and resolves once it is durably on disk. */
  record(serviceKey: string, key: string, entry: JournalEntry): Promise<void> {
    (this.data.services[serviceKey] ??= {})[key] = entry;
    this.unwritten.push({ service: serviceKey, key, entry });
    const done = new Promise<void>((resolve, reject) => {
      this.pending.push(resolve);
      this.failures.push(reject);
    });
    if (this.writing === null) this.writing = this.flushLoop();
    return done;
  }

  private async flushLoop(): Promise<void> {
    while (this.unwritten.length > 0) {
      const batch = this.unwritten;
      const resolvers = this.pending;
      const rejecters = this.failures;
      this.unwritten = [];
      this.pending = [];
      this.failures = [];
      try {
        // After a failed append the log may end in part of a line: the document takes everything instead.
        if (this.broken || this.logged + batch.length >= COMPACT_AFTER) await this.fold();
        else await this.append(batch);
        for (const r of resolvers) r();
      } catch (err) {
        this.broken = true;
        const error = writeError(this.path, err);
        for (const r of rejecters) r(error);
      }
    }
    this.writing = null;
  }

  /** Appends entries to the log, on disk when it resolves. */
  private async append(batch: readonly LoggedEntry[]): Promise<void> {
    let text = '';
    for (const logged of batch) text += `${JSON.stringify(logged)}\n`;
    const logPath = journalLogPath(this.path);
    if (this.logged === 0) await mkdir(dirname(this.path), { recursive: true });
    const log = await open(logPath, 'a', 0o600);
    try {
      await log.write(text);
      await log.datasync();
    } finally {
      await log.close();
    }
    // The log's own name must survive a crash too.
    if (this.logged === 0) await syncDirectory(dirname(this.path));
    this.written.appends += 1;
    this.logged += batch.length;
  }

  /** Folds the log into the document: the whole file replaced atomically, then the log removed (replayed twice in between, harmlessly). */
  private async fold(): Promise<void> {
    await replaceFile(this.path, serializeJournal(this.data));
    this.written.documents += 1;
    await unlink(journalLogPath(this.path)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    this.logged = 0;
    this.broken = false;
  }

  /** Waits for every recorded entry to be written. */
  async flush(): Promise<void> {
    while (this.writing !== null) await this.writing;
  }

  /**
   * Writes what is recorded and folds the log into the document: the file is then the whole
   * journal again, as an older orgform or a commit to git expects. For the lock holder only.
   */
  async compact(): Promise<void> {
    await this.flush();
    if (this.logged > 0 || this.broken) {
      await this.fold().catch((err: unknown) => {
        throw writeError(this.path, err);
      });
    }
  }
}

/** A write of the journal (its log or its document) failed: nothing it held is lost, and what to do. */
function writeError(path: string, err: unknown): OrgformError {
  return fileStateError('Cannot write the state journal', path, err);
}

async function readIfThere(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    // Not for this user: nothing is wrong with the journal itself.
    if (code === 'EACCES' || code === 'EPERM') throw fileStateError('Cannot read the state journal', path, err);
    throw stateError(path, `cannot be read (${code ?? 'error'})`);
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

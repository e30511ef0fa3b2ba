/**
 * A consistent read of the file state, without any lock, even while runs append and a fold
 * replaces the base: every log is opened first, then the base. A fold removes a log only after the
 * base that holds its entries is in place, so a log gone before it could be opened is in the base
 * opened after it, and a log opened before it is removed stays readable through its descriptor.
 * Entries are keyed, so one read twice (in a log and in the base) is harmless.
 */
import type { FileHandle } from 'node:fs/promises';
import { checkJournalData, entriesOfData, journalDamagedError, parseEntryLine, type JournalData, type LoggedEntry } from '../journal-entry.js';
import { isOfInterest, KeyIndex } from '../journal-index.js';
import type { Interest } from '../state-backend.js';
import { fileStateError } from '../file-state-error.js';
import { BASE_HEADER, forEachLine, InterestScan, readLineBatches } from './journal-lines.js';
import { openToRead, type StateFiles } from './state-files.js';

export interface OpenLog {
  path: string;
  handle: FileHandle;
}

/** What the base is: none yet, a version 2 base (entry lines after the header), or an older orgform's document. */
type Base = { kind: 'none' } | { kind: 'lines'; handle: FileHandle } | { kind: 'document'; data: JournalData };

const HEADER = Buffer.from(`${BASE_HEADER}\n`);

export class JournalReader {
  private base: Promise<Base> | undefined;

  private constructor(
    private readonly files: StateFiles,
    /** The logs read, by path (those gone before they could be opened are not here). */
    readonly logs: readonly OpenLog[],
    private readonly baseHandle: FileHandle | undefined,
  ) {}

  /** Opens the logs (`only` these, or every one there), then the base. */
  static async open(files: StateFiles, only?: readonly string[]): Promise<JournalReader> {
    const logs: OpenLog[] = [];
    try {
      for (const path of only ?? (await files.listLogs())) {
        const handle = await openToRead(path, files.given);
        if (handle !== undefined) logs.push({ path, handle });
      }
      const base = await openToRead(files.base, files.given);
      return new JournalReader(files, logs, base);
    } catch (err) {
      await Promise.all(logs.map((log) => log.handle.close()));
      throw readError(files, err);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.logs.map((log) => log.handle.close()), this.baseHandle?.close()]);
  }

  /** The bytes of the base and of the logs, and whether the base is an older orgform's document. */
  async sizes(): Promise<{ base: number; logs: number; document: boolean }> {
    const base = (await this.baseHandle?.stat())?.size ?? 0;
    let logs = 0;
    for (const log of this.logs) logs += (await log.handle.stat()).size;
    return { base, logs, document: (await this.readBase()).kind === 'document' };
  }

  /** The keys of every entry `interest` holds, from the base and every log. */
  async index(interest: Interest): Promise<KeyIndex> {
    const index = new KeyIndex();
    const scan = new InterestScan(interest);
    const base = await this.readBase();
    if (base.kind === 'document') {
      for (const { service, key } of entriesOfData(base.data)) if (isOfInterest(interest, key)) index.add(service, key);
    }
    const visitor = (path: string) => (buf: Buffer, start: number, end: number, line: number) => {
      const visited = scan.visit(buf, start, end);
      if (visited === null) throw this.damaged(path, line);
      if (visited !== undefined) index.add(visited.service, visited.key);
    };
    if (base.kind === 'lines') await this.readBaseLines(base.handle, visitor(this.files.base));
    for (const log of this.logs) await forEachLine(log.handle, 0, 1, visitor(log.path));
    return index;
  }

  /** Every entry of the logs, sorted by service then key, each key once: its earliest entry. */
  async logEntries(): Promise<LoggedEntry[]> {
    const entries: LoggedEntry[] = [];
    for (const log of this.logs) {
      await forEachLine(log.handle, 0, 1, (buf, start, end, line) => {
        const logged = parseEntryLine(buf.toString('utf8', start, end));
        if (logged === undefined) throw this.damaged(log.path, line);
        entries.push(logged);
      });
    }
    entries.sort((a, b) => compareEntries(a, b) || Date.parse(a.entry.at) - Date.parse(b.entry.at));
    let kept = 0;
    for (let i = 0; i < entries.length; i += 1) if (kept === 0 || compareEntries(entries[kept - 1]!, entries[i]!) !== 0) entries[kept++] = entries[i]!;
    entries.length = kept;
    return entries;
  }

  /** Every entry of the base, sorted by service then key, a read at a time (an older orgform's document is sorted whole). */
  async *baseEntries(): AsyncGenerator<LoggedEntry> {
    const base = await this.readBase();
    if (base.kind === 'document') yield* [...entriesOfData(base.data)].sort(compareEntries);
    if (base.kind !== 'lines') return;
    let previous: LoggedEntry | undefined;
    let line = 1;
    const batches = readLineBatches(base.handle, HEADER.length);
    for (let result = await batches.next(); ; result = await batches.next()) {
      if (result.done === true) {
        if (result.value.torn) throw this.damaged(this.files.base, line + 1);
        return;
      }
      const { buf, bounds } = result.value;
      const parsed: LoggedEntry[] = [];
      for (let i = 0; i < bounds.length; i += 2) {
        line += 1;
        const logged = parseEntryLine(buf.toString('utf8', bounds[i]!, bounds[i + 1]!));
        // Out of order is damage too: a reader merging the base with the logs relies on it.
        if (logged === undefined || (previous !== undefined && compareEntries(previous, logged) >= 0)) throw this.damaged(this.files.base, line);
        parsed.push((previous = logged));
      }
      yield* parsed;
    }
  }

  /** Every entry, base and logs merged, sorted by service then key, each key once (the base's entry, else the earliest). */
  async *entries(): AsyncGenerator<LoggedEntry> {
    const logged = await this.logEntries();
    let next = 0;
    for await (const entry of this.baseEntries()) {
      while (next < logged.length && compareEntries(logged[next]!, entry) < 0) yield logged[next++]!;
      if (next < logged.length && compareEntries(logged[next]!, entry) === 0) next += 1;
      yield entry;
    }
    while (next < logged.length) yield logged[next++]!;
  }

  private readBase(): Promise<Base> {
    this.base ??= readBaseKind(this.baseHandle, this.files.given);
    return this.base;
  }

  private async readBaseLines(handle: FileHandle, onLine: (buf: Buffer, start: number, end: number, line: number) => void): Promise<void> {
    const { torn, lines } = await forEachLine(handle, HEADER.length, 2, onLine);
    // A base is written whole, so a last line cut short is damage, not a writer at work.
    if (torn) throw this.damaged(this.files.base, lines + 2);
  }

  private damaged(path: string, line: number): Error {
    return journalDamagedError(this.files.given, `has a damaged line ${line}${path === this.files.base ? '' : ` in its log ${path}`}`);
  }
}

/** Whether the base starts with the version 2 header; if not, it is one JSON document (version 1), read whole. */
async function readBaseKind(handle: FileHandle | undefined, shown: string): Promise<Base> {
  if (handle === undefined) return { kind: 'none' };
  const start = Buffer.alloc(HEADER.length);
  const { bytesRead } = await handle.read(start, 0, HEADER.length, 0);
  if (bytesRead === HEADER.length && start.equals(HEADER)) return { kind: 'lines', handle };
  const text = (await readWhole(handle)).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw journalDamagedError(shown, 'is not valid JSON (corrupt or truncated)');
  }
  return { kind: 'document', data: checkJournalData(value, shown) };
}

async function readWhole(handle: FileHandle): Promise<Buffer> {
  const { size } = await handle.stat();
  const buf = Buffer.allocUnsafe(size);
  let at = 0;
  while (at < size) {
    const { bytesRead } = await handle.read(buf, at, size - at, at);
    if (bytesRead === 0) break;
    at += bytesRead;
  }
  return buf.subarray(0, at);
}

export function compareEntries(a: LoggedEntry, b: LoggedEntry): number {
  if (a.service !== b.service) return a.service < b.service ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** A read that failed: for this user's rights, the state error naming the path and what to do. */
function readError(files: StateFiles, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EACCES' || code === 'EPERM') return fileStateError('Cannot read the state journal', files.given, err);
  return err;
}

/**
 * Folding a file state's frozen logs (those whose runs have all ended) into its base: the base is
 * read a megabyte at a time and merged with the logs' entries (sorted in memory), every line
 * checked, into a new base beside it (temp file, fsync, rename, fsync of the directory). Only then
 * are the folded logs removed, so a reader at any moment finds every entry in a log or the base.
 * A fold of damaged lines is refused whole, and leaves everything as it was: nothing is dropped.
 *
 * It is due when the state is small (one file, as people who commit it expect), when the frozen
 * logs have grown to a quarter of the base or to many files, or when the base or a log is an
 * older orgform's: so a million entries cost one rewrite per quarter million new ones, not one per
 * apply.
 */
import { open, stat, unlink } from 'node:fs/promises';
import { formatEntryLine } from '../journal-entry.js';
import { removeOrphanTempFiles, syncDirectory, tempPathFor, writeAll } from '../write-file-atomically.js';
import { rename } from 'node:fs/promises';
import { BASE_HEADER } from './journal-lines.js';
import { JournalReader } from './journal-reader.js';
import type { StateFiles } from './state-files.js';

/** Below this, base and logs are folded at every release: the state stays one file. */
export const SMALL_STATE_BYTES = 8 * 1024 * 1024;
/** More frozen logs than this are folded whatever their size. */
export const MAX_FROZEN_LOGS = 32;

const CHUNK = 1 << 20;

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
}

/** Whether folding `frozen` into the base is due now. */
export async function isFoldDue(files: StateFiles, frozen: readonly string[]): Promise<boolean> {
  if (frozen.includes(files.legacyLog) || frozen.length > MAX_FROZEN_LOGS) return true;
  const base = await sizeOf(files.base);
  let logs = 0;
  for (const log of frozen) logs += await sizeOf(log);
  if (base + logs < SMALL_STATE_BYTES || logs * 4 >= base) return true;
  // An older orgform's document is read whole each time: rewritten at once as lines.
  const reader = await JournalReader.open(files, []);
  try {
    return (await reader.sizes()).document;
  } finally {
    await reader.close();
  }
}

/** Folds `frozen` into the base; resolves once the new base is durable and the folded logs are gone. */
export async function foldJournal(files: StateFiles, frozen: readonly string[]): Promise<void> {
  await removeOrphanTempFiles(files.base);
  const reader = await JournalReader.open(files, frozen);
  const before = new Map<string, number>();
  let temp: string | undefined;
  try {
    for (const log of reader.logs) before.set(log.path, (await log.handle.stat()).size);
    temp = tempPathFor(files.base);
    await writeBase(temp, reader);
    await rename(temp, files.base);
    temp = undefined;
    await syncDirectory(files.dir);
  } finally {
    await reader.close();
    if (temp !== undefined) await unlink(temp).catch(() => undefined);
  }
  // Only now, and only a log nothing was appended to since it was read (a run force-unlocked while
  // it still ran): the next fold takes that one again, harmlessly.
  for (const [path, size] of before) if ((await sizeOf(path)) === size) await unlink(path).catch(() => undefined);
}

/** The merged entries as a version 2 base at `path`, durable when it resolves. */
async function writeBase(path: string, reader: JournalReader): Promise<void> {
  const out = await open(path, 'wx', 0o600);
  try {
    let chunk = `${BASE_HEADER}\n`;
    let at = 0;
    for await (const logged of reader.entries()) {
      chunk += `${formatEntryLine(logged)}\n`;
      if (chunk.length < CHUNK) continue;
      const bytes = Buffer.from(chunk);
      await writeAll(out, bytes, at);
      at += bytes.length;
      chunk = '';
    }
    await writeAll(out, Buffer.from(chunk), at);
    await out.sync();
  } finally {
    await out.close();
  }
}

/**
 * The observations a saved plan's changes depend on, written to a temp file as they are planned,
 * and read back a line at a time when the plan is saved: `plan --out` of 500,000 changes would
 * otherwise hold every one of them until the end. The file is made exclusively beside the plan
 * (`.NAME.PID.N.tmp`, 0600; a planted name or link is never opened, the next name is taken) and its
 * name is removed at once: it is written and read back through the descriptor alone, so that no
 * other process can open it, and nothing of it is left on the disk however the run ends (killed by
 * SIGTERM or Ctrl+C, which plan does not catch, or out of memory).
 */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, open, rm, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { ObservedOrganisation } from '../../model/observed-organisation.js';
import { observedLine } from '../../plan/saved-plan.js';
import { cannotWrite, tempPathFor, TEMP_ATTEMPTS, type UserFile } from '../../state/write-file-atomically.js';

export class ObservationSpool {
  private failure: Error | undefined;
  private readonly stream: WriteStream;

  private constructor(private readonly handle: FileHandle) {
    this.stream = createWriteStream('', { fd: handle, autoClose: false });
    this.stream.on('error', (err) => (this.failure ??= err));
  }

  /** A new spool beside `planPath` (the resolved --out; `file` names it in a refusal). */
  static async open(planPath: string, file: UserFile): Promise<ObservationSpool> {
    try {
      // Where the plan will go may not exist yet (the plan's own write would make it).
      await mkdir(dirname(planPath), { recursive: true });
      return new ObservationSpool(await openUnnamed(planPath));
    } catch (err) {
      throw cannotWrite(file, err);
    }
  }

  /** Called by the plan builder as each organisation with changes is planned. */
  readonly write = (slug: string, observed: ObservedOrganisation): void => {
    // The disk takes a line faster than the service gives an organisation: no need to wait for it.
    this.stream.write(observedLine(slug, observed));
  };

  /** The lines written, each with its newline, once every one is on disk. */
  async *lines(): AsyncGenerator<string> {
    await this.finishWriting();
    const input = createReadStream('', { fd: this.handle, start: 0, autoClose: false });
    try {
      for await (const text of createInterface({ input, crlfDelay: Infinity })) yield `${text}\n`;
    } finally {
      input.destroy();
    }
  }

  private async finishWriting(): Promise<void> {
    if (!this.stream.writableFinished && this.failure === undefined) {
      this.stream.end();
      await Promise.race([once(this.stream, 'finish'), once(this.stream, 'error')]);
    }
    if (this.failure !== undefined) throw this.failure;
  }

  /** Gone, whatever happened: its descriptor closed (it has had no name since it was made). */
  async remove(): Promise<void> {
    this.stream.destroy();
    await this.handle.close().catch(() => undefined);
  }
}

/**
 * A new file beside `planPath`, created exclusively under the next free temp name, and that name
 * removed: what is left is the descriptor.
 */
async function openUnnamed(planPath: string): Promise<FileHandle> {
  for (let attempt = 1; ; attempt += 1) {
    const path = tempPathFor(planPath);
    let handle: FileHandle;
    try {
      handle = await open(path, 'wx+', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= TEMP_ATTEMPTS) throw err;
      continue;
    }
    try {
      await unlink(path);
      return handle;
    } catch (err) {
      await handle.close();
      await rm(path, { force: true });
      throw err;
    }
  }
}
